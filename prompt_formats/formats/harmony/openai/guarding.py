"""The control-token guard over exactly the fields the gpt-oss template renders.

Untrusted, as the guard's policy defines it: the content of system, developer, user and tool
messages (a first system or developer message's content that is not a string as the template prints
it, with Python's ``str``) (a tool result is written as JSON, so every string in it, keys included); the first tool
call of an assistant message (its name, ``content_type`` and every string of its arguments: the
template renders no other call); the tools (every string). An assistant's content and thinking only
when the guard does not trust the assistant; the thinking checked is the one the template reads
(``thinking``, else ``reasoning_content``, else ``reasoning``).

No token can be formed across a field's edge: every fixed text the template writes next to a field
starts and ends with a complete token or with text holding no ``<|``. Values of shapes the renderer
refuses are passed through for it to refuse.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...._text.plain import plain_data, printed_value
from ....errors import InvalidInputError
from ....model.messages import Message, message_dict
from ....model.reading import is_list
from .render import REASONING_READ

if TYPE_CHECKING:
    from ....format.chat_format import Tools
    from ....guard import ControlTokenGuard

__all__ = ["guard_conversation"]

_PLAIN = frozenset({list, dict, tuple, int, float, bool})


def guard_conversation(guard: ControlTokenGuard, messages: Any, tools: Tools) -> tuple[Any, Tools]:
    """``(messages, tools)`` with the guard's policy applied; the very objects when nothing changed."""
    if guard.policy == "allow":
        return messages, tools
    if type(messages) is not list and type(messages) is not tuple and is_list(messages):
        # Any other sequence (a list subclass too: its indexing could answer otherwise than its
        # iteration), read once: what is checked is what is rendered.
        messages = list(messages)
    if isinstance(messages, (list, tuple)):
        out: list[Any] | None = None
        for index, message in enumerate(messages):
            new = _guard_message(guard, message, index)
            if new is not message:
                if out is None:
                    out = list(messages)
                out[index] = new
        if out is not None:
            messages = out
    return messages, guard.guard_tools(tools)


def _guard_message(guard: ControlTokenGuard, message: Any, index: int) -> Any:
    data: Mapping[str, Any]
    if isinstance(message, Message):
        data = message_dict(message, index)  # (its fields checked: a wrong one is named, not an AttributeError)
    elif type(message) is dict:
        data = message
    else:  # a mapping, a dataclass or a pydantic model as its plain data, which is then what is rendered
        data = message = message_dict(message, index)  # (a dict subclass's own get could answer otherwise)
    role = data.get("role")
    path = f"messages[{index}]"
    changes: dict[str, Any] = {}
    if isinstance(role, str) and type(role) is not str:  # its plain data, which the renderer then reads
        role = changes["role"] = str.__str__(role)
    if role == "tool":
        if "content" in data:
            changes["content"] = guard.guard_json(data["content"], path + ".content")
    elif role != "assistant" or not guard.trust_assistant:
        content = data.get("content")
        if isinstance(content, str):
            changes["content"] = guard.guard_text(content, path + ".content")
        elif index == 0 and role in ("system", "developer"):
            # The template prints any other value with Python's str(): the printed text is checked
            # (and, escaped, written in its place).
            changes["content"] = _guard_printed(guard, content, path + ".content")
    if role == "assistant":
        if not guard.trust_assistant:
            key = next((key for key in REASONING_READ if data.get(key) is not None), "")
            if isinstance(data.get(key), str):
                changes[key] = guard.guard_text(data[key], f"{path}.{key}")
        calls = data.get("tool_calls")
        if isinstance(calls, (list, tuple)) and calls:
            new_call = _guard_first_call(guard, calls[0], path + ".tool_calls[0]")
            if new_call is not calls[0]:
                changes["tool_calls"] = [new_call, *calls[1:]]
    changes = {key: value for key, value in changes.items() if value is not data.get(key)}
    if not changes:
        return message
    return {**data, **changes}


def _guard_printed(guard: ControlTokenGuard, content: Any, path: str) -> Any:
    """The first message's content as the template prints it, the policy applied; ``content``
    itself when it is clean or cannot be read as plain data (the renderer refuses that).

    A value of another type than the JSON types is read once, as its plain copy (what transformers
    hands the template), and that copy is passed on: a subclass could answer ``bool`` differently to
    the guard and to the renderer."""
    try:
        plain = content if content is None or type(content) in _PLAIN else plain_data(content)
        text = printed_value(plain) if plain else ""
    except InvalidInputError:
        return content
    new = guard.guard_text(text, path)
    if new is not text:
        return new
    return content if plain is content else plain


def _guard_first_call(guard: ControlTokenGuard, call: Any, path: str) -> Any:
    """The first tool call with the policy applied to its name, content type and arguments. A call,
    or its ``function``, that is no exact dict is read once as its plain data and that copy checked
    and passed on: its own ``get`` or ``in`` could hide what its items hold."""
    if not isinstance(call, Mapping):
        return call
    given = call
    try:
        if type(call) is not dict:
            call = plain_data(call)
        function = call.get("function")
        if function and type(function) is not dict and isinstance(function, Mapping):
            function = plain_data(function)
            call = {**call, "function": function}
    except InvalidInputError:  # (a key that is no text: the renderer refuses the call)
        return given
    body = call
    if function:
        if not isinstance(function, Mapping):
            return call
        body = function
        path += ".function"
    changes: dict[str, Any] = {}
    for key in ("name", "content_type"):
        if isinstance(body.get(key), str):
            changes[key] = guard.guard_text(body[key], f"{path}.{key}")
    if "arguments" in body:
        changes["arguments"] = guard.guard_json(body["arguments"], path + ".arguments")
    changes = {key: value for key, value in changes.items() if value is not body.get(key)}
    if not changes:
        return call
    new_body = {**body, **changes}
    return {**call, "function": new_body} if body is not call else new_body
