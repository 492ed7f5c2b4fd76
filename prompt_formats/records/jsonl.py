"""Reading one line of JSONL exactly as the command and the Ray integration read it (see :func:`decode_record`),
and the envelope of a record (a request, or a Batch API line holding one in ``body``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ..errors import InvalidInputError
from ..model.reading import JSONType, json_type_of, loads_strict
from .request_keys import refusal

__all__ = [
    "MAX_DEPTH", "decode_record", "has_long_digit_run", "json_type", "record_id_at", "refuse", "strictly_refused",
    "unwrap_record",
]

_BATCH_API_KEYS = frozenset({"custom_id", "method", "url", "body"})
#: How many arrays and objects within each other a record may hold: orjson's limit (it reads no deeper).
MAX_DEPTH = 1024
# The standard library's reader (integers beyond 64 bits, lone surrogates) has a lower limit, which
# depends on the interpreter and on how deep the caller's stack already is.
_TOO_DEEP_TO_READ_EXACTLY = (
    "nested too deeply to read exactly (a record holding an integer beyond 64 bits or a lone surrogate escape "
    "is read by Python's json module, whose limit is the interpreter's recursion limit)"
)


def decode_record(data: bytes | memoryview | str, long_digits: bool = True, line: int | None = None) -> Any:
    """One JSONL line (no newline needed) read as the command reads it: strict JSON, with orjson.

    Two things orjson cannot hold are read by the standard library instead, as ``json.loads``-based
    callers of the templates would see them: integers beyond 64 bits (orjson makes them floats, or
    refuses them from 309 digits on) and lone UTF-16 surrogate escapes such as ``"\\ud800"`` (valid
    JSON, which orjson refuses). ``long_digits=False`` tells that ``data`` has no run of 19 digits,
    which spares that check. Raises ``InvalidInputError`` at ``record`` for a line that is not JSON
    (orjson's reason ``at column C``, in characters), nested deeper than :data:`MAX_DEPTH` levels, or
    not UTF-8 (``invalid UTF-8 at byte N of line L``, N counted from 1; ``line`` is the line's number).
    """
    if isinstance(data, str):
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidInputError("record", f"not valid JSON ({exc})") from None
    try:
        record = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        _check_utf8(data, line)
        if "depth limit" in exc.msg:  # orjson's words for nesting beyond its limit: valid JSON, perhaps
            raise InvalidInputError("record", f"nested deeper than {MAX_DEPTH} levels: not read") from None
        # A lone surrogate escape, or an integer too large for a double: valid JSON all the same.
        if "surrogate" in str(exc) or has_long_digit_run(bytes(data)):
            try:
                return _decode_exactly(data)
            except InvalidInputError:
                raise
            except ValueError:
                pass
        raise _not_json(exc) from None
    if long_digits and has_long_digit_run(data if isinstance(data, bytes) else bytes(data)):
        return _decode_exactly(data)
    return record


def _not_json(exc: orjson.JSONDecodeError) -> InvalidInputError:
    """The error for a text that is not JSON: orjson's reason, and where as a column (in characters)
    of the line. orjson counts lines within the text it was given, which is the file's line: a
    line number of its own is given only for a text of several lines (a caller's own string)."""
    where = f"column {exc.colno}" if exc.lineno == 1 else f"line {exc.lineno}, column {exc.colno} of the record"
    return InvalidInputError("record", f"not valid JSON ({exc.msg} at {where})")


def _check_utf8(data: bytes | memoryview, line: int | None) -> None:
    """Raise the error for a line that is not UTF-8, naming the first bad byte; nothing for valid UTF-8."""
    try:
        bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        where = f"byte {exc.start + 1}" + ("" if line is None else f" of line {line}")
        raise InvalidInputError("record", f"invalid UTF-8 at {where}") from None


def _decode_exactly(data: bytes | memoryview) -> Any:
    """The standard library's reading of a line of strict JSON (NaN, Infinity and overflowing floats
    refused); ``InvalidInputError`` for a line nested deeper than it reads."""
    try:
        return loads_strict(bytes(data).decode("utf-8"))  # (1e400 refused too: orjson refuses it)
    except RecursionError:
        raise InvalidInputError("record", _TOO_DEEP_TO_READ_EXACTLY) from None


# 19 digits in a row may be an integer beyond 64 bits (or part of a string: then the slower exact
# decoder runs for nothing, which is harmless). The search maps digits to "0" and looks for 19 of
# them with a plain substring search, many times faster than the regular expression [0-9]{19}. The
# command searches a block of lines as a whole, then only the lines of a block that has such a run
# one by one.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_NINETEEN_ZEROS = b"0" * 19
# Nineteen bytes in a row hold three consecutive multiples of 6, so a run of 19 digits shows as
# three digits in a row among every sixth byte; where those show none, there is no run. Fast path
# for record files without long numbers: a sixth of the bytes translated instead of all of them
# (a hit steps aside to the full search).
_SAMPLE_STRIDE = 6
_THREE_ZEROS = b"000"


def has_long_digit_run(data: bytes) -> bool:
    """Whether ``data`` holds 19 or more ASCII digits in a row."""
    if data[::_SAMPLE_STRIDE].translate(_DIGITS_AS_ZERO).find(_THREE_ZEROS) < 0:
        return False
    return data.translate(_DIGITS_AS_ZERO).find(_NINETEEN_ZEROS) >= 0


def strictly_refused(path: str) -> InvalidInputError:
    """The error for a request key that ``--strict-keys`` refuses."""
    return InvalidInputError(path, "a request key that does not change the prompt, refused by --strict-keys")


def refuse(strict: bool, key: str, value: Any, prefix: str) -> None:
    """Raise for an ignored key under ``strict_keys``, or a refused key (unless its value changes nothing)."""
    if strict:
        raise strictly_refused(prefix + key)
    refused = refusal(key, value, prefix + key)
    if refused is not None:
        raise refused


def record_id_at(request: Mapping[str, Any], key: str, path: str) -> Any:
    """The record id under ``key``: a string or an integer, else :class:`InvalidInputError`."""
    value = request[key]
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InvalidInputError(path + key, f"expected a string or an integer, got {json_type(value)}")
    return value


def unwrap_record(record: Any) -> tuple[Mapping[str, Any], str, Any]:
    """``(request, path prefix, id or None)``; reads the Batch API envelope."""
    if not isinstance(record, Mapping):
        raise InvalidInputError("record", f"expected a JSON object, got {json_type(record)}")
    if "body" in record:
        unknown = sorted(key for key in record if key not in _BATCH_API_KEYS)
        if unknown:
            raise InvalidInputError(
                unknown[0], "unknown key beside 'body' (a Batch API line has custom_id, method, url, body)"
            )
        body = record["body"]
        if not isinstance(body, Mapping):
            raise InvalidInputError("body", f"expected a JSON object, got {json_type(body)}")
        record_id = record_id_at(record, "custom_id", "") if "custom_id" in record else None
        return body, "body.", record_id
    return record, "", None


_WITH_ARTICLE: dict[JSONType, str] = {
    "null": "null", "boolean": "a boolean", "integer": "a number", "number": "a number",
    "object": "an object", "array": "an array", "string": "a string",
}


def json_type(value: Any) -> str:
    """The JSON name of a decoded value's type, with its article (``an object``), for error messages."""
    return _WITH_ARTICLE[json_type_of(value)]
