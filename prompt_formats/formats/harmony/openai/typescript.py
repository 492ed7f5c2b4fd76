"""The ``functions`` namespace of the gpt-oss template: JSON-schema tools as TypeScript-like declarations.

One function per branch of the template's ``render_typescript_type`` macro, in its order, and one
for ``render_tool_namespace``. The macro reads a schema the way Jinja2 reads values, and so do these
functions: a key a schema lacks is *undefined* (false, equal to nothing), a schema that is not a
mapping has no keys, truthiness is Python's, printed values are ``str()`` of them, ``in`` is Python's
``in`` (so a string ``required`` matches substrings). Quirks kept as the template has them:

- ``has_object_variants`` is set inside a ``for`` loop, which Jinja2 scopes to the loop, so a
  ``oneOf`` never falls back to ``any``: every variant is written;
- a property's type comes after ``": \\n"`` and 16 spaces (the macro's indentation, printed), a
  ``oneOf`` variant's default after 20 spaces, and variants are joined with ``" | \\n"``;
- ``enum`` is written only for ``type: "string"``, and there without ``| null``; ``integer`` is
  ``number``; an array of an inner type longer than 50 characters (or ``object | object``) is
  ``any[]``;
- a top-level default is written raw after an ``enum`` or a ``oneOf`` (so it must be a string:
  the template concatenates it) and as JSON otherwise.

Where the template itself fails (a missing description, a non-string name, a non-string default
it concatenates, a ``properties`` that is not an object) :class:`InvalidInputError` names the field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ...._text.tojson import tojson_at
from ....errors import InvalidInputError, type_name

__all__ = ["UNDEFINED", "field", "functions_namespace", "typescript_type"]


class _Undefined:
    """Jinja2's ``Undefined`` as the template meets it: false, and equal to nothing but itself."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "UNDEFINED"


UNDEFINED: Any = _Undefined()

# The macro's indentation that its output keeps (``{{`` without ``-`` after a line break).
_PROPERTY_TYPE_LEAD = ": \n" + " " * 16
_VARIANT_DEFAULT_LEAD = " " * 20 + "// default: "
_VARIANT_SEPARATOR = " | \n"


def field(value: Any, key: str) -> Any:
    """``value.key`` as the template reads it: the mapping's item, else :data:`UNDEFINED`."""
    if type(value) is dict or isinstance(value, Mapping):  # the exact type first: an ABC check is slow
        return value.get(key, UNDEFINED)
    return UNDEFINED


# The helpers below take the path of the schema they read and the key they read in it, and spell
# the two out together only for an error: most of a namespace's cost would otherwise be paths.


def _text(value: Any, path: str, key: str, what: str) -> str:
    """A value the template concatenates to a string (``path + key``): it must be one."""
    if type(value) is str or isinstance(value, str):
        return value
    got = "nothing" if value is UNDEFINED else type_name(value)
    raise InvalidInputError(path + key, f"expected a string ({what}), got {got}")


def _property_key(name: Any, required: Any, path: str) -> str:
    """A property's name as the template writes it, with ``?`` when ``required`` (at ``path + ".required"``)
    does not hold it."""
    key = str(name)
    try:
        optional = name not in required
    except TypeError:
        raise InvalidInputError(path + ".required", f"expected a list of names, got {type_name(required)}") from None
    return key + "?" if optional else key


def _joined(values: Any, separator: str, path: str) -> str:
    """Jinja2's ``join`` filter: ``str()`` of each item."""
    try:
        return separator.join(map(str, values))
    except TypeError:
        raise InvalidInputError(path, f"expected a list, got {type_name(values)}") from None


def _items(values: Any, path: str) -> list[Any]:
    """The items a ``for`` loop of the template walks (a mapping's keys, a string's characters)."""
    if type(values) is list or isinstance(values, Iterable):
        return list(values)
    raise InvalidInputError(path, f"expected a list, got {type_name(values)}")


def typescript_type(spec: Any, path: str) -> str:
    """The template's ``render_typescript_type(spec)``: the TypeScript-like type of one JSON schema."""
    # ``spec.key`` read as ``get(key, UNDEFINED)``: :func:`field` without a call of its own per key.
    get = spec.get if type(spec) is dict or isinstance(spec, Mapping) else _no_keys
    kind = get("type", UNDEFINED)
    if kind == "array":
        return _array_type(get, path)
    if isinstance(kind, (list, tuple)) and kind:
        # A list of types, e.g. ["string", "null"]: joined as they are.
        return _joined(kind, " | ", path + ".type") if len(kind) > 1 else str(kind[0])
    one_of = get("oneOf", UNDEFINED)
    if one_of:
        return _one_of_type(one_of, path + ".oneOf")
    if kind == "string":
        enum = get("enum", UNDEFINED)
        if enum:
            return '"' + _joined(enum, '" | "', path + ".enum") + '"'
        return "string | null" if get("nullable", UNDEFINED) else "string"
    if kind == "number" or kind == "integer":
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "object":
        return _object_type(get, path)
    return "any"


