"""The walk of the Llama 3.1 and 3.2 templates (``tests/fixtures/families/llama3_1.jinja``,
``llama3_2.jinja``), in their order:

1. the ``bos_token``; the system turn: ``Environment: ipython`` when tools are offered (3.1: or
   built-in tools are named, then their ``Tools:`` line), the knowledge and today's dates, the tools
   as indented JSON when they do not go to the first user message, then the text of a first message
   whose role is ``system`` (trimmed);
2. with tools that go to the first user message (the default): the next message's text (trimmed,
   whatever its role) closes a user turn that lists the tools; none there is the template's error;
3. each other message in turn: one with tool calls as an ``assistant`` turn of its one call (more or
   fewer is the template's error), ``{"name": NAME, "parameters": ARGUMENTS-AS-JSON}`` — 3.1's
   built-in tools as ``<|python_tag|>NAME.call(KEY="VALUE", …)`` — ending ``<|eom_id|>`` when 3.1's
   built-in tools are named, else ``<|eot_id|>``; a ``tool`` or ``ipython`` message as an
   ``ipython`` turn of its content as JSON (a string quoted; a number printed); any other, a turn
   of its role and its text trimmed;
4. the generation prompt ``<|start_header_id|>assistant<|end_header_id|>\\n\\n``.

A content that is no string is printed as Python prints it. Where the engine itself fails (no
messages, a role or a call's name that is no string joined to text, a tool result that is left
out, arguments that are no object under ``.call``), :class:`~prompt_formats.errors.InvalidInputError`
names the field. Reasoning is never written.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..._text.plain import plain_data, printed_value
from ..._text.tojson import indented_json, indented_plain_json, json_refused, tojson, tojson_at
from ...errors import InvalidInputError, TemplateError, too_deep, type_name
from ...model.messages import message_dicts, role_of
from ...model.tools import PreparedTools, rendered_tools
from .tokens import (
    ASSISTANT_HEADER,
    CODE_INTERPRETER,
    ENVIRONMENT,
    EOM,
    EOT,
    IPYTHON_HEADER,
    KNOWLEDGE_DATE,
    NO_FIRST_USER,
    PYTHON_TAG,
    SINGLE_CALL,
    SYSTEM_HEADER,
    SYSTEM_TOOLS_INTRO,
    TODAY,
    USER_HEADER,
    USER_TOOLS_INTRO,
    header,
)

__all__ = ["CALL", "CONTENT", "FOLDED", "Note", "Setup", "Walk", "message_dicts", "turns", "walk"]

#: Where the walk wrote a message's text: ``(message index, piece, offset in it, size)``.
Note = tuple[int, int, int, int]
#: What the walk wrote of a message (``Walk.how``): its content (a turn of its role, or the system
#: turn's text); its content as the first user turn's (whatever its role); its one tool call.
CONTENT, FOLDED, CALL = 1, 2, 3


class Setup(NamedTuple):
    """What the options say, read once a render: the text the prompt starts with, the tools the
    template writes (``custom_tools`` replaces ``tools``; ``None``: none offered), whether they go to
    the first user message, the date written, and 3.1's built-in tools (a tuple of their plain data,
    or ``None``: given as null, or not given, which ``builtin_given`` tells apart); ``tools_path``
    names the tools in errors (``"custom_tools"`` when those are written)."""

    bos: str
    tools: Any
    in_user: bool
    date: str
    builtin: Any = None
    builtin_given: bool = False
    tools_path: str = "tools"


def _trimmed(value: Any, path: str) -> str:
    """``value|trim``: a string stripped; nothing for a value left out; any other value printed, then stripped."""
    if type(value) is str:
        return value.strip()
    if value is None:  # (a None key is left out: undefined, which prints as nothing)
        return ""
    return printed_value(value, path).strip()


def _crash(path: str, value: Any, expected: str, why: str) -> InvalidInputError:
    problem = "missing" if value is None else f"expected {expected}, got {type_name(value)}"
    return InvalidInputError(path, f"{problem}: the template {why}")


def _indented(value: Any, path: str, plain: bool) -> str:
    """``value|tojson(indent=4)``, as transformers' filter writes it (``plain``: of exact JSON types)."""
    try:
        return indented_plain_json(value) if plain else indented_json(value)
    except (TypeError, ValueError, RecursionError) as exc:
        return json_refused(value, path, exc)  # (too deep for this stack: unindented would differ)


