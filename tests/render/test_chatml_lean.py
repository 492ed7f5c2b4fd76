"""The fast path of the seeds' usual input (``formats/chatml/lean.py``) against Jinja2 (the walk's own
tests of the same input: ``test_chatml_usual.py``).

On the usual input it must give a prompt (else the tests below would test nothing) and that prompt
must be the template's; on any generated input it either steps aside (``None``) or gives the
template's prompt, and where the template raises, it steps aside. Under the guard's lead
(``chatml-safety``) a prompt it gives must also be one the guard's checked path leaves alone: the
guard, even under ``reject``, finds nothing in those messages and tools. Expected values come only
from the oracle.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prompt_formats.formats.chatml.lean import lean_prompt
from prompt_formats.formats.chatml.untrusted import CHATML_READING
from tests.support.oracles import render_jinja
from tests.support.strategies import chatml_options, conversation, differential_settings, tools
from tests.support.usual import LEAD, REJECT, untrusted_without_lead, usual_conversation

TEMPLATE = "chatml_multi_system.jinja"
UPSTREAM = "chatml_upstream.jinja"

template_options = st.fixed_dictionaries({}, optional={
    "enable_thinking": st.sampled_from([True, False, None, 0]),
    "preserve_thinking": st.sampled_from([True, False, None, 1]),
    "add_vision_id": st.sampled_from([True, False, None, 1, ""]),
})


@pytest.mark.jinja
@differential_settings
@given(usual_conversation(), tools, st.booleans(), template_options)
def test_the_usual_input_takes_the_path_and_renders_as_the_template(messages, tool_list, gen, options):
    got = lean_prompt(messages, tool_list, gen, options)
    assert got is not None
    assert ("ok", got) == render_jinja(TEMPLATE, messages, tool_list, gen, **options)


@pytest.mark.jinja
@differential_settings
@given(usual_conversation(strict=True), tools, st.booleans(), template_options)
def test_the_usual_input_takes_the_path_and_renders_as_the_upstream_template(messages, tool_list, gen, options):
    got = lean_prompt(messages, tool_list, gen, options, False)
    assert got is not None
    assert ("ok", got) == render_jinja(UPSTREAM, messages, tool_list, gen, **options)


@pytest.mark.jinja
@differential_settings
@given(usual_conversation(strict=True).map(untrusted_without_lead), tools, st.booleans(), template_options)
def test_the_usual_input_under_the_guard_takes_the_path(messages, tool_list, gen, options):
    # Assistant text keeps its markers (<think> included): it is trusted, so it does not knock the path off.
    got = lean_prompt(messages, tool_list, gen, options, False, LEAD)
    assert got is not None
    assert ("ok", got) == render_jinja(UPSTREAM, messages, tool_list, gen, **options)
    assert REJECT.guard_messages(messages, CHATML_READING) is messages


@pytest.mark.jinja
@differential_settings
@given(conversation(extra_roles=("developer",)), tools, st.booleans(), chatml_options)
def test_any_input_steps_aside_or_renders_as_the_template(messages, tool_list, gen, options):
    got = lean_prompt(messages, tool_list, gen, options)
    if got is not None:
        assert ("ok", got) == render_jinja(TEMPLATE, messages, tool_list, gen, **options)


@pytest.mark.jinja
@differential_settings
@given(conversation(extra_roles=("developer",)), tools, st.booleans(), chatml_options, st.booleans())
def test_any_input_under_the_guard_steps_aside_or_is_what_the_guard_leaves_alone(messages, tool_list, gen,
                                                                                  options, guarded):
    got = lean_prompt(messages, tool_list, gen, options, False, LEAD if guarded else None)
    if got is not None:
        assert ("ok", got) == render_jinja(UPSTREAM, messages, tool_list, gen, **options)
        if guarded:
            assert REJECT.guard_messages(messages, CHATML_READING) is messages  # nothing found, nothing raised


class Text(str):
    pass


USER = {"role": "user", "content": "hi"}


def test_it_steps_aside_where_the_checked_builder_raises_or_reads_more() -> None:
    # Each of these is rendered (or refused) by the checked builder; the fast path must not answer.
    cases: list[tuple[list[Any], Any]] = [
        ([], None),
        ([{"role": "system", "content": "s"}], None),  # no user query
        ([{"role": "assistant", "content": "a"}], None),
        ([{"role": "system", "content": [{"type": "image", "image": "a.png"}]}, USER], None),
        ([{"role": "developer", "content": "d"}, USER], None),
        ([{"role": Text("user"), "content": "hi"}], None),
        ([{"role": "user", "content": Text("hi")}], None),
        ([{"role": "user", "content": [{"type": "video", "video": "v.mp4"}]}], None),
        ([USER, {"role": "assistant", "content": "a", "thinking": "t"}], None),
        ([USER, {"role": "assistant", "content": "a", "tool_calls": [{"name": "f", "arguments": {"x": Text("v")}}]}],
         None),
        ([USER, {"role": "assistant", "content": "a", "tool_calls": [{"name": "f", "arguments": {"x": float("nan")}}]}],
         None),
        ([USER, {"role": "assistant", "content": "a", "tool_calls": [{"name": "f", "arguments": {"x": 10**5000}}]}],
         None),
        ([USER, {"role": "assistant", "content": "a", "tool_calls": [{"name": "f", "arguments": {"x": {1j: 1}}}]}],
         None),
        ([USER, {"role": "assistant", "content": "a", "tool_calls": ({"name": "f"},)}], None),
        ((USER,), None),
        ([USER], "not a list"),
    ]
    for messages, tool_list in cases:
        assert lean_prompt(messages, tool_list, True, {}) is None, messages


def test_under_the_guard_it_steps_aside_for_the_lead_in_whatever_the_guard_reads() -> None:
    token = "<|im_start|>"
    call = {"name": "f", "arguments": {"x": "v"}}
    cases: list[list[Any]] = [
        [{"role": "system", "content": token}, USER],
        [{"role": "user", "content": [{"type": "text", "text": token}]}],
        [{"role": "user", "content": [{"type": "image", "image": "a.png", "text": token}, {"text": "hi"}]}],
        [USER, {"role": "assistant", "content": "a", "tool_calls": [{**call, "name": token}]}],
        [USER, {"role": "assistant", "content": "a", "tool_calls": [{"name": "f", "arguments": {token: "v"}}]}],
        [USER, {"role": "assistant", "content": "a", "tool_calls": [{"name": "f", "arguments": {"x": token}}]}],
        [USER, {"role": "assistant", "content": "a", "tool_calls": [{"name": "f", "arguments": {"x": [token]}}]}],
        [USER, {"role": "assistant", "content": "a", "tool_calls": [{"name": "f", "arguments": f'"{token}"'}]}],
        [USER, {"role": "assistant", "content": "a", "tool_calls": [call]}, {"role": "tool", "content": token}],
        [USER, {"role": "assistant", "content": "a", "tool_calls": [{"name": "f", "arguments": {"x": [[[]]] * 300}}]}],
    ]
    for messages in cases:
        assert lean_prompt(messages, None, True, {}, False, LEAD) is None, messages
    # Trusted assistant text may hold the tokens; so may the text the guard does not read.
    trusted = [USER, {"role": "assistant", "content": token, "reasoning_content": token, "tool_calls": [call]}]
    assert lean_prompt(trusted, None, True, {}, False, LEAD) is not None
