"""How the Llama 3.1 and 3.2 templates put untrusted text in the prompt: what the control-token guard reads.

A content that is a string is written as it is (trimmed, or as a JSON string for a tool result,
neither of which can make a token); every role but the system message's and a tool result's is
written as it is given; a tool call's name and its arguments' keys and values are written as they
are, whatever the message's role. What the template prints as Python prints it (a content that is a
list or an object) or writes as JSON (a tool result or arguments that are a list), and the calls of
a message that is not an assistant's, the format refuses under a guard (:func:`refuse_unread`): the
guard reads strings and text parts, not such printed text, and an assistant's calls. The tools and
``custom_tools`` are JSON the guard reads as tools; the other options are the caller's (like
``bos_token``) and are checked as text. See docs/safety.md.
"""

from __future__ import annotations

from collections.abc import Mapping
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


def _refuse_unread_calls(message: dict[str, Any], i: int) -> None:
    calls = message.get("tool_calls")
    if calls is None:
        return
    path = f"messages[{i}].tool_calls"
    if message.get("role") != "assistant":
        raise InvalidInputError(path, f"of a message whose role is not 'assistant': the template writes them as the "
                                f"assistant's {_REFUSED}")
    if type(calls) is not list and type(calls) is not tuple:
        raise InvalidInputError(path, f"expected a list, got {type_name(calls)}: the template reads its first item "
                                f"{_REFUSED}")
    for k, call in enumerate(calls):
        function = call.get("function") if isinstance(call, Mapping) else None
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        if arguments is not None and not isinstance(arguments, (str, Mapping)):
            raise InvalidInputError(f"{path}[{k}].function.arguments", f"expected an object or a JSON string, got "
                                    f"{type_name(arguments)}: the template writes it as JSON {_REFUSED}")


def refuse_unread(msgs: list[dict[str, Any]]) -> None:
    """Raise :class:`InvalidInputError` at the first field the guard does not read as the template
    writes it: the tool calls of a message that is not the assistant's (the template writes any
    message's call, the guard reads an assistant's), calls that are no list (the template writes a
    mapping's item ``0``), arguments that are neither an object nor a string (written as JSON); a
    content that is anything but a string, a number or a boolean (a list of parts is printed as
    Python prints it; a tool result's list or object is written as JSON)."""
    for i, message in enumerate(msgs):
        _refuse_unread_calls(message, i)
        content = message.get("content")
        if content is None or type(content) in (str, int, float, bool):
            continue
        raise InvalidInputError(f"messages[{i}].content", f"expected a string, got {type_name(content)} {_REFUSED}")
