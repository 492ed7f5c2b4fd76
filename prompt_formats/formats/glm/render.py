"""The walk of GLM-4.5's template (``tests/fixtures/families/glm4moe.jinja``), in its order:

1. ``[gMASK]<sop>``, then, when tools are offered, a system turn listing each as JSON and the call
   syntax;
2. each message in turn: a user's ``<|user|>\\n`` and its visible text (a string, or a list's text
   parts and strings; anything else printed), ``/nothink`` after it when ``enable_thinking`` is given
   and false; an assistant's ``<|assistant|>``, its think block (its reasoning — a string reasoning
   field, else the part of its content a ``</think>`` closes — only after the last user message;
   else empty), its content stripped, and each tool call as ``<tool_call>NAME`` and its arguments'
   ``<arg_key>``/``<arg_value>`` pairs (a string value as it is, any other as JSON); a tool result
   in ``<tool_response>`` (a run of string results under one ``<|observation|>``; a list of results,
   each item's ``output`` or the item printed, under one of its own); a system message's
   ``<|system|>\\n`` and visible text; any other role, nothing;
3. the generation prompt ``<|assistant|>`` (with an empty think block when thinking is off).

Where the engine itself fails (a call's name that is no string, arguments that are no object, a
tool result that cannot be iterated), :class:`~prompt_formats.errors.InvalidInputError` names the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._text.plain import JSON_TYPES, of_json_type, printed_value, require_plain
from ..._text.tojson import tojson_at
from ...errors import InvalidInputError, type_name
from ...format.chat_format import Tools
from ...model.messages import message_dicts, role_of
from ...model.reading import reasoning_of, template_iterated
from ...model.tools import PreparedTools, rendered_tools
from .tokens import (
    ARG_KEY_CLOSE,
    ARG_KEY_OPEN,
    ARG_VALUE_CLOSE,
    ARG_VALUE_OPEN,
    ASSISTANT,
    EMPTY_THINK,
    NOTHINK,
    OBSERVATION,
    PREFIX,
    RESPONSE_CLOSE,
    RESPONSE_OPEN,
    SYSTEM,
    THINK_CLOSE,
    THINK_OPEN,
    TOOL_CALL_CLOSE,
    TOOL_CALL_OPEN,
    TOOLS_FOOTER,
    TOOLS_HEADER,
    USER,
)

__all__ = [
    "PREFIX", "SHOWN", "UNWRITTEN", "WHOLE", "Note", "Walk", "message_dicts", "reasoning_and_content", "role_of",
    "tail", "tools_block", "turns", "visible_text", "walk",
]

#: Where the walk wrote a message's text: ``(message index, piece, offset in it, size)``.
Note = tuple[int, int, int, int]
#: What the walk wrote of a message (``Walk.how``): nothing; all it writes; an assistant's, its
#: reasoning shown in its think block.
UNWRITTEN, WHOLE, SHOWN = 0, 1, 2


def visible_text(content: Any, path: str) -> str:
    """The template's ``visible_text``: a string; a list's text parts' texts and strings; nothing
    for no content; any other value printed."""
    if type(content) is str:
        return content
    if content is None:
        return ""
    if type(content) is not list and type(content) is not tuple:
        if not isinstance(content, (list, tuple)):
            return printed_value(content, path)
        content = list(content)  # another class of list: its items, as transformers hands it over
    pieces = []
    for j, item in enumerate(content):
        if type(item) is str:
            pieces.append(item)
        elif type(item) is dict:
            kind = item.get("type")
            if type(kind) is not str and kind is not None:
                require_plain(kind, f"{path}[{j}].type")
            if kind == "text":
                text = item.get("text", "")
                pieces.append(text if type(text) is str else printed_value(text, f"{path}[{j}].text"))
        elif not of_json_type(item) and type(item) is not tuple:
            require_plain(item, f"{path}[{j}]")
    return "".join(pieces)


def _call_text(call: Any, i: int, k: int) -> str:
    """``<tool_call>NAME`` and the pairs of call ``k`` of message ``i`` (its ``function`` when that
    is truthy). Paths are spelt only for errors: one for each argument was much of a call's cost."""
    body = call.get("function") if type(call) is dict else None
    if not body:
        body, at = call, ""
    else:
        at = ".function"
    if type(body) is not dict:
        problem = f"expected an object, got {type_name(body)}: the template joins its name"
        raise InvalidInputError(f"messages[{i}].tool_calls[{k}]{at}", problem)
    name = body.get("name")
    if type(name) is not str:
        problem = "missing" if name is None else f"expected a string, got {type_name(name)}"
        raise InvalidInputError(f"messages[{i}].tool_calls[{k}]{at}.name", f"{problem}: the template joins it to text")
    arguments = body.get("arguments")
    if type(arguments) is not dict:
        raise InvalidInputError(f"messages[{i}].tool_calls[{k}]{at}.arguments", f"expected an object, got "
                                f"{type_name(arguments)}: the template iterates its items")
    if not all(type(key) is str and type(value) in JSON_TYPES for key, value in arguments.items()):
        # (read again as its plain data: a str subclass is a string)
        require_plain(arguments, f"messages[{i}].tool_calls[{k}]{at}.arguments")
    pieces = ["\n", TOOL_CALL_OPEN, name, "\n"]
    for key, value in arguments.items():
        if type(value) is str and type(key) is str:
            pieces += [ARG_KEY_OPEN, key, ARG_KEY_CLOSE, "\n", ARG_VALUE_OPEN, value, ARG_VALUE_CLOSE, "\n"]
            continue
        path = f"messages[{i}].tool_calls[{k}]{at}.arguments"
        shown = value if type(value) is str else tojson_at(value, path)
        pieces += [ARG_KEY_OPEN, printed_value(key, path), ARG_KEY_CLOSE, "\n", ARG_VALUE_OPEN, shown,
                   ARG_VALUE_CLOSE, "\n"]
    pieces.append(TOOL_CALL_CLOSE)
    return "".join(pieces)


