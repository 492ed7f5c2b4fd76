"""Gemma 4's value notation: how its template writes a value, a tool's declaration and a tool's result.

A string is written between ``<|"|>`` quotes, ``None`` as ``null``, a boolean as ``true`` or
``false``, any other scalar as Python prints it; an object as ``{key:value,…}``, its items sorted
as Jinja's ``dictsort`` sorts them (by key, a string key lower-cased, equal keys in their order);
a list as ``[a,b]``. Object keys are quoted in a tool's declaration (an enum's or an array's items),
bare at every depth of a call's arguments and a tool result (``escape_keys``).

The template reads fields with Jinja's ``value['key']``, which gives an *undefined* value for a key
that is not there, or for any key of a value that is no object: :data:`UNDEFINED` stands for it here
(printed as nothing, false, iterated as nothing). Where the engine itself fails (text joined to a
value that is no string, keys it cannot sort, a value it cannot iterate),
:class:`~prompt_formats.errors.InvalidInputError` names the field.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...._text.plain import printed_value, require_plain
from ....errors import InvalidInputError, type_name
from ..tokens import QUOTE, RESPONSE, TOOL_RESPONSE_CLOSE

__all__ = [
    "UNDEFINED", "argument", "declaration", "field", "iterated", "printed", "response_block", "sorted_items",
    "upper",
]


class _Undefined:
    """Jinja's undefined value: false, printed as nothing, iterated as nothing."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "UNDEFINED"


UNDEFINED: Any = _Undefined()
_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})
#: The keys a property's own schema uses; the template leaves them out where it writes the others.
_STANDARD_KEYS = ("description", "type", "properties", "required", "nullable")


def field(value: Any, key: str, path: str) -> Any:
    """``value[key]`` as the template reads it: the item of an object, else :data:`UNDEFINED`; an
    undefined value has no fields (the engine fails)."""
    if type(value) is dict:
        return value.get(key, UNDEFINED)
    if value is UNDEFINED:
        raise InvalidInputError(path, f"missing: the template reads its {key!r}")
    if type(value) not in _JSON_SCALARS and type(value) not in (list, tuple):
        require_plain(value, path)
    return UNDEFINED


def printed(value: Any, path: str) -> str:
    """``{{ value }}``: a string itself, nothing for an undefined value, anything else as Python prints it."""
    if type(value) is str:
        return value
    return "" if value is UNDEFINED else printed_value(value, path)


def upper(value: Any, path: str) -> str:
    """``value | upper``."""
    return printed(value, path).upper()


def iterated(value: Any, path: str) -> Iterable[Any]:
    """What ``{% for x in value %}`` goes over: a list's items, a string's characters, an object's
    keys, nothing for an undefined value; anything else fails the engine."""
    if _is_container(value):
        return value  # type: ignore[no-any-return]
    if value is UNDEFINED:
        return ()
    if type(value) in _JSON_SCALARS:
        raise InvalidInputError(path, f"expected a list, got {type_name(value)}: the template iterates it")
    require_plain(value, path)
    return ()  # (plain data is among the types above)


def is_sequence(value: Any) -> bool:
    """Jinja's ``is sequence``: a list, a string, an object, an undefined value."""
    return _is_container(value) or value is UNDEFINED


def _is_container(value: Any) -> bool:
    """A list, tuple, string or dict, told by identity (a metaclass may say its class equals one)."""
    kind = type(value)
    return kind is list or kind is tuple or kind is str or kind is dict


def sorted_items(mapping: dict[Any, Any], path: str) -> list[tuple[Any, Any]]:
    """``mapping | dictsort``: by key, a string key lower-cased; keys that cannot be compared fail."""
    for key in mapping:
        if type(key) is not str and type(key) not in (int, float, bool):
            require_plain(key, path)
    try:
        return sorted(mapping.items(), key=_folded)
    except TypeError:
        raise InvalidInputError(path, "keys of different types: the template sorts them") from None


def _folded(item: tuple[Any, Any]) -> Any:
    key = item[0]
    return key.lower() if type(key) is str else key


