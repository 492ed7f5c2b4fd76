"""The one walk of Ollama's gpt-oss Go template: the header, then every message in the template's order.

This is the only place the template's layout is written. ``render`` is the walk; ``render_spans``
is the walk with ``notes`` (where each message's text went; :mod:`.spans` makes the ranges and
:mod:`.drops` the losses from them, after the walk); a session's incremental render is the walk
over the new messages, after the pieces it kept (:mod:`.incremental`). What it reproduces
(collation, the header, prefill, the fields read) is written in the docstring of
:mod:`prompt_formats.formats.harmony.ollama`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...._text.plain import as_handed
from ....errors import InvalidInputError, type_name
from ....format.chat_format import Conversation, Tools
from ....model.messages import ImagePart, Message, TextPart, ToolCall, VideoPart, named_function
from ....model.reading import call_body, is_list, part_kind, reasoning_field
from ....model.tools import PreparedTools, rendered_tools
from ..tokens import (
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

__all__ = [
    "PROLOGUE",
    "SYSTEM",
    "UNWRITTEN",
    "Note",
    "UnsupportedContentError",
    "finish",
    "open_marker",
    "prologue",
    "render_harmony",
    "take_out",
    "write_messages",
]


class UnsupportedContentError(InvalidInputError):
    """A content part the format cannot render (the Harmony template is text-only: images, videos).

    ``path`` names the part, e.g. ``messages[2].content[1]``.
    """


#: One message as the writers read it: (role, content, reasoning, tool name).
Fields = tuple[str, str, "str | None", "str | None"]

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
        # else is read by _tool_name (agents offer dozens of tools on every request).
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
    if type(tools) is list:
        offers = _offers_python(tools)
    elif isinstance(tools, PreparedTools):
        offers = rendered_tools(tools, "harmony.offers_python", _offers_python)
    elif is_list(tools):
        offers = _offers_python(tools)
    else:
        raise InvalidInputError("tools", f"expected a list of tool objects, got {type_name(tools)}")
    return PYTHON_TOOL if offers else ""


# Messages. -----------------------------------------------------------------------------------------


def _as_set(record: Any) -> Any:
    """A :class:`Message`, :class:`ToolCall` or :class:`TextPart` to read fields of as they were set.

    attrs does not check a field's declared type when the record is built; a compiled module checks
    it on reading the field (a ``TypeError``). Read through ``Any``, a wrong value reaches the check
    that names it (:class:`InvalidInputError`), in both builds.
    """
    return record


def _part_path(index: int, j: int) -> str:
    return f"messages[{index}].content[{j}]"


def _part_string(value: Any, index: int, j: int) -> str:
    if isinstance(value, str):
        return value
    raise InvalidInputError(_part_path(index, j) + ".text", f"expected a string, got {type_name(value)}")


def _part_text(part: Any, index: int, j: int) -> str:
    """Part ``j``'s text (of message ``index``); an image or video part raises :class:`UnsupportedContentError`.

    The path an error names is made only then: a part read costs no string building.
    """
    if type(part) is dict or isinstance(part, Mapping):
        part = as_handed(part)  # (a mapping other than a dict as its items: its own [] could lie)
        kind = part_kind(part)
        if kind == "text":
            return _part_string(part["text"], index, j)
        if kind == "unknown":
            raise InvalidInputError(_part_path(index, j), f"unknown content part type {part.get('type')!r}")
    elif isinstance(part, TextPart):
        return _part_string(_as_set(part).text, index, j)
    elif isinstance(part, ImagePart):
        kind = "image"
    elif isinstance(part, VideoPart):
        kind = "video"
    else:
        raise InvalidInputError(_part_path(index, j), f"expected a content part object, got {type_name(part)}")
    raise UnsupportedContentError(
        _part_path(index, j), f"{kind} parts are not supported by the harmony format (text only)"
    )


def _plain_content(content: Any) -> str | None:
    """A content that is not a string as :func:`_content_text` reads it, when ``None`` or a list of
    ``{"type": "text", "text": str}`` parts (which part_kind reads as text: no other key); else
    ``None``, and nothing raised (the walk hands such a message to :func:`_fields`)."""
    if content is None:
        return ""
    if type(content) is not list:
        return None
    texts = []
    for part in content:
        kind = part.get("type") if type(part) is dict and len(part) == 2 else None
        text = part.get("text") if type(kind) is str and kind == "text" else None  # (else read by _part_text)
        if type(text) is not str:
            return None
        texts.append(text)
    return "\n\n".join(texts)


def _content_text(content: Any, index: int) -> str:
    """A message's content as the template prints it: ``None`` is empty, text parts join after a blank line."""
    text = _plain_content(content)
    if text is not None:
        return text
    if isinstance(content, (list, tuple)):  # a part that is not a plain text part: each read by _part_text
        return "\n\n".join([_part_text(part, index, j) for j, part in enumerate(content)])
    raise InvalidInputError(
        f"messages[{index}].content", f"expected a string, a list of parts or null, got {type_name(content)}"
    )


