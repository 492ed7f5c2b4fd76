"""The ``decode_tool_arguments`` render option for templates that render every tool call (ChatML).

OpenAI's API carries a call's ``arguments`` as JSON text; vLLM and SGLang decode such a string into
an object before the template runs, so the template writes one block per parameter instead of its
branch for string arguments. With the option on, every call of every assistant message whose
``arguments`` is a string holding a JSON object (by :func:`~prompt_formats.model.reading.decoded_json_object`,
the rule every format shares) gets that object; any other value is left as given.

This is a pre-pass over the messages: the renderer, and the control-token guard after it, see the
decoded objects (escaping inside JSON text would make it invalid JSON). gpt-oss, whose template
renders only a message's first call, has its own pass (``formats/harmony/openai/arguments.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import InvalidInputError, type_name
from .messages import Message, message_dict
from .reading import decoded_json_object, is_list

__all__ = ["decode_arguments_option", "decode_every_call", "decoded_each"]


def decode_arguments_option(value: Any) -> bool:
    """The option's value: a bool, ``None`` (absent) meaning ``False``; anything else raises."""
    if value is None or type(value) is bool:
        return value is True
    raise InvalidInputError("decode_tool_arguments", f"expected a bool or null, got {type_name(value)}")


def _decoded_call(call: Any) -> Any:
    """``call`` with its string arguments decoded, or the very object when nothing changes."""
    # (``type(x) is dict`` first: the Mapping ABC's isinstance is a Python-level call, made for
    # every call of every request.)
    if type(call) is not dict and not isinstance(call, Mapping):
        return call
    wrapped = "function" in call  # the renderer's (and the template's) reading: reading.call_body
    body = call["function"] if wrapped else call
    if type(body) is not dict and not isinstance(body, Mapping):
        return call
    arguments = body.get("arguments")
    if not isinstance(arguments, str):
        return call
    value = decoded_json_object(arguments)
    if value is None:
        return call
    new_body = {**body, "arguments": value}
    return {**call, "function": new_body} if wrapped else new_body


def _decoded_message(message: Any, index: int) -> Any:
    """``message`` with its calls' arguments decoded, or the very object when nothing changes."""
    if type(message) is not dict:
        if isinstance(message, Message):
            if message.role != "assistant" or not message.tool_calls:
                return message
            message = message_dict(message, index)  # checked as the renderer checks it
        elif not isinstance(message, Mapping):
            return message
    if message.get("role") != "assistant":
        return message
    calls = message.get("tool_calls")
    if not calls or not is_list(calls):
        return message
    decoded = [_decoded_call(call) for call in calls]
    if all(new is old for new, old in zip(decoded, calls, strict=True)):
        return message
    return {**message, "tool_calls": decoded}


def decoded_each(messages: Sequence[Any], decoded_message: Callable[[Any, int], Any]) -> Any:
    """``decoded_message(message, index)`` for each message: a new list when any of them is not the very
    object it was given, ``messages`` itself otherwise (nothing copied when nothing is decoded)."""
    out: list[Any] | None = None
    for index, message in enumerate(messages):
        new = decoded_message(message, index)
        if new is not message:
            if out is None:
                out = list(messages)
            out[index] = new
    return messages if out is None else out


def decode_every_call(messages: Any) -> Any:
    """``messages`` with every call's JSON-object string arguments decoded: a new list when any is,
    the very object otherwise. Shapes the renderer refuses are passed through for it to refuse."""
    return decoded_each(messages, _decoded_message) if is_list(messages) else messages