class _Literal:
    """Text the notation writes itself (a bracket, a comma, a key), on the stack of values to write."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_CLOSE_OBJECT, _CLOSE_LIST, _COMMA = _Literal("}"), _Literal("]"), _Literal(",")

#: How many containers a value opens before it is checked for a cycle (one that holds itself would
#: grow the stack, and the text, until memory ran out): once, and only for a value this large.
_CHECKED_AT = 20_000


def _check_no_cycle(value: Any, path: str) -> None:
    """Raise :class:`InvalidInputError` at ``path`` if a container in ``value`` holds itself."""
    inside: set[int] = set()  # the containers open around the item (ids: alive while value is)
    stack: list[tuple[Any, bool]] = [(value, True)]
    while stack:
        item, entering = stack.pop()
        if not entering:
            inside.discard(id(item))
            continue
        kind = type(item)
        if kind is not dict and kind is not list and kind is not tuple:
            continue
        if id(item) in inside:
            raise InvalidInputError(path, "a value that holds itself (a circular reference): the template's "
                                          "recursion never ends")
        inside.add(id(item))
        stack.append((item, False))
        stack.extend((child, True) for child in (item.values() if kind is dict else item))


def argument(value: Any, escape_keys: bool, path: str) -> str:
    """The template's ``format_argument(value, escape_keys)``, written with a stack of its own: a
    value nested however deep renders whatever the caller's depth."""
    out: list[str] = []
    stack: list[Any] = [value]
    opened = 0  # the containers met (at _CHECKED_AT of them, the value is checked for a cycle)
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is _Literal:
            out.append(item.text)
        elif kind is dict:
            opened += 1
            if opened == _CHECKED_AT:
                _check_no_cycle(value, path)
            out.append("{")
            stack.append(_CLOSE_OBJECT)
            items = sorted_items(item, path)
            for at in range(len(items) - 1, -1, -1):  # (pushed last first: popped in order)
                stack.append(items[at][1])
                stack.append(_Literal(_key(items[at][0], escape_keys, path) + ":"))
                if at:
                    stack.append(_COMMA)
        elif kind is list or kind is tuple:
            opened += 1
            if opened == _CHECKED_AT:
                _check_no_cycle(value, path)
            out.append("[")
            stack.append(_CLOSE_LIST)
            for at in range(len(item) - 1, -1, -1):
                stack.append(item[at])
                if at:
                    stack.append(_COMMA)
        else:
            out.append(_scalar(item, path))
    return "".join(out)


def _scalar(value: Any, path: str) -> str:
    kind = type(value)
    if kind is str:
        return f"{QUOTE}{value}{QUOTE}"
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int or kind is float:
        return printed_value(value, path)
    if value is UNDEFINED:
        return "[]"  # (an undefined value passes Jinja's sequence test, and iterates as nothing)
    require_plain(value, path)
    return printed_value(value, path)


def _key(key: Any, escape: bool, path: str) -> str:
    if not escape:
        return printed(key, path)
    if type(key) is not str:
        require_plain(key, path)
        raise InvalidInputError(path, f"a key that is {type_name(key)}, no string: the template joins it to text")
    return QUOTE + key + QUOTE


def _quoted_list(value: Any, path: str) -> str:
    return ",".join(QUOTE + printed(item, path) + QUOTE for item in iterated(value, path))


def response_block(name: Any, response: Any, path: str) -> str:
    """The template's ``format_tool_response_block(name, response)`` after its ``<|tool_response>``."""
    if type(name) is not str:
        require_plain(name, path)
        raise InvalidInputError(path, f"the tool's name is {type_name(name)}, no string: the template joins it to text")
    if type(response) is dict:
        body = ",".join(printed(key, path) + ":" + argument(item, False, path)
                        for key, item in sorted_items(response, path))
    else:
        body = "value:" + argument(response, False, path)
    return RESPONSE + name + "{" + body + "}" + TOOL_RESPONSE_CLOSE


