"""The agent loop of the Nemotron 3 templates: a completion written as the template writes the
assistant turn parses to the reply, and the reply sent back (as OpenAI's API carries it, arguments
as JSON text, decoded as vLLM decodes them) renders to the prompt plus the completion, by Jinja2
and by us."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.serving.test_chatml_serving import PARAMETERS, TOOLS, VALUES, words
from tests.support.nemotron_strategies import nemotron_conversation
from tests.support.nemotron_strategies import options as nemotron_options
from tests.support.oracles import render_jinja_as_transformers, render_ours, templates_of
from tests.support.parser_cases import counting_ids
from tests.support.serving_reference import decode_every_call
from tests.support.strategies import differential_settings

pytestmark = [pytest.mark.jinja]

TEMPLATES = templates_of("nemotron-3-nano", "nemotron-3-super", "nemotron-3.5")
HISTORIES = [
    [{"role": "user", "content": "q"}],
    [{"role": "system", "content": "S"}, {"role": "user", "content": "q"},
     {"role": "assistant", "content": "", "reasoning_content": "plan", "tool_calls": [
         {"type": "function", "function": {"name": "f", "arguments": '{"s": "x", "i": 2}'}}]},
     {"role": "tool", "content": "r"}],
    [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1", "reasoning_content": "t1"},
     {"role": "user", "content": "q2"}],
]


@st.composite
def call_arguments(draw: st.DrawFn) -> dict[str, Any]:
    # (not "z": the template writes null as Python prints it, None, which the family's parser reads as
    # text: only "null" is null to it, as to vLLM's and SGLang's XML parsers)
    keys = draw(st.lists(st.sampled_from(sorted(set(PARAMETERS) - {"z"})), unique=True, max_size=4))
    return {key: draw(VALUES[key]) for key in keys}


def spelled(value: Any) -> str:
    """A value as the template writes it: an object or a list as JSON, anything else as Python prints it."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False) if isinstance(
        value, (dict, list)) else repr(value)


def completion_of(name: str, reasoning: str | None, content: str, calls: list[tuple[str, dict[str, Any]]]) -> str:
    """The assistant turn after the generation prompt, as the template writes it back (``reasoning``:
    the prompt opened a think block, which the reasoning fills; else it closed an empty one)."""
    out = ""
    if reasoning is not None:
        out = reasoning + ("</think>" if name == "nemotron-3.5" else "\n</think>" + ("\n" if content else ""))
    out += content
    if calls:
        out += "\n" + "".join(
            f"<tool_call>\n<function={call}>\n" + "".join(
                f"<parameter={key}>\n{spelled(value)}\n</parameter>\n" for key, value in arguments.items())
            + "</function>\n</tool_call>\n" for call, arguments in calls)
    return out + "<|im_end|>"


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@differential_settings
@given(history=st.sampled_from(HISTORIES), reasoning=words, content=st.one_of(st.just(""), words),
       calls=st.lists(st.tuples(st.sampled_from(["get_weather", "f"]), call_arguments()), max_size=3),
       thinking=st.booleans())
def test_round_trip_through_the_template(name: str, history: list[Any], reasoning: str, content: str,
                                         calls: list[tuple[str, dict[str, Any]]], thinking: bool) -> None:
    fmt, template = pf.get_format(name), TEMPLATES[name]
    options = {} if thinking else {"enable_thinking": False}
    said = reasoning if thinking else None  # thinking off, the prompt closed an empty think block
    prompt = render_jinja_as_transformers(template, decode_every_call(history), TOOLS, True, **options)
    assert prompt is not None and prompt[0] == "ok"
    completion = completion_of(name, said, content, calls)
    reply = fmt.parse(completion, TOOLS, id_factory=counting_ids(), **options)
    assert (reply.malformed, reply.notes) == ((), ())
    assert (reply.reasoning, reply.content or "") == (said, content)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == calls
    sent_back = reply.to_openai()
    expected = ("ok", prompt[1] + completion + "\n")
    decoded = decode_every_call([*history, sent_back])
    assert render_jinja_as_transformers(template, decoded, TOOLS, False, **options) == expected
    assert render_ours(fmt.render, [*history, sent_back], TOOLS, False, decode_tool_arguments=True,
                       **options) == expected


@st.composite
def growing(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[int]]:
    """A conversation (often with assistant turns or tool results before its first user message) and
    the lengths a session renders it at, in order (growing, with a shrink now and then)."""
    messages = draw(nemotron_conversation())
    if messages and draw(st.booleans()):  # turns before the first user message: a new one cuts them all
        lead = draw(st.lists(st.sampled_from([ASSISTANT, TOOL]), min_size=1, max_size=3))
        at = 1 if messages[0].get("role") == "system" else 0
        messages[at:at] = lead
    steps = sorted(draw(st.lists(st.integers(1, max(1, len(messages))), min_size=1, max_size=6)))
    if draw(st.integers(0, 4)) == 0:
        steps.append(draw(st.integers(1, max(1, len(messages)))))
    return messages, steps


ASSISTANT = {"role": "assistant", "content": " a ", "reasoning_content": "r",
             "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"s": "x"}}}]}
TOOL = {"role": "tool", "content": "r"}


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@differential_settings
@given(case=growing(), gen=st.booleans(), data=st.data())
def test_a_session_renders_as_the_template_at_every_step(name: str, case: tuple[list[Any], list[int]], gen: bool,
                                                         data: st.DataObject) -> None:
    # Sessions re-render what a new message can change: the turns from the previous last user message
    # (from the first turn, when there was none) on, the effort note, a tool run's end.
    fmt, template = pf.get_format(name), TEMPLATES[name]
    messages, steps = case
    options = data.draw(nemotron_options(name), label="options")
    session = fmt.session(TOOLS, **options)
    for count in steps:
        expected = render_jinja_as_transformers(template, messages[:count], TOOLS, gen, **options)
        if expected is None:  # the engine fails: ours names the field
            with pytest.raises(pf.InvalidInputError):
                session.render(messages[:count], gen)
            continue
        assert render_ours(session.render, messages[:count], gen) == expected
