"""A fast path for the usual input of the seeds' templates (``chatml-multi-system``, ``chatml-safety``):
:func:`lean_prompt`.

The one checked builder (:func:`~.render.render_chatml`) carries, on every message, what the other
callers need: the guard's tests, the spans' notes, each message's index for errors, input that is
not a plain dict. This path reads only the usual input — a list of exact dicts with exact string
roles, names and keys; content a string, ``None`` or a list of text and image parts; reasoning in
``reasoning_content`` or inline ``<think>``; tool calls with an object or a JSON-string argument —
and writes the prompt in one pass. On anything else it returns ``None`` and the caller renders
through the checked builder, which then raises its own error if there is one: this path raises
nothing. The template's rules it applies are :mod:`.render`'s and :mod:`.read`'s (merge the system
messages, find the last query, the assistant turn, the calls); what a message dict means (part
kinds, reasoning fields, a call's body) is read through :mod:`prompt_formats.model.reading`.

Under the control-token guard (``chatml-safety``) it is given the tokens' lead character and steps
aside (to the guard's own fast path) as soon as an untrusted string holds it — what the guard reads:
the content of every message but the assistant's, tool-call names, argument names and the JSON text
of argument values — or a value may be nested too deeply for the guard to check; the guard leaves
every other string as it is.

Why: most requests are short conversations of plain text, where the checked path's per-message
reading costs more than writing the text; it is deleted when it wins less than 3% on the
benchmark's short-conversation rows. Tested against Jinja2 on generated input
(``tests/render/test_chatml_lean.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from math import isfinite
from typing import Any

from ..._text.tojson import json_chunks
from ..._text.walk import MAX_NESTING
from ...errors import FormatError
from ...format.chat_format import Tools
from ...guard.vocabulary import parts_clean
from ...model.reading import REASONING_FIELDS, call_body, part_kind
from .render import prologue_pieces, split_think, tools_block
from .template import UPSTREAM
from .tokens import (
    ASSISTANT_THINKING,
    ASSISTANT_TURN,
    CALL_AFTER_CONTENT,
    CALL_FIRST,
    CALL_NEXT,
    CALLS_END,
    GENERATION_PROMPT,
    GENERATION_PROMPT_NO_THINKING,
    IMAGE,
    THINK_BLOCK_END,
    THINK_CLOSE,
    TOOL_RESPONSE_CLOSE,
    TOOL_RESPONSE_FIRST,
    TOOL_RESPONSE_LAST,
    TOOL_RESPONSE_MORE,
    TOOL_RESPONSE_NEXT,
    TOOL_RESPONSE_OPEN,
    TURN_END,
    USER_TURN,
)

__all__ = ["lean_prompt"]

_ROLES = frozenset(("system", "user", "assistant", "tool"))
_FIRST_REASONING_FIELD = REASONING_FIELDS[0]
_OTHER_REASONING_FIELDS = frozenset(REASONING_FIELDS[1:])


def _text(content: Any, images: list[int] | None, numbered: Any) -> str | None:
    """The content's text (untrimmed); ``None`` for what this path does not read. ``images``: the
    image counter (``None``: a system message, where an image is an error)."""
    if type(content) is str:
        return content
    if content is None:
        return ""
    if type(content) is not list:
        return None
    pieces = []
    for part in content:
        if type(part) is not dict:
            return None
        kind = part_kind(part)
        if kind == "text":
            text = part["text"]
            if type(text) is not str:
                return None
            pieces.append(text)
        elif kind == "image" and images is not None:
            images[0] += 1
            pieces.append(f"Picture {images[0]}: {IMAGE}" if numbered else IMAGE)
        else:  # a video, an unknown part, an image in a system message
            return None
    return "".join(pieces)


def _clean(content: Any, lead: str) -> bool:
    """Whether an untrusted content holds no ``lead`` in any text the guard reads, that of every part
    included (``False``: unsure)."""
    if type(content) is str:
        return lead not in content
    return content is None or parts_clean(content, lead)


def _read(messages: list[Any], merge_system: bool, lead: str | None) -> list[Mapping[str, Any]] | None:
    """The messages, a system message's content replaced by its trimmed text; ``merge_system``: every
    system message's, the empty ones dropped, joined by a blank line into one leading system message
    (else a system message anywhere but first is the template's error). ``None`` for what this path
    does not read, and under the guard (``lead``) for untrusted content holding the lead: tested here,
    first, so that stepping aside costs little."""
    texts: list[str] = []
    others: list[Mapping[str, Any]] = []
    for message in messages:
        if type(message) is not dict:
            return None
        role = message.get("role")
        if type(role) is not str or role not in _ROLES:
            return None
        if lead is not None and role != "assistant" and not _clean(message.get("content"), lead):
            return None
        if role == "system":
            text = _text(message.get("content"), None, None)
            if text is None or (not merge_system and (others or texts)):  # upstream: a system message only first
                return None
            text = text.strip()
            if text or not merge_system:
                texts.append(text)
        else:
            others.append(message)
    if len(others) == len(messages):
        return others
    return [{"role": "system", "content": "\n\n".join(texts)}, *others] if texts else others


def _last_query(msgs: list[Mapping[str, Any]]) -> int | None:
    """The position of the last user message that is not a wrapped tool response (``None``: none,
    or content this path does not read)."""
    for pos in range(len(msgs) - 1, -1, -1):
        message = msgs[pos]
        if message["role"] == "user":
            # (a throwaway counter: an image's label cannot make the text start or end with the markers)
            query = _text(message.get("content"), [0], None)
            if query is None:
                return None
            query = query.strip()
            if not (query.startswith(TOOL_RESPONSE_OPEN) and query.endswith(TOOL_RESPONSE_CLOSE)):
                return pos
    return None


def _argument_text(value: Any, lead: str | None) -> str | None:
    """An argument value that is no exact ``str``, as the template writes it (``tojson``); ``None``
    for what this path does not write (a subclass, a float that is not finite, what JSON refuses,
    under the guard (``lead``) a value it may find too deep)."""
    kind = type(value)
    try:
        if kind is dict or kind is list:
            text = "".join(json_chunks(value, 0))
            # (the guard's test of a value it may find too deep; the caller tests the text for the lead)
            if lead is not None and len(text) > MAX_NESTING and text.count("[") + text.count("{") > MAX_NESTING:
                return None
            return text
        if kind is int:
            return int.__repr__(value)
        if kind is float:
            return float.__repr__(value) if isfinite(value) else None
    except (TypeError, ValueError, RecursionError):
        return None
    if kind is bool:
        return "true" if value else "false"
    return "null" if value is None else None


def _calls(out: list[str], calls: Any, content: str, lead: str | None) -> bool:
    """The turn's tool calls and its end; ``False`` for what this path does not write."""
    if type(calls) is not list:
        return False
    append = out.append
    opening = CALL_AFTER_CONTENT if content else CALL_FIRST
    for call in calls:
        if type(call) is not dict:
            return False
        function = call_body(call)
        if type(function) is not dict:
            return False
        name = function.get("name")
        if type(name) is not str or (lead is not None and lead in name):
            return False
        arguments = function.get("arguments")
        if type(arguments) is dict:
            append(f"{opening}{name}>\n")
            for key, value in arguments.items():
                if type(value) is not str:
                    value = _argument_text(value, lead)
                    if value is None:
                        return False
                if type(key) is not str or (lead is not None and (lead in key or lead in value)):
                    return False
                append(f"<parameter={key}>\n{value}\n</parameter>\n")
        elif type(arguments) is str:
            if lead is not None and lead in arguments:
                return False
            append(f"{opening}{name}>\n<parameter=arguments>\n{arguments}\n</parameter>\n")
        elif arguments is None:
            append(f"{opening}{name}>\n")
        else:
            return False
        opening = CALL_NEXT
    append(CALLS_END)
    return True


def _assistant(out: list[str], message: Mapping[str, Any], content: str, thinking: bool, lead: str | None) -> bool:
    """An assistant turn (``thinking``: it keeps its reasoning); ``False`` for what this path does not write."""
    reasoning = message.get(_FIRST_REASONING_FIELD)
    if reasoning is None:
        if not _OTHER_REASONING_FIELDS.isdisjoint(message):
            return False
        reasoning = ""
        if THINK_CLOSE in content:
            reasoning, content = split_think(content)
    elif type(reasoning) is not str:
        return False
    if thinking:
        out.extend((ASSISTANT_THINKING, reasoning.strip(), THINK_BLOCK_END, content))
    else:
        out.extend((ASSISTANT_TURN, content))
    calls = message.get("tool_calls")
    if calls:
        return _calls(out, calls, content, lead)
    out.append(TURN_END)
    return True


def _prologue(msgs: list[Mapping[str, Any]], tools: Tools) -> list[str] | None:
    """The tools block and the system turn (``None``: tools the checked builder refuses)."""
    try:
        block = tools_block(tools)
    except FormatError:
        return None
    system = msgs[0]["content"] if msgs[0]["role"] == "system" else None  # (trimmed by _read)
    return prologue_pieces(block, system, UPSTREAM)  # (the seeds' prologue: both write it alike)


def lean_prompt(messages: Any, tools: Tools, add_generation_prompt: Any, options: Mapping[str, Any],
                merge_system: bool = True, lead: str | None = None) -> str | None:
    """Exactly ``render_chatml(messages, tools, add_generation_prompt, MULTI_SYSTEM if merge_system else
    UPSTREAM, **options)``'s
    prompt for the usual input, or ``None`` (the caller renders through the checked builder).
    ``lead``: the guard's (:class:`~prompt_formats.guard.vocabulary.FastGuard`): ``None`` as soon as
    an untrusted string holds it (so the prompt is also the guard's checked path's). Raises
    nothing. ``options``: the template's options only, checked by the caller."""
    if type(messages) is not list or not messages:
        return None
    msgs = _read(messages, merge_system, lead)
    if not msgs:
        return None
    last_query = _last_query(msgs)
    if last_query is None:
        return None
    out = _prologue(msgs, tools)
    if out is None:
        return None
    thinking_after = -1 if options.get("preserve_thinking") is True else last_query
    numbered = options.get("add_vision_id")
    images = [0]
    last = len(msgs) - 1
    for pos, message in enumerate(msgs):
        role = message["role"]
        content = _text(message.get("content"), images, numbered)  # (under the guard: tested in _read)
        if content is None:
            return None
        content = content.strip()
        if role == "tool":  # a run of tool results is one user turn
            out.extend((TOOL_RESPONSE_FIRST if pos and msgs[pos - 1]["role"] != "tool" else TOOL_RESPONSE_NEXT,
                        content,
                        TOOL_RESPONSE_LAST if pos == last or msgs[pos + 1]["role"] != "tool" else TOOL_RESPONSE_MORE))
        elif role == "assistant":
            if not _assistant(out, message, content, pos > thinking_after, lead):
                return None
        elif role == "user":
            out.extend((USER_TURN, content, TURN_END))
    if add_generation_prompt:
        out.append(GENERATION_PROMPT_NO_THINKING if options.get("enable_thinking") is False else GENERATION_PROMPT)
    return "".join(out)
