"""The fast path of the ChatML formats' usual input (``formats/chatml/lean.py``) against Jinja2.

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

import prompt_formats as pf
from prompt_formats.formats.chatml.lean import lean_prompt
from prompt_formats.formats.chatml.tokens import CONTROL_TOKENS
from prompt_formats.formats.chatml.untrusted import CHATML_READING
from tests.support.oracles import render_jinja
from tests.support.strategies import chatml_options, conversation, differential_settings, tools

TEMPLATE = "chatml_multi_system.jinja"
UPSTREAM = "chatml_upstream.jinja"
REJECT = pf.get_format("chatml-safety", policy="reject").guard
LEAD = REJECT.fast_path(CHATML_READING).lead

# Text with the template's own markers and the whitespace it trims: the merge, the last-query test
# and the <think> split must all read it as the template does.
words = st.one_of(
    st.sampled_from([" ", "\n", "<think>", "</think>", "<tool_response>", "</tool_response>", "x", "é", "😀"]),
    st.sampled_from(CONTROL_TOKENS), st.text(max_size=5))
usual_text = st.lists(words, max_size=5).map("".join)
scalar = st.one_of(usual_text, st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
                   st.booleans(), st.none())
value = st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(usual_text, inner, max_size=3)), max_leaves=6)
text_part = st.builds(lambda t: {"type": "text", "text": t}, usual_text)
image_part = st.sampled_from([{"type": "image", "image": "a.png"}, {"type": "image_url", "image_url": {"url": "u"}},
                              {"image": "b.png"}])
user_content = st.one_of(usual_text, st.lists(st.one_of(text_part, image_part), max_size=3))
system_content = st.one_of(usual_text, st.none(), st.lists(text_part, max_size=2))
arguments = st.one_of(st.dictionaries(usual_text, value, max_size=4), usual_text.map(lambda t: f'{{"q": "{t}"}}'),
                      st.none())


@st.composite
def usual_call(draw: st.DrawFn) -> dict[str, Any]:
    body: dict[str, Any] = {"name": draw(st.sampled_from(["get_weather", "search", "x y"]))}
    if draw(st.integers(0, 5)):
        body["arguments"] = draw(arguments)
    if draw(st.booleans()):
        return {"id": "call_1", "type": "function", "function": body}
    return body


@st.composite
def usual_assistant(draw: st.DrawFn) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": draw(st.one_of(usual_text, st.none()))}
    if draw(st.booleans()):
        message["reasoning_content"] = draw(usual_text)
    if draw(st.booleans()):
        message["tool_calls"] = draw(st.lists(usual_call(), max_size=3))
    return message


@st.composite
def usual_conversation(draw: st.DrawFn, strict: bool = False) -> list[dict[str, Any]]:
    """A conversation of the usual shape, with at least one real user query (a plain text one first);
    ``strict``: one system message at most, the first (the upstream template's)."""
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(system_content)})
    messages.append({"role": "user", "content": "hello"})
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["user", "assistant", "tool", *(() if strict else ("system",))]))
        if kind == "assistant":
            messages.append(draw(usual_assistant()))
        elif kind == "tool":
            messages.append({"role": "tool", "content": draw(st.one_of(usual_text, st.lists(text_part, max_size=2)))})
        else:
            messages.append({"role": kind, "content": draw(user_content if kind == "user" else system_content)})
    return messages


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


def without_lead(value: Any) -> Any:
    """``value`` with the guard's lead taken out of every string in it (keys too)."""
    if isinstance(value, str):
        return value.replace(LEAD, "")
    if isinstance(value, dict):
        return {without_lead(k): without_lead(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_lead(item) for item in value]
    return value


def untrusted_without_lead(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The guard's lead taken out of what it reads: every message but the assistant's, and tool calls."""
    return [({**m, "tool_calls": without_lead(m["tool_calls"])} if "tool_calls" in m else m)
            if m["role"] == "assistant" else without_lead(m) for m in messages]


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
