"""The fast path of the ``functions`` namespace: tools made of plain JSON values, written without paths.

:func:`functions_namespace_fast` returns exactly what
:func:`~prompt_formats.formats.harmony.openai.typescript.functions_namespace` returns, or steps aside to it.
It walks the same branches in the same order, but only over exact ``dict`` schemas, ``list`` value
lists and ``str`` names (what decoded JSON is made of), carries no path (the checked path spells
paths out for its errors) and reads each key with one ``dict.get``. Anything else, and anything
that could be an error (a missing description, a ``required`` that is not a container, a default
JSON cannot write, a schema nested too deeply), makes it step aside: the checked path then renders
the tools or raises its error. Why: a server that gets the tools as decoded JSON builds the
namespace on every request it has not seen the tools of.
"""

from __future__ import annotations

from typing import Any

from ...._text.tojson import tojson
from .typescript import functions_namespace

__all__ = ["functions_namespace_fast"]

_PROPERTY_TYPE_LEAD = ": \n" + " " * 16
_VARIANT_DEFAULT_LEAD = " " * 20 + "// default: "
_ITEM_TYPES = {"string": "string[]", "number": "number[]", "integer": "number[]", "boolean": "boolean[]"}
_SCALAR_TYPES = {"number": "number", "integer": "number", "boolean": "boolean"}
_SIMPLE_TYPES = {"string": "string", **_SCALAR_TYPES}
_SCALARS: frozenset[type] = frozenset({str, int, float, bool, type(None)})
_STRING: frozenset[type] = frozenset({str})


class _StepAside(Exception):
    """The tools are not plain JSON of the shapes the fast path writes: the checked path takes them."""


def functions_namespace_fast(tools: Any) -> str:
    """``functions_namespace(tools)``, byte for byte and with the same errors (from the checked path)."""
    if type(tools) is list or type(tools) is tuple:
        try:
            out = ["## functions\n\nnamespace functions {\n\n"]
            for tool in tools:
                _declaration(out, tool)
            out.append("} // namespace functions")
            return "".join(out)
        except Exception:  # _StepAside, or what the checked path will name (TypeError, RecursionError...)
            pass
    return functions_namespace(tools)


def _printed(values: Any, kinds: frozenset[type] = _SCALARS) -> list[str]:
    """``str()`` of each of ``values`` (Jinja2's ``join``), a list of values of exact types in ``kinds``
    (of an exact string, ``str()`` is the string itself)."""
    if type(values) is not list:
        raise _StepAside
    for value in values:
        if type(value) not in kinds:
            raise _StepAside
    return list(map(str, values))


def _type(spec: Any) -> str:
    """``typescript_type(spec)`` of an exact dict schema."""
    if type(spec) is not dict:
        raise _StepAside
    kind = spec.get("type")
    if type(kind) is str:
        if kind == "array":
            return _array(spec)
    elif type(kind) is list:
        if kind:
            return " | ".join(_printed(kind, _STRING))
    elif kind is not None:
        raise _StepAside
    one_of = spec.get("oneOf")
    if one_of:
        return _one_of(one_of)
    if kind == "string":
        enum = spec.get("enum")
        if enum:
            return '"' + '" | "'.join(_printed(enum)) + '"'
        return "string | null" if spec.get("nullable") else "string"
    scalar = _SCALAR_TYPES.get(kind) if type(kind) is str else None
    if scalar is not None:
        return scalar
    if kind == "object":
        return _object(spec)
    return "any"


def _array(spec: dict[str, Any]) -> str:
    items = spec.get("items")
    if items:
        if type(items) is not dict:
            raise _StepAside
        item_kind = items.get("type")
        text = _ITEM_TYPES.get(item_kind) if type(item_kind) is str else None
        if text is None:
            inner = _type(items)
            text = "any[]" if inner == "object | object" or len(inner) > 50 else inner + "[]"
    else:
        text = "any[]"
    return text + " | null" if spec.get("nullable") else text


def _one_of(variants: Any) -> str:
    if type(variants) is not list:
        raise _StepAside
    pieces: list[str] = []
    for variant in variants:
        text = _type(variant)  # an exact dict, from here on
        description = variant.get("description")
        if description:
            if type(description) is not str:
                raise _StepAside
            text += "// " + description
        if "default" in variant:
            text += _VARIANT_DEFAULT_LEAD + tojson(variant["default"])
        pieces.append(text)
    return " | \n".join(pieces)


def _object(spec: dict[str, Any]) -> str:
    properties = spec.get("properties")
    if not properties:
        return "object"
    if type(properties) is not dict:
        raise _StepAside
    required = spec.get("required") or []
    pieces = []
    for name, prop in properties.items():
        if type(name) is not str:
            raise _StepAside
        key = name if name in required else name + "?"
        pieces.append(key + _PROPERTY_TYPE_LEAD + _type(prop))
    return "{\n" + ", ".join(pieces) + "}"


def _declaration(out: list[str], tool: Any) -> None:
    """Append ``_function_declaration(tool)`` of an exact dict tool to ``out``."""
    function = tool.get("function") if type(tool) is dict else None
    if type(function) is not dict:
        raise _StepAside
    description = function.get("description")
    name = function.get("name")
    if type(description) is not str or type(name) is not str:
        raise _StepAside
    parameters: Any = function.get("parameters")
    if type(parameters) is not dict and parameters:
        raise _StepAside
    properties = parameters.get("properties") if parameters else None
    if not properties:
        out.append(f"// {description}\ntype {name} = () => any;\n\n")
        return
    if type(properties) is not dict:
        raise _StepAside
    required = parameters.get("required") or []
    out.append(f"// {description}\ntype {name} = (_: {{\n")
    for name, spec in properties.items():
        if type(name) is not str or type(spec) is not dict:
            raise _StepAside
        kind = spec.get("type")
        text = _SIMPLE_TYPES.get(kind) if type(kind) is str else None
        if text is None or "oneOf" in spec or (kind == "string" and ("enum" in spec or "nullable" in spec)):
            text = _type(spec)
        key = name if name in required else name + "?"
        description = spec.get("description")
        if "default" in spec:
            text += _default(spec, spec["default"])
        if description:
            if type(description) is not str:
                raise _StepAside
            out.append(f"// {description}\n{key}: {text},\n")
        else:
            out.append(f"{key}: {text},\n")
    out.append("}) => any;\n\n")


def _default(spec: dict[str, Any], default: Any) -> str:
    """``_parameter_default``: raw after an enum or a oneOf (a string), else as JSON."""
    if spec.get("enum"):
        if type(default) is not str:
            raise _StepAside
        return ", // default: " + default
    if spec.get("oneOf"):
        if type(default) is not str:
            raise _StepAside
        return "// default: " + default
    return ", // default: " + tojson(default)

