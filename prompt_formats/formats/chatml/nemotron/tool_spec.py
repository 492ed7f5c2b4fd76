"""Nemotron 3's tools block: each tool spelt as XML elements, read as its template reads it.

The template writes a tool's ``function`` (the tool itself when it has none) as a ``<function>``
element: its name, its trimmed description, each parameter (name, type, trimmed description,
``enum`` as JSON, then its other keys), the parameters' other keys, ``required`` as JSON, then
the function's other keys. An *other key* is written as an element named by the key holding the
value as JSON when it is an object or a list, else as Python prints it. A field that is not there
is not written; a function or a parameter that is no object has no fields.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ...._text.plain import as_handed, printed_value
from ...._text.tojson import json_refused, tojson
from ....errors import InvalidInputError, type_name
from ....format.chat_format import Tools
from ....guard import ControlTokenGuard
from ....model.reading import is_list
from ....model.tools import PreparedTools, rendered_tools
from ..template import string_value
from ..tokens import NEMOTRON_TOOLS_HEADER, TOOLS_FOOTER

__all__ = ["check_written_keys", "fields_of", "nemotron_tools_block"]

_PARAMETER_KEYS = frozenset(("name", "type", "description", "enum"))
_PARAMETERS_KEYS = frozenset(("type", "properties", "required"))
_FUNCTION_KEYS = frozenset(("type", "name", "description", "parameters"))


def _shown(value: Any) -> str:
    """``value`` as ``~`` or ``|string`` writes it: a string itself, anything else as Python prints its plain data."""
    return printed_value(value, "tools")


def _trimmed(value: Any) -> str:
    """``value|trim``: a string's characters, anything else as Python prints it, stripped."""
    return (str.__str__(value) if isinstance(value, str) else _shown(value)).strip()


def _json(value: Any, path: str) -> str:
    """``value|tojson``, or the error naming ``path``."""
    try:
        return tojson(value)
    except (TypeError, ValueError, RecursionError) as exc:
        return json_refused(value, path, exc)


def fields_of(value: Any, path: str) -> Mapping[Any, Any] | None:
    """The fields the template reads of a value (a tool's function, a parameter, a call): a
    mapping's; none (``None``) of JSON data that is no object, on which Jinja finds no such
    attribute; another object is refused, since Jinja would read its attributes."""
    if isinstance(value, Mapping):
        fields: Mapping[Any, Any] = as_handed(value)
        return fields
    if value is None or isinstance(value, (str, int, float, list, tuple)):
        return None
    raise InvalidInputError(path, f"expected an object, got {type_name(value)}")


def _other_keys(out: list[str], fields: Any, handled: frozenset[str], path: str) -> None:
    """The template's ``render_extra_keys``: each key of an object ``fields`` but ``handled``, as an element."""
    if not isinstance(fields, Mapping):
        return
    for key, value in fields.items():
        if key in handled:
            continue
        try:
            text = string_value(value)
        except (TypeError, ValueError, RecursionError) as exc:
            text = json_refused(value, f"{path}.{key}", exc)
        name = _shown(key)
        out.append(f"\n<{name}>{text}</{name}>")


def _parameter(out: list[str], name: Any, fields: Any, path: str) -> None:
    """One parameter's element."""
    out.append(f"\n<parameter>\n<name>{_shown(name)}</name>")
    fields = fields_of(fields, path)
    if fields:
        if "type" in fields:
            out.append(f"\n<type>{_shown(fields['type'])}</type>")
        if "description" in fields:
            out.append(f"\n<description>{_trimmed(fields['description'])}</description>")
        if "enum" in fields:
            out.append(f"\n<enum>{_json(fields['enum'], path + '.enum')}</enum>")
        _other_keys(out, fields, _PARAMETER_KEYS, path)
    out.append("\n</parameter>")


def _function(out: list[str], function: Any, path: str) -> None:
    """One tool's ``<function>`` element (``function``: its function, or the tool)."""
    fields = fields_of(function, path) or {}
    out.append(f"\n<function>\n<name>{_shown(fields['name']) if 'name' in fields else ''}</name>")
    if "description" in fields:
        out.append(f"\n<description>{_trimmed(fields['description'])}</description>")
    out.append("\n<parameters>")
    parameters = fields.get("parameters")
    if isinstance(parameters, Mapping):
        properties = parameters.get("properties")
        if isinstance(properties, Mapping):
            for name, spec in properties.items():
                _parameter(out, name, spec, f"{path}.parameters.properties.{name}")
        _other_keys(out, parameters, _PARAMETERS_KEYS, path + ".parameters")
        if "required" in parameters:
            out.append(f"\n<required>{_json(parameters['required'], path + '.parameters.required')}</required>")
    out.append("\n</parameters>")
    _other_keys(out, fields, _FUNCTION_KEYS, path)
    out.append("\n</function>")


