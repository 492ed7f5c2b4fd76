"""The ``decode_tool_arguments`` option: JSON-string tool-call arguments decoded before rendering.

OpenAI's API carries a call's ``arguments`` as JSON text, and the template writes a string argument
as a JSON string (``"{\\"city\\": \\"Paris\\"}"``), a call the model never wrote. vLLM and SGLang
decode such strings into objects before rendering; with the option on, so does this format.

A string is decoded by the rule every format's option shares
(:func:`prompt_formats.model.reading.decoded_json_object`): only when it holds exactly one JSON object that
Python holds exactly, so that the template writes back the same value. Any other string, and every
value that is not a string, is rendered as given. Only the first call of a message is read: it is
the only one the template renders.

The decoding runs before the control-token guard, so that the guard checks the strings inside the
decoded object (escaping inside the JSON text would make it invalid JSON).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....model.arguments import decoded_each
from ....model.messages import Message, ToolCall, message_dict
from ....model.reading import decoded_json_object as decoded_object

__all__ = ["decode_conversation", "decoded_object"]


def _decoded_message(message: Any, index: int) -> Any:
    """``message`` with its first call's string arguments decoded, or the very object when nothing changes."""
    # (``type(x) is dict`` first: the Mapping ABC's isinstance is a Python-level call.)
    if type(message) is not dict:
        if isinstance(message, Message):
            calls: Any = message.tool_calls  # typed, but not checked when the object was built
            first = calls[0] if message.role == "assistant" and isinstance(calls, (list, tuple)) and calls else None
            if not isinstance(first, ToolCall) or not isinstance(first.arguments, str):
                return message
            if decoded_object(first.arguments) is None:
                return message
            message = message_dict(message, index)  # checked as the renderer checks it
        elif not isinstance(message, Mapping):
            return message
    if message.get("role") != "assistant":
        return message
    calls = message.get("tool_calls")
    if not isinstance(calls, (list, tuple)) or not calls:
        return message
    call = calls[0]
    if type(call) is not dict and not isinstance(call, Mapping):
        return message
    function = call.get("function")
    body = function if function else call  # the template's `if tool_call.function`
    if (type(body) is not dict and not isinstance(body, Mapping)) or not isinstance(body.get("arguments"), str):
        return message
    value = decoded_object(body["arguments"])
    if value is None:
        return message
    new_body = {**body, "arguments": value}
    new_call = {**call, "function": new_body} if function else new_body
    return {**message, "tool_calls": [new_call, *calls[1:]]}


def decode_conversation(messages: Any) -> Any:
    """``messages`` with the rendered call's JSON-object string arguments decoded (a new list when any
    is; the very object otherwise). Shapes the renderer refuses are passed through for it to refuse."""
    return decoded_each(messages, _decoded_message) if isinstance(messages, (list, tuple)) else messages
