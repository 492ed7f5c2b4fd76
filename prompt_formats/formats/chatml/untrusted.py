"""How the ChatML templates put untrusted text in the prompt: what the control-token guard reads.

Text parts of a message are concatenated with nothing between them; tool calls in history are
rendered as ``<function=NAME>`` and ``<parameter=NAME>``, so a name is followed by ``>``. See
docs/safety.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..._text.walk import MAX_NESTING
from ...guard.vocabulary import FastGuard, UntrustedReading, parts_clean
from .tokens import CONTROL_TOKENS as CHATML_CONTROL_TOKENS
from .tokens import NEMOTRON_CONTROL_TOKENS

__all__ = [
    "CHATML_JSON_READING",
    "CHATML_READING",
    "JSON_KINDS",
    "MAX_NESTING",
    "NEMOTRON_READING",
    "FastGuard",
    "StepAside",
    "guarded_content",
    "guarded_json",
    "guarded_message",
    "guarded_name",
    "render_guarded",
]

#: The ChatML family's reading of untrusted fields (the Qwen3 control tokens).
CHATML_READING = UntrustedReading(CHATML_CONTROL_TOKENS, join_parts=True, tool_calls=True, name_follower=">")
#: The same for the templates that write JSON calls (a call's name is followed by its closing quote).
CHATML_JSON_READING = UntrustedReading(CHATML_CONTROL_TOKENS, join_parts=True, tool_calls=True, name_follower='"')
#: Nemotron 3's (its markers; a call's name and a parameter's are followed by ``>``).
NEMOTRON_READING = UntrustedReading(NEMOTRON_CONTROL_TOKENS, join_parts=True, tool_calls=True, name_follower=">")


# --- The guard's fast path: its policy applied where the renderer reads each untrusted field. --------
#
# Why: the renderer already holds each untrusted string, so one substring test for the tokens' lead clears it, and the
# guard's own function for that field runs only on a hit (``ControlTokenGuard.fast_path``). Anything
# it raises (a token under ``reject``, a value too deep to check) and any error of the renderer steps
# aside to the checked path (the guard over every message, then the renderer), which raises the same
# errors in the same order.


def guarded_message(fast: FastGuard, message: Mapping[str, Any], role: str) -> Mapping[str, Any]:
    """``message`` with its content as the checked path's guard leaves it (itself when unchanged).

    For the renderer's reads of a whole message (the system prompt, the last-query scan); the
    content is untrusted exactly when the guard reads it so (``role != "assistant"``)."""
    if role != "assistant":  # the guard's own test, whatever the role's class answers
        content = message.get("content")
        if content is not None and (type(content) is not str or fast.lead in content):
            new = guarded_content(fast, content)
            if new is not content:
                return {**message, "content": new}
    return message


def guarded_content(fast: FastGuard | None, content: Any) -> Any:
    """An untrusted message's content (not a string without the lead) as the checked path's guard
    leaves it."""
    assert fast is not None  # called on the fast path only
    if type(content) is str:
        return content if fast.suspect(content) is None else fast.content(content)
    if parts_clean(content, fast.lead):  # the guard's own first test, without its calls
        return content
    return fast.content(content)


#: The argument value types whose JSON text shows every string in them as itself (``FastGuard``).
#: A value nested ``n`` deep writes ``n`` opening brackets: one with at most MAX_NESTING of them is
#: not too deep for the guard. Any other value goes through the guard.
JSON_KINDS = frozenset({str, int, bool, float, type(None), dict, list})


def guarded_name(fast: FastGuard | None, name: str) -> str:
    """A tool-call name or argument name holding the lead, as the checked path's guard leaves it."""
    assert fast is not None  # called on the fast path only
    follower = fast.follower
    return name if fast.suspect(name + follower) is None else fast.text(name, follower)


class StepAside(Exception):
    """Raised on the fast path where it cannot tell what the checked path gives: it steps aside."""


def guarded_json(fast: FastGuard | None, value: Any, text: str, write: Callable[..., str], *where: Any) -> str:
    """A tool-call argument value (or string arguments) holding the lead or not of the plain kinds,
    written as ``text``, as the checked path writes it once its guard has read the value
    (``write(value, *where)`` writes a value)."""
    assert fast is not None  # called on the fast path only
    kind = type(value)
    if kind in JSON_KINDS and fast.suspect(text) is None and (
            len(text) <= MAX_NESTING or text.count("[") + text.count("{") <= MAX_NESTING):
        return text
    if kind is not str and isinstance(value, str):
        # Printed by its __str__, unlike the guard's copy of it: which the checked path prints
        # depends on its prefilter.
        raise StepAside
    new = fast.json(value)
    return text if new is value else write(new, *where)


def render_guarded(
    fast: FastGuard, render: Callable[..., str], messages: Any, tools: Any, add_generation_prompt: Any,
    options: Mapping[str, Any],
) -> str | None:
    """``render(..., _fast_guard=fast)``'s prompt, or ``None``: the caller then takes the checked path.

    Never raises: every exception, the guard's and the renderer's, means "step aside"."""
    try:
        return render(messages, tools, add_generation_prompt, **options, _fast_guard=fast)
    except Exception:  # the checked path decides, and raises its errors in its order
        return None
