"""JSON text exactly as the reference templates produce it.

transformers' ``tojson`` filter is ``json.dumps(x, ensure_ascii=False)``: separators ``", "`` and
``": "``, non-ASCII kept, ``NaN``/``Infinity`` allowed, integer and float keys turned into strings,
lone surrogates passed through. A faster encoder (orjson) differs on several of these: it has no
spaced separators, writes ``1e-05`` as ``0.00001`` and NaN as ``null``, rejects large integers,
non-string keys and lone surrogates, and accepts types ``json.dumps`` rejects (UUID, Enum). Making
its output exact in general costs more than it saves (measured on tool schemas: finding the strings
to leave alone is slower than the standard encoder), so :func:`tojson` is the standard library's C
encoder itself — the very code ``json.dumps`` runs — built once instead of on every call; but a
long ASCII string, whose JSON text orjson writes exactly as json does, is orjson's.
"""

from __future__ import annotations

import json
import json.encoder
import re
from collections.abc import Callable
from typing import Any

import orjson

from ..errors import InvalidInputError
from .unbounded import unnested_json

__all__ = [
    "compact_json", "indented_json", "indented_plain_json", "json_chunks", "json_refused", "not_serialisable",
    "printed", "text_or_json", "tojson", "tojson_at",
]

# What json.dumps(x, ensure_ascii=False) builds on every call, built once. Two differences, both
# only for values json.dumps rejects: no circular-reference bookkeeping (a cycle raises
# RecursionError rather than ValueError), and no per-call encoder object.
_REFERENCE = json.JSONEncoder(ensure_ascii=False)

_make_c_encoder: Any = getattr(json.encoder, "c_make_encoder", None)  # None without the C accelerator
_encode_string: Callable[[str], str] = json.encoder.encode_basestring


def _chunks_without_accelerator(value: Any, indent_level: int) -> list[str]:
    """``[tojson(value)]``, where the standard library has no C encoder."""
    return [_REFERENCE.encode(value)]


# One definition of each name (not two under if/else): the compiled build (mypyc) needs it.
_encode_chunks: Callable[[Any, int], list[str]] = (
    _make_c_encoder(
        None,  # markers: no cycle check, so the encoder holds no per-call state and is thread-safe
        _REFERENCE.default,  # raises json.dumps' TypeError for an unsupported type
        _encode_string,
        None,  # indent
        _REFERENCE.key_separator,
        _REFERENCE.item_separator,
        False,  # sort_keys
        False,  # skipkeys
        True,  # allow_nan
    )
    if _make_c_encoder is not None
    else _chunks_without_accelerator
)

#: The C encoder's call itself: ``"".join(json_chunks(value, 0)) == tojson(value)`` for a dict or
#: a list, for a caller that has already told the type apart and saves tojson's dispatch.
json_chunks: Callable[[Any, int], list[str]] = _encode_chunks


#: From this length an ASCII string is encoded by orjson (shorter, the call costs more than it saves).
_LONG_ASCII = 80


def tojson(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``, byte for byte, for every value it accepts."""
    kind = type(value)
    if kind is str:
        # orjson escapes exactly the characters json does, the same way, and is several times faster
        # on a long ASCII text (its escaping is vectorised; non-ASCII text costs it a slower decode).
        if len(value) >= _LONG_ASCII and value.isascii():
            return orjson.dumps(value).decode()
        return _encode_string(value)
    # The scalars tool-call arguments are made of, spelt as the C encoder spells them (exact
    # types only: it writes a subclass of int or float with the base class's repr, not its own).
    if kind is int:
        return int.__repr__(value)
    if kind is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    return "".join(_encode_chunks(value, 0))


_INDENTED = json.JSONEncoder(ensure_ascii=False, indent=4)  # the standard library's (pure Python, with indent)
# With these options orjson raises for every subclass of str, int, float, dict and list (and for bytes,
# sets, lone surrogates, integers beyond 64 bits and keys that are no string): its text is json's then
# but for the spelling of floats, and NaN and infinities (null), which _STEP_ASIDE finds (and more).
_EXACT_INDENTED = orjson.OPT_INDENT_2 | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
_STEP_ASIDE = re.compile(r"[0-9][.eE]|null")


def indented_json(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=4)`` (transformers' ``tojson(indent=4)``), byte
    for byte; raises what it raises."""
    return _INDENTED.encode(value)


def indented_plain_json(value: Any) -> str:
    """:func:`indented_json` of a ``value`` made of exact JSON types only (plain data: the caller
    knows it is), faster: orjson's two-space text with its indentation doubled, where that is json's
    text (no float and no null, which orjson spells otherwise or could stand for NaN); else json's."""
    try:
        text = orjson.dumps(value, option=_EXACT_INDENTED).decode()
    except TypeError:  # (orjson.JSONEncodeError too): what the standard encoder writes otherwise, or refuses
        return _INDENTED.encode(value)
    if _STEP_ASIDE.search(text) is not None:
        return _INDENTED.encode(value)
    lines = text.split("\n")  # (a newline in a string is escaped: each line starts with its indentation)
    return "\n".join([line[:len(line) - len(line.lstrip(" "))] + line for line in lines])


def text_or_json(value: Any) -> str:
    """The template's ``value|string if value is string else value|tojson``, for a tool-call argument.

    A string gives what the template prints for it (:func:`printed`), anything else ``tojson(value)``.
    """
    return printed(value) if isinstance(value, str) else tojson(value)


def compact_json(value: Any) -> str:
    """Compact JSON text (``,`` and ``:``, non-ASCII kept), as the OpenAI API carries arguments.

    orjson's; where orjson refuses a value (an integer beyond 64 bits, a lone surrogate), the standard
    library's text of the same shape.
    """
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def printed(text: str) -> str:
    """What a template writes for a string it prints (``{{ text }}``), as an exact ``str``: its
    characters (transformers hands a template a subclass's plain data, never the subclass)."""
    return text if type(text) is str else str.__str__(text)


def not_serialisable(path: str, exc: BaseException) -> InvalidInputError:
    """The error for a value at ``path`` that ``tojson`` raised ``exc`` for."""
    return InvalidInputError(path, f"not serialisable as JSON ({exc})")


#: The nesting of dicts and lists every value within the documented limit may have (the guard's
#: ``MAX_NESTING``, which it reads to): such a value renders however deep its caller is.
MAX_JSON_NESTING = 256


def json_refused(value: Any, path: str, exc: BaseException) -> str:
    """After ``tojson(value)`` raised ``exc``: its text all the same when the caller's stack was what
    ran out (the value written without recursion, as ``json.dumps`` writes it on a fresh stack), else
    the :class:`InvalidInputError` at ``path`` for a value JSON cannot encode.

    So whether a value nested at most :data:`MAX_JSON_NESTING` deep renders does not depend on how
    deep the caller already is (deeper ones may render from a fresh stack, as with the reference).
    """
    if isinstance(exc, RecursionError):
        try:
            return unnested_json(value, MAX_JSON_NESTING)
        except (TypeError, ValueError, RecursionError) as deeper:
            exc = deeper
    raise not_serialisable(path, exc) from None


def tojson_at(value: Any, path: str) -> str:
    """``tojson(value)``, raising ``InvalidInputError`` at ``path`` for a value JSON cannot encode."""
    try:
        return tojson(value)
    except (TypeError, ValueError, RecursionError) as exc:
        return json_refused(value, path, exc)
