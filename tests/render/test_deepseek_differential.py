"""DeepSeek-V3's template (``deepseek-v3``) against Jinja2, on generated conversations.

Every case is rendered by our format and by the Jinja2 oracle, fed as transformers feeds it (each
message's ``None``-valued keys dropped, the reasoning aliased, the tokenizer's ``bos_token``): the
texts must be identical; where the engine itself fails (a text that is no string joined to text:
a ``None`` content, dict arguments), ours raises ``InvalidInputError`` naming a field. (The template
never calls ``raise_exception``.) Expected values come only from the oracle.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support import deepseek_strategies as ds
from tests.support.oracles import assert_second_call_named, render_jinja_as_transformers, render_or_crash
from tests.support.strategies import conversation, differential_settings, lax_tools, tools

pytestmark = [pytest.mark.jinja]

FMT = pf.get_format("deepseek-v3")


def ours(messages: Any, tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    return render_or_crash(FMT.render, messages, tool_list, gen, **options)


def oracle(messages: Any, tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    found = render_jinja_as_transformers(ds.TEMPLATE, messages, tool_list, gen, **ds.oracle_options(options))
    return ("crash", "") if found is None else found


def test_the_template_is_the_formats_reference() -> None:
    assert f"tests/fixtures/{ds.TEMPLATE}" in (type(FMT).__doc__ or "")


@differential_settings
@given(messages=ds.conversation(), tool_list=st.one_of(tools, lax_tools), gen=st.booleans(), options=ds.options())
def test_renders_as_the_models_template(messages: list[Any], tool_list: Any, gen: bool,
                                        options: dict[str, Any]) -> None:
    assert ours(messages, tool_list, gen, options) == oracle(messages, tool_list, gen, options)


@differential_settings
@given(messages=conversation(extra_roles=("developer",)), tool_list=tools, gen=st.booleans())
def test_agent_shaped_input_renders_as_the_models_template(messages: list[Any], tool_list: Any, gen: bool) -> None:
    assert ours(messages, tool_list, gen, {}) == oracle(messages, tool_list, gen, {})


def test_bos_token_is_the_tokenizers_unless_given() -> None:
    messages = [{"role": "user", "content": "Hi"}]
    assert FMT.render(messages) == FMT.render(messages, bos_token=ds.BOS) == ds.BOS + "<｜User｜>Hi"
    assert FMT.render(messages, bos_token="") == "<｜User｜>Hi"


GOOD_CALL = {"type": "function", "function": {"name": "f", "arguments": "{}"}}


@pytest.mark.parametrize(("call", "path"), [
    ("f", "messages[1].tool_calls[1]"),
    ({**GOOD_CALL, "type": None}, "messages[1].tool_calls[1].type"),
    ({"type": "function", "function": "f"}, "messages[1].tool_calls[1].function"),
    ({"type": "function", "function": {"name": 3, "arguments": {}}}, "messages[1].tool_calls[1].function.name"),
    ({"type": "function", "function": {"name": "f", "arguments": {}}}, "messages[1].tool_calls[1].function.arguments"),
])
def test_the_field_the_engine_fails_on_is_named(call: Any, path: str) -> None:
    assert_second_call_named(FMT.render, lambda messages: oracle(messages, None, False, {}), GOOD_CALL, call, path)