def reasoning_and_content(message: dict[str, Any], i: int) -> tuple[str, str, bool]:
    """Message ``i``'s reasoning and content as the template reads them (an assistant's), and whether
    the reasoning came from its content (a ``</think>`` in it, no reasoning field that is a string)."""
    content = message.get("content")
    if type(content) is not str:
        content = visible_text(content, f"messages[{i}].content")
    reasoning = reasoning_of(message)
    if type(reasoning) is str:
        return reasoning, content, False
    if reasoning is not None and type(reasoning) not in JSON_TYPES:  # (an object's plain data may be a string)
        require_plain(reasoning, f"messages[{i}].reasoning_content")
    if THINK_CLOSE not in content:
        return "", content, False
    first = content.split(THINK_CLOSE)[0].rstrip("\n").split(THINK_OPEN)[-1].lstrip("\n")
    return first, content.split(THINK_CLOSE)[-1].lstrip("\n"), True


class Walk:
    """One walk of the template over a conversation: the pieces it writes, and (for spans) its notes
    and what it wrote of each message. Per call; not shared."""

    __slots__ = ("how", "last_user", "no_thinking", "notes", "out", "roles")

    def __init__(self, out: list[str], roles: list[Any], no_thinking: bool, noted: bool = False) -> None:
        self.out = out
        self.roles = roles
        self.no_thinking = no_thinking  # enable_thinking given and false
        self.last_user = max((i for i, role in enumerate(roles) if role == "user"), default=-1)
        self.notes: list[Note] | None = [] if noted else None
        self.how: list[int] | None = [] if noted else None

    def message(self, message: dict[str, Any], i: int) -> None:
        """One message, as the template writes it."""
        role = self.roles[i]
        how = WHOLE
        if role == "user":
            text = message.get("content")
            if type(text) is not str:
                text = visible_text(text, f"messages[{i}].content")
            self.out.append(USER + "\n")
            self._note(i, text)
            self.out.append(NOTHINK if self.no_thinking and not text.endswith(NOTHINK) else "")
        elif role == "assistant":
            how = self._assistant(message, i)
        elif role == "tool":
            self._tool(message, i)
        elif role == "system":
            self.out.append(SYSTEM + "\n")
            text = message.get("content")
            self._note(i, text if type(text) is str else visible_text(text, f"messages[{i}].content"))
        else:
            how = UNWRITTEN
        if self.how is not None:
            self.how.append(how)

    def _note(self, i: int, text: str) -> None:
        if self.notes is not None and text:
            self.notes.append((i, len(self.out), 0, len(text)))
        self.out.append(text)

    def _assistant(self, message: dict[str, Any], i: int) -> int:
        reasoning, content, _ = reasoning_and_content(message, i)
        shown = i > self.last_user and bool(reasoning)
        pieces = [THINK_OPEN.join(("\n", reasoning.strip() + THINK_CLOSE)) if shown else EMPTY_THINK]
        content = content.strip()
        if content:
            pieces += ["\n", content]
        calls = message.get("tool_calls")
        if calls:
            if type(calls) is not list:
                calls = template_iterated(calls, f"messages[{i}].tool_calls", "a list of tool calls")
            pieces += [_call_text(call, i, k) for k, call in enumerate(calls)]
        self.out.append(ASSISTANT)
        self._note(i, "".join(pieces))
        return SHOWN if shown else WHOLE

    def _tool(self, message: dict[str, Any], i: int) -> None:
        content = message.get("content")
        if type(content) is str:
            if i == 0 or self.roles[i - 1] != "tool":
                self.out.append(OBSERVATION)
            self.out.append(RESPONSE_OPEN)
            self._note(i, content)
            self.out.append(RESPONSE_CLOSE)
            return
        self.out.append(OBSERVATION)
        if content is None:
            return
        path = f"messages[{i}].content"
        for k, item in enumerate(template_iterated(content, path, "a string or a list")):
            output = item["output"] if type(item) is dict and "output" in item else item
            self.out.append(RESPONSE_OPEN)
            self._note(i, printed_value(output, f"{path}[{k}]"))
            self.out.append(RESPONSE_CLOSE)


