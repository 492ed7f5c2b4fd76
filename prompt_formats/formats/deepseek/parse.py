"""The reply parser of DeepSeek-V3: a completion into reasoning, content and tool calls.

The rules (docs/deepseek.md, "Parsing replies"): the generation prompt opens the reasoning
(``<think>\\n``), so the completion starts in it and it runs to ``</think>``; then the content; then,
after ``<｜tool▁calls▁begin｜>``, calls, each ``<｜tool▁call▁begin｜>TYPE<｜tool▁sep｜>NAME`` and a json
code block of its arguments, ended by ``<｜tool▁call▁end｜>``; ``<｜end▁of▁sentence｜>`` ends the reply.
A call is read when its end marker arrives, and sent whole then (its name and arguments cannot be
told before). Reasoning and content are each ``str.strip()``-ped as a whole. Where a call cannot be
read as the format says, its text goes to the content as written, with a note in ``malformed``.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable

from ...replies.held_calls import WHITESPACE as _WHITESPACE
from ...replies.held_calls import HeldCallsParser
from ...replies.streaming import Malformed, Terminator, TerminatorScan
from ...replies.values import NUMBER_TOO_LARGE, TOO_MANY_DIGITS, digits_note, read_json
from .tokens import CALL_BEGIN, CALL_END, CALLS_BEGIN, CALLS_END, EOS, SEP, THINK_CLOSE

__all__ = ["DeepSeekReplyParser", "State"]

_THINK_END = Terminator.marker(THINK_CLOSE)
_CALLS = Terminator.marker(CALLS_BEGIN)
_CALL = Terminator.marker(CALL_BEGIN)
_CALL_END = Terminator.marker(CALL_END)
_CALLS_END = Terminator.marker(CALLS_END)
_END = Terminator.marker(EOS)
_REASONING_ENDS = (_THINK_END, _CALLS, _END)
_CONTENT_ENDS = (_CALLS, _END)
_IN_CALL_ENDS = (_CALL_END, _END)
#: A call's text between its markers: its type, its name, its arguments in a json code block.
_CALL_BODY = re.compile(r"([^\n<]*)" + re.escape(SEP) + r"([^\n<]+)\n```(?:json)?\n(.*)\n```\s*", re.DOTALL)


class State(enum.IntEnum):
    REASONING = 0  # from the start, to </think>
    CONTENT = 1  # to the calls or the end
    CALLS = 2  # between calls: the next call, the calls' end
    CALL = 3  # inside a call, to its end marker
    DONE = 4  # after <｜end▁of▁sentence｜>: not part of the reply


class DeepSeekReplyParser(HeldCallsParser):
    """DeepSeek-V3's reply parser, per stream (the module docstring); ``parse`` feeds it everything."""

    __slots__ = ()

    AFTER_END = f"text after the end of the reply ('{EOS}') ignored"

    def __init__(self, id_factory: Callable[[], str] | None = None) -> None:
        super().__init__(State.REASONING, id_factory)

    def _advance(self, buf: str, final: bool) -> int:
        scan = TerminatorScan(buf)
        pos = 0
        while True:
            state = self._state
            if state == State.DONE:
                return self._past_end(buf, pos)
            if state == State.CALLS:
                pos, progressed = self._between_calls(buf, pos, final)
            elif state == State.CALL:
                pos, progressed = self._call(buf, pos, final, scan)
            else:
                pos, progressed = self._text_step(buf, pos, final, scan)
            if not progressed:
                return pos

    def _text_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """REASONING or CONTENT: text up to the state's next marker."""
        reasoning = self._state == State.REASONING
        pos, term = self._text_to(buf, pos, final, scan, reasoning, _REASONING_ENDS if reasoning else _CONTENT_ENDS)
        if term is None:
            return pos, False
        self._state = State.CONTENT if term is _THINK_END else State.CALLS if term is _CALLS else State.DONE
        return pos, True

    def _between_calls(self, buf: str, pos: int, final: bool) -> tuple[int, bool]:
        """CALLS: after whitespace, the next call, the calls' end, or the reply's end."""
        # (Whitespace held over many deltas is scanned once: _scanned is how much of it was; and
        # nothing here copies the rest of the buffer, which a one-shot parse holds whole.)
        skip = _WHITESPACE.match(buf, pos + self._scanned).end()  # type: ignore[union-attr]
        if skip == len(buf):  # nothing yet, or the completion ends here
            self._scanned = 0 if final else skip - pos
            return (skip if final else pos), False
        self._scanned = 0
        for marker, state in ((CALL_BEGIN, State.CALL), (CALLS_END, State.CONTENT), (EOS, State.DONE)):
            if buf.startswith(marker, skip):
                self._state = state
                return skip + len(marker), True
            if not final and len(buf) - skip < len(marker) and marker.startswith(buf[skip:]):
                self._scanned = skip - pos
                return pos, False  # it may yet be this marker
        self._out.append(Malformed(f"text after tool call {self._calls - 1}: kept as content"
                                   if self._calls else f"'{CALLS_BEGIN}' not followed by a tool call: kept as text"))
        self._content.add(buf[pos:skip])
        self._state = State.CONTENT
        return skip, True

    def _call(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """CALL: held until its end marker, then read whole."""
        held = self._held_call(buf, pos, final, scan, _IN_CALL_ENDS)
        if held is None:
            return pos, False
        body, term, end = held
        if term is _CALL_END and self._read_call(body):
            self._state = State.CALLS
            return end, True
        what = ("not read" if term is _CALL_END else "cut off by the end of the reply" if term is _END
                else "cut off by the end of the completion")
        self._kept_as_text(CALL_BEGIN + body + (CALL_END if term is _CALL_END else ""), what)
        self._state = State.CALLS if term is _CALL_END else State.DONE if term is _END else State.CONTENT
        return end, True

    def _read_call(self, body: str) -> bool:
        """Send the call ``body`` holds; False if it is not a call as the format writes it."""
        match = _CALL_BODY.fullmatch(body)
        if match is None:
            return False
        name, text = match.group(2), match.group(3)
        value, problem = read_json(text)
        if isinstance(value, dict):
            self._send_call(name, value, text)
            return True
        why = (digits_note() + " Python will not convert" if problem == TOO_MANY_DIGITS
               else "JSON holding a number beyond the range of a double" if problem == NUMBER_TOO_LARGE
               else "not a JSON object")
        self._send_call(name, text, text, [Malformed(
            f"tool call {self._calls} ({name}) has arguments that are {why}: kept as text")])
        return True
