"""The reply-parsing machinery every format shares: events, the incremental scanner, reply assembly.

A format's reply parser is a :class:`StreamParser` subclass: a state machine over the completion
text. ``feed(delta)`` takes any piece of text (split anywhere, even inside a marker) and returns the
events it completes; ``close()`` ends the generation and returns the rest. One-shot ``parse`` is the
same machine fed the whole text at once, so ``assemble(feed(a) + feed(b) + close())`` equals
``parse(a + b)`` by construction, for every split.

Scanning guarantees (what makes parsing linear in the completion's length):

- text is consumed once: a parser keeps back only the end of the text that could still be the start
  of a marker (at most a few hundred characters), never text it has already decided about;
- each state looks for its next *terminator* (a literal marker, or a pattern beginning with a literal
  marker) with C-level searches whose results are remembered while they are still ahead, so one
  buffer is searched for each terminator once, however many times the state machine asks.

Events are small frozen objects: :class:`ReasoningDelta`, :class:`ContentDelta`,
:class:`ToolCallStart`, :class:`ToolCallArgumentsDelta`, :class:`ToolCallEnd`, :class:`Malformed`
(a note that some structure could not be read as the format says; its text is in a content delta or
the call the note names, never dropped) and :class:`Note` (a note on something read as the format
says but worth knowing).
:func:`assemble` and :class:`ReplyBuilder` turn events into an
:class:`~prompt_formats.model.messages.AssistantReply`.
"""

from __future__ import annotations

import abc
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs
import regex

from ..errors import TOO_DEEP, InvalidInputError, ParseError, type_name
from ..model.messages import AssistantReply, ToolCall

__all__ = [
    "ContentDelta",
    "Event",
    "Malformed",
    "Note",
    "ReasoningDelta",
    "ReplyBuilder",
    "StreamParser",
    "StrippedText",
    "Terminator",
    "TerminatorScan",
    "ToolCallArgumentsDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "assemble",
    "hold_point",
    "json_string_body",
    "new_call_id",
]


# ---------------------------------------------------------------------------------------------------
# Events.


@attrs.frozen
class ReasoningDelta:
    """More reasoning text (concatenate the deltas)."""

    text: str


@attrs.frozen
class ContentDelta:
    """More content text (concatenate the deltas)."""

    text: str


@attrs.frozen
class ToolCallStart:
    """A tool call begins: its position among the reply's calls, its id and the tool's name."""

    index: int
    id: str
    name: str


@attrs.frozen
class ToolCallArgumentsDelta:
    """More of call ``index``'s arguments as JSON text, as the OpenAI streaming API carries them.

    The deltas of one call concatenate to a JSON object text equal in value to the call's arguments
    or, when the model wrote arguments that are not a JSON object, to that raw text itself.
    """

    index: int
    text: str


@attrs.frozen
class ToolCallEnd:
    """Call ``index`` is complete; ``call`` is it, with typed arguments (or the raw text, see above)."""

    index: int
    call: ToolCall


@attrs.frozen
class Malformed:
    """A piece of the completion could not be read as the format says; ``note`` says what.

    The text itself went to the content, or stayed in a tool call that the note names (a call cut
    off by the end of the completion, arguments that are not a JSON object); the note ends up in
    :attr:`AssistantReply.malformed`.
    """

    note: str


@attrs.frozen
class Note:
    """Something was read as the format says but is worth knowing; ``note`` says what.

    A call in ChatML's JSON form, a call to a tool not offered, a value kept as text, text after
    the reply's end. The note ends up in :attr:`AssistantReply.notes`, never in ``malformed``.
    """

    note: str


Event = ReasoningDelta | ContentDelta | ToolCallStart | ToolCallArgumentsDelta | ToolCallEnd | Malformed | Note


class ReplyBuilder:
    """Accumulates events into an :class:`AssistantReply` (for a consumer that streams and wants the result)."""

    __slots__ = ("_calls", "_content", "_malformed", "_notes", "_reasoning")

    def __init__(self) -> None:
        self._reasoning: list[str] = []
        self._content: list[str] = []
        self._calls: list[ToolCall] = []
        self._malformed: list[str] = []
        self._notes: list[str] = []

    def add(self, events: Iterable[Event]) -> None:
        """Take more events, in the order the parser returned them."""
        for event in events:
            kind = type(event)
            if kind is ContentDelta:
                self._content.append(event.text)  # type: ignore[union-attr]
            elif kind is ReasoningDelta:
                self._reasoning.append(event.text)  # type: ignore[union-attr]
            elif kind is ToolCallEnd:
                self._calls.append(event.call)  # type: ignore[union-attr]
            elif kind is Malformed:
                self._malformed.append(event.note)  # type: ignore[union-attr]
            elif kind is Note:
                self._notes.append(event.note)  # type: ignore[union-attr]

    def reply(self) -> AssistantReply:
        """The reply so far: texts joined (``None`` when empty), the completed calls, the
        :class:`Malformed` notes as ``malformed`` and the :class:`Note` notes as ``notes``, each in order."""
        return AssistantReply(
            content="".join(self._content) or None,
            reasoning="".join(self._reasoning) or None,
            tool_calls=tuple(self._calls),
            malformed=tuple(self._malformed),
            notes=tuple(self._notes),
        )