def _no_keys(key: str, default: Any) -> Any:
    """``get`` of a value that is not a mapping: it has no keys."""
    return default


def _array_type(get: Callable[[str, Any], Any], path: str) -> str:
    items = get("items", UNDEFINED)
    if items:
        item_kind = field(items, "type")
        if item_kind == "string":
            text = "string[]"
        elif item_kind == "number" or item_kind == "integer":
            text = "number[]"
        elif item_kind == "boolean":
            text = "boolean[]"
        else:
            inner = typescript_type(items, path + ".items")
            text = "any[]" if inner == "object | object" or len(inner) > 50 else inner + "[]"
    else:
        text = "any[]"
    return text + " | null" if get("nullable", UNDEFINED) else text


def _one_of_type(variants: Any, path: str) -> str:
    # The template's fallback to "any" for object variants never fires (see the module docstring).
    pieces: list[str] = []
    listed = _items(variants, path)
    for i, variant in enumerate(listed):
        pieces.append(typescript_type(variant, f"{path}[{i}]"))
        description = field(variant, "description")
        if description:
            pieces.append("// " + _text(description, f"{path}[{i}]", ".description", "the template writes it"))
        default = field(variant, "default")
        if default is not UNDEFINED:
            pieces.append(_VARIANT_DEFAULT_LEAD + tojson_at(default, f"{path}[{i}].default"))
        if i < len(listed) - 1:
            pieces.append(_VARIANT_SEPARATOR)
    return "".join(pieces)


def _object_type(get: Callable[[str, Any], Any], path: str) -> str:
    properties = get("properties", UNDEFINED)
    if not properties:
        return "object"
    required = get("required", UNDEFINED) or []
    pieces = ["{\n"]
    entries = _properties(properties, path)
    for i, (name, prop) in enumerate(entries):
        if i:
            pieces.append(", ")
        pieces.append(_property_key(name, required, path))
        pieces.append(_PROPERTY_TYPE_LEAD)
        pieces.append(typescript_type(prop, f"{path}.properties.{name}"))
    pieces.append("}")
    return "".join(pieces)


def _properties(properties: Any, path: str) -> list[tuple[Any, Any]]:
    """The items of the schema's ``properties`` (at ``path + ".properties"``)."""
    if type(properties) is dict or isinstance(properties, Mapping):
        return list(properties.items())
    raise InvalidInputError(path + ".properties", f"expected an object, got {type_name(properties)}")


def _parameter_default(get: Callable[[str, Any], Any], default: Any, path: str) -> str:
    """The text after a top-level parameter's type for its ``default`` (``get``: the parameter's keys)."""
    if get("enum", UNDEFINED):
        return ", // default: " + _text(default, path, ".default", "the template writes it after an enum")
    if get("oneOf", UNDEFINED):
        return "// default: " + _text(default, path, ".default", "the template writes it after a oneOf")
    return ", // default: " + tojson_at(default, path + ".default")


def _function_declaration(tool: Any, path: str) -> str:
    """One tool of the namespace: its description comment and its ``type NAME = (...) => any;``."""
    function = field(tool, "function")
    path += ".function"
    if type(function) is not dict and not isinstance(function, Mapping):
        got = "nothing" if function is UNDEFINED else type_name(function)
        raise InvalidInputError(path, f"expected an object (the template reads tool.function), got {got}")
    description = _text(field(function, "description"), path, ".description", "the template writes it")
    name = _text(field(function, "name"), path, ".name", "the template writes it")
    head = "// " + description + "\ntype " + name + " = "
    parameters = field(function, "parameters")
    properties = field(parameters, "properties") if parameters else UNDEFINED
    if not properties:
        return head + "() => any;\n\n"
    path += ".parameters"
    required = field(parameters, "required") or []
    pieces = [head, "(_: {\n"]
    for name, spec in _properties(properties, path):
        spec_path = f"{path}.properties.{name}"
        get = spec.get if type(spec) is dict or isinstance(spec, Mapping) else _no_keys
        description = get("description", UNDEFINED)
        if description:
            pieces.append("// " + _text(description, spec_path, ".description", "the template writes it") + "\n")
        pieces.append(_property_key(name, required, path))
        pieces.append(": ")
        pieces.append(typescript_type(spec, spec_path))
        default = get("default", UNDEFINED)
        if default is not UNDEFINED:
            pieces.append(_parameter_default(get, default, spec_path))
        pieces.append(",\n")
    pieces.append("}) => any;\n\n")
    return "".join(pieces)


def functions_namespace(tools: Iterable[Any]) -> str:
    """The template's ``render_tool_namespace("functions", tools)``, byte for byte.

    Raises :class:`InvalidInputError` at ``tools[i]...`` where the template fails for a tool, and for
    a schema nested too deeply to walk.
    """
    pieces = ["## functions\n\nnamespace functions {\n\n"]
    for i, tool in enumerate(tools):
        try:
            pieces.append(_function_declaration(tool, f"tools[{i}]"))
        except RecursionError:
            raise InvalidInputError(f"tools[{i}]", "schema nested too deeply to render") from None
    pieces.append("} // namespace functions")
    return "".join(pieces)
