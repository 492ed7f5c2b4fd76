"""The reply parser of the ChatML family: a completion into reasoning, content and typed tool calls.

The rules it follows are written in ``docs/parsing.md`` (the ChatML section) and summed up here:

- Reasoning. With thinking on (``enable_thinking`` not exactly False, as in ``render``) the prompt
  ended in ``<think>\\n``, so the completion starts inside the reasoning: it runs up to ``</think>``
  (all of the completion when there is none); a ``<think>`` the model repeats at its start (after
  whitespace) is dropped. With thinking off, there is reasoning only if the completion opens with
  ``<think>`` (after whitespace). A tool call that opens inside the reasoning ends it; the next
  ``</think>`` (after the calls) is then the reasoning's own marker, taken out of the content.
- Reasoning and content are ``str.strip``-ped as wholes, as the template strips both when it
  renders them. Content is all text outside reasoning and tool-call blocks.
- ``<tool_call>`` opens a call only when followed (after at most 32 whitespace characters) by
  ``<function=NAME>``, NAME being 1 to 256 characters without ``<`` or ``>``; elsewhere it is text,
  counted in a note. Inside: ``<parameter=P>VALUE</parameter>`` blocks separated by whitespace, then
  ``</function>``, then optionally ``</tool_call>`` (after which another ``<function=…>`` may follow
  in the same block). A value loses one leading and one trailing ``\\n`` and is typed by the tool's
  schema (:mod:`.schema`). A repeated parameter keeps its first value; the repeat goes to the content.
- A call cut off by the end of the reply after its ``<function=NAME>`` stays a call with the
  parameters written so far (the unfinished value untyped) and a note; an unfinished tag joins the
  content. Malformed calls (other text inside the block, an unknown tool) are content, raw from
  ``<tool_call>`` to the offending point, with a note; parsing goes on from there as content.
- ``<|im_end|>`` and ``<|endoftext|>`` end the reply; text after them is ignored (noted if not blank).
"""

from __future__ import annotations

import enum
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import regex