def assemble(events: Iterable[Event]) -> AssistantReply:
    """The :class:`AssistantReply` a sequence of events describes."""
    builder = ReplyBuilder()
    builder.add(events)
    return builder.reply()


# ---------------------------------------------------------------------------------------------------
# Helpers for format parsers.


def new_call_id() -> str:
    """A fresh tool-call id: ``call_`` and 24 random hexadecimal digits."""
    return "call_" + os.urandom(12).hex()


_JSON_STRING = json.JSONEncoder(ensure_ascii=False).encode


def json_string_body(text: str) -> str:
    """``text`` escaped as the inside of a JSON string (without the quotes).

    Escaping is per character, so the escaped pieces of a text concatenate to the escaped text.
    """
    return _JSON_STRING(text)[1:-1]


class StrippedText:
    """Emits a text piece by piece with its surrounding whitespace dropped (``str.strip`` of the whole).

    Leading whitespace is dropped until the first other character; trailing whitespace is held back
    until more text follows it, and dropped if none does. ``emit`` receives each piece to send on.
    ``keep_leading``: the text continues one begun before it, so its leading whitespace is kept.
    """

    __slots__ = ("_emit", "_pending", "_started")

    def __init__(self, emit: Callable[[str], None], keep_leading: bool = False) -> None:
        self._emit = emit
        self._started = keep_leading
        self._pending: list[str] = []

    def add(self, text: str) -> None:
        """Take the next piece of the text."""
        if not self._started:
            text = text.lstrip()
            if not text:
                return
            self._started = True
        body = text.rstrip()
        if body:
            pending = self._pending
            if pending:
                self._emit("".join(pending) + body)
                pending.clear()
            else:
                self._emit(body)
            if len(body) != len(text):
                pending.append(text[len(body):])
        else:
            self._pending.append(text)

    @property
    def started(self) -> bool:
        """Whether any text other than whitespace was taken."""
        return self._started


@attrs.frozen(eq=False)  # compared and hashed by identity: terminators are module-level constants
class Terminator:
    """Something a parser state looks for: a literal marker, or a pattern that starts with one.

    ``literal`` is the marker (or the literal start of ``pattern``); every terminator starts with
    ``"<"``, which lets the scanner find where a partial one could begin. ``pattern`` (a ``re``
    pattern) must match at most ``max_length`` characters; ``partial`` (a ``regex`` pattern of the
    same language) tells whether a text could still grow into a match.
    """

    literal: str
    pattern: re.Pattern[str] | None = None
    partial: Any = None
    max_length: int = 0

    @classmethod
    def marker(cls, text: str) -> Terminator:
        """A literal marker."""
        if not text.startswith("<"):
            raise ValueError("terminators start with '<'")
        return cls(text, None, None, len(text))

    @classmethod
    def regex(cls, literal: str, pattern: str, max_length: int) -> Terminator:
        """A pattern (``re`` syntax, no possessive quantifiers needed) starting with ``literal``."""
        if not (literal.startswith("<") and pattern.startswith(re.escape(literal))):
            raise ValueError("a pattern terminator starts with its literal, which starts with '<'")
        return cls(literal, re.compile(pattern), regex.compile(pattern), max_length)

    def could_start(self, tail: str) -> bool:
        """Whether ``tail`` (the end of the text so far) could grow into this terminator."""
        if self.partial is None:
            return self.literal.startswith(tail)
        if len(tail) <= len(self.literal):
            return self.literal.startswith(tail)
        return self.partial.fullmatch(tail, partial=True) is not None


