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
- a Python value's JSON type is JSON Schema's name for what an encoder writes: ``None`` null, a
  ``bool`` boolean, another ``int`` integer, a ``float`` number, a mapping object, a list or tuple
  array, and anything else (written as its text) string;
- a subclass of ``str``, ``int`` or ``float`` is read as its plain value, as transformers hands it to
  the template (:func:`plain_scalar`): its own ``__str__`` or ``__eq__`` is not the template's; so is
  every value that is not of an exact JSON type (:func:`plain_data`): any mapping as a dict, a
  dataclass or pydantic model as the dict of its fields, any other object as ``"<TypeName>"``;
- JSON text from a client or a model is read strictly: ``NaN`` and ``Infinity`` are not JSON;
- a tool call's string ``arguments`` are decoded (the ``decode_tool_arguments`` render option) only
  when they hold exactly one JSON object that Python holds exactly (:func:`decoded_json_object`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from .._text.plain import plain_data as plain_data
from .._text.plain import plain_scalar as plain_scalar
from .._text.plain import require_plain
from ..errors import InvalidInputError, type_name

__all__ = [
    "REASONING_FIELDS",
    "JSONType",
    "NonFiniteJSONError",
    "NumberTooLargeError",
    "PartKind",
    "call_body",
    "decoded_json_object",
    "finite_float",
    "is_list",
    "json_type_of",
    "loads_strict",
    "part_kind",
    "plain_data",
    "plain_scalar",
    "reasoning_field",
    "reasoning_of",
    "strict_value_at",
    "template_iterated",
]

#: The fields a message's reasoning may be given in, in the order the first non-``None`` one wins.
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")

PartKind = Literal["image", "video", "text", "unknown"]


def part_kind(part: Mapping[str, Any]) -> PartKind:
    """The kind of a content-part mapping, in the templates' dispatch order (image, video, text)."""
    kind = part.get("type")
    if type(kind) is not str and isinstance(kind, str):
        kind = str.__str__(kind)  # (its plain text, as a template is handed it: its own == could say anything)
    if "image" in part or "image_url" in part or kind == "image":
        return "image"
    if "video" in part or kind == "video":
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


JSONType = Literal["null", "boolean", "integer", "number", "object", "array", "string"]


def json_type_of(value: Any) -> JSONType:
    """The JSON Schema type name of ``value`` (the rule in this module's docstring)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return "string"


class NonFiniteJSONError(ValueError):
    """``NaN``, ``Infinity`` or ``-Infinity`` in JSON text: told apart from other ``ValueError`` s
    (a reader may report Python's integer-digits limit differently)."""


class NumberTooLargeError(NonFiniteJSONError):
    """A JSON number beyond a double's range (``1e400``): Python reads it as infinity, which no JSON
    text writes back (a value read so could not be sent on as the JSON it came from)."""


def _reject_constant(name: str) -> Any:
    raise NonFiniteJSONError(f"{name} is not valid JSON")


def finite_float(text: str) -> float:
    """A JSON number's text (one with a fraction or an exponent) as a float; :class:`NumberTooLargeError`
    beyond a double's range. A decoder's ``parse_float``."""
    number = float(text)
    if math.isinf(number):
        raise NumberTooLargeError(f"{text} is beyond the range of a double")
    return number


_strict_decoder = json.JSONDecoder(parse_constant=_reject_constant, parse_float=finite_float)


def loads_strict(text: str) -> Any:
    """``json.loads`` that refuses ``NaN``, ``Infinity``, ``-Infinity`` and numbers beyond a double's range.

    Raises ``ValueError`` for text that is not JSON (``json.JSONDecodeError``, or
    :class:`NonFiniteJSONError` for the constants, :class:`NumberTooLargeError` for a number that
    reads as infinity), or an integer of more digits than Python
    converts; ``RecursionError`` for nesting deeper than the stack. The caller
    decides what that means (a parser keeps the text, a reader reports the field).
    """
    return _strict_decoder.decode(text)


def strict_value_at(text: str, pos: int) -> tuple[Any, int]:
    """The JSON value that starts at ``pos`` in ``text``, read as :func:`loads_strict` reads it, and
    where it ends (text may follow); raises what :func:`loads_strict` raises."""
    found: tuple[Any, int] = _strict_decoder.raw_decode(text, pos)
    return found


class _NotExact(ValueError):
    """The text is JSON, but not a value Python holds exactly (or not strict JSON)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _NotExact("a key given twice")
    return out


_exact_decoder = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=finite_float, object_pairs_hook=_unique_keys
)


def decoded_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object ``text`` holds, decoded strictly and exactly; ``None`` when it holds none.

    The rule of the ``decode_tool_arguments`` option of every format, so that a template writes back
    the value the client meant: strict JSON (no ``NaN``/``Infinity``), no key given twice (decoding
    would keep only the last), no number beyond a double's range (it would be written ``Infinity``),
    no integer of more digits than the interpreter converts, no nesting deeper than the decoder's
    stack, and an object (not another JSON value). Never raises.
    """
    try:
        value = _exact_decoder.decode(text)
    except (ValueError, RecursionError):  # JSONDecodeError, _NotExact, the constants, int()'s digit limit; the stack
        return None
    return value if type(value) is dict else None


def template_iterated(value: Any, path: str, expected: str) -> list[Any] | tuple[Any, ...] | str | dict[Any, Any]:
    """What a template's ``for`` goes over: a list or a tuple, a string (its characters), a dict (its
    keys); a value of another type than JSON's is read as its plain data (``NotPlainData``), and
    anything else, which the engine cannot iterate, is :class:`InvalidInputError` at ``path``
    ("expected ``expected``")."""
    if type(value) in (list, tuple, str, dict):
        return value  # type: ignore[no-any-return]
    require_plain(value, path)
    raise InvalidInputError(path, f"expected {expected}, got {type_name(value)}: the template iterates it")
