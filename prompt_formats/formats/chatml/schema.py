"""Typing a ChatML tool-call parameter's text by the tool's JSON schema.

Nothing here raises for any text or any schema: schemas are walked without recursion (a schema of
any depth, or a Python dict that contains itself, types a value), and a value Python cannot convert
is reported back (:data:`~prompt_formats.replies.values.TOO_MANY_DIGITS`) so the parser can
keep it as text and say why.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import InvalidInputError, type_name
from ...format.chat_format import Tools
from ...model.messages import ToolDefinition
from ...model.reading import is_list, json_type_of
from ...model.tools import PreparedTools, rendered_tools
from ...replies.values import TOO_MANY_DIGITS, read_json

__all__ = ["TYPE_ORDER", "schema_types", "tool_schemas", "typed_parameter_value", "typed_value"]

#: The order in which a value is tried against the types its schema allows (string last).
TYPE_ORDER = ("null", "boolean", "integer", "number", "object", "array", "string")
_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_FAIL = object()
# Type names that are not JSON Schema's but that tools declare and vLLM and SGLang read as these.
_TYPE_ALIASES = {"float": "number", "double": "number", "int": "integer", "long": "integer"}


def _parameter_schemas(tools: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Tool name -> its parameters' ``properties`` (empty when it declares none); validates the tools."""
    schemas: dict[str, Mapping[str, Any]] = {}
    for i, tool in enumerate(tools):
        definition = ToolDefinition.from_openai(tool, i)
        properties = (definition.parameters or {}).get("properties")
        schemas[definition.name] = properties if isinstance(properties, Mapping) else {}
    return schemas


def tool_schemas(tools: Tools) -> dict[str, Mapping[str, Any]] | None:
    """Tool name -> its parameters' schemas, for the parser; ``None`` when no tools are offered."""
    if not tools:
        return None
    if isinstance(tools, PreparedTools):
        return rendered_tools(tools, "chatml.parameter_schemas", _parameter_schemas)
    if not is_list(tools):
        raise InvalidInputError("tools", f"expected a list of tool objects, got {type_name(tools)}")
    return _parameter_schemas(tools)


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
        found.add(_TYPE_ALIASES.get(declared, declared))
    elif isinstance(declared, (list, tuple)):
        found.update(_TYPE_ALIASES.get(t, t) for t in declared if isinstance(t, str))
    for types in branch_types:
        found |= types
    if not found:
        enum = schema.get("enum")
        if isinstance(enum, (list, tuple)):
            found.update(map(json_type_of, enum))
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
            # Not reversed() in a filtered generator: mypyc (the compiled build) cannot build that.
            for branch in _branches(node)[::-1]:
                if isinstance(branch, Mapping):
                    todo.append((branch, False))
    return set(done[id(schema)])


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
