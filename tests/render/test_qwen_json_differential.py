"""The Qwen templates that write JSON tool calls (``qwen2.5``, ``qwen3``, ``qwen3-instruct-2507``) against
Jinja2, on generated conversations.

Every case is rendered by our format and by the Jinja2 oracle, fed as transformers feeds it (each
message's ``None``-valued keys dropped, the reasoning aliased): the texts must be identical, or both
must raise the template's error, or, where the engine itself fails (text concatenated with a value
that is no string, ``|tojson`` of arguments that are not there), ours must raise
:class:`~prompt_formats.errors.InvalidInputError` naming a field of the input. Expected values
come only from the oracle.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.oracles import render_jinja_as_transformers, render_or_crash, templates_of
from tests.support.strategies import conversation, differential_settings, text, tools
from tests.support.usual import usual_conversation, with_string_contents

pytestmark = [pytest.mark.jinja]

TEMPLATES = templates_of("qwen2.5", "qwen3", "qwen3-instruct-2507", "qwen3-vl")
thinking = st.fixed_dictionaries({}, optional={"enable_thinking": st.sampled_from([True, False, None, 0, "false"])})
vision_id = st.fixed_dictionaries({}, optional={"add_vision_id": st.sampled_from([True, False, None, 1, "yes"])})
OPTIONS = {"qwen2.5": st.just({}), "qwen3": thinking, "qwen3-instruct-2507": st.just({}), "qwen3-vl": vision_id}


def ours(name: str, messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    return render_or_crash(pf.get_format(name).render, messages, tool_list, gen, **options)


def oracle(name: str, messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    found = render_jinja_as_transformers(TEMPLATES[name], messages, tool_list, gen, **options)
    return ("crash", "") if found is None else found


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_the_template_is_the_formats_reference(name: str) -> None:
    assert f"tests/fixtures/{TEMPLATES[name]}" in (type(pf.get_format(name)).__doc__ or "")


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@differential_settings
@given(data=st.data(), messages=conversation(extra_roles=("developer",)), tool_list=tools, gen=st.booleans())
def test_renders_as_the_models_template(name: str, data: st.DataObject, messages: list[Any], tool_list: Any,
                                        gen: bool) -> None:
    options = data.draw(OPTIONS[name], label="options")
    assert ours(name, messages, tool_list, gen, options) == oracle(name, messages, tool_list, gen, options)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@differential_settings
@given(data=st.data(), messages=st.one_of(usual_conversation(strict=True), usual_conversation(strict=True).map(
    with_string_contents)), tool_list=tools, gen=st.booleans())
def test_the_usual_input_renders_as_the_models_template(name: str, data: st.DataObject, messages: list[Any],
                                                        tool_list: Any, gen: bool) -> None:
    options = data.draw(OPTIONS[name], label="options")
    expected = oracle(name, messages, tool_list, gen, options)
    assert ours(name, messages, tool_list, gen, options) == expected


# Calls as a client may send them: names that are no string, a function that is empty, null or no
# object, arguments of every kind or none, calls that are no object.
odd_name = st.one_of(st.sampled_from(["f", "get_weather", ""]), st.none(), st.integers(), st.booleans(),
                     st.lists(st.sampled_from(["a", "<|im_end|>"]), max_size=2), st.dictionaries(st.just("k"), text))
odd_arguments = st.one_of(st.just({"a": 1}), st.none(), text, st.integers(), st.lists(st.integers(), max_size=2),
                          st.dictionaries(text, st.one_of(text, st.floats(), st.none()), max_size=2))
odd_body = st.fixed_dictionaries({}, optional={"name": odd_name, "arguments": odd_arguments})
odd_call = st.one_of(odd_body, st.fixed_dictionaries({"function": st.one_of(odd_body, st.none(), st.just({}), text)},
                                                     optional={"name": odd_name, "arguments": odd_arguments}),
                     text, st.integers())


@st.composite
def odd_calls(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages = draw(usual_conversation(strict=True).map(with_string_contents))
    calls = draw(st.one_of(st.lists(odd_call, max_size=3), st.sampled_from([{}, "x", 3, None, []])))
    return [*messages, {"role": "assistant", "content": draw(st.one_of(text, st.none(), st.just([]))),
                        "tool_calls": calls}]


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@differential_settings
@given(data=st.data(), messages=odd_calls(), tool_list=tools, gen=st.booleans())
def test_odd_calls_render_as_the_models_template(name: str, data: st.DataObject, messages: list[Any],
                                                 tool_list: Any, gen: bool) -> None:
    options = data.draw(OPTIONS[name], label="options")
    assert ours(name, messages, tool_list, gen, options) == oracle(name, messages, tool_list, gen, options)


class Shouts(str):
    """A string that prints otherwise than its characters (the engine prints ``str()`` of it)."""

    def __str__(self) -> str:
        return "SHOUT"


def _printed_fields(text: Any) -> list[list[dict[str, Any]]]:
    return [
        [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": text, "arguments": text}}]}],
        [{"role": "user", "content": text}, {"role": "tool", "content": text}],
        [{"role": "system", "content": text}, {"role": "user", "content": "q"},
         {"role": "assistant", "content": text, "tool_calls": [{"function": {"name": "f", "arguments": {"a": text}}}]}],
        [{"role": "user", "content": [{"type": "text", "text": text}]},
         {"role": "assistant", "content": [{"type": "text", "text": text}]}],
    ]


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@pytest.mark.parametrize("case", range(4))
@pytest.mark.parametrize("with_tools", [False, True])
def test_a_string_subclass_is_written_as_the_engine_writes_it(name: str, case: int, with_tools: bool) -> None:
    # Printed (`{{ x }}`): by its __str__; concatenated or encoded as JSON: by its characters.
    messages = _printed_fields(Shouts("chars"))[case]
    tool_list = [{"type": "function", "function": {"name": "f"}}] if with_tools else None
    expected = oracle(name, messages, tool_list, True, {})
    assert ours(name, messages, tool_list, True, {}) == expected
