"""What Ollama's Harmony template leaves out of the prompt: ``RenderedPrompt.dropped`` for ``harmony``.

Only ``render_spans`` (and so ``strict=True``) asks for it: :func:`dropped` reads what each message
holds after the walk has written (and checked) it, and what the walk did with it from its notes
(:func:`~.render.write_messages`): whether it wrote the message at all, and whether it wrote its
reasoning. ``render`` does none of this work.

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

from collections.abc import Mapping
from typing import Any

from ...._text.plain import JSON_TYPES, as_handed
from ....format.chat_format import Conversation, Tools
from ....format.spans import calls_hold_text
from ....model.messages import Message, named_function
from ....model.reading import REASONING_FIELDS
from ....model.tools import PreparedTools, rendered_tools
from ..tokens import ANALYSIS
from .render import UNWRITTEN, Note, _content_text

__all__ = ["dropped"]

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


def _dropped_tools(tools: Any) -> tuple[str, ...]:
    """:func:`_tools_dropped` of ``tools``: read directly when what it reads of them is of exact JSON
    types, where that is cheaper than any cache's key (a tool not named ``python`` is read for its name
    only); else from the toolset's cache, which reads them as plain data."""
    if type(tools) is list or type(tools) is tuple:
        out: list[str] = []
        found = False
        for index, tool in enumerate(tools):
            body: Any = tool.get("function", tool) if type(tool) is dict else None
            name = body.get("name") if type(body) is dict else None
            if type(name) is not str:
                break
            if name != "python" or found:
                out.append(f"tools[{index}]")
            elif type(body.get("description")) in JSON_TYPES and type(body.get("parameters")) in JSON_TYPES:
                found = True
                path = f"tools[{index}].function" if body is not tool else f"tools[{index}]"
                out += [f"{path}.{key}" for key in ("description", "parameters") if body.get(key)]
            else:
                break
        else:
            return tuple(out)
    return rendered_tools(tools, "harmony.dropped", _tools_dropped)


def _held(message: Any) -> tuple[Any, list[str], bool]:
    """``(content, the reasoning fields holding text, whether it has tool calls)`` of a message the
    walk accepted: a :class:`Message` or a mapping."""
    if type(message) is not dict and isinstance(message, Message):
        reasoning = message.reasoning
        calls = [{"name": call.name, "arguments": call.arguments} for call in message.tool_calls]
        return message.content, ["reasoning"] if isinstance(reasoning, str) and reasoning else [], \
            calls_hold_text(calls)
    message = as_handed(message)
    reasonings = [key for key in REASONING_FIELDS if isinstance(value := message.get(key), str) and str.__len__(value)]
    return message.get("content"), reasonings, _has_calls(message.get("tool_calls"))


def _has_calls(value: Any) -> bool:
    """Whether a message dict's ``tool_calls`` value is a list of calls one of which holds text
    (:func:`~prompt_formats.format.spans.calls_hold_text`: an empty call loses nothing)."""
    return bool(value) and (type(value) is list or not isinstance(value, (str, Mapping))) and calls_hold_text(value)


def dropped(messages: Conversation, tools: Tools, out: list[str], notes: list[Note]) -> tuple[str, ...]:
    """The inputs holding text the template leaves out, as error paths: tools first, then by message.

    For input ``render`` accepted, given the pieces and ``notes`` of its walk with the notes
    (:func:`~.render.write_messages`): the rules are this module's docstring. Never raises on such input.
    """
    found = list(_dropped_tools(tools)) if tools else []
    unwritten = {index for index, piece, _, _ in notes if piece == UNWRITTEN}
    shown: set[int] | None = None  # made when a message's reasoning is first asked about
    for index, message in enumerate(messages):
        if type(message) is dict and message.keys() <= _PLAIN_KEYS:  # (its content is all it holds)
            if index in unwritten and _content_holds(message.get("content"), index):
                found.append(f"messages[{index}]")
            continue
        content, reasonings, calls = _held(message)
        if index in unwritten:
            if reasonings or calls or _content_holds(content, index):
                found.append(f"messages[{index}]")
            continue
        if reasonings:
            shown = _shown(out, notes) if shown is None else shown
            # (the first reasoning field not None is the one written: shown, when the prompt holds it)
            found += [f"messages[{index}].{key}" for key in (reasonings[1:] if index in shown else reasonings)]
        if calls:
            found.append(f"messages[{index}].tool_calls")
    return tuple(found)


def _shown(out: list[str], notes: list[Note]) -> set[int]:
    """The messages whose reasoning the prompt holds: a text in an analysis message the walk left in
    (one a later user message took out holds ``""`` where its start marker was)."""
    return {index for index, piece, _, _ in notes if piece != UNWRITTEN and out[piece - 1] is ANALYSIS}


def _content_holds(content: Any, index: int) -> bool:
    """Whether a content the walk read holds text, read as the template reads it (parts joined)."""
    return bool(content if type(content) is str else _content_text(content, index))
