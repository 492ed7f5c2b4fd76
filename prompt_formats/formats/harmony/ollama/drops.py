"""What Ollama's Harmony template leaves out of the prompt: ``RenderedPrompt.dropped`` for ``harmony``.

Only ``render_spans`` (and so ``strict=True``) asks for it: :func:`dropped` reads the input again
after the writers have written (and checked) it, so ``render`` does none of this work.

"Held text" (a loss is only ever one of these): a content whose text, read as the template reads it
(parts joined with a blank line), is not empty; a reasoning field (``reasoning_content``,
``thinking``, ``reasoning``; a :class:`~prompt_formats.model.messages.Message`'s ``reasoning``) holding a
non-empty string; a non-empty list of tool calls; a tool; a tool's non-empty ``description`` or
``parameters``. Empty values, ``None`` and identifiers (``tool_call_id``, a call's ``id``, a tool
result's name) are never losses. What is lost (docs/harmony.md, "What the template drops"):

- ``messages[i]``, a whole message, when the template writes nothing for its role and it holds text:
  a tool result whose tool is not ``python``, a role other than system, developer, user, assistant
  and tool (it still separates runs of merged messages);
- ``messages[i].<reasoning field>``: on an assistant message before the last user message, on one
  Ollama's collation merges into the assistant message before it, on any other role, and a reasoning
  field shadowed by an earlier one that is not ``None`` (the first not ``None`` is the one read);
- ``messages[i].tool_calls``: every message's (the template renders no tool call; a call's id and
  name may still name a python tool result);
- ``tools[i]``: every tool not named ``python``, and every one after the first so named; and the
  first python tool's ``description`` and ``parameters`` (the template writes its own fixed text).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ....format.chat_format import Conversation, Tools
from ....model.messages import Message, named_function
from ....model.reading import REASONING_FIELDS
from ....model.tools import PreparedTools, rendered_tools
from .render import _call_names, _content_text, _tool_call_id

__all__ = ["dropped"]

#: The roles the template writes something for (``developer`` is read as ``system``).
_WRITTEN = frozenset({"system", "user", "assistant", "tool"})
#: The keys of a message dict that hold no loss but its content (identifiers and names).
_PLAIN_KEYS = frozenset({"role", "content", "name", "tool_call_id", "tool_name"})


def _tools_dropped(tools: Any) -> tuple[str, ...]:
    """The paths of the tools (and python tool fields) the header leaves out. The tools were checked."""
    found = False
    out: list[str] = []
    for index, tool in enumerate(tools.tools if isinstance(tools, PreparedTools) else tools):
        body, path, name = named_function(tool, f"tools[{index}]")
        if name != "python" or found:
            out.append(f"tools[{index}]")
            continue
        found = True
        out += [f"{path}.{key}" for key in ("description", "parameters") if body.get(key)]
    return tuple(out)


def _last_user(messages: Sequence[Any]) -> int:
    """The index of the last user message, or -1 (the template's ``$lastUserIdx``, in input indices:
    collation keeps the order and a user run is one message)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        role = message.role if isinstance(message, Message) else message.get("role")
        if role == "user":
            return index
    return -1


def _record_fields(message: Message, index: int) -> tuple[str, Any, list[str], bool, bool, Any]:
    """``(role, content, reasoning fields holding text, whether the first of them is the one the
    template reads, whether it has tool calls, tool name)`` of a :class:`Message` the writers accepted."""
    reasonings = ["reasoning"] if isinstance(message.reasoning, str) and message.reasoning else []
    role = message.role
    return ("system" if role == "developer" else role), message.content, reasonings, bool(reasonings), \
        bool(message.tool_calls), message.name


def _reasonings(message: Mapping[str, Any]) -> tuple[list[str], bool]:
    """The reasoning fields of a message dict holding text, and whether the first of them is the one
    the template reads (the first field that is not ``None``)."""
    reasonings: list[str] = []
    first_read = read = False
    for key in REASONING_FIELDS:
        value = message.get(key)
        if value is None:
            continue
        if type(value) is str and value:
            reasonings.append(key)
            first_read = first_read or not read
        read = True
    return reasonings, first_read


def _has_calls(value: Any) -> bool:
    """Whether a message dict's ``tool_calls`` value is a non-empty list of calls."""
    return bool(value) and (type(value) is list or not isinstance(value, (str, Mapping)))


def _reasoning_and_calls_dropped(out: list[str], index: int, reasonings: list[str], calls: bool, shown: bool) -> None:
    """Append the paths of what of a written message is left out: its reasoning fields but the one
    written (``shown``: whether its first is), and its tool calls."""
    path = f"messages[{index}]"
    out += [f"{path}.{key}" for n, key in enumerate(reasonings) if n or not shown]
    if calls:
        out.append(f"{path}.tool_calls")


def dropped(messages: Conversation, tools: Tools) -> tuple[str, ...]:
    """The inputs holding text the template leaves out, as error paths: tools first, then by message.

    For input ``render`` accepted (so the writers checked what they read): the rules are this
    module's docstring. Never raises on such input.
    """
    out = list(rendered_tools(tools, "harmony.dropped", _tools_dropped)) if tools else []
    last_user = _last_user(messages)
    names: dict[str, str] | None = None
    previous: Any = None
    no_reasoning: list[str] = []
    role: Any
    for index, message in enumerate(messages):
        if type(message) is not dict and isinstance(message, Message):
            role, content, reasonings, first_read, calls, name = _record_fields(message, index)
        else:
            role = message.get("role")
            if role == "developer":
                role = "system"
            # A dict of these keys holds nothing but its content: a written role loses nothing, so
            # most messages cost a key test.
            if message.keys() <= _PLAIN_KEYS:
                if role in _WRITTEN and role != "tool":
                    previous = role
                    continue
                reasonings, first_read, calls = no_reasoning, False, False
            else:
                reasonings, first_read = _reasonings(message)
                calls = _has_calls(message.get("tool_calls"))
            content = message.get("content")
            name = message.get("tool_name")
            if name is None:
                name = message.get("name")
        merged = role == previous and role != "tool"
        renders = role in _WRITTEN
        if role == "tool":
            if not name and (call_id := _tool_call_id(message, index)):
                names = _call_names(messages) if names is None else names
                name = names.get(call_id, name)
            renders = name == "python"
        previous = role
        if renders and not reasonings and not calls:  # nothing of it is lost: no paths to make
            continue
        if not renders:
            if reasonings or calls or (content if type(content) is str else _content_text(content, index)):
                out.append(f"messages[{index}]")
            continue
        shown = first_read and role == "assistant" and not merged and index > last_user
        _reasoning_and_calls_dropped(out, index, reasonings, calls, shown)
    return tuple(out)
