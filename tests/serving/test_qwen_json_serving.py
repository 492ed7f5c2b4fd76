"""The agent loop of the templates that write JSON calls (``qwen3``, ``qwen3-instruct-2507``, ``qwen2.5``):
a completion written as the template writes the assistant turn parses to the reply, and the reply
sent back (as OpenAI's API carries it, arguments as JSON text, decoded as vLLM decodes them) renders
to the prompt plus the completion, by Jinja2 and by us."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.model.arguments import decode_every_call
from tests.support.oracles import render_jinja_as_transformers, render_ours, templates_of
from tests.support.parser_cases import counting_ids
from tests.support.strategies import differential_settings

pytestmark = [pytest.mark.jinja]

TEMPLATES = templates_of("qwen3", "qwen3-instruct-2507", "qwen2.5", "qwen3-vl")
TOOLS = [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
         for name in ("get_weather", "f")]
HISTORIES = [
    [{"role": "user", "content": "q"}],
    [{"role": "system", "content": "S"}, {"role": "user", "content": "q"},
     {"role": "assistant", "content": "", "reasoning_content": "plan", "tool_calls": [
         {"type": "function", "function": {"name": "f", "arguments": '{"s": "x", "i": 2}'}}]},
     {"role": "tool", "content": "r"}],
    [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1", "reasoning_content": "t1"},
     {"role": "user", "content": "q2"}],
]
words = st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters="<>"), min_size=1,
                max_size=8).map(str.strip).filter(bool)
leaf = st.one_of(st.none(), st.booleans(), st.integers(-(10**30), 10**30),
                 st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5))
arguments = st.dictionaries(st.text(max_size=4), st.one_of(leaf, st.lists(leaf, max_size=2)), max_size=3)


def completion_of(reasoning: str | None, content: str, calls: list[tuple[str, dict[str, Any]]]) -> str:
    """The assistant turn after the generation prompt, as the templates write it."""
    out = f"<think>\n{reasoning}\n</think>\n\n" if reasoning is not None else ""
    out += content
    for k, (name, args) in enumerate(calls):
        out += ("\n" if k or content else "") + "<tool_call>\n" + json.dumps(
            {"name": name, "arguments": args}, ensure_ascii=False) + "\n</tool_call>"
    return out + "<|im_end|>"


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@differential_settings
@given(history=st.sampled_from(HISTORIES), reasoning=st.one_of(st.none(), words), content=st.one_of(st.just(""), words),
       calls=st.lists(st.tuples(st.sampled_from(["get_weather", "f"]), arguments), max_size=3),
       thinking=st.booleans())
def test_round_trip_through_the_template(name: str, history: list[Any], reasoning: str | None, content: str,
                                         calls: list[tuple[str, dict[str, Any]]], thinking: bool) -> None:
    fmt, template = pf.get_format(name), TEMPLATES[name]
    options = {"enable_thinking": thinking} if name == "qwen3" else {}
    if name != "qwen3" or not thinking:
        reasoning = None  # the prompt closed the think block, or the template writes no reasoning back
    elif reasoning is None:
        reasoning = ""  # thinking, Qwen3 opens its think block itself, if only to close it
    prompt = render_jinja_as_transformers(template, decode_every_call(history), TOOLS, True, **options)
    assert prompt is not None and prompt[0] == "ok"
    completion = completion_of(reasoning, content, calls)
    reply = fmt.parse(completion, TOOLS, id_factory=counting_ids(), **options)
    assert (reply.malformed, reply.notes) == ((), ())
    assert (reply.reasoning or "", reply.content or "") == (reasoning or "", content)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == calls
    sent_back = reply.to_openai()
    # An empty reply is sent back with content null, which Qwen2.5's template cannot write (it
    # concatenates the content): the engine fails, and ours names the field.
    assume(name != "qwen2.5" or content or calls)
    expected = ("ok", prompt[1] + completion + "\n")
    if name == "qwen3" and not thinking:  # the prompt's empty think block is the one written back
        assert prompt[1].endswith("<think>\n\n</think>\n\n")
    decoded = decode_every_call([*history, sent_back])
    assert render_jinja_as_transformers(template, decoded, TOOLS, False, **options) == expected
    assert render_ours(fmt.render, [*history, sent_back], TOOLS, False, decode_tool_arguments=True,
                       **options) == expected
