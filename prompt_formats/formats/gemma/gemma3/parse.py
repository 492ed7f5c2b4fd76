"""The reply parser of Gemma 3: a completion into its content.

The rules (docs/gemma.md, "Parsing replies"): the template has no tools and no reasoning, so a
reply is content alone, ``str.strip()``-ped as a whole as the template trims it; it ends at
``<end_of_turn>`` or ``<eos>``, and text after that is not part of it (a note says it was
ignored). Nothing else is markup: any other text, ``<start_of_turn>`` included, is content.
"""

from __future__ import annotations

import enum

from ....replies.streaming import ContentDelta, Note, StreamParser, StrippedText, Terminator, TerminatorScan, hold_point
from ..tokens import END_OF_TURN, EOS

__all__ = ["Gemma3ReplyParser", "State"]

_ENDS = (Terminator.marker(END_OF_TURN), Terminator.marker(EOS))
_AFTER_END = f"text after the end of the reply ('{END_OF_TURN}'/'{EOS}') ignored"


class State(enum.IntEnum):
    CONTENT = 0  # the reply, up to its end marker
    DONE = 1  # after the end marker: not part of the reply


class Gemma3ReplyParser(StreamParser):
    """Gemma 3's reply parser, per stream (the module docstring); ``parse`` feeds it everything."""

    __slots__ = ("_content", "_ignored", "_state")

    def __init__(self) -> None:
        super().__init__()
        self._state = State.CONTENT
        self._content = StrippedText(self._emit)
        self._ignored = False  # text other than whitespace came after the end marker
        self._text = self._content.add  # a delta without "<" is content, whole

    def _emit(self, text: str) -> None:
        self._out.append(ContentDelta(text))

    def _advance(self, buf: str, final: bool) -> int:
        if self._state == State.DONE:
            return self._done_step(buf, 0)
        at, term, _ = TerminatorScan(buf).next(0, _ENDS)
        if term is None:
            stop = len(buf) if final else hold_point(buf, 0, _ENDS)
            if stop:
                self._content.add(buf[:stop])
            return stop
        if at:
            self._content.add(buf[:at])
        self._state = State.DONE
        self._text = None
        return self._done_step(buf, at + len(term.literal))

    def _done_step(self, buf: str, pos: int) -> int:
        """DONE: what follows the reply is read past, noted once if it is more than whitespace."""
        if not self._ignored and pos < len(buf) and not buf[pos:].isspace():
            self._ignored = True
        return len(buf)

    def _finish(self) -> None:
        if self._ignored:
            self._out.append(Note(_AFTER_END))
