"""The Harmony reply parser: the completion after ``<|start|>assistant`` into reasoning, content, tool calls.

Grammar, as gpt-oss writes it: one or more messages, each ``HEADER<|message|>BODY`` ended by
``<|end|>``, ``<|call|>`` or ``<|return|>`` (or by the end of the completion); later messages start
with ``<|start|>`` and the role. The header is ``<|channel|>CHANNEL``, `` to=RECIPIENT`` and a content
type (``<|constrain|>TYPE`` or a bare word), in any order, spaces optional before the markers.

- a message with a recipient is a tool call, on any channel: ``functions.NAME`` -> ``NAME`` with the
  body as JSON arguments (a body that is not a JSON object is kept as the raw string and noted: as
  "cut off" when the completion ended inside it, since a complete object without its ``<|call|>``
  is a whole call whose stop token the server stripped);
  ``python`` -> ``python`` with ``{"code": BODY}``; any other recipient -> that name, JSON arguments;
- ``analysis`` -> reasoning; ``final`` and ``commentary`` -> content;
- the texts of several messages bound for the same field are joined with a blank line (``"\\n\\n"``);
  bodies are kept exactly (no stripping);
- malformed structure (a header without ``<|message|>``, a role other than ``assistant``, an unknown
  channel, repeated header fields, text between messages) goes to the content as written, with a
  note in ``reply.malformed``; tolerated, noted (:mod:`.tolerant`): no channel, ``<|channel|>X TEXT``
  without ``<|message|>``, a second ``<|channel|>``, a JSON call cut off with only braces missing;
- ``<|start|>`` and the other markers inside a body are body text: only an end marker ends a message.

Context: ``prefill="analysis"`` / ``"final"`` / ``"commentary"`` when the prompt ended inside such a
message (the template's prefill), so the completion continues its body.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any

from ...model.messages import ToolCall
from ...replies.streaming import (
    ContentDelta,
    Malformed,
    Note,
    ReasoningDelta,
    StreamParser,
    Terminator,
    TerminatorScan,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
    hold_point,
    json_string_body,
    new_call_id,
)
from ...replies.values import (
    JSON_INVALID,
    JSON_TOO_DEEP,
    NUMBER_TOO_LARGE,
    TOO_MANY_DIGITS,
    digits_note,
    read_json,
)
from .header import CHANNEL_KINDS, TWO_CHANNELS, Kind, MessageHeader, parse_header
from .tokens import CHANNEL, END_MARKERS, MESSAGE, START
from .tolerant import closing_braces, split_at_last_channel, text_after_channel

__all__ = ["HarmonyReplyParser", "MessageHeader", "parse_header"]

# The members as module names: an Enum class's attribute lookup is several times slower than a global's,
# and the parser tests them on every step.
_REASONING, _CONTENT, _JSON_CALL, _PYTHON_CALL = Kind.REASONING, Kind.CONTENT, Kind.JSON_CALL, Kind.PYTHON_CALL


_MESSAGE = Terminator.marker(MESSAGE)
_END_MARKERS = tuple(Terminator.marker(marker) for marker in END_MARKERS)
_HEADER_ENDS = (_MESSAGE, *_END_MARKERS)
_MESSAGE_STARTS = (Terminator.marker(START), Terminator.marker(CHANNEL))

_NO_MESSAGE = "message header not followed by '<|message|>': kept as text"
_CUT_OFF_ANALYSIS = "analysis message cut off by the end of the completion: kept as reasoning, as written so far"


class _State(enum.Enum):
    """Where the parser is: each state has its own buffer and one method of :class:`HarmonyReplyParser`."""

    HEADER = "in a message header, up to '<|message|>' (buffer: _header)"
    BODY = "in a message body, up to an end marker (buffer: _call.parts in a tool call)"
    BETWEEN = "after a message, up to '<|start|>' (buffer: _stray, leading whitespace)"


_HEADER, _BODY, _BETWEEN = _State.HEADER, _State.BODY, _State.BETWEEN


class _Call:
    """The tool call in progress: its place, id and name, and the body text read so far."""

    __slots__ = ("call_id", "index", "name", "parts", "python", "sent")

    def __init__(self, index: int, call_id: str, name: str, python: bool) -> None:
        self.index = index
        self.call_id = call_id
        self.name = name
        self.python = python
        self.parts: list[str] = []
        self.sent: list[str] = []  # the argument deltas sent, which become the call's arguments_text


class HarmonyReplyParser(StreamParser):
    """Streaming parser of a gpt-oss Harmony completion (rules: the docstring of this module).

    Made by :meth:`HarmonyFormat.stream_parser`; per stream, picklable between feeds when its
    ``id_factory`` is.
    """

    __slots__ = (
        "_call",
        "_calls",
        "_field",
        "_fields_written",
        "_header",
        "_id_factory",
        "_offered",
        "_segment_open",
        "_state",
        "_stray",
        "_stray_started",
    )

    def __init__(self, prefill: str | None = None, id_factory: Callable[[], str] | None = None,
                 offered: frozenset[str] | None = None) -> None:
        """``offered``: the names of the tools the request offered (``None``: none, so no call is noted)."""
        super().__init__()
        self._id_factory = id_factory or new_call_id
        self._offered = offered
        self._header: list[str] = []
        self._stray: list[str] = []
        self._stray_started = False
        self._field: type[ReasoningDelta | ContentDelta] = ContentDelta  # the field a body's text goes to
        self._fields_written: set[type[ReasoningDelta | ContentDelta]] = set()
        self._segment_open = False
        self._calls = 0
        self._call: _Call | None = None
        if prefill is None:
            self._state = _HEADER
        else:
            self._start_body(_REASONING if prefill == "analysis" else _CONTENT)

    # Text routing. --------------------------------------------------------------------------------

    def _field_text(self, text: str) -> None:
        """Text of the field ``_field`` streams (the reasoning or the content); a later message's text
        joins what the field holds after a blank line. ``_text`` in a reasoning or content body."""
        delta = self._field
        if not self._segment_open:
            self._segment_open = True
            if delta in self._fields_written:
                text = "\n\n" + text
            else:
                self._fields_written.add(delta)
        self._out.append(delta(text))

    def _content_text(self, text: str) -> None:
        """Text outside a message body (malformed structure, text between messages): content."""
        self._field = ContentDelta
        self._field_text(text)

    def _json_call_text(self, text: str) -> None:
        call: _Call = self._call  # type: ignore[assignment]
        call.parts.append(text)
        call.sent.append(text)
        self._out.append(ToolCallArgumentsDelta(call.index, text))

    def _python_call_text(self, text: str) -> None:
        call: _Call = self._call  # type: ignore[assignment]
        call.parts.append(text)
        self._send_arguments(call, json_string_body(text))

    def _send_arguments(self, call: _Call, text: str) -> None:
        call.sent.append(text)
        self._out.append(ToolCallArgumentsDelta(call.index, text))

    def _start_body(self, kind: Kind, name: str = "") -> None:
        self._state = _BODY
        self._segment_open = False
        if kind is _REASONING or kind is _CONTENT:
            self._field = ReasoningDelta if kind is _REASONING else ContentDelta
            self._text = self._field_text
        else:
            python = kind is _PYTHON_CALL
            call = self._call = _Call(self._calls, self._id_factory(), name, python)
            self._calls += 1
            self._out.append(ToolCallStart(call.index, call.call_id, name))
            if self._offered is not None and name not in self._offered:  # a call all the same, as vLLM reads it
                self._out.append(Note(f"tool call {call.index} ({name}) to a tool not offered: read as a call"))
            if python:
                self._send_arguments(call, '{"code":"')
                self._text = self._python_call_text
            else:
                self._text = self._json_call_text

    def _end_body(self, cut_off: bool = False) -> None:
        """The message ends: at an end marker, or at the end of the completion (``cut_off``)."""
        call = self._call
        if call is not None:
            self._call = None
            body = "".join(call.parts)
            arguments: Mapping[str, Any] | str
            if call.python:
                self._send_arguments(call, '"}')
                arguments = {"code": body}
            else:
                value, problem = read_json(body)
                if not isinstance(value, dict) and cut_off and problem == JSON_INVALID:
                    value = self._closed_arguments(call, body)
                if isinstance(value, dict):
                    arguments = value
                else:
                    arguments = body
                    self._out.append(Malformed(_raw_arguments_note(call, problem, cut_off)))
            # The arguments' text is what was streamed (for a JSON call, the body as the model wrote it),
            # so that the deltas a client accumulated equal the reply's to_openai().
            done = ToolCall(call.name, arguments, call.call_id, arguments_text="".join(call.sent))
            self._out.append(ToolCallEnd(call.index, done))
        self._state = _BETWEEN
        self._text = None

    def _closed_arguments(self, call: _Call, body: str) -> Any:
        """A JSON call cut off with only its closing braces missing: send them, and read the arguments."""
        braces = closing_braces(body)
        value = read_json(body + braces)[0] if braces else None
        if isinstance(value, dict):
            self._send_arguments(call, braces)
            self._out.append(Malformed(f"tool call {call.index} ({call.name}) cut off by the end of the completion: "
                                       f"its arguments closed with {len(braces)} '}}'"))
        return value

    def _malformed_text(self, text: str, note: str) -> None:
        """Structure that is not well formed: its text joins the content as one piece, with a note."""
        self._segment_open = False
        if text:
            self._content_text(text)
        self._segment_open = False
        self._out.append(Malformed(note))

    # The machine: one method per state, each returning (position, whether the buffer is done). ---

    def _advance(self, buf: str, final: bool) -> int:
        scan = TerminatorScan(buf)
        pos = 0
        done = False
        while not done:
            state = self._state
            if state is _BODY:
                pos, done = self._in_body(buf, scan, pos, final)
            elif state is _HEADER:
                pos, done = self._in_header(buf, scan, pos, final)
            else:
                pos, done = self._between(buf, scan, pos, final)
        return pos

    def _in_body(self, buf: str, scan: TerminatorScan, pos: int, final: bool) -> tuple[int, bool]:
        at, term, _ = scan.next(pos, _END_MARKERS)
        if at < 0:
            stop = len(buf) if final else hold_point(buf, pos, _END_MARKERS)
            if stop > pos:
                self._text(buf[pos:stop])  # type: ignore[misc]
            if final:
                if self._call is None and self._field is ReasoningDelta:
                    # Only '<|end|>' ends an analysis message (no stop token is stripped from it).
                    self._out.append(Malformed(_CUT_OFF_ANALYSIS))
                self._end_body(cut_off=True)
            return stop, True
        if at > pos:
            self._text(buf[pos:at])  # type: ignore[misc]
        self._end_body()
        return at + len(term.literal), False  # type: ignore[union-attr]

    def _in_header(self, buf: str, scan: TerminatorScan, pos: int, final: bool) -> tuple[int, bool]:
        at, term, _ = scan.next(pos, _HEADER_ENDS)
        if at < 0:
            stop = len(buf) if final else hold_point(buf, pos, _HEADER_ENDS)
            if stop > pos:
                self._header.append(buf[pos:stop])
            if final:
                self._abandon_header(self._take_header())
            return stop, True
        if at > pos:
            self._header.append(buf[pos:at])
        raw = self._take_header()
        if term is _MESSAGE:
            self._open_message(raw)
        elif not self._header_as_message(raw):
            self._abandon_header(raw)
            self._state = _BETWEEN
        return at + len(term.literal), False  # type: ignore[union-attr]

    def _between(self, buf: str, scan: TerminatorScan, pos: int, final: bool) -> tuple[int, bool]:
        at, term, _ = scan.next(pos, _MESSAGE_STARTS)
        stop = at if at >= 0 else len(buf) if final else hold_point(buf, pos, _MESSAGE_STARTS)
        if stop > pos:
            self._stray_text(buf[pos:stop])
        if at < 0:
            if final:
                self._end_stray()
            return stop, True
        self._end_stray()
        self._header = [term.literal]  # type: ignore[union-attr]
        self._state = _HEADER
        return at + len(term.literal), False  # type: ignore[union-attr]

    # Headers and the text between messages. -------------------------------------------------------

    def _take_header(self) -> str:
        raw = "".join(self._header)
        self._header = []
        return raw

    def _abandon_header(self, raw: str) -> None:
        """A header ended without ``<|message|>``: its text (if not blank) is content, noted."""
        if raw.strip():
            self._malformed_text(raw, _NO_MESSAGE)

    def _open_message(self, raw: str) -> None:
        """``raw`` (the header, from ``<|start|>`` if it had one) was ended by ``<|message|>``."""
        cut = raw.rfind(START)
        if cut >= 0:
            abandoned = raw[:cut]
            raw = raw[cut:]
            if abandoned:
                self._malformed_text(abandoned, _NO_MESSAGE)
            header = parse_header(raw[len(START):], True)
        else:
            header = parse_header(raw, False)
        if header.problem == TWO_CHANNELS:
            # The first header never got its "<|message|>": the message is the last one's (as llama.cpp reads it).
            abandoned, raw = split_at_last_channel(raw)
            self._out.append(Malformed(f"message header {abandoned!r} not followed by '<|message|>' before another "
                                       "'<|channel|>': read as an empty message"))
            header = parse_header(raw, False)
        if header.problem:
            self._malformed_text(raw + MESSAGE, header.problem + ": kept as text")
            # The body follows the malformed header into the content, as one piece with it.
            self._start_body(_CONTENT)
            self._segment_open = True
        else:
            if header.note:
                self._out.append(Malformed(header.note))
            self._start_body(header.kind, header.name)

    def _header_as_message(self, raw: str) -> bool:
        """A header ``<|channel|>CHANNEL TEXT`` ended by an end marker: TEXT is the message (openai-harmony's way)."""
        found = text_after_channel(raw)
        kind = CHANNEL_KINDS.get(found[0]) if found is not None else None
        if found is None or kind is None:
            return False
        self._out.append(Malformed(f"message header not followed by '<|message|>': the text after its channel "
                                   f"{found[0]!r} read as the message"))
        self._start_body(kind)
        self._text(found[1])  # type: ignore[misc]
        self._end_body()
        return True

    def _stray_text(self, text: str) -> None:
        if not self._stray_started:
            if text.isspace():
                self._stray.append(text)
                return
            self._stray_started = True
            self._segment_open = False
            if self._stray:
                text = "".join(self._stray) + text
                self._stray = []
        self._content_text(text)

    def _end_stray(self) -> None:
        if self._stray_started:
            self._out.append(Malformed("text between messages: kept as content"))
        self._segment_open = False
        self._stray_started = False
        self._stray = []


def _raw_arguments_note(call: _Call, problem: str | None, cut_off: bool) -> str:
    label = f"tool call {call.index} ({call.name})"
    if problem == TOO_MANY_DIGITS:
        return f"{label}: arguments have {digits_note()}, kept raw"
    if problem == JSON_TOO_DEEP:
        return f"{label}: arguments nested too deeply to read, kept raw"
    if problem == NUMBER_TOO_LARGE:
        return f"{label}: arguments hold a number beyond the range of a double, kept raw"
    if cut_off:
        # An end marker may have been stripped as the stop token, so only arguments that are not a
        # whole JSON object tell that the completion ended inside the call.
        return f"{label} cut off by the end of the completion: kept with the arguments written so far"
    return f"{label}: arguments are not a JSON object, kept raw"
