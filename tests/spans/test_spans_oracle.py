"""The tagged templates are right: the same text as the reference templates, the tags where
docs/training-data.md says.

Both renders go through transformers' ``render_jinja_template``, so the only difference is the tags.
The tag placement is checked from first principles: on inputs without control markers, the
generated ranges found by searching the text for the literal turn headers and terminators must be
transformers' generation indices, and a few cases are pinned by hand.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.support import nemotron_strategies
from tests.support.spans_oracle import (
    TAGGED,
    fixed_today,
    gpt_kwargs,
    gpt_oss_conversation,
    gpt_tools,
    outcome,
    render_with_generation,
)
from tests.support.strategies import EXAMPLES, chatml_options, conversation, differential_settings, lax_tools, tools

pytestmark = [pytest.mark.jinja]

# The placement checks repeat the text checks' renders on a quarter of the cases (many are refused by
# the template and filtered out, which makes each case dearer).
placement_settings = settings(
    max_examples=max(100, EXAMPLES // 4), deadline=None, suppress_health_check=[HealthCheck.filter_too_much]
)
CHATML = ["chatml_multi_system.jinja", "chatml_upstream.jinja", *(f"families/{name}.jinja" for name in (
    "qwen3_5_think", "qwen3_5_nothink", "qwen3_6", "qwen3_8"))]
CHATML_HEADER, CHATML_END = "<|im_start|>assistant\n", "<|im_end|>"
HARMONY_HEADER, HARMONY_ENDS = "<|start|>assistant", ("<|end|>", "<|call|>", "<|return|>")


def chatml_generated_by_search(rendered: str) -> list[tuple[int, int]]:
    """From right after each ``<|im_start|>assistant\\n`` up to and including the next ``<|im_end|>``;
    a header with no ``<|im_end|>`` after it is the trailing generation prompt."""
    found = []
    at = rendered.find(CHATML_HEADER)
    while at >= 0:
        start = at + len(CHATML_HEADER)
        end = rendered.find(CHATML_END, start)
        if end >= 0:
            found.append((start, end + len(CHATML_END)))
        at = rendered.find(CHATML_HEADER, start)
    return found


def harmony_generated_by_search(rendered: str) -> list[tuple[int, int]]:
    """From right after each ``<|start|>assistant`` up to and including the first terminator after it."""
    found = []
    at = rendered.find(HARMONY_HEADER)
    while at >= 0:
        start = at + len(HARMONY_HEADER)
        ends = [(i, t) for t in HARMONY_ENDS if (i := rendered.find(t, start)) >= 0]
        if ends:
            index, terminator = min(ends)
            found.append((start, index + len(terminator)))
        at = rendered.find(HARMONY_HEADER, start)
    return found


def scrub(value: Any) -> Any:
    """``value`` with every ``<|`` in its strings (keys included) made ``<!``: no control marker left
    for the text search to mistake for the template's own."""
    if isinstance(value, str):
        return value.replace("<|", "<!")
    if isinstance(value, dict):
        return {scrub(key): scrub(item) for key, item in value.items()}
    if isinstance(value, list):
        return [scrub(item) for item in value]
    return value


def untagged_outcome(template: str, *args: Any, **kwargs: Any) -> Any:
    result = outcome(template, *args, **kwargs)
    return result if result[0] == "error" else ("ok", result[1][0])


def tagged_outcome(template: str, *args: Any, **kwargs: Any) -> Any:
    result = outcome(TAGGED[template], *args, **kwargs)
    return result if result[0] == "error" else ("ok", result[1][0])


# ---------------------------------------------------------------------------------------------------
# ChatML


