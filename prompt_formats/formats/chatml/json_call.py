"""The JSON form of a ChatML tool call, as Qwen2.5 and Qwen3 write it (and vLLM's and Ollama's parsers read it).

``<tool_call>``, then a JSON object of ``"name"`` (a string) and ``"arguments"`` (an object, or a
JSON string holding one, decoded once, as vLLM does; left out: none), then ``</tool_call>``::

    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

It is a call, noted with the form it was written in; its arguments are the JSON's values as written
(no schema types them: JSON has types). Its text is held from the ``{`` up to ``</tool_call>``
(tolerated, noted: another ``<tool_call>``, a stop marker, ``</think>`` in the reasoning, or the end
of the completion), and the call is sent whole there: a JSON object is known to be one only when it
ends. Text that is not such an object stays text, where it was written (content or reasoning), with
the note every ``<tool_call>`` that opened no call gets.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ...model.messages import ToolCall
from ...replies.streaming import (
    Malformed,
    Note,
    TerminatorScan,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
    hold_point,
)
from ...replies.values import read_json
from . import tokens as t
from .call_stream import value_json
from .grammar import JSON_ENDS, JSON_ENDS_THINK_OPEN, TOOL_CALL_END, State

if TYPE_CHECKING:
    from ...replies.streaming import Event

__all__ = ["JsonCalls", "read_json_call"]


def read_json_call(body: str) -> tuple[str, Mapping[str, Any] | str, str] | None:
    """``(name, arguments, arguments_text)`` of a JSON call's text, or ``None`` when it is not one.

    ``arguments`` is the object (a JSON string holding an object decoded), or, for arguments that
    are not an object, their JSON text (as a parsed call keeps arguments that are not an object).
    """
    value, problem = read_json(body)
    if problem is not None or not isinstance(value, dict):
        return None
    name = value.get("name")
    if not isinstance(name, str) or not name:
        return None
    arguments = value.get("arguments", {})
    if isinstance(arguments, str):
        decoded, problem = read_json(arguments)
        if problem is None and isinstance(decoded, dict):
            arguments = decoded
    text = value_json(arguments)
    return name, arguments if isinstance(arguments, dict) else text, text


class JsonCalls:
    """The JSON-call state of :class:`~prompt_formats.formats.chatml.parse.ChatMLReplyParser` (a mixin)."""

    if TYPE_CHECKING:  # what the mixin uses of the parser, whose slots hold it
        _json: list[str]
        _json_from: State
        _calls: int
        _id_factory: Callable[[], str]
        _late_think_end: bool
        _out: list[Event]
        _schemas: dict[str, Any] | None

        def _scanned_text(self, text: str, state: State) -> None: ...
        def _set_state(self, state: State) -> None: ...
    else:
        __slots__ = ()

    def _open_json(self, raw: str, state: State) -> None:
        """``<tool_call>{`` was read (``raw``) in ``state``: hold the text up to the block's end."""
        self._json.append(raw)
        self._json_from = state
        self._set_state(State.JSON)

    def _json_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """JSON: the call's text up to ``</tool_call>`` (or, not closed, another end; see the module)."""
        in_reasoning = self._json_from == State.REASONING or self._late_think_end
        terms = JSON_ENDS_THINK_OPEN if in_reasoning else JSON_ENDS
        at, term, _ = scan.next(pos, terms)
        if at < 0:
            stop = len(buf) if final else hold_point(buf, pos, terms)
            self._json.append(buf[pos:stop])
            if final:
                self._end_json(False)
            return stop, False
        self._json.append(buf[pos:at])
        if term is TOOL_CALL_END:
            self._json.append(t.TOOL_CALL_CLOSE)
            self._end_json(True)
            return at + len(t.TOOL_CALL_CLOSE), True
        self._end_json(False)
        return at, True

    def _end_json(self, closed: bool) -> None:
        """The block's text ends (``closed``: by ``</tool_call>``): a call, or text where it was written."""
        raw = "".join(self._json)
        self._json.clear()  # cleared, not replaced: the JSON state appends to this list
        body = raw[len(t.TOOL_CALL_OPEN):len(raw) - len(t.TOOL_CALL_CLOSE)] if closed else raw[len(t.TOOL_CALL_OPEN):]
        read = read_json_call(body)
        if read is None:
            self._scanned_text(raw, self._json_from)
            self._set_state(self._json_from)
            return
        name, arguments, text = read
        index = self._calls
        self._calls += 1
        call_id = self._id_factory()
        label = f"tool call {index} ({name})"
        out = self._out
        out.append(ToolCallStart(index, call_id, name))
        out.append(ToolCallArgumentsDelta(index, text))
        out.append(ToolCallEnd(index, ToolCall(name=name, arguments=arguments, id=call_id, arguments_text=text)))
        out.append(Note(f"{label} written in the JSON form (a JSON object of name and arguments in "
                        "'<tool_call>', as Qwen2.5 and Qwen3 write it): read as a call"))
        if not closed:
            out.append(Malformed(f"{label} not closed by '</tool_call>': its JSON read up to where the next "
                                 "tag or the end of the completion begins"))
        if self._schemas is not None and name not in self._schemas:
            out.append(Note(f"{label} to a tool not offered: read as a call"))
        if self._json_from == State.REASONING:
            self._late_think_end = True  # as for a call in the XML form: the reasoning's "</think>" may still come
        self._set_state(State.CONTENT)