def _tools_json(tools: Any, base: str = "tools", plain: bool = True) -> str:
    """Each tool as indented JSON and a blank line (``plain``: the tools are of exact JSON types)."""
    return "".join([_indented(tool, f"{base}[{k}]", plain) + "\n\n" for k, tool in enumerate(tools)])


def tools_json(setup: Setup) -> str:
    """The tools offered as the template lists them. The request's are cached on their toolset, which
    hands the build exact JSON types (a copy, or their plain data); ``custom_tools`` are plain data."""
    tools = setup.tools
    if isinstance(tools, PreparedTools) or (type(tools) is list and tools and all(type(t) is dict for t in tools)):
        return rendered_tools(tools, "llama.tools", _tools_json)
    return _tools_json(tools, setup.tools_path, setup.tools_path == "custom_tools")


def system_head(setup: Setup) -> str:
    """The system turn up to the system message's text."""
    pieces = [SYSTEM_HEADER]
    if setup.builtin_given or setup.tools is not None:
        pieces.append(ENVIRONMENT)
    if setup.builtin_given:
        pieces.append("Tools: " + ", ".join(_builtin_names(setup.builtin or ())) + "\n\n")
    pieces += [KNOWLEDGE_DATE, TODAY, setup.date, "\n\n"]
    if setup.tools is not None and not setup.in_user:
        pieces += [SYSTEM_TOOLS_INTRO, tools_json(setup)]
    return "".join(pieces)


def _builtin_names(builtin: tuple[Any, ...]) -> list[str]:
    """The built-in tools the system turn names (all but the code interpreter), as printed."""
    named = []
    for k, tool in enumerate(builtin):
        if tool != CODE_INTERPRETER:
            try:
                named.append(printed_value(tool, "builtin_tools"))
            except RecursionError:  # (an item the option's reading took, too deep to print: named)
                raise too_deep(f"builtin_tools[{k}]") from None
    return named


class Walk:
    """One walk of the template over a conversation: the pieces it writes, and (for spans) its notes
    and what it wrote of each message (``how``). Per call; not shared."""

    __slots__ = ("how", "notes", "out", "setup")

    def __init__(self, out: list[str], setup: Setup, noted: bool = False) -> None:
        self.out = out
        self.setup = setup
        self.notes: list[Note] | None = [] if noted else None
        self.how: list[int] | None = [] if noted else None

    def _noted(self, i: int, text: str, size: int, how: int) -> None:
        """Write ``text``, of which the first ``size`` characters are message ``i``'s."""
        if self.notes is not None:
            if size:
                self.notes.append((i, len(self.out), 0, size))
            self.how.append(how)  # type: ignore[union-attr]
        self.out.append(text)

    def folded(self, i: int, text: str, how: int) -> None:
        """A message's text at the end of the system turn (``how``: CONTENT) or the first user turn
        (FOLDED), and ``<|eot_id|>``."""
        self._noted(i, text + EOT, len(text), how)

    def message(self, message: dict[str, Any], i: int) -> None:
        """One message after the first turns, as the template writes it."""
        role = message.get("role")
        if type(role) is not str:
            role = role_of(message, i)  # (read as plain data, or refused)
        calls = message.get("tool_calls")
        if calls is not None:  # (a None key is left out)
            self._call(calls, i)
            return
        content = message.get("content")
        if role == "tool" or role == "ipython":
            self.out.append(IPYTHON_HEADER)
            text = _result(content, i)
            self._noted(i, text + EOT, len(text), CONTENT)
            return
        if type(role) is not str:
            raise _crash(f"messages[{i}].role", role, "a string", "joins it to text")
        text = content.strip() if type(content) is str else _trimmed(content, f"messages[{i}].content")
        self.out.append(header(role))
        self._noted(i, text + EOT, len(text) + len(EOT) if role == "assistant" else len(text), CONTENT)

    def _call(self, calls: Any, i: int) -> None:
        # (the paths are made only for an error: a turn of calls is most of an agent's history)
        if type(calls) not in (list, tuple, str, dict):
            raise _crash(f"messages[{i}].tool_calls", calls, "a list of tool calls", "takes its length")
        if len(calls) != 1:
            raise TemplateError(SINGLE_CALL)
        call = calls[0] if type(calls) in (list, tuple) else calls.get(0) if type(calls) is dict else None
        function = call.get("function") if type(call) is dict else None
        if type(function) is not dict:
            raise _crash(f"messages[{i}].tool_calls[0].function", function, "an object", "reads its name")
        name = function.get("name")
        setup = self.setup
        if setup.builtin_given and type(name) is str and _is_builtin(name, setup.builtin, i):
            text = _builtin_call(name, function, f"messages[{i}].tool_calls[0].function")
        else:
            text = _json_call(name, function, i)
        text += EOM if setup.builtin_given else EOT
        self.out.append(ASSISTANT_HEADER)
        self._noted(i, text, len(text), CALL)


