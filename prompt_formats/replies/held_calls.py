"""What the reply parsers that hold each tool call whole share (DeepSeek-V3's, GLM-4.5's).

Their completions are reasoning, content and calls between markers, and a call is read when its end
marker arrives (its name and arguments cannot be told before), then sent whole. Each family's parser
keeps its own state enum and steps; this base holds what they do alike: reasoning and content each
``str.strip()``-ped as a whole, text up to the next of a state's markers, a call's text held to its
end marker, a call sent as its events, a call that cannot be read kept as content with a note, and
the text after the reply's end read past with a note.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from ..model.messages import ToolCall
from .streaming import (
    ContentDelta,
    Event,
    Malformed,
    Note,
    ReasoningDelta,
    StreamParser,
    StrippedText,
    Terminator,
    TerminatorScan,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
    hold_point,
    new_call_id,
)

__all__ = ["WHITESPACE", "HeldCallsParser"]

#: A run of whitespace (``str.isspace``'s characters, what ``strip()`` takes away), maybe empty:
#: what these parsers skip between a reply's parts.
WHITESPACE = re.compile(r"\s*")


class HeldCallsParser(StreamParser):
    """Base of a reply parser that holds each call whole (the module docstring). A subclass sets
    ``AFTER_END`` (the note for text after the reply's end), its ``_state`` and its steps."""

    __slots__ = ("_calls", "_content", "_ids", "_ignored", "_reasoning", "_scanned", "_state")

    AFTER_END: ClassVar[str] = "text after the end of the reply ignored"
    #: What opens and closes a call, what ends a call's text, the states after a call and after the
    #: reply (for :meth:`_call_step`).
    CALL_OPEN: ClassVar[str] = ""
    CALL_CLOSE: ClassVar[str] = ""
    IN_CALL_ENDS: ClassVar[tuple[Terminator, ...]] = ()
    CONTENT: ClassVar[int] = 0
    DONE: ClassVar[int] = 0

    def __init__(self, state: int, id_factory: Callable[[], str] | None) -> None:
        super().__init__()
        self._ids = id_factory or new_call_id
        self._state = state
        self._reasoning = StrippedText(self._emit_reasoning)
        self._content = StrippedText(self._emit_content)
        self._calls = 0  # the calls read so far
        self._ignored = False  # text other than whitespace came after the reply's end
        self._scanned = 0  # how much of the held call's text holds no end marker's start: not scanned again

    def _emit_reasoning(self, text: str) -> None:
        self._out.append(ReasoningDelta(text))

    def _emit_content(self, text: str) -> None:
        self._out.append(ContentDelta(text))

    def _text_to(self, buf: str, pos: int, final: bool, scan: TerminatorScan, reasoning: bool,
                 terms: Sequence[Terminator]) -> tuple[int, Terminator | None]:
        """Text up to the next of ``terms``, to the reasoning (``reasoning``) or the content: where
        the step ends (after the marker found) and the marker, or where the text held back starts and
        ``None``."""
        sink = self._reasoning if reasoning else self._content
        at, term, _ = scan.next(pos, terms)
        if term is None:
            stop = len(buf) if final else hold_point(buf, pos, terms)
            if stop > pos:
                sink.add(buf[pos:stop])
            return stop, None
        if at > pos:
            sink.add(buf[pos:at])
        return at + len(term.literal), term

    def _held_call(self, buf: str, pos: int, final: bool, scan: TerminatorScan, ends: Sequence[Terminator]
                   ) -> tuple[str, Terminator | None, int] | None:
        """A call's text up to the first of ``ends`` (or, ``final``, the end of the completion): its
        body, the marker that ended it (``None``: the completion), where the step ends; ``None``
        while it may still grow. A text held over many deltas is scanned once, not at every one."""
        at, term, _ = scan.next(pos + self._scanned, ends)
        if term is None:
            if final:
                self._scanned = 0
                return buf[pos:], None, len(buf)
            # (the next delta may complete a marker begun in the last characters: those are scanned again)
            self._scanned = max(0, len(buf) - pos - max(end.max_length for end in ends) + 1)
            return None
        self._scanned = 0
        return buf[pos:at], term, at + len(term.literal)

    def _call_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """The state inside a call: its text held until its end marker, then read whole
        (``_read_call``); a call that does not read, or is cut off, kept as text. A subclass whose calls
        are ``CALL_OPEN`` … ``CALL_CLOSE`` sets those, ``IN_CALL_ENDS`` (the close and the reply's end
        markers), ``CONTENT`` and ``DONE`` (its states after a call and after the reply)."""
        held = self._held_call(buf, pos, final, scan, self.IN_CALL_ENDS)
        if held is None:
            return pos, False
        body, term, end = held
        closed = term is not None and term.literal == self.CALL_CLOSE
        if closed and self._read_call(body):
            self._state = self.CONTENT
            return end, True
        what = ("not read" if closed else "cut off by the end of the completion" if term is None
                else "cut off by the end of the reply")
        self._kept_as_text(self.CALL_OPEN + body + (self.CALL_CLOSE if closed else ""), what)
        self._state = self.CONTENT if closed or term is None else self.DONE
        return end, True

    def _read_call(self, body: str) -> bool:
        """Send the call ``body`` holds; False if it is not one as the format writes it."""
        raise NotImplementedError

    def _kept_as_text(self, text: str, what: str) -> None:
        """A call that cannot be read as the format writes it: its ``text`` goes to the content."""
        self._out.append(Malformed(f"tool call {self._calls} {what}: its text is kept as content"))
        self._content.add(text)

    def _send_call(self, name: str, arguments: Mapping[str, Any] | str, text: str, notes: Sequence[Event] = ()) -> int:
        """Send a call read whole: its start, its arguments' JSON ``text`` and (after ``notes``) its
        end; returns its index."""
        index, call_id = self._calls, self._ids()
        self._calls += 1
        self._out += [ToolCallStart(index, call_id, name), ToolCallArgumentsDelta(index, text), *notes,
                      ToolCallEnd(index, ToolCall(name, arguments, call_id, arguments_text=text))]
        return index

    def _past_end(self, buf: str, pos: int) -> int:
        """After the reply's end: what follows is not part of it (noted once, if not whitespace)."""
        if not self._ignored and buf[pos:].strip():
            self._ignored = True
        return len(buf)

    def _finish(self) -> None:
        if self._ignored:
            self._out.append(Note(self.AFTER_END))