from ...messages import ToolCall
from ...streaming import (
    ContentDelta,
    Malformed,
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
from ..reply_values import TOO_MANY_DIGITS, digits_note
from . import tokens as t
from .schema import typed_value

__all__ = ["WHITESPACE", "ChatMLReplyParser"]

#: A regex character class of every character ``str.isspace`` accepts (``\\s`` of ``re`` misses some).
WHITESPACE = r"[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
#: Possessive quantifiers (3.11+) make a failed call-start match give up at once instead of backtracking.
_PLUS = "+" if sys.version_info >= (3, 11) else ""
_NAME = "[^<>]{1,256}"
_CALL_START_PATTERN = (
    re.escape(t.TOOL_CALL_OPEN) + WHITESPACE + "{0,32}" + _PLUS
    + re.escape(t.FUNCTION_OPEN) + "(" + _NAME + _PLUS + ")>"
)
_CALL_START = Terminator.regex(
    t.TOOL_CALL_OPEN, _CALL_START_PATTERN, len(t.TOOL_CALL_OPEN) + 32 + len(t.FUNCTION_OPEN) + 256 + 1
)
_THINK_END = Terminator.marker(t.THINK_CLOSE)
_IM_END = Terminator.marker(t.IM_END)
_END_OF_TEXT = Terminator.marker(t.END_OF_TEXT)
_PARAMETER_END = Terminator.marker(t.PARAMETER_CLOSE)
_REASONING_ENDS = (_THINK_END, _CALL_START, _IM_END, _END_OF_TEXT)
_CONTENT_ENDS = (_CALL_START, _IM_END, _END_OF_TEXT)
# Content after a tool call that ended the reasoning: the reasoning's own "</think>" may still come.
_CONTENT_ENDS_THINK_OPEN = (_THINK_END, _CALL_START, _IM_END, _END_OF_TEXT)
_VALUE_ENDS = (_PARAMETER_END, _IM_END, _END_OF_TEXT)

_WS_RUN = re.compile(WHITESPACE + "*")
_THINK_OPEN = regex.compile(re.escape(t.THINK_OPEN))
# What may follow inside a function block, after whitespace.
_FUNCTION_ITEM = regex.compile(
    re.escape(t.PARAMETER_OPEN) + "(" + _NAME + ")>|(" + re.escape(t.FUNCTION_CLOSE) + ")|("
    + re.escape(t.IM_END) + "|" + re.escape(t.END_OF_TEXT) + ")"
)
# What may follow a function's end: the block's end, or another function in the same block.
_AFTER_FUNCTION = regex.compile(
    WHITESPACE + "{0,32}(?:(" + re.escape(t.TOOL_CALL_CLOSE) + ")|" + re.escape(t.FUNCTION_OPEN) + "(" + _NAME + ")>)"
)

_JUNK_CALL_NOTE = "'<tool_call>' not followed by '<function=NAME>': kept as text"


class State(enum.IntEnum):
    """Where the parser is in the reply."""

    REASONING_START = 0  # before the reasoning (thinking on): a repeated "<think>" may come
    CONTENT_START = 1  # before the content (thinking off): "<think>" may open reasoning
    REASONING = 2
    CONTENT = 3
    FUNCTION = 4  # inside <function=NAME>, between parameters
    VALUE = 5  # inside a parameter's value
    AFTER = 6  # after </function>: </tool_call> or another <function=…>
    DONE = 7  # after <|im_end|>/<|endoftext|>: the reply has ended


@attrs.define(slots=True)
class _CallInProgress:
    """The tool call being read: its raw text so far (content if it proves malformed), its values."""

    name: str
    raw: list[str]
    params: dict[str, Any] = attrs.Factory(dict)
    param_name: str = ""
    value: list[str] = attrs.Factory(list)  # the value being read, in pieces
    notes: list[str] = attrs.Factory(list)  # notes about the call, sent if it completes
    duplicates: list[str] = attrs.Factory(list)  # raw repeated parameter blocks (to the content)


class ChatMLReplyParser(StreamParser):
    """Streaming parser of a Qwen3.6 ChatML completion (rules: this module's docstring).

    Made by :meth:`~prompt_formats.formats.chatml.ChatMLFormat.stream_parser`; per stream,
    picklable between feeds when its ``id_factory`` is.
    """

    __slots__ = (
        "_call",
        "_calls",
        "_content",
        "_id_factory",
        "_junk_calls",
        "_late_think_end",
        "_reasoning",
        "_schemas",
        "_state",
        "_text_after_stop",
    )

    def __init__(
        self,
        schemas: dict[str, Mapping[str, Any]] | None,
        thinking: bool,
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        super().__init__()
        self._schemas = schemas
        self._id_factory = id_factory or new_call_id
        self._reasoning = StrippedText(self._emit_reasoning)
        self._content = StrippedText(self._emit_content)
        self._state = State.REASONING_START if thinking else State.CONTENT_START
        self._calls = 0
        self._junk_calls = 0
        # A tool call ended the reasoning before its "</think>": the next "</think>" is that marker.
        self._late_think_end = False
        self._text_after_stop = False
        self._call = _CallInProgress("", [])

    # Event emission. ------------------------------------------------------------------------------

    def _emit_reasoning(self, text: str) -> None:
        self._out.append(ReasoningDelta(text))

    def _emit_content(self, text: str) -> None:
        self._out.append(ContentDelta(text))

    def _scanned_text(self, text: str, state: State) -> None:
        """Text a reasoning or content state consumed: it may hold ``<tool_call>`` that opened no call."""
        if t.TOOL_CALL_OPEN in text:
            self._junk_calls += text.count(t.TOOL_CALL_OPEN)
        if state == State.REASONING:
            self._reasoning.add(text)
        else:
            self._content.add(text)

    def _set_state(self, state: State) -> None:
        self._state = state
        if state == State.REASONING:
            self._text = self._reasoning.add
        elif state == State.CONTENT:
            self._text = self._content.add
        elif state == State.VALUE:
            self._text = self._call.value.append
        else:
            self._text = None

    # The call in progress. ------------------------------------------------------------------------

    def _malformed(self, note: str) -> None:
        """The call being read is not one: its raw text becomes content, parsing goes on as content."""
        self._content.add("".join(self._call.raw))
        self._call = _CallInProgress("", [])
        self._out.append(Malformed(note))
        self._set_state(State.CONTENT)

    def _open_call(self, raw: str, name: str) -> None:
        self._call = _CallInProgress(name, [raw])
        schemas = self._schemas
        if schemas is not None and name not in schemas:
            self._malformed(f"tool call to unknown tool {name!r}: kept as text")
        else:
            self._set_state(State.FUNCTION)

    def _call_label(self) -> str:
        return f"tool call {self._calls} ({self._call.name})"

    def _keep_value(self, value: str, typed: bool, raw: str) -> None:
        """Store the parameter just read (``raw``: its block as written); a repeat is noted, kept as text."""
        call = self._call
        name = call.param_name
        if name in call.params:
            # The first value stays (a streamed value cannot be taken back); the repeat joins the content,
            # with the whitespace before it, as written.
            before = call.raw[-2] if len(call.raw) > 1 and call.raw[-2].isspace() else ""
            call.duplicates.append(before + raw)
            call.notes.append(f"{self._call_label()}: parameter {name!r} repeated: the first value kept, "
                              "the repeat kept as text")
            return
        schema = None
        if typed and self._schemas is not None:
            schema = self._schemas[call.name].get(name)
        if schema is None:
            call.params[name] = value
            return
        typed_text, problem = typed_value(value, schema)
        if problem == TOO_MANY_DIGITS:
            call.notes.append(f"{self._call_label()}: parameter {name!r} has {digits_note()}: kept as text")
        call.params[name] = typed_text

    def _close_value(self, closed: bool = True) -> None:
        """The value read ends: at ``</parameter>`` (typed by the schema), or cut off (kept as written)."""
        call = self._call
        value = "".join(call.value)
        call.value.clear()  # cleared, not replaced: the VALUE state appends to this list
        raw = f"{t.PARAMETER_OPEN}{call.param_name}>{value}" + (t.PARAMETER_CLOSE if closed else "")
        call.raw.append(raw)
        # One leading and one trailing newline belong to the format, not to the value.
        if value.startswith("\n"):
            value = value[1:]
        if closed and value.endswith("\n"):
            value = value[:-1]
        self._keep_value(value, closed, raw)

    def _close_call(self, cut_off: str | None = None) -> None:
        """The call is complete, or was cut off by the end of the reply (``cut_off``: its note)."""
        index = self._calls
        self._calls += 1
        record = self._call
        call = ToolCall(name=record.name, arguments=record.params, id=self._id_factory())
        out = self._out
        out.append(ToolCallStart(index, call.id or "", call.name))
        out.append(ToolCallArgumentsDelta(index, call.arguments_json()))
        out.append(ToolCallEnd(index, call))
        if record.duplicates:
            self._content.add("".join(record.duplicates))
        out.extend(Malformed(note) for note in record.notes)
        if cut_off is not None:
            out.append(Malformed(cut_off))
        self._call = _CallInProgress(record.name, [])

    def _cut_off(self, unfinished: str = "") -> None:
        """The reply ended inside the call: it stays a call, with the arguments written so far."""
        note = f"{self._call_label()} cut off by the end of the completion: kept with the arguments written so far"
        if unfinished:
            note += f" (the unfinished {unfinished!r} kept as text)"
            self._content.add(unfinished)
        self._close_call(note)

    # The machine: one step per state. Each consumes from ``pos`` and returns ``(position, more)``:
    # ``more`` is False when it stopped for want of text (the position is then what ``_advance``
    # returns). ---------------------------------------------------------------------------------

    def _advance(self, buf: str, final: bool) -> int:
        pos = 0
        scan = TerminatorScan(buf)
        steps = _STEPS
        while True:
            pos, more = steps[self._state](self, buf, pos, final, scan)
            if not more:
                return pos

    def _start_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """REASONING_START, CONTENT_START: whitespace, then perhaps ``<think>``."""
        pos = _WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
        if pos == len(buf) and not final:
            return pos, False
        opened = _THINK_OPEN.match(buf, pos, partial=not final)
        if opened is not None and opened.partial:
            return pos, False
        if opened is not None:
            pos = opened.end()
        thinking = self._state == State.REASONING_START or opened is not None
        self._set_state(State.REASONING if thinking else State.CONTENT)
        return pos, True

    def _text_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """REASONING, CONTENT: text up to the state's next terminator."""
        state = self._state
        terms: tuple[Terminator, ...]
        if state == State.REASONING:
            terms = _REASONING_ENDS
        else:
            terms = _CONTENT_ENDS_THINK_OPEN if self._late_think_end else _CONTENT_ENDS
        at, term, match = scan.next(pos, terms)
        if at < 0:
            stop = len(buf) if final else hold_point(buf, pos, terms)
            if stop > pos:
                self._scanned_text(buf[pos:stop], state)
            return stop, False
        if at > pos:
            self._scanned_text(buf[pos:at], state)
        if term is _CALL_START:
            if state == State.REASONING:
                self._late_think_end = True
            self._open_call(match.group(), match.group(1))
            return match.end(), True
        if term is _THINK_END:
            # The reasoning's end marker, in its place or after the tool calls that ended the reasoning.
            self._late_think_end = False
            self._set_state(State.CONTENT)
            return at + len(t.THINK_CLOSE), True
        self._set_state(State.DONE)
        return at + len(term.literal), True  # type: ignore[union-attr]

    def _function_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """FUNCTION: whitespace, then a parameter, the function's end, or a stop marker."""
        skip = _WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
        if skip > pos:
            self._call.raw.append(buf[pos:skip])
            pos = skip
        if pos == len(buf):
            if not final:
                return pos, False
            self._cut_off()
            self._set_state(State.CONTENT)
            return pos, True
        item = _FUNCTION_ITEM.match(buf, pos, partial=True)
        if item is not None and item.partial:
            if not final:
                return pos, False
            # The completion ends inside a tag: the call is cut off; the unfinished tag joins the content.
            self._cut_off(buf[pos:])
            self._set_state(State.CONTENT)
            return len(buf), False
        if item is None:
            self._malformed("tool call with text outside its parameters: kept as text")
            return pos, True
        if item.group(1) is not None:
            self._call.param_name = item.group(1)
            self._set_state(State.VALUE)
        elif item.group(2) is not None:
            self._call.raw.append(t.FUNCTION_CLOSE)
            self._close_call()
            self._set_state(State.AFTER)
        else:  # a stop marker ended the reply inside the call
            self._cut_off()
            self._set_state(State.DONE)
        return item.end(), True

    def _value_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """VALUE: a parameter's text up to ``</parameter>`` or a stop marker."""
        at, term, _ = scan.next(pos, _VALUE_ENDS)
        value = self._call.value
        if at < 0:
            if not final:
                stop = hold_point(buf, pos, _VALUE_ENDS)
                if stop > pos:
                    value.append(buf[pos:stop])
                return stop, False
            value.append(buf[pos:])
            self._close_value(closed=False)
            self._cut_off()
            self._set_state(State.CONTENT)
            return len(buf), False
        if at > pos:
            value.append(buf[pos:at])
        if term is _PARAMETER_END:
            self._close_value()
            self._set_state(State.FUNCTION)
            return at + len(t.PARAMETER_CLOSE), True
        self._close_value(closed=False)  # a stop marker ended the reply inside the value
        self._cut_off()
        self._set_state(State.DONE)
        return at + len(term.literal), True  # type: ignore[union-attr]

    def _after_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """AFTER: ``</tool_call>``, another ``<function=…>`` in the same block, or content."""
        item = _AFTER_FUNCTION.match(buf, pos, partial=not final)
        if item is not None and item.partial:
            return pos, False
        if item is None:
            self._set_state(State.CONTENT)
        elif item.group(1) is not None:
            pos = item.end()
            self._set_state(State.CONTENT)
        else:
            pos = item.end()
            self._open_call(item.group(), item.group(2))
        return pos, True

    def _done_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """DONE: the reply has ended; what follows is not part of it."""
        if not self._text_after_stop and pos < len(buf) and not buf[pos:].isspace():
            self._text_after_stop = True
        return len(buf), False

    def _finish(self) -> None:
        if self._junk_calls:
            count = self._junk_calls
            self._out.append(Malformed(_JUNK_CALL_NOTE + (f" ({count} times)" if count > 1 else "")))
        if self._text_after_stop:
            self._out.append(Malformed("text after the end of the reply ('<|im_end|>'/'<|endoftext|>') ignored"))


_Step = Callable[[ChatMLReplyParser, str, int, bool, TerminatorScan], tuple[int, bool]]
#: The step of each state, indexed by the state's value.
_STEPS: tuple[_Step, ...] = (
    ChatMLReplyParser._start_step,  # REASONING_START
    ChatMLReplyParser._start_step,  # CONTENT_START
    ChatMLReplyParser._text_step,  # REASONING
    ChatMLReplyParser._text_step,  # CONTENT
    ChatMLReplyParser._function_step,  # FUNCTION
    ChatMLReplyParser._value_step,  # VALUE
    ChatMLReplyParser._after_step,  # AFTER
    ChatMLReplyParser._done_step,  # DONE
)
