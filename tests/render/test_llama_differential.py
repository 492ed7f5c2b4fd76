"""The Llama 3.1 and 3.2 templates (``llama-3.1``, ``llama-3.2``) against Jinja2, on generated conversations.

Every case is rendered by our format and by the Jinja2 oracle, fed as transformers feeds it (each
message's ``None``-valued keys dropped, the reasoning aliased, the tokenizer's ``bos_token``, the
options as template variables, a ``strftime_now`` fixed to one day): the texts must be identical;
where the template raises, ours raises the same message; where the engine itself fails (a role or a
call's name that is no string, a tool result left out, ``.call`` arguments that are no object of
strings), ours raises ``InvalidInputError`` naming a field. Expected values come only from the oracle.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support import llama_strategies as ls
from tests.support.oracles import render_jinja_as_transformers, render_ours
from tests.support.strategies import conversation, differential_settings, lax_tools, tools

pytestmark = [pytest.mark.jinja]

NAMES = sorted(ls.TEMPLATES)


def ours(name: str, messages: Any, tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    with ls.fixed_day():
        try:
            return render_ours(pf.get_format(name).render, messages, tool_list, gen, **options)
        except pf.InvalidInputError as exc:  # the engine fails: ours names the field (or the option) it fails on
            assert exc.path.startswith(("messages", "tools")) or (
                exc.path == "builtin_tools" and options["builtin_tools"] is None), exc
            return ("crash", "")


def oracle(name: str, messages: Any, tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    found = render_jinja_as_transformers(ls.TEMPLATES[name], messages, tool_list, gen, **ls.oracle_options(options))
    return ("crash", "") if found is None else found


@pytest.mark.parametrize("name", NAMES)
def test_the_template_is_the_formats_reference(name: str) -> None:
    assert f"tests/fixtures/{ls.TEMPLATES[name]}" in (type(pf.get_format(name)).__doc__ or "")


@pytest.mark.parametrize("name", NAMES)
@differential_settings
@given(data=st.data(), messages=ls.conversation(), tool_list=st.one_of(st.none(), tools, lax_tools), gen=st.booleans())
def test_renders_as_the_models_template(name: str, data: st.DataObject, messages: list[Any], tool_list: Any,
                                        gen: bool) -> None:
    options = data.draw(ls.options(name), label="options")
    assert ours(name, messages, tool_list, gen, options) == oracle(name, messages, tool_list, gen, options)


@pytest.mark.parametrize("name", NAMES)
@differential_settings
@given(messages=conversation(extra_roles=("developer",)), tool_list=tools, gen=st.booleans())
def test_agent_shaped_input_renders_as_the_models_template(name: str, messages: list[Any], tool_list: Any,
                                                           gen: bool) -> None:
    assert ours(name, messages, tool_list, gen, {}) == oracle(name, messages, tool_list, gen, {})


def test_the_date_is_3_1s_fixed_one_and_3_2s_today() -> None:
    messages = [{"role": "user", "content": "Hi"}]
    assert "Today Date: 26 Jul 2024\n" in pf.get_format("llama-3.1").render(messages)
    with ls.fixed_day():
        assert "Today Date: 05 Dec 2026\n" in pf.get_format("llama-3.2").render(messages)
    assert "Today Date: 1 Jan 2025\n" in pf.get_format("llama-3.2").render(messages, date_string="1 Jan 2025")


def test_3_2s_today_is_transformers_strftime_now() -> None:
    # The real clock on both sides, read twice around ours: equal unless the day changed between.
    from datetime import datetime

    before = datetime.now().strftime("%d %b %Y")
    text = pf.get_format("llama-3.2").render([{"role": "user", "content": "Hi"}])
    after = datetime.now().strftime("%d %b %Y")
    assert f"Today Date: {before}\n" in text or f"Today Date: {after}\n" in text


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("option", "value"), [("date_string", 5), ("custom_tools", "x"), ("bos_token", 1)])
def test_an_option_the_template_cannot_use_is_refused_by_name(name: str, option: str, value: Any) -> None:
    with pytest.raises(pf.InvalidInputError) as raised:
        pf.get_format(name).render([{"role": "user", "content": "Hi"}], **{option: value})
    assert raised.value.path == option


@pytest.mark.parametrize("name", NAMES)
def test_an_option_item_nested_too_deep_to_read_is_named(name: str) -> None:
    # (found by a review) the option's item, not `messages`, is what the stack could not read
    deep: dict[str, Any] = {}
    for _ in range(5 * sys.getrecursionlimit()):
        deep = {"a": deep}
    tool = {"type": "function", "function": {"name": "f", "parameters": deep}}
    options = [("custom_tools", [{"name": "g"}, tool])]
    if name == "llama-3.1":
        options.append(("builtin_tools", ["x", deep]))
    for option, value in options:
        with pytest.raises(pf.InvalidInputError) as raised:
            pf.get_format(name).render([{"role": "user", "content": "Hi"}], **{option: value})
        assert str(raised.value) == f"{option}[1]: the input or the call stack is too deep"


def test_a_builtin_tool_too_deep_to_print_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    # An item the option's reading took may still be one level too deep to print on this stack.
    from prompt_formats.formats.llama import render as llama_render

    def too_deep_to_print(value: Any, path: str = "messages") -> str:
        raise RecursionError

    monkeypatch.setattr(llama_render, "printed_value", too_deep_to_print)
    with pytest.raises(pf.InvalidInputError) as raised:
        pf.get_format("llama-3.1").render([{"role": "user", "content": "Hi"}], builtin_tools=["code_interpreter", "x"])
    assert str(raised.value) == "builtin_tools[1]: the input or the call stack is too deep"


def test_a_3_2_session_writes_the_new_day_when_the_day_changes() -> None:
    from unittest import mock

    from prompt_formats.formats.llama import options as llama_options

    fmt = pf.get_format("llama-3.2")
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Hi"}]
    with mock.patch.object(llama_options, "today", lambda: "05 Dec 2026"):
        session = fmt.session()
        assert "Today Date: 05 Dec 2026\n" in session.render(messages)
    messages += [{"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "And now?"}]
    with mock.patch.object(llama_options, "today", lambda: "06 Dec 2026"):
        text = session.render(messages, add_generation_prompt=True)
        assert text == fmt.render(messages, add_generation_prompt=True)
    assert "Today Date: 06 Dec 2026\n" in text


@pytest.mark.parametrize("name", NAMES)
def test_an_empty_tool_list_is_offered_tools_in_sessions_and_batches(name: str) -> None:
    # (found by a review) the templates write the tools' header for [] (not for none): sessions and
    # batches read [] as [], not as no tools.
    fmt = pf.get_format(name)
    messages = [{"role": "user", "content": "Hi"}]
    expected = fmt.render(messages, [], date_string=ls.DATE)
    assert "Environment: ipython\n" in expected
    assert fmt.session([], date_string=ls.DATE).render(messages) == expected
    assert fmt.render_batch([messages], tools=[], date_string=ls.DATE) == [expected]


@pytest.mark.parametrize("name", NAMES)
def test_tools_that_are_no_tool_objects_are_refused_with_custom_tools_too(name: str) -> None:
    # (found by a review) transformers takes tool objects only, whatever the template writes
    fmt = pf.get_format(name)
    for call in (fmt.render, fmt.render_spans):
        with pytest.raises(pf.InvalidInputError) as raised:
            call([{"role": "user", "content": "Hi"}], 5, custom_tools=[])
        assert raised.value.path == "tools"


def test_a_call_name_whose_comparison_raises_is_refused() -> None:
    # (found by a review) a name is compared with the built-in tools only as the string it is
    class Loud(str):
        def __eq__(self, other: object) -> bool:
            raise RuntimeError("no")

        __hash__ = str.__hash__

    call = {"type": "function", "function": {"name": Loud("brave_search"), "arguments": {"query": "q"}}}
    text = pf.get_format("llama-3.1").render([{"role": "user", "content": "Hi"}, {"role": "assistant",
                                             "tool_calls": [call]}], builtin_tools=["brave_search"])
    assert text.endswith('<|python_tag|>brave_search.call(query="q")<|eom_id|>')
