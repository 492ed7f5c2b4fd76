"""Compact JSON text of values beyond two limits of the standard encoder: huge integers and deep nesting.

``json.dumps`` writes an int through ``int.__repr__``, which refuses more decimal digits than
``sys.get_int_max_str_digits()`` (4,300 by default; ``ValueError``), and it recurses once per level of
nesting (``RecursionError``). That limit is process-wide: raising it for one call would change every
thread's, so it is left alone and integers are written here in pieces each far below any limit one
can set (the least is 640 digits). :func:`unbounded_compact_json` is the slow, exact path taken only
when the usual encoders refuse a value.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable
from typing import Any

__all__ = ["decimal_text", "unbounded_compact_json", "unnested_json"]

# Below the smallest limit sys.set_int_max_str_digits accepts, so int.__repr__ always writes it.
_PIECE_DIGITS = 500
_PIECE_BOUND = 10**_PIECE_DIGITS
_LOG10_2 = 0.30102999566398120

_encode_string: Callable[[str], str] = (
    getattr(json.encoder, "c_encode_basestring", None) or json.encoder.py_encode_basestring
)


def decimal_text(number: int) -> str:
    """``int.__repr__(number)``, whatever the interpreter's digit limit (halves split by a power of ten)."""
    number = int(number)
    if number < 0:
        return "-" + decimal_text(-number)
    if number < _PIECE_BOUND:
        return int.__repr__(number)
    low_digits = int(number.bit_length() * _LOG10_2) // 2
    high, low = divmod(number, 10**low_digits)
    return decimal_text(high) + decimal_text(low).rjust(low_digits, "0")


def _float_text(number: float) -> str:
    if number != number:
        return "NaN"
    if number in (float("inf"), float("-inf")):
        return "Infinity" if number > 0 else "-Infinity"
    return float.__repr__(number)


def _scalar_text(value: Any, integer_text: Callable[[int], str] = decimal_text) -> str | None:
    """The JSON text of a scalar as ``json.dumps`` writes it, or ``None`` for a container."""
    if isinstance(value, str):
        return _encode_string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return integer_text(value)
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, (dict, list, tuple)):
        return None
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _key_text(key: Any, integer_text: Callable[[int], str] = decimal_text) -> str:
    if isinstance(key, str):
        return _encode_string(key)
    if key is None or isinstance(key, (bool, int, float)):
        return '"' + _scalar_text(key, integer_text) + '"'  # type: ignore[operator]
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def unbounded_compact_json(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` for any integer and any depth.

    Raises what ``json.dumps`` raises for a value it cannot write at all: ``TypeError`` for an
    unsupported type or key, ``ValueError`` for a container that contains itself.
    """
    return _walked_json(value, ",", ":", decimal_text)


def unnested_json(value: Any, max_depth: int) -> str:
    """``json.dumps(value, ensure_ascii=False)`` (the templates' ``tojson``), without recursion, for a
    value nested at most ``max_depth`` containers deep.

    For a value the caller's stack does not let the standard encoder finish. Raises what
    ``json.dumps`` raises on a fresh stack: ``TypeError`` for an unsupported type or key,
    ``ValueError`` for an integer beyond the interpreter's digit limit or a container that contains
    itself; and ``ValueError`` for a value nested deeper than ``max_depth``.
    """
    return _walked_json(value, ", ", ": ", int.__repr__, max_depth)


def _walked_json(value: Any, item_separator: str, key_separator: str, integer_text: Callable[[int], str],
                 max_depth: int | None = None) -> str:
    parts: list[str] = []
    # What is left to write, last first: values, and _Task items (text as it is, or a container's end).
    todo: list[Any] = [value]
    inside: set[int] = set()
    while todo:
        item = todo.pop()
        if type(item) is _Task:
            if item.text is None:
                inside.discard(item.container)
            else:
                parts.append(item.text)
            continue
        text = _scalar_text(item, integer_text)
        if text is not None:
            parts.append(text)
            continue
        key = id(item)
        if key in inside:
            raise ValueError("Circular reference detected")
        if max_depth is not None and len(inside) >= max_depth:  # the containers open around it
            raise ValueError(f"nested more than {max_depth} levels deep")
        inside.add(key)
        pending: list[Any] = []
        if isinstance(item, dict):
            parts.append("{")
            for i, (k, v) in enumerate(item.items()):
                pending.append(_Task((item_separator if i else "") + _key_text(k, integer_text) + key_separator))
                pending.append(v)
            pending.append(_Task("}"))
        else:
            parts.append("[")
            for i, v in enumerate(item):
                if i:
                    pending.append(_Task(item_separator))
                pending.append(v)
            pending.append(_Task("]"))
        pending.append(_Task(None, key))
        todo.extend(reversed(pending))
    return "".join(parts)


class _Task:
    """Text to write (``text``), or, when ``text`` is ``None``, the end of container ``container``."""

    __slots__ = ("container", "text")

    def __init__(self, text: str | None, container: int = 0) -> None:
        self.text = text
        self.container = container