@pytest.mark.parametrize("template", CHATML)
def test_chatml_tagged_template_renders_the_reference_text(template: str) -> None:
    @differential_settings
    @given(conversation(), st.one_of(tools, lax_tools), st.booleans(), chatml_options)
    def check(messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> None:
        untagged = untagged_outcome(template, messages, tool_list, gen, **options)
        assert tagged_outcome(template, messages, tool_list, gen, **options) == untagged

    check()


@pytest.mark.parametrize("template", CHATML)
def test_chatml_tags_match_the_definition_on_marker_free_inputs(template: str) -> None:
    @placement_settings
    @given(conversation(), tools, st.booleans(), chatml_options)
    def check(messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> None:
        result = outcome(TAGGED[template], scrub(messages), scrub(tool_list), gen, **options)
        assume(result[0] == "ok")
        rendered, indices = result[1]
        assert indices == chatml_generated_by_search(rendered)

    check()


def test_chatml_generation_by_hand() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
        },
        {"role": "tool", "content": "sunny"},
        {"role": "assistant", "content": "Sunny.", "reasoning_content": "easy"},
    ]
    rendered, indices = render_with_generation(TAGGED[CHATML[0]], messages, add_generation_prompt=False)
    assert [rendered[a:b] for a, b in indices] == [
        "<think>\n\n</think>\n\nChecking.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n"
        "</parameter>\n</function>\n</tool_call><|im_end|>",
        "<think>\neasy\n</think>\n\nSunny.<|im_end|>",
    ]
    for start, end in indices:
        assert rendered[start - len(CHATML_HEADER) : start] == CHATML_HEADER
        assert rendered[end : end + 1] == "\n"  # the newline after <|im_end|> is not generated


def test_chatml_generation_prompt_is_not_generated() -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Bye"},
    ]
    rendered, indices = render_with_generation(TAGGED[CHATML[1]], messages, add_generation_prompt=True)
    assert rendered.endswith("<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n<think>\n")
    assert [rendered[a:b] for a, b in indices] == ["Hello<|im_end|>"]  # before the last query: no think block


# ---------------------------------------------------------------------------------------------------
# gpt-oss

GPT_OSS = "gpt_oss.jinja"


def test_gpt_oss_tagged_template_renders_the_reference_text() -> None:
    @differential_settings
    @given(gpt_oss_conversation(), st.one_of(st.none(), gpt_tools), st.booleans(), gpt_kwargs)
    def check(messages: list[Any], tool_list: Any, gen: bool, kwargs: dict[str, Any]) -> None:
        with fixed_today():
            untagged = untagged_outcome(GPT_OSS, messages, tool_list, gen, **kwargs)
            assert tagged_outcome(GPT_OSS, messages, tool_list, gen, **kwargs) == untagged

    check()


def test_gpt_oss_tags_match_the_definition_on_marker_free_inputs() -> None:
    @placement_settings
    @given(gpt_oss_conversation(), st.one_of(st.none(), gpt_tools), st.booleans(), gpt_kwargs)
    def check(messages: list[Any], tool_list: Any, gen: bool, kwargs: dict[str, Any]) -> None:
        result = outcome(TAGGED[GPT_OSS], scrub(messages), tool_list, gen, **scrub(kwargs))
        assume(result[0] == "ok")
        rendered, indices = result[1]
        assert indices == harmony_generated_by_search(rendered)

    check()


def test_gpt_oss_generation_by_hand() -> None:
    messages = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "thinking": "Need a tool.",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
        },
        {"role": "tool", "content": "sunny"},
        {"role": "assistant", "content": "Sunny.", "thinking": "Done."},
    ]
    rendered, indices = render_with_generation(TAGGED[GPT_OSS], messages)
    # The last assistant message, without a generation prompt, is training data: analysis kept, <|return|>.
    assert [rendered[a:b] for a, b in indices] == [
        ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Oslo"}<|call|>',
        "<|channel|>analysis<|message|>Done.<|end|>",
        "<|channel|>final<|message|>Sunny.<|return|>",
    ]
    for start, _ in indices:
        assert rendered[start - len(HARMONY_HEADER) : start] == HARMONY_HEADER
    assert 'functions.get_weather to=assistant<|channel|>commentary<|message|>"sunny"<|end|>' in rendered

    rendered, indices = render_with_generation(TAGGED[GPT_OSS], messages[:3], add_generation_prompt=True)
    # Before a final answer comes, the tool-calling turn keeps its analysis; the prompt's tail is not generated.
    assert [rendered[a:b] for a, b in indices] == [
        "<|channel|>analysis<|message|>Need a tool.<|end|>",
        ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Oslo"}<|call|>',
    ]
    assert rendered.endswith("<|end|><|start|>assistant") and indices[-1][1] < len(rendered) - len(HARMONY_HEADER)


