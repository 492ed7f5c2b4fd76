"""The Harmony renderer: Ollama's gpt-oss Go template, in its order (collate, header, one writer per role).

What it reproduces (collation, the header, prefill, the fields read) is written in the docstring of
:mod:`prompt_formats.formats.harmony`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...errors import InvalidInputError, type_name
from ...format import Conversation, Tools
from ...messages import ImagePart, Message, TextPart, VideoPart, named_function
from ...shape import call_body, is_list, part_kind, reasoning_field
from ...tools import PreparedTools, rendered_tools
from .tokens import (
    ANALYSIS,
    DATE,
    END,
    FINAL,
    GENERATION,
    PYTHON_RESULT,
    PYTHON_TOOL,
    SYSTEM_END,
    SYSTEM_START,
    USER,
)

__all__ = ["Entry", "Member", "UnsupportedContentError", "collated", "message_ends", "render_harmony"]


class UnsupportedContentError(InvalidInputError):
    """A content part the format cannot render (the Harmony template is text-only: images, videos).

    ``path`` names the part, e.g. ``messages[2].content[1]``.
    """


#: One collated message: (role, content, reasoning, tool name).
Entry = tuple[str, str, "str | None", "str | None"]

#: A message merged into an earlier message's entry: (index of the entry, the message's content).
Member = tuple[int, str]

#: Where a tool result's name is read, the first non-``None`` winning (Ollama's ``tool_name``).
_TOOL_NAME_FIELDS = ("tool_name", "name")


# Tools: only whether one is named "python" matters. ------------------------------------------------


def _tool_name(tool: Any, index: int) -> Any:
    if not isinstance(tool, Mapping):
        raise InvalidInputError(f"tools[{index}]", f"expected a tool object, got {type_name(tool)}")
    return named_function(tool, f"tools[{index}]")[2]


def _offers_python(tools: Iterable[Any]) -> bool:
    found = False
    for i, tool in enumerate(tools):
        # Fast path for the usual {"type": "function", "function": {"name": ...}} dict; anything
        # else is read by _tool_name (bench_harmony.py, "coding agent, 40 tools").
        function = tool.get("function") if type(tool) is dict else None
        name = function.get("name") if type(function) is dict else None
        if type(name) is not str:
            name = _tool_name(tool, i)
        if name == "python":
            found = True
    return found


def _tools_text(tools: Sequence[Mapping[str, Any]] | PreparedTools) -> str:
    """The header's tools text of non-empty ``tools``: the python block if a tool named ``python`` is
    offered, else ``""``.

    Every tool's name is checked (``tools[i].function.name: expected a string``); a
    :class:`PreparedTools` is checked once and the answer cached on it.
    """
    if isinstance(tools, PreparedTools):
        offers = rendered_tools(tools, "harmony.offers_python", _offers_python)
    elif is_list(tools):
        offers = _offers_python(tools)
    else:
        raise InvalidInputError("tools", f"expected a list of tool objects, got {type_name(tools)}")
    return PYTHON_TOOL if offers else ""


# Messages. -----------------------------------------------------------------------------------------


def _text(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(path, f"expected a string, got {type_name(value)}")
    return value


def _part_text(part: Any, path: str) -> str:
    """A text part's text; an image or video part raises :class:`UnsupportedContentError`."""
    if isinstance(part, Mapping):
        kind = part_kind(part)
        if kind == "text":
            return _text(part["text"], path + ".text")
        if kind == "unknown":
            raise InvalidInputError(path, f"unknown content part type {part.get('type')!r}")
    elif isinstance(part, TextPart):
        return _text(part.text, path + ".text")
    elif isinstance(part, ImagePart):
        kind = "image"
    elif isinstance(part, VideoPart):
        kind = "video"
    else:
        raise InvalidInputError(path, f"expected a content part object, got {type_name(part)}")
    raise UnsupportedContentError(path, f"{kind} parts are not supported by the harmony format (text only)")


def _content_text(content: Any, index: int) -> str:
    if content is None:
        return ""
    if isinstance(content, (list, tuple)):
        return "\n\n".join([_part_text(part, f"messages[{index}].content[{j}]") for j, part in enumerate(content)])
    raise InvalidInputError(
        f"messages[{index}].content", f"expected a string, a list of parts or null, got {type_name(content)}"
    )


