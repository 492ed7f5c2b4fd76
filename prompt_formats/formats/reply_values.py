"""Reading the values a model wrote: a parameter's text typed by its JSON schema, JSON argument text.

Shared by the ChatML and Harmony reply parsers. Nothing here raises for any text: a value Python
cannot convert is reported back (:data:`TOO_MANY_DIGITS`), so the parser can keep it as text and say
why. Two limits of the interpreter are met without raising:

- an integer of more decimal digits than ``sys.get_int_max_str_digits()`` (4,300 by default) is not
  converted; the process-wide limit is left as it is (changing it would change every thread);
- JSON nested deeper than the stack allows is not read (as text that is not JSON).

Schemas are walked without recursion, so a schema of any depth (or a Python dict that contains
itself) types a value.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Mapping
from typing import Any

from ..shape import NonFiniteJSONError, loads_strict

__all__ = [
    "JSON_INVALID",
    "JSON_TOO_DEEP",
    "TOO_MANY_DIGITS",
    "TYPE_ORDER",
    "digits_note",
    "read_json",
    "schema_types",
    "typed_parameter_value",
    "typed_value",
]

#: The order in which a value is tried against the types its schema allows (string last).
TYPE_ORDER = ("null", "boolean", "integer", "number", "object", "array", "string")
_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_FAIL = object()

#: Why :func:`read_json` or :func:`typed_value` could not give a value.
JSON_INVALID = "invalid"
JSON_TOO_DEEP = "too deep"
TOO_MANY_DIGITS = "too many digits"


def read_json(text: str) -> tuple[Any, str | None]:
    """``(value, None)`` for strict JSON text (no ``NaN``/``Infinity``), else ``(None, why)``.

    ``why`` is :data:`JSON_INVALID`, :data:`TOO_MANY_DIGITS` (valid JSON holding an integer Python
    will not convert) or :data:`JSON_TOO_DEEP` (nested deeper than the stack allows).
    """
    try:
        return loads_strict(text), None
    except (json.JSONDecodeError, NonFiniteJSONError):
        return None, JSON_INVALID
    except ValueError:  # the only other ValueError the decoder raises: int()'s digit limit
        return None, TOO_MANY_DIGITS
    except RecursionError:
        return None, JSON_TOO_DEEP


def digits_note() -> str:
    """How a note names the integers :data:`TOO_MANY_DIGITS` is about (the limit of this process)."""
    limit = getattr(sys, "get_int_max_str_digits", int)()  # (absent before 3.10.7: no limit)
    return f"an integer of more than {limit:,} digits" if limit else "an integer too long to convert"


# --- Schema types. ------------------------------------------------------------------------------------


def _branches(schema: Mapping[str, Any]) -> list[Any]:
    found: list[Any] = []
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, (list, tuple)):
            found.extend(branches)
    return found


def _node_types(schema: Mapping[str, Any], branch_types: list[frozenset[str]]) -> frozenset[str]:
    """One schema's types, given its branches' (``type``, then the branches, else the hints)."""
    found: set[str] = set()
    declared = schema.get("type")
    if isinstance(declared, str):
        found.add(declared)
    elif isinstance(declared, (list, tuple)):
        found.update(t for t in declared if isinstance(t, str))
    for types in branch_types:
        found |= types
    if not found:
        enum = schema.get("enum")
        if isinstance(enum, (list, tuple)):
            found.update(map(_json_type, enum))
        elif "properties" in schema:
            found.add("object")
        elif "items" in schema:
            found.add("array")
    return frozenset(found)


def schema_types(schema: Any) -> set[str]:
    """The JSON types a parameter schema allows: ``type`` (a name or a list), the branches of
    ``anyOf``/``oneOf`` (at any depth), else what ``enum``, ``properties`` or ``items`` imply.
    An empty set means the schema says nothing usable (the value stays a string).

    Never raises: the schema is walked with an explicit stack, and a schema met again inside itself
    (a dict that contains itself) adds nothing there.
    """
    if not isinstance(schema, Mapping):
        return set()
    done: dict[int, frozenset[str]] = {}
    open_ids: set[int] = set()
    todo: list[tuple[Mapping[str, Any], bool]] = [(schema, False)]
    while todo:
        node, children_done = todo.pop()
        key = id(node)
        if children_done:
            open_ids.discard(key)
            done[key] = _node_types(node, [done.get(id(b), frozenset()) for b in _branches(node)])
        elif key not in done and key not in open_ids:
            open_ids.add(key)
            todo.append((node, True))
            todo.extend((b, False) for b in reversed(_branches(node)) if isinstance(b, Mapping))
    return set(done[id(schema)])


def _json_type(value: Any) -> str:
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


# --- Typing a value. ----------------------------------------------------------------------------------


def _as_number(text: str, kind: str) -> Any:
    if _INTEGER.fullmatch(text):
        try:
            return int(text)
        except ValueError:  # more digits than the interpreter converts
            return TOO_MANY_DIGITS
    if _NUMBER.fullmatch(text):
        number = float(text)
        if not math.isfinite(number):
            return _FAIL
        # A whole float becomes an int where the float holds it exactly.
        if number.is_integer() and abs(number) < 2**53:
            return int(number)
        return _FAIL if kind == "integer" else number
    return _FAIL


def _as_type(text: str, kind: str) -> Any:
    """``text`` read as a value of JSON type ``kind``, or ``_FAIL``, or :data:`TOO_MANY_DIGITS`."""
    if kind == "null":
        return None if text.lower() == "null" else _FAIL
    if kind == "boolean":
        lowered = text.lower()
        return True if lowered == "true" else False if lowered == "false" else _FAIL
    if kind == "integer" or kind == "number":
        return _as_number(text, kind)
    if kind == "object" or kind == "array":
        value, problem = read_json(text)
        if problem == TOO_MANY_DIGITS:
            return TOO_MANY_DIGITS
        if problem is None and isinstance(value, dict if kind == "object" else list):
            return value
    return _FAIL


def typed_value(text: str, schema: Any) -> tuple[Any, str | None]:
    """:func:`typed_parameter_value`, and why the text stayed a string where a type would have fitted.

    The reason is :data:`TOO_MANY_DIGITS` when an integer of the text (alone, or in JSON text) has
    more digits than the interpreter converts and no type before it fitted; else ``None``.
    """
    kinds = schema_types(schema)
    if not kinds or kinds == {"string"}:
        return text, None
    stripped = text.strip()
    problem = None
    for kind in TYPE_ORDER:
        if kind in kinds and kind != "string":
            value = _as_type(stripped, kind)
            if value is TOO_MANY_DIGITS:
                problem = TOO_MANY_DIGITS
            elif value is not _FAIL:
                return value, None
    return text, problem


def typed_parameter_value(text: str, schema: Any) -> Any:
    """A parameter's value typed by its JSON schema (``None`` for an unknown parameter: a string).

    The value is tried, stripped of surrounding whitespace, against each type the schema allows
    (:func:`schema_types`) in :data:`TYPE_ORDER`: ``null`` (the word, any case), ``boolean``
    (``true``/``false``, any case), ``integer`` (a JSON integer, or a number whose value is whole),
    ``number`` (a JSON number; whole values below 2**53 become ints; overflow does not fit),
    ``object`` and ``array`` (JSON text of that kind; ``NaN``/``Infinity`` do not fit); the first
    that fits wins. ``string``, a value that fits none of its types (an integer of more digits than
    Python converts included), and a schema without types keep the text exactly as written. Never
    raises.
    """
    return typed_value(text, schema)[0]