def _optional_text(value: Any, index: int, key: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InvalidInputError(f"messages[{index}].{key}", f"expected a string, got {type_name(value)}")


def _first_text(message: Mapping[str, Any], key: str | None, index: int) -> str | None:
    return None if key is None else _optional_text(message.get(key), index, key)


def _fields(message: Any, index: int) -> Fields:
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
        record = _as_set(message)
        role = record.role
        content = record.content
        thinking = _optional_text(record.reasoning, index, "reasoning") if role == "assistant" else None
        name = _optional_text(record.name, index, "name") if role == "tool" else None
    else:
        raise InvalidInputError(f"messages[{index}]", f"expected a message object, got {type_name(message)}")
    if not isinstance(role, str):
        raise InvalidInputError(f"messages[{index}].role", f"expected a string, got {type_name(role)}")
    if not isinstance(content, str):
        content = _content_text(content, index)
    return "system" if role == "developer" else role, content, thinking, name


def _tool_call_id(message: Any, index: int) -> str | None:
    value = _as_set(message).tool_call_id if isinstance(message, Message) else message.get("tool_call_id")
    return _optional_text(value, index, "tool_call_id")


def _plain(message: Any, index: int) -> dict[str, Any]:
    """A message the walk does not read inline, read by :func:`_fields` (which raises for what is
    wrong with it) into the plain dict the walk reads: its content a string."""
    message = as_handed(message)
    role, content, thinking, name = _fields(message, index)
    call_id = _as_set(message).tool_call_id if isinstance(message, Message) else message.get("tool_call_id")
    return {"role": role, "content": content, "reasoning_content": thinking, "tool_name": name, "tool_call_id": call_id}


def _call_names(messages: Sequence[Any]) -> dict[str, str]:
    """tool call id -> tool name, as Ollama's ``nameFromToolCallID`` finds it.

    Ollama searches the messages from the last to the first and, within one message, its tool
    calls in order; the first call with the id wins. Malformed calls are skipped (the template never
    reads tool calls; they serve only to name a tool result).
    """
    names: dict[str, str] = {}
    for message in reversed(messages):
        if type(message) is dict:
            calls = message.get("tool_calls")
        elif isinstance(message, Message):
            calls = _as_set(message).tool_calls
        else:
            calls = as_handed(message).get("tool_calls") if isinstance(message, Mapping) else None
        if not isinstance(calls, (list, tuple)):
            continue
        for call in calls:
            call_id = _id_of(call)
            if isinstance(call_id, str) and call_id not in names:
                name = _name_of(call)
                names[call_id] = name if isinstance(name, str) else ""
    return names


def _id_of(call: Any) -> Any:
    """A tool call's id as given: a :class:`ToolCall`'s, a mapping's (a Message may hold its calls
    as dicts, as a dict message does); ``None`` for anything else."""
    if isinstance(call, ToolCall):
        return _as_set(call).id
    return call.get("id") if isinstance(call, Mapping) else None


def _name_of(call: Any) -> Any:
    """The name of a call :func:`_id_of` read an id of."""
    if isinstance(call, ToolCall):
        return _as_set(call).name
    function = call_body(call)
    return function.get("name") if isinstance(function, Mapping) else None


# The template's order: the prologue, then the one walk. ---------------------------------------------
#
# The template's first loop (the last user message's index, whether a prefill leaves the last
# message open) looks ahead; the walk answers it as it goes instead, which costs less than a scan
# back from the end: reasoning is written as an analysis message until a user message follows,
# which takes it out again, and finish() takes the <|end|> off the messages a prefill leaves open.
# After the header every piece of `out` is one of a Harmony message's three: its start marker, its
# text, its end (<|end|>, or "" where the template leaves it off; all three "" once taken out).

#: The header's pieces: SYSTEM_START, system text, DATE, date, reasoning line, tools text, SYSTEM_END.
PROLOGUE = 7

#: A note of the walk (``notes``): ``(message index, piece, offset, size)``: ``size`` characters of
#: the message's text at ``offset`` in ``out[piece]``; for a system text, ``piece`` is ``SYSTEM`` and
#: ``offset`` its place among the header's system texts; a message the template writes nothing for,
#: ``(index, UNWRITTEN, 0, 0)``.
Note = tuple[int, int, int, int]
SYSTEM = 1
UNWRITTEN = -1


def prologue(messages: Conversation, tools: Tools, date: str, reasoning_line: str) -> list[str]:
    """The header's pieces; its system text, ``[1]``, is filled in by :func:`finish`.

    Checks ``messages`` is a list and ``tools`` (raising
    :class:`~prompt_formats.errors.InvalidInputError` naming the field).
    """
    if type(messages) is not list and not is_list(messages):
        raise InvalidInputError("messages", f"expected a list of messages, got {type_name(messages)}")
    tools_text = _tools_text(tools) if tools else ""
    return [SYSTEM_START, "", DATE, date, reasoning_line, tools_text, SYSTEM_END]


def take_out(out: list[str], analyses: list[int]) -> None:
    """Take out the analysis messages at ``analyses``: a user message follows them (the template
    writes reasoning after the last user message only)."""
    for at in analyses:
        out[at] = out[at + 1] = out[at + 2] = ""
    analyses.clear()


def finish(out: list[str], system: list[str], open_marker: str | None) -> str:
    """The prompt: the header's system text filled in; then the generation prompt, or, for a prefill
    (``open_marker``, see :func:`open_marker`), the ``<|end|>`` taken off every message it leaves open."""
    out[1] = "\n\n".join(system)
    if open_marker is None:
        out.append(GENERATION)
    else:
        for at in range(PROLOGUE, len(out), 3):
            if out[at] is open_marker:
                out[at + 2] = ""
    return "".join(out)


def open_marker(out: list[str], last_role: Any, run: int) -> str | None:
    """The start marker of the messages whose ``<|end|>`` a prefill leaves off, or ``None``: ``FINAL``
    when the last message is an assistant run with content, ``ANALYSIS`` when with reasoning only."""
    return out[-3] if last_role == "assistant" and len(out) > run else None


def write_messages(messages: Sequence[Any], out: list[str], system: list[str], notes: list[Note] | None = None,
                   named: set[Any] | None = None) -> tuple[Any, int, list[int]]:
    """Write each message after ``out`` (a system text to ``system``) in the template's order, reading what
    the template reads of it (a plain dict here, the rest by :func:`_fields`, which checks it; ``notes``:
    where each text went; ``named``: gets the ids that name tool results); the last message's role,
    where the latest assistant run starts in ``out``, where the analyses a user message would take out start."""
    analyses: list[int] = []  # the analysis messages a user message would take out
    previous: Any = None
    run = 0
    names: dict[str, str] | None = None  # tool call id -> name, once a tool result needs it
    for index, message in enumerate(messages):
        read: dict[str, Any] = message if type(message) is dict else _plain(message, index)
        if type(content := read.get("content")) is not str and (content := _plain_content(content)) is None:
            read = _plain(message, index)
            content = read["content"]
        role = read.get("role")
        if role == "tool":
            if (name := read.get("tool_name")) is None:
                name = read.get("name")
            if not name or type(name) is not str:  # named by its call, or refused
                name, names = _tool_name_of(messages, read, index, name, names, named)
            if name == "python":
                if notes is not None and content:
                    notes.append((index, len(out) + 1, 0, len(content)))
                out += (PYTHON_RESULT, content, END)
            elif notes is not None:
                notes.append((index, UNWRITTEN, 0, 0))
        elif role == "assistant":
            thinking = read.get("reasoning_content")  # the first alias not None (reading.reasoning_of)
            if thinking is None and (thinking := read.get("thinking")) is None:
                thinking = read.get("reasoning")
            if thinking is not None and type(thinking) is not str:
                thinking = _fields(read, index)[2]
            if previous == "assistant":
                _merged(out, notes, index, role, content, run)
            else:
                run = len(out)
                if thinking:
                    analyses.append(run)
                    out += (ANALYSIS, thinking, END)
                if content:
                    out += (FINAL, content, END)
                if notes is not None:
                    _assistant_notes(notes, index, run, thinking, content)
        elif role == "user" and previous == "user":
            _merged(out, notes, index, role, content, run)
        elif role == "user":
            if analyses:
                take_out(out, analyses)
            if notes is not None and content:
                notes.append((index, len(out) + 1, 0, len(content)))
            out += (USER, content, END)
        elif role == "system" or role == "developer":  # its text joins the header's, after a blank line
            if notes is not None and content:
                notes.append((index, SYSTEM, len(system), len(content)))
            system.append(content)
        elif notes is not None or type(role) is not str:  # a role the template writes nothing for, or none
            _unwritten(notes, read, index)
        previous = role
    return previous, run, analyses


def _tool_name_of(messages: Sequence[Any], message: dict[str, Any], index: int, name: Any,
                  names: dict[str, str] | None, named: set[Any] | None) -> tuple[Any, dict[str, str] | None]:
    """A tool result's name when it has none (or not a string, which :func:`_fields` refuses): the
    name of the tool call its ``tool_call_id`` names (``names``: :func:`_call_names`, once needed;
    ``named`` gets that id)."""
    if named is not None and not name and (call_id := message.get("tool_call_id")):
        named.add(call_id)
    if name is not None and type(name) is not str:
        name = _fields(message, index)[3]
    if not name and (call_id := _tool_call_id(message, index)):
        names = _call_names(messages) if names is None else names
        name = names.get(call_id, name)
    return name, names


def _unwritten(notes: list[Note] | None, message: dict[str, Any], index: int) -> None:
    """A message of a role the template writes nothing for (noted so); or of no role (raised)."""
    if type(message.get("role")) is not str:
        _fields(message, index)  # raises, naming the role
    elif notes is not None:
        notes.append((index, UNWRITTEN, 0, 0))


def _assistant_notes(notes: list[Note], index: int, run: int, thinking: str | None, content: str) -> None:
    """The notes of an assistant message written at ``run``: its analysis message's text, then its final one's."""
    if thinking:
        notes.append((index, run + 1, 0, len(thinking)))
        run += 3
    if content:
        notes.append((index, run + 1, 0, len(content)))


def _merged(out: list[str], notes: list[Note] | None, index: int, role: str, content: str, run: int) -> None:
    """A user or assistant message after one of its role: its content joins the run's after a blank
    line (``run``: where the latest assistant run's pieces start in ``out``)."""
    if role == "user" or (len(out) > run and out[-3] is FINAL):
        if notes is not None and content:
            notes.append((index, len(out) - 2, len(out[-2]) + 2, len(content)))
        out[-2] += "\n\n" + content  # after the run's last text
    else:  # an assistant run that wrote no final message yet
        if notes is not None and content:
            notes.append((index, len(out) + 1, 2, len(content)))
        out += (FINAL, "\n\n" + content, END)


def render_harmony(messages: Conversation, tools: Tools, date: str, reasoning_line: str) -> str:
    """Render ``messages`` as Ollama's Harmony template does, given the header's date and reasoning line.

    ``date`` is the ``Current date:`` text and ``reasoning_line`` the header's ``"\\nReasoning: …"``
    line (or ``""``); everything else follows the package docstring. Raises
    :class:`~prompt_formats.errors.InvalidInputError` (or its subclass
    :class:`UnsupportedContentError`) naming the offending field for malformed input.
    """
    out = prologue(messages, tools, date, reasoning_line)
    system: list[str] = []
    last_role, run, _ = write_messages(messages, out, system)
    return finish(out, system, open_marker(out, last_role, run))