def _optional_text(value: Any, index: int, key: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InvalidInputError(f"messages[{index}].{key}", f"expected a string, got {type_name(value)}")


def _first_text(message: Mapping[str, Any], key: str | None, index: int) -> str | None:
    return None if key is None else _optional_text(message.get(key), index, key)


def _fields(message: Any, index: int) -> Entry:
    """``(role, content, thinking, tool_name)`` of one message, validated; ``developer`` -> ``system``.

    Reasoning is read (and validated) only on assistant messages and the tool name only on tool
    messages: the template reads them nowhere else. Absent ones are ``None``.
    """
    if isinstance(message, Mapping):
        role = message.get("role")
        content = message.get("content")
        thinking = name = None
        if role == "assistant":
            thinking = _first_text(message, reasoning_field(message), index)
        elif role == "tool":
            key = next((key for key in _TOOL_NAME_FIELDS if message.get(key) is not None), None)
            name = _first_text(message, key, index)
    elif isinstance(message, Message):
        role = message.role
        content = message.content
        thinking = _optional_text(message.reasoning, index, "reasoning") if role == "assistant" else None
        name = _optional_text(message.name, index, "name") if role == "tool" else None
    else:
        raise InvalidInputError(f"messages[{index}]", f"expected a message object, got {type_name(message)}")
    if not isinstance(role, str):
        raise InvalidInputError(f"messages[{index}].role", f"expected a string, got {type_name(role)}")
    if not isinstance(content, str):
        content = _content_text(content, index)
    return "system" if role == "developer" else role, content, thinking, name


def _tool_call_id(message: Any, index: int) -> str | None:
    value = message.tool_call_id if isinstance(message, Message) else message.get("tool_call_id")
    return _optional_text(value, index, "tool_call_id")


def _call_names(messages: Sequence[Any]) -> dict[str, str]:
    """tool call id -> tool name, as Ollama's ``nameFromToolCallID`` finds it.

    Ollama searches the messages from the last to the first and, within one message, its tool
    calls in order; the first call with the id wins. Malformed calls are skipped (the template never
    reads tool calls; they serve only to name a tool result).
    """
    names: dict[str, str] = {}
    for message in reversed(messages):
        if isinstance(message, Message):
            for call in message.tool_calls:
                if call.id is not None:
                    names.setdefault(call.id, call.name)
            continue
        calls = message.get("tool_calls") if isinstance(message, Mapping) else None
        if not isinstance(calls, (list, tuple)):
            continue
        for call in calls:
            if not isinstance(call, Mapping):
                continue
            call_id = call.get("id")
            if not isinstance(call_id, str) or call_id in names:
                continue
            function = call_body(call)
            name = function.get("name") if isinstance(function, Mapping) else None
            names[call_id] = name if isinstance(name, str) else ""
    return names


def _collate(
    messages: Sequence[Any], system: list[str], entries: list[Entry], merged: list[Member] | None
) -> int:
    """Ollama's collate into ``system`` (the system texts) and ``entries``; the last user entry's index, or -1.

    One entry per run of same-role messages (each tool message its own entry); the run's first
    message keeps its reasoning and tool name, the contents are joined with a blank line. ``merged``
    (render_spans') gets ``(entry index, content)`` of each message merged into an earlier one's entry.
    """
    last_user = -1
    previous = None
    unresolved: list[tuple[int, str]] = []  # (entry, tool_call_id) of tool results given no name
    role: Any
    content: Any
    thinking: Any
    name: Any
    for index, message in enumerate(messages):
        # Fast path for the well-formed dict, reading what _fields reads (the reasoning alias of
        # shape.reasoning_of inlined); anything else is read by _fields (bench_harmony.py, every row).
        if type(message) is dict:
            role = message.get("role")
            content = message.get("content")
            thinking = name = None
            if role == "assistant":
                thinking = message.get("reasoning_content")
                if thinking is None:
                    thinking = message.get("thinking")
                    if thinking is None:
                        thinking = message.get("reasoning")
                ok = type(content) is str and (thinking is None or type(thinking) is str)
            elif role == "tool":
                name = message.get("tool_name")
                if name is None:
                    name = message.get("name")
                ok = type(content) is str and (name is None or type(name) is str)
            else:
                ok = type(content) is str and type(role) is str and role != "developer"
            if not ok:
                role, content, thinking, name = _fields(message, index)
        else:
            role, content, thinking, name = _fields(message, index)
        if role == "system":
            system.append(content)
        if role == previous and role != "tool":
            if merged is not None:
                merged.append((len(entries) - 1, content))
            first = entries[-1]
            entries[-1] = (role, first[1] + "\n\n" + content, first[2], first[3])
            continue
        if role == "user":
            last_user = len(entries)
        elif role == "tool" and not name:
            call_id = _tool_call_id(message, index)
            if call_id:
                unresolved.append((len(entries), call_id))
        entries.append((role, content, thinking, name))
        previous = role
    if unresolved:
        _name_tool_results(entries, unresolved, messages)
    return last_user


def _name_tool_results(entries: list[Entry], unresolved: list[tuple[int, str]], messages: Sequence[Any]) -> None:
    """Name each tool result that has no name after the tool call its ``tool_call_id`` refers to."""
    names = _call_names(messages)
    for position, call_id in unresolved:
        role, content, thinking, name = entries[position]
        entries[position] = (role, content, thinking, names.get(call_id, name))


def collated(
    messages: Conversation, tools: Tools, merged: list[Member] | None = None
) -> tuple[str, list[str], list[Entry], int]:
    """What the template's writers read: ``(tools text, system texts, entries, last user entry or -1)``.

    Checks ``messages`` and ``tools`` (raising :class:`~prompt_formats.errors.InvalidInputError`
    naming the field); ``merged`` as :func:`_collate` fills it.
    """
    if not is_list(messages):
        raise InvalidInputError("messages", f"expected a list of messages, got {type_name(messages)}")
    tools_text = _tools_text(tools) if tools else ""
    system: list[str] = []
    entries: list[Entry] = []
    last_user = _collate(messages, system, entries, merged)
    return tools_text, system, entries, last_user


def message_ends(entries: list[Entry]) -> tuple[str, str]:
    """``(analysis end, final end)``: ``<|end|>``, or ``""`` for the kind of message a prefill leaves
    open. The prompt ends inside the last message when it is an assistant message with content (then
    inside its final message: every final message lacks ``<|end|>``) or with reasoning only (inside
    its analysis message: every analysis message lacks it)."""
    if entries and entries[-1][0] == "assistant":
        if entries[-1][1]:
            return END, ""
        if entries[-1][2]:
            return "", END
    return END, END


def render_harmony(messages: Conversation, tools: Tools, date: str, reasoning_line: str) -> str:
    """Render ``messages`` as Ollama's Harmony template does, given the header's date and reasoning line.

    ``date`` is the ``Current date:`` text and ``reasoning_line`` the header's ``"\\nReasoning: …"``
    line (or ``""``); everything else follows the package docstring. Raises
    :class:`~prompt_formats.errors.InvalidInputError` (or its subclass
    :class:`UnsupportedContentError`) naming the offending field for malformed input.
    """
    tools_text, system, entries, last_user = collated(messages, tools)
    analysis_end, final_end = message_ends(entries)
    out = [SYSTEM_START, "\n\n".join(system), DATE, date, reasoning_line, tools_text, SYSTEM_END]
    # The writers of the roles that render (system messages are in the header; other roles render
    # nothing). Inline, not one function per role: a call per message costs bench_harmony.py's rows 5%.
    for index, (role, content, thinking, name) in enumerate(entries):
        if role == "user":
            out += (USER, content, END)
        elif role == "assistant":
            if thinking and index > last_user:
                out += (ANALYSIS, thinking, analysis_end)
            if content:
                out += (FINAL, content, final_end)
        elif role == "tool" and name == "python":
            out += (PYTHON_RESULT, content, END)
    if analysis_end and final_end:  # no prefill: the generation prompt
        out.append(GENERATION)
    return "".join(out)
