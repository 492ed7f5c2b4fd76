"""GLM-4.5's template (``glm-4.5``) against Jinja2, on generated conversations.

Every case is rendered by our format and by the Jinja2 oracle, fed as transformers feeds it (each
message's ``None``-valued keys dropped, the reasoning aliased): the texts must be identical; where the
engine itself fails (a call's name that is no string, arguments that are no object, a tool result it
cannot iterate), ours raises ``InvalidInputError`` naming a field. (The template never calls
``raise_exception``.) Expected values come only from the oracle.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support import glm_strategies as gs
from tests.support.oracles import assert_second_call_named, render_jinja_as_transformers, render_or_crash
from tests.support.strategies import conversation, differential_settings, lax_tools, tools

pytestmark = [pytest.mark.jinja]

FMT = pf.get_format("glm-4.5")


def ours(messages: Any, tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    return render_or_crash(FMT.render, messages, tool_list, gen, **options)


def oracle(messages: Any, tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    found = render_jinja_as_transformers(gs.TEMPLATE, messages, tool_list, gen, **options)
    return ("crash", "") if found is None else found


def test_the_template_is_the_formats_reference() -> None:
    assert f"tests/fixtures/{gs.TEMPLATE}" in (type(FMT).__doc__ or "")


@differential_settings
@given(messages=gs.conversation(), tool_list=st.one_of(tools, lax_tools), gen=st.booleans(), options=gs.options())
def test_renders_as_the_models_template(messages: list[Any], tool_list: Any, gen: bool,
                                        options: dict[str, Any]) -> None:
    assert ours(messages, tool_list, gen, options) == oracle(messages, tool_list, gen, options)


@differential_settings
@given(messages=conversation(extra_roles=("developer",)), tool_list=tools, gen=st.booleans(), options=gs.options())
def test_agent_shaped_input_renders_as_the_models_template(messages: list[Any], tool_list: Any, gen: bool,
                                                           options: dict[str, Any]) -> None:
    assert ours(messages, tool_list, gen, options) == oracle(messages, tool_list, gen, options)


GOOD_CALL = {"type": "function", "function": {"name": "f", "arguments": {"a": "x", "b": 2}}}


@pytest.mark.parametrize(("call", "path"), [
    ("f", "messages[1].tool_calls[1]"),
    ({"type": "function", "function": {"name": 3, "arguments": {}}}, "messages[1].tool_calls[1].function.name"),
    ({"name": None, "arguments": {}}, "messages[1].tool_calls[1].name"),
    ({"type": "function", "function": {"name": "f", "arguments": "{}"}},
     "messages[1].tool_calls[1].function.arguments"),
    ({"type": "function", "function": {"name": "f", "arguments": {"a": {(1, 2): "x"}}}},
     "messages[1].tool_calls[1].function.arguments"),
])
def test_the_field_the_engine_fails_on_is_named(call: Any, path: str) -> None:
    assert_second_call_named(FMT.render, lambda messages: oracle(messages, None, False, {}), GOOD_CALL, call, path)
