"""How the Llama 3.1 and 3.2 templates put untrusted text in the prompt: what the control-token guard reads.

A content that is a string is written as it is (trimmed, or as a JSON string for a tool result,
neither of which can make a token); every role but the system message's and a tool result's is
written as it is given; a tool call's name and its arguments' keys and values are written as they
are, whatever the message's role (the guard reads every message's calls, and the content of one
without a role). What the template prints as Python prints it (a content that is a list or an
object) or writes as JSON (a tool result that is a list or an object), and calls that are no list,
the format refuses under a guard (:func:`refuse_unread`): the guard reads strings and text parts,
not such printed text, and a list's calls. The tools and
``custom_tools`` are JSON the guard reads as tools; the other options are the caller's (like
``bos_token``) and are checked as text. See docs/safety.md.
"""

from __future__ import annotations

from typing import Any

from ...errors import InvalidInputError, type_name
from ...guard.vocabulary import UntrustedReading
from .tokens import LLAMA3_CONTROL_TOKENS

__all__ = ["LLAMA3_READING", "refuse_unread"]

#: Llama 3's reading of untrusted fields (no content is read as parts: see refuse_unread). What follows a
#: name (`"` or `.call(`) cannot end a token.
LLAMA3_READING = UntrustedReading(
    LLAMA3_CONTROL_TOKENS, LLAMA3_CONTROL_TOKENS.families, join_parts=True, tool_calls=True, name_follower="",
    roles=True,
)

_REFUSED = "(with a guard, refused: the template prints it whole, and its text would go unchecked)"


def refuse_unread(msgs: list[dict[str, Any]]) -> None:
    """Raise :class:`InvalidInputError` at the first field the guard does not read as the template
    writes it: tool calls that are no list (the template writes a mapping's item ``0``, the guard
    reads a list's calls); a content that is anything but a string, a number or a boolean (a list of
    parts is printed as Python prints it; a tool result's list or object is written as JSON)."""
    for i, message in enumerate(msgs):
        calls = message.get("tool_calls")
        if calls is not None and type(calls) is not list and type(calls) is not tuple:
            raise InvalidInputError(f"messages[{i}].tool_calls", f"expected a list, got {type_name(calls)}: the "
                                    f"template reads its first item {_REFUSED}")
        content = message.get("content")
        if content is None or type(content) in (str, int, float, bool):
            continue
        raise InvalidInputError(f"messages[{i}].content", f"expected a string, got {type_name(content)} {_REFUSED}")