def declaration(tool: Any, path: str) -> str:
    """The template's ``format_function_declaration(tool)`` (what it writes between ``<|tool>`` and ``<tool|>``)."""
    function = field(tool, "function", path)
    fpath = f"{path}.function"
    out = ["declaration:", printed(field(function, "name", fpath), fpath), "{description:", QUOTE,
           printed(field(function, "description", fpath), fpath), QUOTE]
    params = field(function, "parameters", fpath)
    if params:
        ppath = f"{fpath}.parameters"
        out.append(",parameters:{")
        properties = field(params, "properties", ppath)
        if properties:
            out += ["properties:{", parameters(properties, f"{ppath}.properties"), "},"]
        required = field(params, "required", ppath)
        if required:
            out += ["required:[", _quoted_list(required, f"{ppath}.required"), "],"]
        kind = field(params, "type", ppath)
        if kind:
            out += ["type:", QUOTE, upper(kind, ppath), QUOTE, "}"]
    if _holds(function, "response", fpath):
        response = field(function, "response", fpath)
        rpath = f"{fpath}.response"
        description = field(response, "description", rpath)
        out.append(",response:{")
        if description:
            out += ["description:", QUOTE, printed(description, rpath), QUOTE, ","]
        if upper(field(response, "type", rpath), rpath) == "OBJECT":
            out += ["type:", QUOTE, "OBJECT", QUOTE, "}"]
    out.append("}")
    return "".join(out).strip()


def _holds(value: Any, key: str, path: str) -> bool:
    """``key in value``: an object's key, a string's substring, a list's item."""
    if type(value) in (dict, str, list, tuple):
        return key in value
    if value is UNDEFINED:
        return False
    require_plain(value, path)
    raise InvalidInputError(path, f"expected an object, got {type_name(value)}: the template looks for a key in it")


def parameters(properties: Any, path: str, filter_keys: bool = False) -> str:
    """The template's ``format_parameters(properties, …)``: each property's schema, by name."""
    if type(properties) is not dict:
        require_plain(properties, path)
        raise InvalidInputError(path, f"expected an object, got {type_name(properties)}: the template sorts its items")
    out = []
    for key, value in sorted_items(properties, path):
        if filter_keys and key in _STANDARD_KEYS:
            continue
        out.append(printed(key, path) + ":{" + ",".join(_property(value, f"{path}.{key}")) + "}")
    return ",".join(out)


def _property(value: Any, path: str) -> list[str]:
    """The fields of one property's schema, as the template writes them (each after a comma)."""
    fields = []
    description = field(value, "description", path)
    if description:
        fields.append("description:" + QUOTE + printed(description, path) + QUOTE)
    kind = upper(field(value, "type", path), path)
    if kind == "STRING":
        enum = field(value, "enum", path)
        if enum:
            fields.append("enum:" + argument(enum, True, path))
    elif kind == "ARRAY":
        items = field(value, "items", path)
        if type(items) is dict and items:
            fields.append("items:{" + _items(items, f"{path}.items") + "}")
    if field(value, "nullable", path):
        fields.append("nullable:true")
    if kind == "OBJECT":
        properties = field(value, "properties", path)
        if type(properties) is dict:
            fields.append("properties:{" + parameters(properties, f"{path}.properties") + "}")
        else:
            fields.append("properties:{" + parameters(value, path, filter_keys=True) + "}")
        required = field(value, "required", path)
        if required:
            fields.append("required:[" + _quoted_list(required, f"{path}.required") + "]")
    fields.append("type:" + QUOTE + kind + QUOTE)
    return fields


def _items(items: dict[Any, Any], path: str) -> str:
    """An array's ``items`` schema, as the template writes it."""
    out = []
    for key, value in sorted_items(items, path):
        if value is None:
            continue
        if key == "properties":
            out.append("properties:{" + (parameters(value, f"{path}.properties") if type(value) is dict else "") + "}")
        elif key == "required":
            out.append("required:[" + _quoted_list(value, f"{path}.required") + "]")
        elif key == "type":
            kind = value.upper() if type(value) is str else [upper(item, path) for item in iterated(value, path)]
            out.append("type:" + argument(kind, True, path))
        else:
            out.append(printed(key, path) + ":" + argument(value, True, path))
    return ",".join(out)
