"""Gemma 4's value notation read back: a call's arguments as the model wrote them (:mod:`.notation` writes it).

An object ``{key:value,…}`` (a key bare, or between ``<|"|>`` quotes, or a JSON string; whitespace
around keys and between tokens allowed), a list ``[a,b]``, a string between ``<|"|>`` quotes (its
text exactly as written: the notation has no escapes) or a JSON string, ``true``, ``false``,
``null``, a JSON number (an integer, else a float). Anything else is not the notation: the reader
gives ``None`` and the call is kept as text. A key repeated in an object keeps its first value; the
reader says which. Never raises: nesting deeper than :data:`MAX_DEPTH` is not read.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ...._text.walk import MAX_NESTING
from ..tokens import QUOTE

__all__ = ["MAX_DEPTH", "read_arguments"]

#: How deep objects and lists may nest in a call's arguments: as deep as a guard reads.
MAX_DEPTH = MAX_NESTING
_SPACE = re.compile(r"[ \t\r\n]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_WORDS = {"true": True, "false": False, "null": None}
_WORD = re.compile(r"true|false|null")
_DECODER = json.JSONDecoder()


class _NotNotation(Exception):
    """The text is not Gemma 4's notation at this point."""


_OPEN = {"{": dict, "[": list}


class _Reader:
    """One read of a call's arguments, with a stack of its own (no recursion: nesting costs no frames)."""

    __slots__ = ("repeated", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.repeated: list[str] = []

    def space(self, pos: int) -> int:
        return _SPACE.match(self.text, pos).end()  # type: ignore[union-attr]

    def scalar(self, pos: int) -> tuple[Any, int]:
        """A string, a word or a number at ``pos``."""
        text = self.text
        if text.startswith(QUOTE, pos):
            end = text.find(QUOTE, pos + len(QUOTE))
            if end < 0:
                raise _NotNotation
            return text[pos + len(QUOTE):end], end + len(QUOTE)
        if text.startswith('"', pos):
            return self.json_string(pos)
        word = _WORD.match(text, pos)
        if word is not None:
            return _WORDS[word.group()], word.end()
        number = _NUMBER.match(text, pos)
        if number is None:
            raise _NotNotation
        if number.group(1) is None and number.group(2) is None:
            return int(number.group()), number.end()
        value = float(number.group())
        if not math.isfinite(value):  # (1e999: no JSON number holds it)
            raise _NotNotation
        return value, number.end()

    def json_string(self, pos: int) -> tuple[str, int]:
        try:
            value, end = _DECODER.raw_decode(self.text, pos)
        except ValueError:
            raise _NotNotation from None
        if type(value) is not str:
            raise _NotNotation
        return value, end

    def key(self, pos: int) -> tuple[str, int]:
        """An object's key at ``pos``, and where the text after it (and its spaces) starts."""
        text = self.text
        if text.startswith(QUOTE, pos) or text.startswith('"', pos):
            key, end = self.scalar(pos)
            return key, self.space(end)
        end = pos
        while end < len(text) and text[end] not in ':{}[],"' and not text.startswith(QUOTE, end):
            end += 1
        key = text[pos:end].strip()
        if not key:
            raise _NotNotation
        return key, end

    def put(self, frame: list[Any], value: Any) -> None:
        """``value`` into the open container of ``frame`` (an object: at its key, unless repeated)."""
        container = frame[0]
        if type(container) is list:
            container.append(value)
        elif frame[1] in container:
            self.repeated.append(frame[1])
        else:
            container[frame[1]] = value

    def document(self, pos: int) -> tuple[dict[str, Any], int]:
        """The object that opens at ``pos``, and where it ends."""
        text = self.text
        root: dict[str, Any] = {}
        stack: list[list[Any]] = [[root, None]]
        pos = self.space(pos + 1)
        if not text.startswith("}", pos):
            while True:
                pos, opened = self._member(stack, pos)
                if opened:
                    continue  # its first member is next
                pos = self._after(stack, pos)
                if not stack:
                    return root, pos
        return root, pos + 1

    def _member(self, stack: list[list[Any]], pos: int) -> tuple[int, bool]:
        """A value (after its key, in an object) into the innermost container; a container it opens
        becomes the innermost. Returns where the text after it starts, and whether it opened a
        container that is not empty (whose first member is next)."""
        frame = stack[-1]
        if type(frame[0]) is dict:
            frame[1], pos = self.key(pos)
            if not self.text.startswith(":", pos):
                raise _NotNotation
            pos = self.space(pos + 1)
        opened = _OPEN.get(self.text[pos:pos + 1])
        if opened is None:
            value, pos = self.scalar(pos)
            self.put(frame, value)
            return pos, False
        if len(stack) >= MAX_DEPTH:
            raise _NotNotation
        container = opened()
        self.put(frame, container)
        stack.append([container, None])
        pos = self.space(pos + 1)
        return pos, not self.text.startswith("}" if opened is dict else "]", pos)  # (empty: _after closes it)

    def _after(self, stack: list[list[Any]], pos: int) -> int:
        """After a value: a comma (the next member is read next), or closing brackets."""
        text = self.text
        while True:
            pos = self.space(pos)
            if text.startswith(",", pos):
                return self.space(pos + 1)
            if text.startswith("}" if type(stack[-1][0]) is dict else "]", pos):
                stack.pop()
                pos += 1
                if not stack:
                    return pos
                continue
            raise _NotNotation


def read_arguments(text: str) -> tuple[dict[str, Any], list[str]] | None:
    """The object ``text`` writes (whitespace around it allowed) and the keys it repeats; ``None``
    where ``text`` is not one object in the notation."""
    reader = _Reader(text)
    try:
        pos = reader.space(0)
        if not text.startswith("{", pos):
            return None
        value, end = reader.document(pos)
    except (_NotNotation, ValueError):
        return None
    if reader.space(end) != len(text):
        return None
    return value, reader.repeated
