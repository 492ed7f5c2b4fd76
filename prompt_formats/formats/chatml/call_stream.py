"""A ChatML tool call as it is read: its values so far, and its arguments streamed as JSON text.

The call is announced when its ``<function=NAME>`` is read; from then on its arguments go out in
:class:`~prompt_formats.replies.streaming.ToolCallArgumentsDelta` events as they become known:

- a parameter whose schema types it as a string (or says nothing, or when no tools are given) is
  sent as it arrives: ``{"P":"`` (``,"P":"`` after the first), the value's text escaped as JSON string
  fragments, then ``"``. The value's one leading newline is dropped before it is sent, and a trailing
  newline is held back until more text follows it (it is dropped when ``</parameter>`` comes next);
- any other parameter is sent whole when it closes, typed: ``"P":VALUE`` as compact JSON;
- ``}`` (``{}`` for a call without parameters) when the call ends.

What was sent becomes the call's ``arguments_text``, so the deltas concatenate to ``arguments_json()``.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..._text.tojson import compact_json
from ..._text.unbounded import unbounded_compact_json
from ...replies.streaming import Event, Malformed, Note, ToolCallArgumentsDelta, json_string_body
from ...replies.values import TOO_MANY_DIGITS, digits_note
from .schema import typed_value

__all__ = ["CallInProgress", "value_json"]


def value_json(value: Any) -> str:
    """A typed value as compact JSON, as :meth:`~prompt_formats.model.messages.ToolCall.arguments_json` writes it."""
    try:
        return compact_json(value)
    except (ValueError, RecursionError):
        return unbounded_compact_json(value)


@attrs.define(slots=True)
class CallInProgress:
    """The tool call being read: its raw text so far, its values, and what its stream has sent."""

    name: str
    raw: list[str]
    index: int = -1  # its place among the reply's calls, once announced
    call_id: str = ""
    params: dict[str, Any] = attrs.Factory(dict)
    param_name: str = ""
    value: list[str] = attrs.Factory(list)  # the value being read, in pieces
    # Notes about the call (Malformed: not read as the format says; Note: read, worth knowing), sent when it ends.
    notes: list[Malformed | Note] = attrs.Factory(list)
    duplicates: list[str] = attrs.Factory(list)  # raw repeated parameter blocks (to the content)
    sent: list[str] = attrs.Factory(list)  # the argument deltas sent
    streaming: bool = False  # the value being read is streamed as a string
    value_started: bool = False  # the value's leading newline has been decided
    held_newline: bool = False  # a trailing newline of the streamed value, not sent yet
    # Text from a "<parameter=…>" or "</function>" inside the value: its own text if "</parameter>"
    # still comes, else the value ended there. Held, not sent, until that is known.
    held: list[str] = attrs.Factory(list)
    gap: list[str] = attrs.Factory(list)  # whitespace read since the last tag (content if text follows)
    nested: int = 0  # "<parameter=…>" tags taken as the value's text whose "</parameter>" has not come

    def label(self) -> str:
        """How notes name the call."""
        return f"tool call {self.index} ({self.name})"

    def keep_value(self, out: list[Event], value: str, schema: Any, closed: bool, raw: str) -> None:
        """Store and send the parameter just read, typed by ``schema`` (``None``: kept as text).

        ``raw`` is its block as written: a repeated parameter keeps its first value (it has been
        streamed); the repeat, with the whitespace written before it, joins the content, noted.
        """
        name = self.param_name
        if name in self.params:
            before = self.raw[-2] if len(self.raw) > 1 and self.raw[-2].isspace() else ""
            self.duplicates.append(before + raw)
            self.notes.append(Malformed(f"{self.label()}: parameter {name!r} repeated: the first value kept, "
                                        "the repeat kept as text"))
            return
        kept: Any = value
        if schema is not None:
            kept, problem = typed_value(value, schema)
            if problem == TOO_MANY_DIGITS:
                # Written as the format says; only this process cannot convert it: a note, not malformed.
                self.notes.append(Note(f"{self.label()}: parameter {name!r} has {digits_note()}: kept as text"))
        self.params[name] = kept
        self.close_value(out, closed, kept)

    def _send(self, out: list[Event], text: str) -> None:
        self.sent.append(text)
        out.append(ToolCallArgumentsDelta(self.index, text))

    def _key(self, name: str) -> str:
        return ("{" if not self.sent else ",") + '"' + json_string_body(name) + '":'

    def open_string_value(self, out: list[Event]) -> None:
        """The parameter just opened is streamed as a string: send its key and opening quote."""
        self.streaming = True
        self.value_started = False
        self.held_newline = False
        self._send(out, self._key(self.param_name) + '"')

    def value_text(self, out: list[Event], text: str) -> None:
        """More of the value being read (sent at once when it is streamed)."""
        self.value.append(text)
        if not self.streaming or not text:
            return
        if not self.value_started:
            self.value_started = True
            if text.startswith("\n"):
                text = text[1:]
        if self.held_newline:
            text = "\n" + text
            self.held_newline = False
        if text.endswith("\n"):
            text = text[:-1]
            self.held_newline = True
        if text:
            self._send(out, json_string_body(text))

    def close_value(self, out: list[Event], closed: bool, value: Any) -> None:
        """The value ends (``closed``: by the format, so its trailing newline goes); send what remains."""
        if self.streaming:
            self.streaming = False
            tail = "\n" if self.held_newline and not closed else ""
            self._send(out, json_string_body(tail) + '"')
        else:
            self._send(out, self._key(self.param_name) + value_json(value))

    def finish(self, out: list[Event]) -> str:
        """The call ends: send the closing brace; return all the text sent."""
        self._send(out, "}" if self.sent else "{}")
        return "".join(self.sent)
