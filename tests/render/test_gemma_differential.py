"""Gemma 3's template (``gemma-3``) against Jinja2, on generated conversations.

Every case is rendered by our format and by the Jinja2 oracle, fed as transformers feeds it (each
message's ``None``-valued keys dropped, the reasoning aliased, the tokenizer's ``bos_token``): the
texts must be identical; where the template raises, ours raises ``TemplateError`` with its message;
where the engine itself fails (no messages, a system message without text, a role that is no
string written as text), ours raises ``InvalidInputError`` naming a field. Expected values come
only from the oracle.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support import gemma_strategies as gs
from tests.support.oracles import render_jinja_as_transformers, render_or_crash
from tests.support.strategies import conversation, differential_settings, lax_tools, tools

pytestmark = [pytest.mark.jinja]

FMT = pf.get_format("gemma-3")


def ours(messages: Any, tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    return render_or_crash(FMT.render, messages, tool_list, gen, **options)


def oracle(messages: Any, tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    found = render_jinja_as_transformers(gs.GEMMA3_TEMPLATE, messages, tool_list, gen, **gs.oracle_options(options))
    return ("crash", "") if found is None else found


def test_the_template_is_the_formats_reference() -> None:
    assert f"tests/fixtures/{gs.GEMMA3_TEMPLATE}" in (type(FMT).__doc__ or "")


@differential_settings
@given(messages=gs.conversation(), tool_list=st.one_of(tools, lax_tools), gen=st.booleans(), options=gs.options())
def test_renders_as_the_models_template(messages: list[Any], tool_list: Any, gen: bool,
                                        options: dict[str, Any]) -> None:
    assert ours(messages, tool_list, gen, options) == oracle(messages, tool_list, gen, options)


@differential_settings
@given(messages=conversation(extra_roles=("developer",)), tool_list=tools, gen=st.booleans())
def test_agent_shaped_input_renders_as_the_models_template(messages: list[Any], tool_list: Any, gen: bool) -> None:
    # The shared conversations: most are refused (a tool loop does not alternate), by the same error.
    assert ours(messages, tool_list, gen, {}) == oracle(messages, tool_list, gen, {})


BY_HAND: list[list[dict[str, Any]]] = [
    [],
    [{"role": "system", "content": "Only system."}],
    [{"role": "system", "content": "  S  "}, {"role": "user", "content": "  u  "}],
    [{"role": "system", "content": [{"type": "image", "text": "from an image part"}, {"type": "text", "text": "x"}]},
     {"role": "user", "content": "u"}],
    [{"role": "system", "content": [{"type": "image"}]}, {"role": "user", "content": "u"}],
    [{"role": "system"}, {"role": "user", "content": "u"}],
    [{"role": "user", "content": "u"}, {"role": "tool", "content": "t"}, {"role": "user", "content": "v"}],
    [{"role": "user", "content": "u"}, {"role": 7, "content": "t"}],
    [{"content": "no role"}],
    [{"role": "user", "content": "u"}, {"content": "no role"}],
    [{"role": "user", "content": [" a ", {"type": "text", "text": None}, {"type": "text"},
                                  {"type": "text", "text": 5}]}],
    [{"role": "user", "content": {"type": "text", "text": "an object"}}],
    [{"role": "user", "content": 3}],
]


@pytest.mark.parametrize("messages", BY_HAND)
@pytest.mark.parametrize("gen", [False, True])
def test_by_hand(messages: list[Any], gen: bool) -> None:
    assert ours(messages, None, gen, {}) == oracle(messages, None, gen, {})


def test_bos_token_is_the_tokenizers_unless_given() -> None:
    messages = [{"role": "user", "content": "Hi"}]
    expected = "<bos><start_of_turn>user\nHi<end_of_turn>\n"
    assert FMT.render(messages) == FMT.render(messages, bos_token="<bos>") == expected
    assert FMT.render(messages, bos_token="").startswith("<start_of_turn>")
    with pytest.raises(pf.InvalidInputError, match=r"^bos_token: "):
        FMT.render(messages, bos_token=None)