class TerminatorScan:
    """Next-occurrence search of terminators in one buffer, each search's answer kept while ahead."""

    __slots__ = ("buf", "memo")

    def __init__(self, buf: str) -> None:
        self.buf = buf
        # terminator -> (searched from, start of the next occurrence or -1, its match or None)
        self.memo: dict[Terminator, tuple[int, int, Any]] = {}

    def next(self, pos: int, terminators: Sequence[Terminator]) -> tuple[int, Terminator | None, Any]:
        """``(start, terminator, match)`` of the earliest terminator at or after ``pos``.

        ``(-1, None, None)`` when there is none.
        """
        best = -1
        best_term: Terminator | None = None
        best_match: Any = None
        memo = self.memo
        for term in terminators:
            known = memo.get(term)
            if known is not None and known[0] <= pos and (known[1] >= pos or known[1] < 0):
                start, match = known[1], known[2]
            else:
                if term.pattern is None:
                    start = self.buf.find(term.literal, pos)
                    match = None
                else:
                    match = term.pattern.search(self.buf, pos)
                    start = match.start() if match is not None else -1
                memo[term] = (pos, start, match)
            if start >= 0 and (best < 0 or start < best):
                best, best_term, best_match = start, term, match
        return best, best_term, best_match


def _require_text(value: object, name: str) -> None:
    if not isinstance(value, str):
        raise InvalidInputError(name, f"expected a string, got {type_name(value)}")


def hold_point(buf: str, pos: int, terminators: Sequence[Terminator]) -> int:
    """Where the text that could still become a terminator begins (``len(buf)`` if nowhere).

    Only the last ``max_length - 1`` characters are examined, so this costs a bounded amount.
    """
    end = len(buf)
    longest = max(t.max_length for t in terminators)
    at = buf.find("<", max(pos, end - longest + 1))
    while at >= 0:
        tail = buf[at:]
        for term in terminators:
            if term.could_start(tail):
                return at
        at = buf.find("<", at + 1)
    return end


class StreamParser(abc.ABC):
    """Base of every format's reply parser: ``feed`` any number of times, then ``close`` once.

    Subclasses implement :meth:`_advance`, which consumes a prefix of the buffer (all of it when
    ``final``) and appends events to ``self._out``. When the parser sits in a plain-text state whose
    terminators all start with ``"<"``, it sets ``self._text`` to the method taking that text, and a
    delta without ``"<"`` goes straight there.

    Instances are per stream: not shareable between threads, picklable between feeds.
    """

    __slots__ = ("__weakref__", "_buf", "_closed", "_out", "_text")

    def __init__(self) -> None:
        self._buf = ""
        self._closed = False
        self._out: list[Event] = []
        self._text: Callable[[str], None] | None = None

    def feed(self, delta: str) -> list[Event]:
        """Take the next piece of the completion; return the events it completes (maybe none).

        Raises :class:`~prompt_formats.errors.ParseError` after :meth:`close`, and
        :class:`~prompt_formats.errors.InvalidInputError` if ``delta`` is not a string.
        """
        if self._closed:
            raise ParseError("feed() after close(): a stream parser parses one completion")
        text = self._text
        if text is not None and not self._buf and type(delta) is str and "<" not in delta:
            if delta:
                text(delta)
        else:
            _require_text(delta, "delta")
            buf = self._buf + delta if self._buf else delta
            try:
                self._buf = buf[self._advance(buf, False):]
            except RecursionError:
                raise self._too_deep("delta") from None
        out = self._out
        if out:
            self._out = []
            return out
        return []

    def close(self) -> list[Event]:
        """End the completion: resolve what was held back and return the last events.

        Raises :class:`~prompt_formats.errors.ParseError` if called twice.
        """
        if self._closed:
            raise ParseError("close() called twice")
        self._closed = True
        buf = self._buf
        self._buf = ""
        try:
            self._advance(buf, True)
            self._finish()
        except RecursionError:
            raise self._too_deep("completion") from None
        out = self._out
        self._out = []
        return out

    def parse_all(self, completion: str) -> AssistantReply:
        """Feed ``completion`` whole, close, and assemble the reply (what one-shot ``parse`` does)."""
        _require_text(completion, "completion")
        self._closed = True
        try:
            self._advance(completion, True)
            self._finish()
            out = self._out
            self._out = []
            return assemble(out)
        except RecursionError:
            raise self._too_deep("completion") from None

    def _too_deep(self, field: str) -> InvalidInputError:
        """The error for a stack too deep to parse on (the caller's, not the model's doing); the
        parser is closed, since a step it could not finish leaves it unusable."""
        self._closed = True
        # Built here, not by errors.too_deep: this frame may be the last the stack has room for.
        error = InvalidInputError.__new__(InvalidInputError, f"{field}: {TOO_DEEP}")
        error.path, error.problem = field, TOO_DEEP
        return error

    @abc.abstractmethod
    def _advance(self, buf: str, final: bool) -> int:
        """Consume ``buf`` from its start; return how much was consumed (``len(buf)`` when ``final``)."""

    def _finish(self) -> None:  # noqa: B027 - optional hook
        """Called once after the last ``_advance``: emit what only the end can tell (notes)."""
