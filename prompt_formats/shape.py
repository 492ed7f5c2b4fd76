"""The one reading of OpenAI-style chat dicts: every renderer, the guard and the message model use it.

The rules here are those of the reference templates and of transformers, spelt once:

- a content part is an *image* when it has an ``"image"`` or ``"image_url"`` key or its ``type`` is
  ``"image"``; otherwise a *video* when it has a ``"video"`` key or its ``type`` is ``"video"``;
  otherwise *text* when it has a ``"text"`` key; otherwise of no kind the templates know. The order
  matters (a part with both ``image`` and ``text`` keys is an image): it is the Qwen template's.
- a message's reasoning is the first of ``reasoning_content``, ``thinking``, ``reasoning`` whose value
  is not ``None`` (transformers passes it to the template as ``reasoning_content``);
- a tool call's body is its ``"function"`` object when it has that key (the OpenAI shape), else the
  call itself (the flat shape some clients send);
- a *list* of messages, parts, calls or tools is any sequence but a string, bytes or a mapping;
- JSON text from a client or a model is read strictly: ``NaN`` and ``Infinity`` are not JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

__all__ = [
    "REASONING_FIELDS",
    "NonFiniteJSON",
    "PartKind",
    "call_body",
    "is_list",
    "loads_strict",
    "part_kind",
    "reasoning_field",
    "reasoning_of",
]

#: The fields a message's reasoning may be given in, in the order the first non-``None`` one wins.
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")

PartKind = Literal["image", "video", "text", "unknown"]


def part_kind(part: Mapping[str, Any]) -> PartKind:
    """The kind of a content-part mapping, in the templates' dispatch order (image, video, text)."""
    if "image" in part or "image_url" in part or part.get("type") == "image":
        return "image"
    if "video" in part or part.get("type") == "video":
        return "video"
    if "text" in part:
        return "text"
    return "unknown"


def reasoning_field(message: Mapping[str, Any]) -> str | None:
    """The name of the field that holds ``message``'s reasoning, or ``None`` when it has none."""
    for key in REASONING_FIELDS:
        if message.get(key) is not None:
            return key
    return None


def reasoning_of(message: Mapping[str, Any]) -> Any:
    """``message``'s reasoning (any type, unchecked), or ``None`` when it has none."""
    for key in REASONING_FIELDS:
        value = message.get(key)
        if value is not None:
            return value
    return None


def call_body(call: Mapping[str, Any]) -> Any:
    """The object holding a tool call's ``name`` and ``arguments``: ``call["function"]`` or ``call``.

    The nested value is returned unchecked (it may not be a mapping); callers report that.
    """
    return call.get("function", call)


def is_list(value: Any) -> bool:
    """Whether ``value`` is read as a list: a sequence that is not a string, bytes or a mapping."""
    if type(value) is list:
        return True
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray, Mapping))


class NonFiniteJSON(ValueError):
    """``NaN``/``Infinity`` in JSON text: not JSON (told apart from the integer-digits ``ValueError``)."""


def _reject_constant(name: str) -> Any:
    raise NonFiniteJSON(f"{name} is not valid JSON")


_strict_decoder = json.JSONDecoder(parse_constant=_reject_constant)


def loads_strict(text: str) -> Any:
    """``json.loads`` that refuses ``NaN``, ``Infinity`` and ``-Infinity``.

    Raises ``ValueError`` (``json.JSONDecodeError`` and :class:`NonFiniteJSON` included) for text
    that is not JSON, and for an integer of more digits than the interpreter converts; the caller
    decides what that means (a parser keeps the text, a reader reports the field).
    """
    return _strict_decoder.decode(text)
