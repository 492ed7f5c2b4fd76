"""Gemma 4's template (``gemma-4``) against Jinja2, on generated conversations.

Every case is rendered by our format and by the Jinja2 oracle, fed as transformers feeds it (each
message's ``None``-valued keys dropped, the reasoning aliased, the tokenizer's ``bos_token``): the
texts must be identical; where the template raises (a call's arguments that are no object), ours
raises ``TemplateError`` with its message; where the engine itself fails, ours raises
``InvalidInputError`` naming a field. Expected values come only from the oracle.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support import gemma4_strategies as gs
from tests.support.oracles import render_jinja_as_transformers, render_or_crash
from tests.support.strategies import conversation, differential_settings, lax_tools, tools

pytestmark = [pytest.mark.jinja]

FMT = pf.get_format("gemma-4")


def ours(messages: Any, tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    return render_or_crash(FMT.render, messages, tool_list, gen, **options)


def oracle(messages: Any, tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    found = render_jinja_as_transformers(gs.TEMPLATE, messages, tool_list, gen, **gs.oracle_options(options))
    return ("crash", "") if found is None else found


def test_the_template_is_the_formats_reference() -> None:
    assert f"tests/fixtures/{gs.TEMPLATE}" in (type(FMT).__doc__ or "")


@differential_settings
@given(messages=gs.conversation(), tool_list=gs.tool_list, gen=st.booleans(), options=gs.options())
def test_renders_as_the_models_template(messages: list[Any], tool_list: Any, gen: bool,
                                        options: dict[str, Any]) -> None:
    assert ours(messages, tool_list, gen, options) == oracle(messages, tool_list, gen, options)


@differential_settings
@given(messages=gs.conversation(), tool_list=st.one_of(tools, lax_tools), gen=st.booleans(), options=gs.options())
def test_any_tools_render_as_the_models_template(messages: list[Any], tool_list: Any, gen: bool,
                                                 options: dict[str, Any]) -> None:
    assert ours(messages, tool_list, gen, options) == oracle(messages, tool_list, gen, options)


@differential_settings
@given(messages=conversation(extra_roles=("developer",)), tool_list=tools, gen=st.booleans(), options=gs.options())
def test_agent_shaped_input_renders_as_the_models_template(messages: list[Any], tool_list: Any, gen: bool,
                                                           options: dict[str, Any]) -> None:
    assert ours(messages, tool_list, gen, options) == oracle(messages, tool_list, gen, options)


def test_bos_token_is_the_tokenizers_unless_given() -> None:
    messages = [{"role": "user", "content": "Hi"}]
    expected = "<bos><|turn>user\nHi<turn|>\n"
    assert FMT.render(messages) == FMT.render(messages, bos_token="<bos>") == expected
    with pytest.raises(pf.InvalidInputError, match=r"^bos_token: "):
        FMT.render(messages, bos_token=None)


def _cyclic() -> tuple[dict[str, Any], list[Any]]:
    mapping: dict[str, Any] = {"a": 1}
    mapping["self"] = mapping
    items: list[Any] = [1]
    items.append(items)
    return mapping, items


def test_a_value_that_holds_itself_is_refused_naming_it() -> None:
    # The notation's writer walks with a stack of its own: a cycle would grow it until memory ran out
    # (transformers fails on it too, in its recursion). Shared values that hold no cycle render.
    fmt = pf.get_format("gemma-4")
    mapping, items = _cyclic()
    query = {"role": "user", "content": "q"}

    def called(arguments: Any) -> list[Any]:
        return [query, {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": arguments}}]}]

    for arguments in (mapping, {"a": items}):
        with pytest.raises(pf.InvalidInputError, match="holds itself") as raised:
            fmt.render(called(arguments))
        assert raised.value.path == "messages[1].tool_calls[0].function.arguments"
    schema = {"type": "object", "properties": {"a": {"type": "string", "enum": items}}}
    with pytest.raises(pf.InvalidInputError, match="holds itself"):
        fmt.render([query], [{"type": "function", "function": {"name": "f", "parameters": schema}}])
    shared = [1, 2]
    copies = {"x": [1, 2], "y": [[1, 2], [1, 2]]}
    assert fmt.render(called({"x": shared, "y": [shared, shared]})) == fmt.render(called(copies))