def _is_builtin(name: str, builtin: Any, i: int) -> bool:
    """``name in builtin_tools``: the engine fails for built-in tools given as null."""
    if builtin is None:
        raise InvalidInputError("builtin_tools", f"null: the template asks whether messages[{i}].tool_calls[0]"
                                ".function.name is in it")
    return name in builtin


def _json_call(name: Any, function: dict[str, Any], i: int) -> str:
    """``{"name": NAME, "parameters": ARGUMENTS}``, the arguments as JSON (whatever they are)."""
    if type(name) is not str:
        raise _crash(f"messages[{i}].tool_calls[0].function.name", name, "a string", "joins it to text")
    if "arguments" not in function:
        raise _crash(f"messages[{i}].tool_calls[0].function.arguments", None, "", "writes it as JSON")
    arguments = function["arguments"]
    try:
        written = tojson(arguments)
    except (TypeError, ValueError, RecursionError) as exc:
        written = json_refused(arguments, f"messages[{i}].tool_calls[0].function.arguments", exc)
    return '{"name": "' + name + '", "parameters": ' + written + "}"


def _builtin_call(name: Any, function: dict[str, Any], path: str) -> str:
    """``<|python_tag|>NAME.call(KEY="VALUE", …)``: every key and value must be a string."""
    if type(name) is not str:
        raise _crash(f"{path}.name", name, "a string", "joins it to text")
    arguments = function.get("arguments", {})  # (left out: no items)
    if type(arguments) is not dict:
        raise _crash(f"{path}.arguments", arguments, "an object", "writes its items")
    pairs = []
    for key, value in arguments.items():
        if type(key) is not str or type(value) is not str:
            raise _crash(f"{path}.arguments", key if type(key) is not str else value, "strings",
                         "joins each key and value to text")
        pairs.append(key + '="' + value + '"')
    return PYTHON_TAG + name + ".call(" + ", ".join(pairs) + ")"


def _result(content: Any, i: int) -> str:
    """Message ``i``'s tool result as the template writes it: a mapping or anything iterable (a
    string too) as JSON; a number or boolean printed; left out, the engine fails (undefined is no JSON)."""
    kind = type(content)
    if kind is str:
        return tojson(content)
    if kind is list or kind is dict or kind is tuple:
        return tojson_at(content, f"messages[{i}].content")
    if kind is int or kind is float or kind is bool:
        return printed_value(content, f"messages[{i}].content")
    if content is None:
        raise _crash(f"messages[{i}].content", None, "", "writes it as JSON")
    return _result(plain_data(content), i)  # (of exact JSON types: read above)


def turns(msgs: list[dict[str, Any]], setup: Setup, noted: bool = False) -> Walk:
    """:func:`walk` without the generation prompt (what a session keeps)."""
    if not msgs:
        raise InvalidInputError("messages", "expected at least one message: the template reads the first one's role")
    written = Walk([setup.bos, system_head(setup)], setup, noted)
    first = 0
    if role_of(msgs[0], 0) == "system":
        written.folded(0, _trimmed(msgs[0].get("content"), "messages[0].content"), CONTENT)
        first = 1
    else:
        written.out.append(EOT)
    if setup.tools is not None and setup.in_user:
        if first == len(msgs):
            raise TemplateError(NO_FIRST_USER)
        text = _trimmed(msgs[first].get("content"), f"messages[{first}].content")
        written.out.append(USER_HEADER + USER_TOOLS_INTRO + tools_json(setup))
        written.folded(first, text, FOLDED)
        first += 1
    for i in range(first, len(msgs)):
        written.message(msgs[i], i)
    return written


def walk(msgs: list[dict[str, Any]], setup: Setup, generation: Any, noted: bool = False) -> Walk:
    """The template's walk over ``msgs`` (the messages as dicts); ``noted``: with the notes and what
    it wrote of each message (``render_spans``). The prompt is ``"".join(walk.out)``."""
    written = turns(msgs, setup, noted)
    if generation:
        written.out.append(ASSISTANT_HEADER)
    return written
