"""The fast path of gpt-oss's ``functions`` namespace (``typescript_fast.py``) against Jinja2.

The differential tests render through the fast path without knowing whether it or the checked
writer made the namespace. Here the checked writer is made unreachable, so each case shows that the
fast path itself wrote what the template writes; and for the shapes the fast path does not take,
that it stepped aside and the format still renders what the template renders. Expected texts come
only from the Jinja2 oracle.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import prompt_formats as pf
from prompt_formats.formats.harmony.openai import typescript_fast
from prompt_formats.model.tools import PLAIN_TOOLS_CACHE
from tests.support.gpt_oss_oracle import render_gpt_oss_jinja
from tests.support.oracles import render_ours

pytestmark = [pytest.mark.jinja]

FMT = pf.get_format("gpt-oss")
USER = [{"role": "user", "content": "hi"}]
DAY = "2025-08-05"


class SteppedAside(Exception):
    pass


def _unreachable(tools: Any) -> str:
    raise SteppedAside


@pytest.fixture
def fast_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The checked writer replaced by one that raises: a render succeeds only through the fast path."""
    monkeypatch.setattr(typescript_fast, "functions_namespace", _unreachable)
    PLAIN_TOOLS_CACHE.clear()
    yield
    PLAIN_TOOLS_CACHE.clear()


def tool_def(properties: dict[str, Any], required: Any = None, name: str = "f") -> dict[str, Any]:
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required is not None:
        parameters["required"] = required
    return {"type": "function", "function": {"name": name, "description": "does f", "parameters": parameters}}


def expected_and_ours(tools: Any) -> tuple[Any, Any]:
    return (render_gpt_oss_jinja(USER, tools, True, current_date=DAY),
            render_ours(FMT.render, USER, tools, True, current_date=DAY))


BRANCHES = {
    "scalars": tool_def({"s": {"type": "string", "description": "a string"}, "n": {"type": "number"},
                         "i": {"type": "integer", "default": 3}, "b": {"type": "boolean", "default": False},
                         "u": {"description": "no type"}, "x": {"type": None}}, required=["s", "i"]),
    "string variants": tool_def({"e": {"type": "string", "enum": ["a", "b", 3, None]},
                                 "ed": {"type": "string", "enum": ["a"], "default": "a"},
                                 "nullable": {"type": "string", "nullable": True},
                                 "empty enum": {"type": "string", "enum": []}}),
    "type lists": tool_def({"one": {"type": ["string"]}, "two": {"type": ["string", "null"]},
                            "empty": {"type": []}}),
    "arrays": tool_def({"s": {"type": "array", "items": {"type": "string"}},
                        "n": {"type": "array", "items": {"type": "integer"}, "nullable": True},
                        "b": {"type": "array", "items": {"type": "boolean"}},
                        "none": {"type": "array"}, "empty items": {"type": "array", "items": {}},
                        "nested": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
                        "objects": {"type": "array", "items": {"type": "object", "properties": {
                            "a_rather_long_property_name_for_a_long_type": {"type": "string"}}}},
                        "short objects": {"type": "array", "items": {"type": "object", "properties": {
                            "a": {"type": "string"}}, "required": ["a"]}}}),
    "objects": tool_def({"o": {"type": "object", "properties": {"a": {"type": "string"}, "b": {
        "type": "object", "properties": {"c": {"type": "boolean"}}}}, "required": "ab"},
        "bare": {"type": "object"}, "empty": {"type": "object", "properties": {}}}),
    "oneOf": tool_def({"v": {"oneOf": [{"type": "string", "description": "text"}, {"type": "number", "default": 1.5},
                                       {"type": "object", "properties": {"k": {"type": "string"}}}],
                             "default": "x"},
                       "typed": {"type": "string", "oneOf": [{"type": "boolean"}]}}),
    "defaults as JSON": tool_def({"d": {"type": "object", "default": {"k": [1, 2.5, None, "é"]}},
                                  "f": {"type": "number", "default": 1e-05}, "z": {"type": "string", "default": ""}}),
    "no parameters": {"type": "function", "function": {"name": "g", "description": "d"}},
    "empty parameters": {"type": "function", "function": {"name": "g", "description": "d", "parameters": {}}},
}


@pytest.mark.parametrize("case", list(BRANCHES))
def test_each_branch_of_the_fast_path_writes_what_the_template_writes(fast_only: None, case: str) -> None:
    tools = [BRANCHES[case], tool_def({"p": {"type": "string"}}, name="second")]
    expected, ours = expected_and_ours(tools)
    assert expected[0] == "ok"
    assert ours == expected


class Described(str):
    def __str__(self) -> str:
        return "printed differently"


ASIDE = {
    "a tuple of types": tool_def({"t": {"type": ("string", "null")}}),
    "items as a list": tool_def({"xs": {"type": "array", "items": [{"type": "string"}]}}),
    "a schema that is not a mapping": tool_def({"p": True}),
    "a str subclass property name": tool_def({Described("p"): {"type": "string"}}),
    "a type that is a number": tool_def({"p": {"type": 5}}),
}


@pytest.mark.parametrize("case", list(ASIDE))
def test_shapes_the_fast_path_leaves_to_the_checked_writer(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    tools = [ASIDE[case]]
    monkeypatch.setattr(typescript_fast, "functions_namespace", _unreachable)
    with pytest.raises(SteppedAside):
        typescript_fast.functions_namespace_fast(tools)
    monkeypatch.undo()
    PLAIN_TOOLS_CACHE.clear()
    expected, ours = expected_and_ours(tools)
    assert ours == expected
