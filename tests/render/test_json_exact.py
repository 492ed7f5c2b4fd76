"""``tojson`` is ``json.dumps(x, ensure_ascii=False)``, byte for byte, on every value it accepts.

The renderer serialises tool definitions and non-string tool-call arguments with
``prompt_formats._text.tojson.tojson`` (the C encoder, built once, with fast paths for exact ``str``, ``int``,
``bool`` and ``None``). Expected values come from ``json.dumps`` itself; the JSON edge values the
issue names are also rendered through the whole ChatML template, in tool schemas and in tool-call
arguments, and compared with the Jinja2 oracle.
"""

from __future__ import annotations

import collections
import enum
import json
import math
import uuid
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats import InvalidInputError
from prompt_formats._text.tojson import text_or_json, tojson, tojson_at
from tests.support.oracles import render_jinja, render_ours
from tests.support.strategies import differential_settings, flat_container, json_values


def reference(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class Colour(enum.IntEnum):
    RED = 1


class Flavour(str, enum.Enum):
    SWEET = "sweet"


class LoudInt(int):
    def __repr__(self) -> str:
        return "LOUD"


class LoudFloat(float):
    def __repr__(self) -> str:
        return "LOUD"


class LoudStr(str):
    def __str__(self) -> str:
        return "LOUD"


EDGE_VALUES: list[Any] = [
    math.nan, math.inf, -math.inf, [math.nan, -math.inf],
    {1: "a", -2: "b", 1.5: "c", None: "e", 1e16: "f", -0.0: "g", 2**70: "h"}, {True: 1, False: 0, None: 2},
    2**63, -(2**63) - 1, 2**64, 10**30, -(10**40),
    1e16, -1e16, 1e15, 9999999999999998.0, 1e22, 1e-5, 1e-7, 1.5e300, 5e-324, 0.1, 100.0, -0.0, 0.0,
    "\ud800", "a\udfffb", "\ud83d\ude00", "\x00", "\x1f", "\x7f", "\x08\x0c\n\r\t", "\u2028\u2029", '"\\/',
    "é日本🙂", "", {}, [], (1, "x"), [[], {}], {"": {"": [None, True, False]}},
    True, False, None, 0, -1,
    Colour.RED, Flavour.SWEET, LoudInt(5), LoudFloat(2.5), LoudStr("x"),
    collections.OrderedDict([("b", 1), ("a", 2)]), {"k": Colour.RED, LoudStr("key"): LoudInt(3)},
]


@pytest.mark.parametrize("value", EDGE_VALUES, ids=repr)
def test_edge_values_match_json_dumps(value: Any) -> None:
    assert tojson(value) == reference(value)


@differential_settings
@given(json_values)
def test_generated_values_match_json_dumps(value: Any) -> None:
    assert tojson(value) == reference(value)


def argument_reference(value: Any) -> str:
    """The template's ``value|string if value is string else value|tojson``, then printed: a string's
    characters (transformers hands the template a subclass's plain data)."""
    return str.__str__(value) if isinstance(value, str) else reference(value)


@pytest.mark.parametrize("value", EDGE_VALUES, ids=repr)
def test_argument_text_is_the_string_or_json_dumps(value: Any) -> None:
    got = text_or_json(value)
    assert type(got) is str
    assert got == argument_reference(value)


@differential_settings
@given(json_values)
def test_generated_argument_text_is_the_string_or_json_dumps(value: Any) -> None:
    assert text_or_json(value) == argument_reference(value)


@given(st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text()),
    lambda children: st.one_of(
        st.lists(children), st.tuples(children, children),
        st.dictionaries(st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none()), children),
    ),
))
def test_any_json_value_matches_json_dumps(value: Any) -> None:
    assert tojson(value) == reference(value)


# ---------------------------------------------------------------------------------------------------
# orjson (compact_json's encoder) escapes strings as json.dumps does.

def test_orjson_escapes_every_code_point_as_json_dumps() -> None:
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    assert orjson.dumps(every).decode() == reference(every)


@pytest.mark.parametrize("size", [79, 80, 81, 4096])
def test_long_ascii_strings_match_json_dumps(size: int) -> None:
    # From 80 characters an ASCII string is orjson's: each ASCII character, escaped or not, at each side
    # of that length.
    for code in range(128):
        value = (chr(code) * size)[:size]
        assert tojson(value) == reference(value)
        assert tojson("x" * (size - 1) + chr(code)) == reference("x" * (size - 1) + chr(code))


@differential_settings
@given(st.text(st.characters(max_codepoint=0x7F), min_size=70, max_size=300))
def test_generated_long_ascii_strings_match_json_dumps(value: str) -> None:
    assert tojson(value) == reference(value)


