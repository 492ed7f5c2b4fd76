"""The reply parser of the ChatML family: a completion into reasoning, content and typed tool calls.

The rules it follows are written in ``docs/chatml.md`` ("Parsing replies"): reasoning up to
``</think>``; content stripped as a whole; ``<tool_call>`` + ``<function=NAME>`` opens a call (of a
tool not offered too, noted, its values untyped; not a NAME with braces, quotes or whitespace),
which is announced at once and whose arguments stream as they arrive (:mod:`.call_stream`); values
typed by the tools' schemas (:mod:`.schema`); a call cut off or ended by stray text stays a call,
with a note; where a value ends, ``</parameter>`` and tags inside it included (the section below);
tolerated, with a note: a function block of an offered tool without ``<tool_call>``, a value whose
``</parameter>`` is missing (it ends at the next tag), a block ended by ``</tool_call>`` without
``</function>``; a call in the JSON form of Qwen2.5 and Qwen3 (``<tool_call>`` + ``{"name": …,
"arguments": …}``), noted: :mod:`.json_call`; ``<|im_end|>`` / ``<|endoftext|>`` end the reply.
``continued`` (``continue_final_message``): the completion goes on with the content or reasoning
the prompt left open.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...model.messages import ToolCall
from ...replies.streaming import (
    ContentDelta,
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
from . import tokens as t
from .call_stream import CallInProgress
from .grammar import (
    AFTER_FUNCTION,
    AFTER_VALUE,
    AFTER_VALUE_WS,
    BARE_CALL_START,
    CALL_START,
    CLOSE_ENDS,
    CONTENT_ENDS,
    CONTENT_ENDS_THINK_OPEN,
    FUNCTION_END,
    FUNCTION_ITEM,
    JSON_CALL_START,
    JSON_ENDS,
    JSON_ENDS_THINK_OPEN,
    JUNK_CALL_NOTE,
    NEXT_PARAMETER,
    PARAMETER_END,
    REASONING_ENDS,
    THINK_END,
    THINK_OPEN,
    TOOL_CALL_END,
    VALUE_ENDS,
    WS_RUN,
    State,
    could_name_a_tool,
    value_end_past,
)
from .json_call import read_json_call
from .schema import schema_types

__all__ = ["ChatMLReplyParser"]

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
        "_json",
        "_json_calls",
        "_json_from",
        "_junk_calls",
        "_late_think_end",
        "_reasoning",
        "_schemas",
        "_state",
        "_text_after_stop",
        "_unclosed",
    )

    def __init__(
        self,
        schemas: dict[str, Mapping[str, Any]] | None,
        thinking: bool,
        id_factory: Callable[[], str] | None = None,
        continued: str | None = None,
        json_calls: bool = False,
    ) -> None:
        """``continued``: the field the prompt left open (``continue_final_message``), or ``None``;
        ``json_calls``: the template writes calls in the JSON form (no note for one)."""
        super().__init__()
        self._json_calls = json_calls
        self._schemas = schemas
        self._id_factory = id_factory or new_call_id
        # A continued text (continue_final_message) goes on from the prompt's: no start to skip.
        self._reasoning = StrippedText(self._emit_reasoning, continued not in (None, "content"))
        self._content = StrippedText(self._emit_content, continued == "content")
        self._state = State.REASONING_START if thinking else State.CONTENT_START
        self._calls = 0
        self._junk_calls = 0
        # A tool call ended the reasoning before its "</think>": the next "</think>" is that marker.
        self._late_think_end = False
        self._text_after_stop = False
        # No "</parameter>" comes in the rest of the reply: a value ends at the next tag at once.
        self._unclosed = False
        self._call = CallInProgress("", [])
        self._json: list[str] = []  # the text of a call in the JSON form, read so far
        self._json_from = State.CONTENT
        if continued is not None:
            self._set_state(State.CONTENT if continued == "content" else State.REASONING)

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
            self._text = self._value_text
        elif state == State.JSON:
            self._text = self._json.append
        else:
            self._text = None

    # The call in progress. ------------------------------------------------------------------------

    def _value_text(self, text: str) -> None:
        if self._call.held:
            self._call.held.append(text)
        else:
            self._call.value_text(self._out, text)

    def _not_a_call(self, note: str) -> None:
        """The block opened is not a call (not announced): its raw text becomes content."""
        self._content.add("".join(self._call.raw))
        self._call = CallInProgress("", [])
        self._out.append(Malformed(note))
        self._set_state(State.CONTENT)

    def _open_call(self, raw: str, name: str, bare: bool = False) -> None:
        """``<function=NAME>`` was read (``bare``: without ``<tool_call>``, of an offered tool): announce the call.

        A name no tool offered has is a call too (noted), unless it cannot be a tool's name: then text.
        """
        self._call = call = CallInProgress(name, [raw])
        offered = self._schemas is None or name in self._schemas
        if not offered and not could_name_a_tool(name):
            self._not_a_call(f"tool call to unknown tool {name!r} (not a tool's name): kept as text")
            return
        call.index = self._calls
        self._calls += 1
        call.call_id = self._id_factory()
        self._out.append(ToolCallStart(call.index, call.call_id, name))
        if bare:
            call.notes.append(Malformed(f"{call.label()} written without '<tool_call>': read as a call"))
        if not offered:  # as vLLM reads it; well formed, so a note (reply.notes), not malformed
            call.notes.append(Note(f"{call.label()} to a tool not offered: read as a call, its values untyped"))
        self._set_state(State.FUNCTION)

    def _open_value(self, name: str) -> None:
        """``<parameter=NAME>`` was read: a value typed as a string (or untyped) is streamed as it comes."""
        call = self._call
        call.param_name = name
        call.nested = 0
        if name not in call.params:
            schemas = self._schemas
            kinds = schema_types(schemas.get(call.name, {}).get(name)) if schemas is not None else set()
            if kinds <= {"string"}:
                call.open_string_value(self._out)
        self._set_state(State.VALUE)

    def _close_value(self, closed: bool = True, marker: str = t.PARAMETER_CLOSE) -> None:
        """The value read ends: at ``marker`` (typed by the schema), or cut off (kept as written).

        ``marker`` is ``""`` for a value ended by the next parameter or the function's end.
        """
        call = self._call
        value = "".join(call.value)
        call.value.clear()  # cleared, not replaced: the VALUE state appends to this list
        raw = f"{t.PARAMETER_OPEN}{call.param_name}>{value}" + (marker if closed else "")
        call.raw.append(raw)
        if closed and not marker:
            call.notes.append(Malformed(f"{self._call.label()}: parameter {call.param_name!r} not closed by "
                                        "'</parameter>': its value ends where the next tag begins"))
        # One leading and one trailing newline belong to the format, not to the value.
        if value.startswith("\n"):
            value = value[1:]
        if closed and value.endswith("\n"):
            value = value[:-1]
        schemas = self._schemas
        schema = schemas.get(call.name, {}).get(call.param_name) if closed and schemas is not None else None
        call.keep_value(self._out, value, schema, closed, raw)

    def _close_call(self, cut_off: str | None = None) -> None:
        """The call ends: complete, cut off by the end of the reply (``cut_off``: its note), or malformed."""
        record = self._call
        out = self._out
        text = record.finish(out)
        call = ToolCall(name=record.name, arguments=record.params, id=record.call_id, arguments_text=text)
        out.append(ToolCallEnd(record.index, call))
        if record.duplicates:
            self._content.add("".join(record.duplicates))
        out.extend(record.notes)
        if cut_off is not None:
            out.append(Malformed(cut_off))
        self._call = CallInProgress(record.name, [])

    def _cut_off(self, unfinished: str = "") -> None:
        """The reply ended inside the call: it stays a call, with the arguments written so far."""
        note = f"{self._call.label()} cut off by the end of the completion: kept with the arguments written so far"
        if unfinished:
            note += f" (the unfinished {unfinished!r} kept as text)"
            self._content.add(unfinished)
        self._close_call(note)

    # Where a value ends. -----------------------------------------------------------------------
    # A value may hold the format's own tags (a file that is itself a tool-call example, a template):
    #
    # - ``</parameter>`` ends the value when what follows it (after whitespace) is a parameter's tag of the
    #   tool (any tag without tools), ``</function>``, ``</tool_call>``, a stop marker or the end of the
    #   completion; followed by anything else it is held: the value's own text if another
    #   ``</parameter>`` comes, else the value's end after all;
    # - a ``<parameter=…>`` taken as the value's text (one of a parameter already read, or one of no
    #   parameter of the tool followed by a ``</parameter>``) opens a nested block: the ``</parameter>``
    #   that closes it is text too (held, when what follows it would end the value, until another
    #   ``</parameter>`` shows it was);
    # - without a ``</parameter>`` a value ends (tolerated, noted) at the next parameter's tag or the
    #   function's end (:meth:`_end_unclosed`).

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

    # The JSON form of a call (:mod:`.json_call`): its text held up to ``</tool_call>``. ----------

    def _open_json(self, raw: str, state: State) -> None:
        """``<tool_call>{`` was read (``raw``) in ``state``: hold the text up to the block's end."""
        self._json.append(raw)
        self._json_from = state
        self._set_state(State.JSON)

    def _json_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """JSON: the call's text up to ``</tool_call>`` (or, not closed, another end; see :mod:`.json_call`)."""
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
        if not self._json_calls:
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

    # The machine: one step per state, consuming from ``pos``; returns ``(position, more)``, ``more``
    # False when it stopped for want of text (the position is then what ``_advance`` returns). -----

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
        pos = WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
        if pos == len(buf) and not final:
            return pos, False
        opened = THINK_OPEN.match(buf, pos, partial=not final)
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
            terms = REASONING_ENDS
        else:
            terms = CONTENT_ENDS_THINK_OPEN if self._late_think_end else CONTENT_ENDS
        at, term, match = scan.next(pos, terms)
        if at < 0:
            stop = len(buf) if final else hold_point(buf, pos, terms)
            if stop > pos:
                self._scanned_text(buf[pos:stop], state)
            return stop, False
        if at > pos:
            self._scanned_text(buf[pos:at], state)
        if term is CALL_START:
            if state == State.REASONING:
                self._late_think_end = True
            self._open_call(match.group(), match.group(1))
            return match.end(), True
        if term is JSON_CALL_START:
            self._open_json(match.group(), state)
            return match.end(), True
        if term is BARE_CALL_START:
            tag_end = match.end(1) + 1
            if self._schemas is not None and match.group(1) not in self._schemas:
                self._scanned_text(buf[at:tag_end], state)  # not a tool offered: prose, not a call
            else:
                self._open_call(buf[at:tag_end], match.group(1), bare=True)
            return tag_end, True
        if term is THINK_END:
            # The reasoning's end marker, in its place or after the tool calls that ended the reasoning.
            self._late_think_end = False
            self._set_state(State.CONTENT)
            return at + len(t.THINK_CLOSE), True
        self._set_state(State.DONE)
        return at + len(term.literal), True  # type: ignore[union-attr]

    def _function_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """FUNCTION: whitespace, then a parameter, the function's end, or a stop marker."""
        skip = WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
        if skip > pos:
            self._call.raw.append(buf[pos:skip])
            self._call.gap.append(buf[pos:skip])
            pos = skip
        if pos == len(buf):
            if not final:
                return pos, False
            self._cut_off()
            self._set_state(State.CONTENT)
            return pos, True
        item = FUNCTION_ITEM.match(buf, pos, partial=True)
        if item is not None and item.partial:
            if not final:
                return pos, False
            # The completion ends inside a tag: the call is cut off; the unfinished tag joins the content.
            self._cut_off(buf[pos:])
            self._set_state(State.CONTENT)
            return len(buf), False
        if item is None:
            # The call was announced and cannot be taken back: it ends here; the text is content.
            self._call.notes.append(Malformed(f"{self._call.label()} has text outside its parameters: the call "
                                              "ends there with the arguments read so far, the text kept as content"))
            gap = "".join(self._call.gap)
            self._close_call()
            self._content.add(gap)  # the whitespace before the text is content too
            self._set_state(State.CONTENT)
            return pos, True
        self._call.gap.clear()
        if item.group(1) is not None:
            self._open_value(item.group(1))
        elif item.group(2) is not None:
            self._call.raw.append(t.FUNCTION_CLOSE)
            self._close_call()
            self._set_state(State.AFTER)
        elif item.group(4) is not None:  # "</tool_call>" where "</function>" was left out
            self._call.raw.append(t.TOOL_CALL_CLOSE)
            self._call.notes.append(Malformed(f"{self._call.label()} ended by '</tool_call>' without '</function>'"))
            self._close_call()
            self._set_state(State.CONTENT)
        else:  # a stop marker ended the reply inside the call
            self._cut_off()
            self._set_state(State.DONE)
        return item.end(), True

    def _value_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """VALUE: a value up to ``</parameter>`` (or, tolerated, the next tag) or a stop marker."""
        held = self._call.held
        terms = CLOSE_ENDS if held else VALUE_ENDS
        at, term, match = scan.next(pos, terms)
        value_text = self._value_text
        if at < 0:
            if not final:
                stop = hold_point(buf, pos, terms)
                if stop > pos:
                    value_text(buf[pos:stop])
                return stop, False
            value_text(buf[pos:])
            if held:
                return self._reread_unclosed(buf, len(buf), final)
            self._close_value(closed=False)
            self._cut_off()
            self._set_state(State.CONTENT)
            return len(buf), False
        if at > pos:
            value_text(buf[pos:at])
        if term is PARAMETER_END:
            return self._parameter_end(buf, at, final)
        if term is NEXT_PARAMETER and self._names_a_read_parameter(match):
            # A model that lost a "</parameter>" goes on to another parameter: this tag is the value's text.
            call = self._call
            found = value_end_past(buf, match.end(), (call.param_name, *call.params))
            skip = found if found >= 0 else len(buf) if final else hold_point(buf, match.end(), VALUE_ENDS)
            call.nested += buf.count(t.PARAMETER_OPEN, at, skip)
            value_text(buf[at:skip])
            return skip, True
        if term is NEXT_PARAMETER or term is FUNCTION_END:
            if self._unclosed or (match is not None and self._is_tool_parameter(match.group())):
                # A parameter of the tool opening (as vLLM and SGLang read it), or no "</parameter>" ahead.
                return self._end_unclosed(buf, at), True
            # Text of the value, or its end where "</parameter>" is missing: held until that is known.
            end = match.end() if match is not None else at + len(t.FUNCTION_CLOSE)
            self._call.held.append(buf[at:end])
            return end, True
        if held:
            return self._reread_unclosed(buf, at, final)
        self._close_value(closed=False)  # a stop marker ended the reply inside the value
        self._cut_off()
        self._set_state(State.DONE)
        return at + len(term.literal), True  # type: ignore[union-attr]

    def _after_value(self, closed_call: bool) -> None:
        """A value was read: next, the function's items, or (``closed_call``) what follows the function."""
        self._set_state(State.AFTER if closed_call else State.FUNCTION)

    def _after_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """AFTER: ``</tool_call>``, another ``<function=…>`` in the same block, or content."""
        item = AFTER_FUNCTION.match(buf, pos, partial=not final)
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
            self._out.append(Malformed(JUNK_CALL_NOTE + (f" ({count} times)" if count > 1 else "")))
        if self._text_after_stop:  # the reply was read whole: what follows its end is not part of it
            self._out.append(Note("text after the end of the reply ('<|im_end|>'/'<|endoftext|>') ignored"))


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
    ChatMLReplyParser._json_step,  # JSON
)