# ---------------------------------------------------------------------------------------------------
# Nemotron: on their own conversations, tools and options (tests/support/nemotron_strategies.py) and on
# the ChatML ones. Every assistant message renders one turn, so there is one range per assistant message
# after the system prompt; and every such turn's text is, in the untagged template, partly one
# concatenation (header, text and end), which the tagged copy splits: the text checks prove the split.

NEMOTRON = list(nemotron_strategies.FIXTURES.values())
nemotron_messages = st.one_of(nemotron_strategies.nemotron_conversation(), conversation(extra_roles=("developer",)))
nemotron_tool_lists = st.one_of(nemotron_strategies.nemotron_tools, tools, lax_tools)


@pytest.mark.parametrize("template", NEMOTRON)
def test_nemotron_tagged_template_renders_the_reference_text(template: str) -> None:
    @differential_settings
    @given(nemotron_messages, nemotron_tool_lists, st.booleans(), nemotron_strategies.any_options)
    def check(messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> None:
        untagged = untagged_outcome(template, messages, tool_list, gen, **options)
        assert tagged_outcome(template, messages, tool_list, gen, **options) == untagged

    check()


@pytest.mark.parametrize("template", NEMOTRON)
def test_nemotron_tags_match_the_definition_on_marker_free_inputs(template: str) -> None:
    @placement_settings
    @given(nemotron_messages, nemotron_tool_lists, st.booleans(), nemotron_strategies.any_options)
    def check(messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> None:
        result = outcome(TAGGED[template], scrub(messages), scrub(tool_list), gen, **options)
        assume(result[0] == "ok")
        rendered, indices = result[1]
        assert indices == chatml_generated_by_search(rendered)
        after_system = messages[1:] if messages[:1] and messages[0]["role"] == "system" else messages
        assert len(indices) == sum(message["role"] == "assistant" for message in after_system)

    check()


NEMOTRON_BY_HAND = [
    {"role": "system", "content": "S"},
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": " Checking.", "reasoning_content": "Need a tool.",
     "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]},
    {"role": "tool", "content": "sunny"},
    {"role": "assistant", "content": "Sunny."},
    {"role": "user", "content": "Thanks"},
    {"role": "assistant", "content": "<think>\nok\n</think>\nBye."},
]
CALL = ("<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>\n"
        "<|im_end|>")


@pytest.mark.parametrize("template", NEMOTRON)
@pytest.mark.parametrize("truncate", [True, False])
def test_nemotron_generation_by_hand(template: str, truncate: bool) -> None:
    rendered, indices = render_with_generation(TAGGED[template], NEMOTRON_BY_HAND, add_generation_prompt=True,
                                               truncate_history_thinking=truncate)
    nano = "nano" in template or "super" in template  # Ultra's and 3.5's reasoning has no newline before </think>
    first = ("<think></think>Checking.\n" if nano else "<think></think> Checking.\n") if truncate else (
        "<think>\nNeed a tool.\n</think>\n Checking.\n" if nano else "<think>\nNeed a tool.</think> Checking.\n")
    assert [rendered[a:b] for a, b in indices] == [
        first + CALL, "<think></think>Sunny.<|im_end|>", "<think>\nok\n</think>\nBye.<|im_end|>"]
    for start, end in indices:
        assert rendered[start - len(CHATML_HEADER) : start] == CHATML_HEADER
        assert rendered[end : end + 1] == "\n"  # the newline after <|im_end|> is not generated
    prompt = "\n<|im_start|>assistant\n<think>\n"  # the generation prompt: not generated
    assert rendered.endswith("Bye.<|im_end|>" + prompt) and indices[-1][1] == len(rendered) - len(prompt)