def _tools_text(tools: Sequence[Any]) -> str:
    """The tools block (none for no tools), or the error naming the tool the engine fails on."""
    if not tools:  # the template's `tools | length > 0`
        return ""
    out = [NEMOTRON_TOOLS_HEADER]
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise InvalidInputError(f"tools[{i}]", f"expected a tool object, got {type_name(tool)}")
        try:
            if "function" in tool:
                _function(out, tool["function"], f"tools[{i}].function")
            else:
                _function(out, tool, f"tools[{i}]")
        except InvalidInputError:
            raise
        except Exception as exc:  # a value that cannot be read or printed (its __str__ fails): the engine fails
            raise InvalidInputError(f"tools[{i}]", f"a value that cannot be read or printed "
                                    f"({type(exc).__name__})") from None
    out.append(TOOLS_FOOTER)
    return "".join(out)


def nemotron_tools_block(tools: Tools) -> str:
    """The system turn's tools text, from ``# Tools`` to ``</IMPORTANT>``; empty when no tools are
    offered. Rendered once per toolset (:func:`~prompt_formats.model.tools.rendered_tools`)."""
    if isinstance(tools, PreparedTools):
        return rendered_tools(tools, "chatml.nemotron_tools_block", _tools_text)
    if not tools:
        return ""
    if not is_list(tools):
        raise InvalidInputError("tools", f"expected a list of tool objects, got {type_name(tools)}")
    return rendered_tools(tools, "chatml.nemotron_tools_block", _tools_text)


def _written_keys(tools: Any) -> Iterator[tuple[str, Any, bool]]:
    """Every key the tools block prints: its path, the key, and whether it is an element's name
    (``<KEY>…</KEY>``: an extra key) or a parameter's name (between ``<name>`` and ``</name>``)."""
    for i, tool in enumerate(tools if isinstance(tools, (list, tuple)) else ()):
        if not isinstance(tool, Mapping):
            continue
        path, function = (f"tools[{i}].function", tool["function"]) if "function" in tool else (f"tools[{i}]", tool)
        if not isinstance(function, Mapping):
            continue
        yield from ((path, key, True) for key in function if key not in _FUNCTION_KEYS)
        parameters = function.get("parameters")
        if isinstance(parameters, Mapping):
            yield from ((path + ".parameters", key, True) for key in parameters if key not in _PARAMETERS_KEYS)
            properties = parameters.get("properties")
            for name, spec in (properties.items() if isinstance(properties, Mapping) else ()):
                yield path + ".parameters.properties", name, False
                if isinstance(spec, Mapping):
                    at = f"{path}.parameters.properties.{name}"
                    yield from ((at, key, True) for key in spec if key not in _PARAMETER_KEYS)


_PLAIN_KEYS = (str, int, float, bool, type(None))


def check_written_keys(tools: Any, guard: ControlTokenGuard) -> None:
    """Under ``guard`` (its policy applied to the tools' strings first): refuse a key the tools block
    prints that is no plain value (a subclass prints its ``__str__``, which the guard does not read),
    and an element's name that makes a control token with the template's ``<``, ``</`` and ``>``
    (the guard reads a key alone). Raises the guard's error (``reject``) or ``InvalidInputError``."""
    if isinstance(tools, PreparedTools):
        tools = tools.tools
    for path, key, element in _written_keys(tools):
        if type(key) not in _PLAIN_KEYS:
            raise InvalidInputError(path, f"a key of type {type_name(key)} (with a guard, refused: the template "
                                    "prints it as Python prints it, which the guard does not check)")
        if element and type(key) is str and _forges(key, guard):
            raise InvalidInputError(f"{path}.{key}", "a key that makes a control token as the element's name "
                                    "(with a guard, refused)")


def _forges(key: str, guard: ControlTokenGuard) -> bool:
    """Whether ``<KEY>`` or ``</KEY>`` holds one of ``guard``'s tokens (or of its families) that the
    key alone does not."""
    for text in ("<" + key + ">", "</" + key + ">"):
        if any(token in text and token not in key for token in guard.tokens):
            return True
        for family in guard.families:
            pattern = family.regex()
            if re.search(pattern, text) and not re.search(pattern, key):
                return True
    return False
