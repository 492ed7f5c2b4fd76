"""Nemotron 3's tools block: each tool spelt as XML elements, read as its template reads it.

The template writes a tool's ``function`` (the tool itself when it has none) as a ``<function>``
element: its name, its trimmed description, each parameter (name, type, trimmed description,
``enum`` as JSON, then its other keys), the parameters' other keys, ``required`` as JSON, then
the function's other keys. An *other key* is written as an element named by the key holding the
value as JSON when it is an object or a list, else as Python prints it. A field that is not there
is not written; a function or a parameter that is no object has no fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...._text.tojson import json_refused, printed, tojson
from ....errors import InvalidInputError, type_name
from ....format.chat_format import Tools
from ....model.reading import is_list
from ....model.tools import PreparedTools, rendered_tools
from ..template import string_value
from ..tokens import NEMOTRON_TOOLS_HEADER, TOOLS_FOOTER

__all__ = ["nemotron_tools_block"]

_PARAMETER_KEYS = frozenset(("name", "type", "description", "enum"))
_PARAMETERS_KEYS = frozenset(("type", "properties", "required"))
_FUNCTION_KEYS = frozenset(("type", "name", "description", "parameters"))


def _shown(value: Any) -> str:
    """``value`` as ``~`` or ``|string`` writes it: a string by its ``__str__``, anything else as Python prints it."""
    return printed(value) if isinstance(value, str) else printed(str(value))


def _trimmed(value: Any) -> str:
    """``value|trim``: a string's characters, anything else as Python prints it, stripped."""
    return (str.__str__(value) if isinstance(value, str) else _shown(value)).strip()


def _json(value: Any, path: str) -> str:
    """``value|tojson``, or the error naming ``path``."""
    try:
        return tojson(value)
    except (TypeError, ValueError, RecursionError) as exc:
        return json_refused(value, path, exc)


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
    if isinstance(fields, Mapping):
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
    fields = function if isinstance(function, Mapping) else {}
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
    if not tools:  # the template's `tools | length > 0`
        return ""
    out = [NEMOTRON_TOOLS_HEADER]
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise InvalidInputError(f"tools[{i}]", f"expected a tool object, got {type_name(tool)}")
        if "function" in tool:
            _function(out, tool["function"], f"tools[{i}].function")
        else:
            _function(out, tool, f"tools[{i}]")
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