def _tools_text(tools: Any) -> str:
    lines = [TOOLS_HEADER]
    for k, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise InvalidInputError(f"tools[{k}]", f"expected a tool object, got {type_name(tool)}")
        lines += [tojson_at(tool, f"tools[{k}]"), "\n"]
    lines.append(TOOLS_FOOTER)
    return "".join(lines)


def tools_block(tools: Tools) -> str:
    """The system turn the template writes for the tools offered (each as JSON); empty for none.
    Rendered once per toolset (:func:`~prompt_formats.model.tools.rendered_tools`)."""
    if isinstance(tools, PreparedTools):
        return rendered_tools(tools, "glm.tools_block", _tools_text) if tools else ""
    if not tools:
        return ""
    if not isinstance(tools, (list, tuple)):
        raise InvalidInputError("tools", f"expected a list of tool objects, got {type_name(tools)}")
    return rendered_tools(tools, "glm.tools_block", _tools_text)


def walk(msgs: list[dict[str, Any]], tools_text: str, generation: Any, no_thinking: bool,
         noted: bool = False) -> Walk:
    """The template's walk over ``msgs`` (the messages as dicts) after the prefix and ``tools_text``
    (the tools block, or nothing); ``noted``: with the notes and what it wrote of each message. The
    prompt is ``"".join(walk.out)``."""
    written = turns(msgs, tools_text, no_thinking, noted)
    written.out.append(tail(generation, no_thinking))
    return written


def turns(msgs: list[dict[str, Any]], tools_text: str, no_thinking: bool, noted: bool = False) -> Walk:
    """:func:`walk` without the generation prompt (what a session keeps)."""
    roles = [role if type(role := m.get("role")) is str else role_of(m, i) for i, m in enumerate(msgs)]
    written = Walk([PREFIX, tools_text], roles, no_thinking, noted)
    for i, message in enumerate(msgs):
        written.message(message, i)
    return written


def tail(generation: Any, no_thinking: bool) -> str:
    """The generation prompt, if asked for."""
    return (ASSISTANT + EMPTY_THINK if no_thinking else ASSISTANT) if generation else ""
