"""Where a ChatML parameter's value ends: the parser's rules for ``</parameter>`` and the tags inside a value.

A value may hold the format's own tags (a file that is itself a tool-call example, a template):

- ``</parameter>`` ends the value when what follows it (after whitespace) is a parameter's tag of the
  tool (any tag without tools), ``</function>``, ``</tool_call>``, a stop marker or the end of the
  completion; followed by anything else it is held: the value's own text if another
  ``</parameter>`` comes, else the value's end after all;
- a ``<parameter=…>`` taken as the value's text (one of a parameter already read, or one of no
  parameter of the tool followed by a ``</parameter>``) opens a nested block: the ``</parameter>``
  that closes it is text too (held, when what follows it would end the value, until another
  ``</parameter>`` shows it was);
- without a ``</parameter>`` a value ends (tolerated, noted) at the next parameter's tag or the
  function's end (:meth:`ValueEnds._end_unclosed`).
"""

from __future__ import annotations

import abc
from typing import Any

from ...replies.streaming import StreamParser
from . import tokens as t
from .call_stream import CallInProgress
from .grammar import AFTER_VALUE, AFTER_VALUE_WS, WS_RUN

__all__ = ["ValueEnds"]


class ValueEnds(StreamParser):
    """The value-end steps of :class:`~prompt_formats.formats.chatml.parse.ChatMLReplyParser`, its base.

    A base in the parser's one line of inheritance (not a mixin beside ``StreamParser``): the compiled
    build (mypyc) has no multiple inheritance.
    """

    __slots__ = ("_call", "_schemas", "_unclosed")

    _call: CallInProgress
    _schemas: dict[str, Any] | None
    _unclosed: bool

    @abc.abstractmethod
    def _value_text(self, text: str) -> None: ...
    @abc.abstractmethod
    def _close_value(self, closed: bool = True, marker: str = t.PARAMETER_CLOSE) -> None: ...
    @abc.abstractmethod
    def _close_call(self, cut_off: str | None = None) -> None: ...
    @abc.abstractmethod
    def _set_state(self, state: Any) -> None: ...
    @abc.abstractmethod
    def _after_value(self, closed_call: bool) -> None: ...

    def _parameter_end(self, buf: str, at: int, final: bool) -> tuple[int, bool]:
        """A ``</parameter>`` at ``buf[at]``: the value's end, its text, held, or not known yet (wait)."""
        call = self._call
        end = at + len(t.PARAMETER_CLOSE)
        if call.held:  # what was held is the value's own text: a "</parameter>" came after it
            text = "".join(call.held)
            call.held = []
            call.nested += text.count(t.PARAMETER_OPEN)
            self._value_text(text)
        closes = self._closes_value(buf, end, final)
        if closes is None:
            return at, False
        if call.nested:  # it closes a block opened inside the value, unless no other "</parameter>" comes
            call.nested -= 1
            if closes:
                call.held.append(t.PARAMETER_CLOSE)
            else:
                self._value_text(t.PARAMETER_CLOSE)
            return end, True
        if not closes:  # the value's own text if another "</parameter>" comes, else its end
            call.held.append(t.PARAMETER_CLOSE)
            return end, True
        self._close_value()
        self._after_value(False)
        return end, True

    def _closes_value(self, buf: str, pos: int, final: bool) -> bool | None:
        """Whether the text at ``pos`` (after a ``</parameter>``) makes it the value's end; ``None``: not known yet."""
        skip = WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
        if skip - pos > AFTER_VALUE_WS or (skip == len(buf) and final):
            return True
        if skip == len(buf):
            return None
        item = AFTER_VALUE.match(buf, skip, partial=not final)
        if item is None:
            return False
        if item.partial:
            return None
        return item.group(1) is None or self._is_tool_parameter(t.PARAMETER_OPEN + item.group(1) + ">")

    def _names_a_read_parameter(self, match: Any) -> bool:
        call = self._call
        name = match.group()[len(t.PARAMETER_OPEN):-1]
        return name == call.param_name or name in call.params

    def _is_tool_parameter(self, tag: str) -> bool:
        """Whether ``tag`` opens a parameter of the tool (any does without tools, or when it declares none
        or was not offered)."""
        if self._schemas is None:
            return True
        declared = self._schemas.get(self._call.name)
        return not declared or tag[len(t.PARAMETER_OPEN):-1] in declared

    def _end_unclosed(self, buf: str, at: int) -> int:
        """The value ends, unclosed, at the tag at ``buf[at]`` (the next parameter's or the function's end)."""
        self._close_value(marker="")
        if buf.startswith(t.FUNCTION_CLOSE, at):
            self._call.raw.append(t.FUNCTION_CLOSE)
            self._close_call()
            self._after_value(True)
            return at + len(t.FUNCTION_CLOSE)
        self._after_value(False)
        return at

    def _reread_unclosed(self, buf: str, at: int, final: bool) -> tuple[int, bool]:
        """No ``</parameter>`` after a tag held in a value (``at``: the reply's end): the value ended there."""
        call = self._call
        text = "".join(call.held)
        call.held = []
        self._unclosed = True
        if text.startswith(t.PARAMETER_CLOSE):  # the value's own "</parameter>" after all
            self._close_value()
            self._after_value(False)
            skip = len(t.PARAMETER_CLOSE)
        else:
            skip = self._end_unclosed(text, 0)
        self._advance(text[skip:] + buf[at:], final)  # once: from here on no value is held
        return len(buf), False
