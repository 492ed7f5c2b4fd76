"""The reply parser of GLM-4.5: a completion into reasoning, content and tool calls.

The rules (docs/glm.md, "Parsing replies"): the completion may open with a think block
(``<think>…</think>``, after whitespace), its reasoning; then the content; a call is
``<tool_call>NAME`` (its name up to the line's end) and ``<arg_key>K</arg_key>`` /
``<arg_value>V</arg_value>`` pairs, ended by ``</tool_call>``; ``<|user|>``, ``<|observation|>`` and
``<|endoftext|>`` end the reply. A value is typed as the template wrote it: a parameter the tools'
schema allows as a string is the text as written; any other value is its JSON where the text is
JSON (of finite numbers), else the text. A parameter repeated in a call keeps its first value (a
note says so). A call is read when its end marker arrives, and sent whole then. Reasoning and
content are each ``str.strip()``-ped as a whole. Where a call cannot be read as the format says, its
text goes to the content as written, with a note in ``malformed``.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..._text.tojson import compact_json
from ...model.tools import PreparedTools
from ...replies.held_calls import WHITESPACE as _WHITESPACE
from ...replies.held_calls import HeldCallsParser
from ...replies.streaming import Note, Terminator, TerminatorScan
from ...replies.values import read_json
from .tokens import END_OF_TEXT, OBSERVATION, THINK_CLOSE, THINK_OPEN, TOOL_CALL_CLOSE, TOOL_CALL_OPEN, USER

__all__ = ["GlmReplyParser", "State"]

_THINK_END = Terminator.marker(THINK_CLOSE)
_CALL = Terminator.marker(TOOL_CALL_OPEN)
_CALL_END = Terminator.marker(TOOL_CALL_CLOSE)
_STOPS = (Terminator.marker(USER), Terminator.marker(OBSERVATION), Terminator.marker(END_OF_TEXT))
_REASONING_ENDS = (_THINK_END, *_STOPS)
_CONTENT_ENDS = (_CALL, *_STOPS)
_IN_CALL_ENDS = (_CALL_END, *_STOPS)
_PAIR = re.compile(r"\s*<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>", re.DOTALL)
_NAME = re.compile(r"([^\n<]+?)[ \t]*(?:\n|(?=<arg_key>)|\s*$)")


class State(enum.IntEnum):
    START = 0  # whitespace, then a think block or the content
    REASONING = 1  # to </think>
    CONTENT = 2  # to a call or the end
    CALL = 3  # inside a call, to its end marker
    DONE = 4  # after a stop marker: not part of the reply


def _is_string(schema: Any) -> bool:
    """Whether a parameter's schema allows a string: its ``type`` (a name or a list), or a branch of
    its ``anyOf`` / ``oneOf``, says ``string`` (the template wrote any string as it is)."""
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    # (Values are compared as strings only: a client's own object may raise where it is compared.)
    if _names_string(kind) or (isinstance(kind, list) and any(map(_names_string, kind))):
        return True
    branches = [schema.get(key) for key in ("anyOf", "oneOf")]
    return any(_is_string(branch) for each in branches if isinstance(each, list) for branch in each)


def _names_string(kind: Any) -> bool:
    return isinstance(kind, str) and str.__str__(kind) == "string"


def _string_parameters(tools: Any) -> dict[str, frozenset[str]]:
    """Each offered tool's parameters whose schema allows a string."""
    found: dict[str, frozenset[str]] = {}
    for tool in (tools.tools if isinstance(tools, PreparedTools) else tools) or ():
        body = tool.get("function", tool) if isinstance(tool, Mapping) else None
        parameters = body.get("parameters") if isinstance(body, Mapping) else None
        properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
        if isinstance(body, Mapping) and isinstance(body.get("name"), str) and isinstance(properties, Mapping):
            found[body["name"]] = frozenset(key for key, schema in properties.items() if _is_string(schema))
    return found


def _value(text: str) -> Any:
    """A value the template wrote as JSON where it is JSON text (of finite numbers), else the text."""
    value, problem = read_json(text)
    if problem is not None:
        return text
    try:
        json.dumps(value, allow_nan=False)  # 1e999 reads as infinity, which JSON cannot write back
    except (ValueError, RecursionError):
        return text
    return value


class GlmReplyParser(HeldCallsParser):
    """GLM-4.5's reply parser, per stream (the module docstring); ``parse`` feeds it everything."""

    __slots__ = ("_strings",)

    AFTER_END = "text after the end of the reply ('<|user|>'/'<|observation|>'/'<|endoftext|>') ignored"
    CALL_OPEN, CALL_CLOSE, IN_CALL_ENDS = TOOL_CALL_OPEN, TOOL_CALL_CLOSE, _IN_CALL_ENDS
    CONTENT, DONE = State.CONTENT, State.DONE

    def __init__(self, tools: Any = None, id_factory: Callable[[], str] | None = None) -> None:
        super().__init__(State.START, id_factory)
        self._strings = _string_parameters(tools)

    def _advance(self, buf: str, final: bool) -> int:
        scan = TerminatorScan(buf)
        pos = 0
        while True:
            state = self._state
            if state == State.DONE:
                return self._past_end(buf, pos)
            if state == State.START:
                pos, progressed = self._start(buf, pos, final)
            elif state == State.CALL:
                pos, progressed = self._call_step(buf, pos, final, scan)
            else:
                pos, progressed = self._text_step(buf, pos, final, scan)
            if not progressed:
                return pos

    def _start(self, buf: str, pos: int, final: bool) -> tuple[int, bool]:
        """START: whitespace, then ``<think>`` opens the reasoning; anything else is content."""
        # (The whitespace is taken as it comes, not held: the reasoning or the content, each stripped
        # whole, keeps none of it.)
        at = _WHITESPACE.match(buf, pos).end()  # type: ignore[union-attr]
        if buf.startswith(THINK_OPEN, at):
            self._state = State.REASONING
            return at + len(THINK_OPEN), True
        if not final and (at == len(buf) or (len(buf) - at < len(THINK_OPEN) and THINK_OPEN.startswith(buf[at:]))):
            return at, False  # it may yet open a think block
        self._state = State.CONTENT
        return at, True

    def _text_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """REASONING or CONTENT: text up to the state's next marker."""
        reasoning = self._state == State.REASONING
        pos, term = self._text_to(buf, pos, final, scan, reasoning, _REASONING_ENDS if reasoning else _CONTENT_ENDS)
        if term is None:
            return pos, False
        self._state = State.CONTENT if term is _THINK_END else State.CALL if term is _CALL else State.DONE
        return pos, True

    def _read_call(self, body: str) -> bool:
        """Send the call ``body`` holds; False if it is not a call as the format writes it."""
        name = _NAME.match(body)
        if name is None or not name.group(1).strip():
            return False
        pos, arguments = name.end(), dict[str, Any]()
        call_name = name.group(1).strip()
        strings = self._strings.get(call_name, frozenset())
        repeated: list[str] = []
        for pair in _PAIR.finditer(body, pos):
            if pair.start() != pos:
                return False
            key, text = pair.group(1), pair.group(2)
            if key in arguments:
                repeated.append(key)
            else:
                arguments[key] = text if key in strings else _value(text)
            pos = pair.end()
        if body[pos:].strip():
            return False
        index = self._send_call(call_name, arguments, compact_json(arguments))
        self._out += [Note(f"tool call {index} ({call_name}) repeats parameter {key!r}: its first value is kept")
                      for key in repeated]
        return True