REJECTED: list[Any] = [
    object(), {1, 2}, b"bytes", 1j, uuid.UUID(int=1), {(1, 2): "tuple key"}, {"k": object()},
    [lambda: None], 10**5000,
]


@pytest.mark.parametrize("value", REJECTED, ids=lambda v: type(v).__name__)
def test_values_json_dumps_rejects_are_rejected(value: Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        reference(value)
    with pytest.raises((TypeError, ValueError)):
        tojson(value)
    with pytest.raises(InvalidInputError) as info:
        tojson_at(value, "tools[3]")
    assert info.value.path == "tools[3]"


def test_cycles_are_rejected() -> None:
    # json.dumps raises ValueError("Circular reference detected"); the encoder built once keeps no
    # per-call marker table, so it hits the recursion limit instead. Either way: an error, not text.
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError):
        reference(loop)
    with pytest.raises(InvalidInputError):
        tojson_at(loop, "messages[0].tool_calls[0].arguments.x")


# ---------------------------------------------------------------------------------------------------
# The same values through the whole template: in a tool schema and as a tool-call argument.

TEMPLATE_VALUES = [v for v in EDGE_VALUES if not isinstance(v, (LoudInt, LoudFloat, LoudStr, Colour, Flavour))]


def conversation_with(value: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    tools = [{
        "type": "function",
        "function": {
            "name": "f",
            "description": "edge",
            "parameters": {"type": "object", "properties": {"x": {"type": "number", "default": value}}},
        },
    }]
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": {"x": value, "y": [value, {"z": value}]}}},
        ]},
        {"role": "tool", "content": "ok"},
    ]
    return messages, tools


@pytest.mark.jinja
@pytest.mark.parametrize("prepared", [False, True], ids=["plain", "prepared"])
@pytest.mark.parametrize("value", TEMPLATE_VALUES, ids=repr)
def test_edge_values_render_as_the_template_does(value: Any, prepared: bool) -> None:
    messages, tools = conversation_with(value)
    expected = render_jinja("chatml_multi_system.jinja", messages, tools, True)
    assert expected[0] == "ok"
    our_tools = pf.prepare_tools(tools) if prepared else tools
    fmt = pf.get_format("chatml-multi-system")
    assert render_ours(fmt.render, messages, our_tools, True) == expected


def calls_of(values: st.SearchStrategy[Any]) -> st.SearchStrategy[list[list[Any]]]:
    return st.lists(st.lists(values, min_size=1, max_size=12), min_size=1, max_size=5)


@pytest.mark.jinja
@differential_settings
@given(
    st.one_of(calls_of(flat_container), calls_of(st.one_of(flat_container, flat_container, json_values))),
    st.sampled_from(["chatml-multi-system", "chatml-safety"]),
)
def test_many_container_arguments_render_as_the_template_does(calls: list[list[Any]], name: str) -> None:
    # Enough dict and list arguments that the renderer encodes most of them at once, after the turns
    # (the conversations of the other differential tests seldom have that many).
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n, values in enumerate(calls):
        arguments = {f"v{k}": value for k, value in enumerate(values)}
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": f"f{n}", "arguments": arguments}},
        ]})
        messages.append({"role": "tool", "content": "ok"})
    if name == "chatml-multi-system":
        template, fmt = "chatml_multi_system.jinja", pf.get_format(name)
    else:  # the upstream template's rules; the guard (tested on its own) would escape tokens in the values
        template, fmt = "chatml_upstream.jinja", pf.get_format(name, policy="allow")
    expected = render_jinja(template, messages, None, True)
    assert render_ours(fmt.render, messages, None, True) == expected


def indented_reference(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=4)


@differential_settings
@given(value=st.one_of(json_values, st.lists(st.dictionaries(st.text(), json_values, max_size=3), max_size=2)))
def test_indented_plain_json_is_json_dumps_with_indent_4(value: Any) -> None:
    # Exact JSON types (NaN, infinities, floats of every spelling, integer and float keys included).
    from prompt_formats._text.tojson import indented_json, indented_plain_json

    try:
        expected = indented_reference(value)
    except (TypeError, ValueError) as exc:
        with pytest.raises(type(exc)):
            indented_plain_json(value)
        return
    assert indented_plain_json(value) == indented_json(value) == expected


@pytest.mark.parametrize("value", [{"a": math.nan}, [1e-05, 1e16], {"n": None}, {"s": "line\nnext"}, [], {},
                                   [[]], {"k": {}}, 2**70, ["\ud800"], {1: "a"}, {"t": (1, 2)}, b"x"])
def test_indented_plain_json_steps_aside_where_orjson_differs(value: Any) -> None:
    from prompt_formats._text.tojson import indented_plain_json

    try:
        expected = indented_reference(value)
    except (TypeError, ValueError) as exc:
        with pytest.raises(type(exc)):
            indented_plain_json(value)
        return
    assert indented_plain_json(value) == expected
