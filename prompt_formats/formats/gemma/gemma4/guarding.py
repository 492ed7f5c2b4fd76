"""What Gemma 4's template writes that the guard does not read, checked or refused under a guard.

The guard reads contents, roles, an assistant's calls and (unless it trusts the assistant) the first
of its reasoning fields, as :data:`~..untrusted.GEMMA4_READING` says. The template writes more: the
reasoning and the calls of every role but ``tool`` (its thought from ``reasoning`` first), a leading
system message's list items' ``text`` whatever their type, and a tool result's ``name`` where no
call's id matches it. Those are checked here, the guarded text passed on. A message's
``tool_responses`` (Gemma's own field for results carried by the assistant) is refused: its names and
values are written in the template's notation, which the guard does not read.
"""

from __future__ import annotations

from typing import Any

from ...._text.plain import printed_value
from ....errors import InvalidInputError
from ....guard import ControlTokenGuard
from ....model.reading import REASONING_FIELDS

__all__ = ["guarded_extras"]


def _system_items(guard: ControlTokenGuard, first: dict[str, Any]) -> dict[str, Any]:
    content: Any = first.get("content")
    if type(content) not in (list, tuple):
        return first
    items = list(content)
    for j, item in enumerate(items):
        if type(item) is dict and "text" in item:
            text = item["text"] if type(item["text"]) is str else printed_value(item["text"], "messages[0].content")
            checked = guard.guard_content(text, f"messages[0].content[{j}].text")
            if checked is not item["text"]:
                items[j] = {**item, "text": checked}
    return first if all(a is b for a, b in zip(items, content, strict=True)) else {**first, "content": items}


def _written_by_any_role(guard: ControlTokenGuard, message: dict[str, Any], i: int) -> dict[str, Any]:
    """Every reasoning field and the calls of a message whose role is not ``assistant`` (which the guard
    reads as untrusted content alone), and every reasoning field of an assistant's it does not trust."""
    assistant = message.get("role") == "assistant"
    changes: dict[str, Any] = {}
    if not (assistant and guard.trust_assistant):
        for key in REASONING_FIELDS:
            value = message.get(key)
            if type(value) is str:
                checked = guard.guard_content(value, f"messages[{i}].{key}")
                if checked is not value:
                    changes[key] = checked
    calls = message.get("tool_calls")
    if not assistant and calls:
        checked = guard.guard_tool_calls(calls, f"messages[{i}].tool_calls", name_followed_by="")
        if checked is not calls:
            changes["tool_calls"] = checked
    return {**message, **changes} if changes else message


def guarded_extras(guard: ControlTokenGuard, msgs: list[dict[str, Any]], system_first: bool) -> list[dict[str, Any]]:
    """``msgs`` (already guarded as the reading says) with the fields the guard does not read
    checked; :class:`InvalidInputError` at a ``tool_responses`` field."""
    out = list(msgs)
    if system_first:
        out[0] = _system_items(guard, out[0])
    for i, message in enumerate(out):
        if message.get("tool_responses"):
            raise InvalidInputError(f"messages[{i}].tool_responses", "the template writes it in its own "
                                    "notation, which the guard does not read: refused with a guard")
        if message.get("role") == "tool":
            name = message.get("name")
            if type(name) is str:
                checked = guard.guard_content(name, f"messages[{i}].name")
                if checked is not name:
                    out[i] = {**message, "name": checked}
            continue
        out[i] = _written_by_any_role(guard, message, i)
    return out
