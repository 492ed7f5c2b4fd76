"""render_spans of the ChatML formats against transformers on the tagged templates (issue 16).

For every generated case: ``.text`` is ``render``'s text and the tagged template's text; under each
``generated=`` policy, ``.generated`` is transformers' generation indices of the assistant turns the
policy selects (the k-th index is the k-th assistant message's: every ChatML assistant message
renders one turn); and the message spans are checked by construction:

- one entry per input message; each range of assistant message k holds its generated range;
- the text outside every message's ranges is the template's own text: each gap is a concatenation of
  the template's literal strings, the roles it writes and the tools' JSON lines;
- each message's text content (trimmed, as the template prints it) appears in its ranges' text;
- messages other than system ones land in input order.

Expected values come only from transformers and the inputs, never from our renderer.
"""

from __future__ import annotations

import itertools
import json
from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support import strategies
from tests.support.oracles import fixture_text, render_jinja
from tests.support.spans_oracle import TAGGED, outcome
from tests.support.strategies import (
    chatml_options,
    conversation,
    differential_settings,
    family_options,
    lax_tools,
    text,
    tools,
)

CASES = [
    ("chatml-multi-system", {}, "chatml_multi_system.jinja"),
    ("chatml-safety", {"policy": "allow"}, "chatml_upstream.jinja"),
    ("qwen3.5", {}, "families/qwen3_5_think.jinja"),
    ("qwen3.5-nothink", {}, "families/qwen3_5_nothink.jinja"),
    ("qwen3.6", {}, "families/qwen3_6.jinja"),
    ("qwen3.8", {}, "families/qwen3_8.jinja"),
    ("qwen3", {}, "families/qwen3.jinja"),
    ("qwen3-instruct-2507", {}, "families/qwen3_instruct_2507.jinja"),
    ("qwen2.5", {}, "families/qwen2_5.jinja"),
    ("qwen3-vl", {}, "families/qwen3_vl.jinja"),
    ("nemotron-3-nano", {}, "families/nemotron_3_nano.jinja"),
    ("nemotron-3-super", {}, "families/nemotron_3_super.jinja"),
    ("nemotron-3-ultra", {}, "families/nemotron_3_ultra.jinja"),
    ("nemotron-3.5", {}, "families/nemotron_3_5.jinja"),
]
POLICIES = ["all", "last", "after_last_user"]
#: The templates that write a content that is no string as nothing (or, Qwen2.5's tool results, as
#: Python prints it): the JSON-call ones.
STRING_CONTENT_TEMPLATES = ("families/qwen3.jinja", "families/qwen3_instruct_2507.jinja", "families/qwen2_5.jinja")


@cache
def template_literals(template: str) -> frozenset[str]:
    """Every literal string of the template (its raw text between tags and its string constants)."""
    import jinja2.nodes
    from transformers.utils.chat_template_utils import _compile_jinja_template

    environment = _compile_jinja_template(fixture_text(template)).environment
    ast = environment.parse(fixture_text(template))
    literals = {node.data for node in ast.find_all(jinja2.nodes.TemplateData)}
    literals |= {node.value for node in ast.find_all(jinja2.nodes.Const) if isinstance(node.value, str)}
    return frozenset(literal for literal in literals if literal)


def nemotron_tools_text(template: str, tool_list: list[Any]) -> str:
    """Nemotron's tools text for ``tool_list`` (its system turn's, without a system message), as the
    reference writes it."""
    found = render_jinja(template, [{"role": "user", "content": ""}], tool_list)
    assert found[0] == "ok", found
    return found[1][len("<|im_start|>system\n"):found[1].rindex("<|im_end|>\n<|im_start|>user\n")]


def made_of(text: str, words: frozenset[str]) -> bool:
    """Whether ``text`` is a concatenation of ``words`` (word break, by dynamic programming)."""
    reachable = [True] + [False] * len(text)
    for end in range(1, len(text) + 1):
        reachable[end] = any(reachable[end - len(w)] and text.endswith(w, 0, end) for w in words if len(w) <= end)
    return reachable[-1]


def expected_generated(roles: list[str], per_assistant: list[tuple[int, int]], policy: str) -> tuple[Any, ...]:
    """The policy, written out from its definition in docs/training-data.md."""
    assistants = [i for i, role in enumerate(roles) if role == "assistant"]
    assert len(assistants) == len(per_assistant)  # one generation block per assistant message
    users = [i for i, role in enumerate(roles) if role == "user"]
    chosen = {
        "all": assistants,
        "last": assistants[-1:],
        "after_last_user": [i for i in assistants if not users or i > users[-1]],
    }[policy]
    return tuple(pair for i, pair in zip(assistants, per_assistant, strict=True) if i in chosen)


def gaps(rendered: pf.RenderedPrompt) -> list[str]:
    """The text outside every message's ranges, as maximal pieces."""
    covered = sorted(pair for ranges in rendered.messages for pair in ranges)
    pieces, at = [], 0
    for start, end in covered:
        if start > at:
            pieces.append(rendered.text[at:start])
        at = max(at, end)
    if at < len(rendered.text):
        pieces.append(rendered.text[at:])
    return pieces


def text_contents(message: Any) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content.strip()]
    if isinstance(content, list):
        return [part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)]
    return []


def check_message_spans(rendered: pf.RenderedPrompt, messages: list[Any], tool_list: Any, template: str,
                        continued: Any = None) -> None:
    """``continued``: the field continue_final_message continues (``None``: off)."""
    assert len(rendered.messages) == len(messages)
    words = template_literals(template) | {"user", "assistant", "system"}
    if isinstance(tool_list, list):
        words |= {json.dumps(tool, ensure_ascii=False) for tool in tool_list}
        if "nemotron" in template:  # the tools spelt as XML: the reference's system turn, from the tools alone
            words |= {nemotron_tools_text(template, tool_list)}
    for piece in gaps(rendered):
        assert made_of(piece, words), piece
    final = messages[-1]["role"] if continued is not None else None
    for index, message in enumerate(messages):
        own = "".join(rendered.text[a:b] for a, b in rendered.messages[index])
        fragments = text_contents(message)
        if final == "system" and message["role"] != "system" and "multi" in template:
            # the cut is in the merged system turn, which comes first: nothing of this message is left
            assert rendered.messages[index] == (), index
            continue
        if index == len(messages) - 1 and continued not in (None, True, "content"):
            continue  # the continued reasoning comes before the content, which the cut leaves out
        if message["role"] == "assistant" and "</think>" in "".join(fragments):
            continue  # the template splits the joined content at "</think>" and may drop what is before
        if message["role"] == "assistant" and "<think>" in "".join(fragments) and "nemotron" in template:
            continue  # before the last user message, Nemotron's drops what follows a "<think>" never closed
        if f"messages[{index}].content" in rendered.dropped:
            continue  # not written: a content the template cannot write
        if template == "families/qwen3_vl.jinja" and message["role"] == "system" and index:
            continue  # Qwen3-VL writes no system message after the first
        if (template in STRING_CONTENT_TEMPLATES or "nemotron" in template) and not isinstance(
                message.get("content"), str):
            continue  # written as nothing, or (Qwen2.5's tool results) as Python prints it
        for fragment in fragments:
            assert fragment.strip() in own, (index, fragment)
    order = [
        ranges
        for message, ranges in zip(messages, rendered.messages, strict=True)
        if message["role"] != "system" and ranges
    ]
    for before, after in itertools.pairwise(order):
        assert before[-1][1] <= after[0][0]


@st.composite
def maybe_continued(draw: st.DrawFn) -> tuple[list[dict[str, Any]], Any]:
    """A conversation and ``continue_final_message``: off (half the cases), or the field it continues,
    then mostly with one more user or assistant message holding that field as text."""
    messages = draw(conversation())
    field = draw(st.sampled_from([None, None, None, True, "content", "reasoning_content", "thinking", "reasoning"]))
    if field is not None and draw(st.integers(0, 4)):
        final = draw(strategies.message(("assistant",) if field not in (True, "content") else ("assistant", "user")))
        name = "content" if field is True else field
        if not isinstance(final.get(name), (str, list)):
            final[name] = draw(text)
        messages.append(final)
    return messages, field


def clipped(ranges: Any, end: int) -> tuple[tuple[int, int], ...]:
    """``ranges`` cut at ``end`` (a prompt cut there by continue_final_message): the empty ones left out."""
    return tuple((a, min(b, end)) for a, b in ranges if a < end and a < min(b, end))


@pytest.mark.jinja
@pytest.mark.parametrize(("name", "config", "template"), CASES)
def test_render_spans_equals_transformers(name: str, config: dict[str, Any], template: str) -> None:
    """Also under continue_final_message: transformers' generation indices (of the tagged text, before
    its cut) cut where the prompt ends; the continued message's range runs to the end of the prompt."""
    fmt = pf.get_format(name, **config)

    @differential_settings
    @given(maybe_continued(), st.one_of(tools, lax_tools), st.booleans(), family_options, st.sampled_from(POLICIES))
    def check(case: tuple[list[Any], Any], tool_list: Any, gen: bool, options: dict[str, Any], policy: str) -> None:
        messages, field = case
        # (Qwen3.5's templates read no preserve_thinking: the format refuses it)
        options = {key: value for key, value in options.items() if key in fmt.options}
        if field is not None:
            gen = gen and field == "content"  # with add_generation_prompt it is refused (below) as transformers does
            options = {**options, "continue_final_message": field}
        expected = outcome(TAGGED[template], messages, tool_list, gen, **options)
        try:
            rendered = fmt.render_spans(messages, tool_list, gen, generated=policy, **options)
        except pf.TemplateError as exc:
            assert expected == ("error", f"TemplateError: {exc}")
            return
        except pf.InvalidInputError as exc:
            if expected[0] == "error" and expected[1].startswith("TypeError: Can only get item pairs"):
                assert exc.path.endswith(".arguments")  # the Qwen templates' `arguments|items` of a non-object
                return
            if expected[0] == "error" and expected[1].startswith(("TypeError: ", "UndefinedError: ")):
                assert exc.path.startswith("messages")  # the engine fails (text concatenated with no string)
                return
            assert field is not None  # transformers' ValueError (continue_final_message)
            if gen:
                assert str(exc).startswith("continue_final_message and add_generation_prompt are not compatible")
            else:
                assert expected == ("error", f"ValueError: {exc}")
            return
        except pf.FormatError as exc:  # transformers' ValueError (continue_final_message)
            assert field is not None
            if gen:  # apply_chat_template's check, which render_jinja_template leaves to it
                assert str(exc).startswith("continue_final_message and add_generation_prompt are not compatible")
            else:
                assert expected == ("error", f"ValueError: {exc}")
            return
        assert expected[0] == "ok", expected
        text, indices = expected[1]
        # its guarantees
        assert rendered == pf.RenderedPrompt(rendered.text, rendered.messages, rendered.generated, rendered.dropped)
        assert rendered.text == text == fmt.render(messages, tool_list, gen, **options)
        roles = [message["role"] for message in messages]
        assert rendered.generated == clipped(expected_generated(roles, indices, policy), len(text))
        check_message_spans(rendered, messages, tool_list, template, field)
        for k, i in enumerate(i for i, role in enumerate(roles) if role == "assistant"):
            for start, end in clipped(indices[k:k + 1], len(text)):
                assert any(a <= start and end <= b for a, b in rendered.messages[i])
        if field is not None and rendered.messages[-1]:  # the continued message runs to the end of the prompt
            assert rendered.messages[-1][-1][1] == len(text)

    check()


@pytest.mark.parametrize("policy", ["first", None, 1])
def test_render_spans_refuses_an_unknown_policy(policy: Any) -> None:
    fmt = pf.get_format("chatml-multi-system")
    with pytest.raises(pf.InvalidInputError, match=r"^generated: expected one of"):
        fmt.render_spans([{"role": "user", "content": "hi"}], generated=policy)


def test_chatml_safety_spans_are_those_of_the_guarded_text() -> None:
    """Under the default (escaping) guard the text is render's, the escaped one; each generated range
    is an assistant turn's body: right after its header, up to and including its end marker."""
    fmt = pf.get_format("chatml-safety")

    @differential_settings
    @given(conversation(), tools, st.booleans(), chatml_options)
    def check(messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> None:
        try:
            text = fmt.render(messages, tool_list, gen, **options)
        except pf.FormatError as exc:
            with pytest.raises(type(exc), match=None) as raised:
                fmt.render_spans(messages, tool_list, gen, **options)
            assert str(raised.value) == str(exc)
            return
        rendered = fmt.render_spans(messages, tool_list, gen, **options)
        assert rendered == pf.RenderedPrompt(rendered.text, rendered.messages, rendered.generated, rendered.dropped)
        assert rendered.text == text
        assistants = [i for i, message in enumerate(messages) if message["role"] == "assistant"]
        assert len(rendered.generated) == len(assistants)
        for (start, end), index in zip(rendered.generated, assistants, strict=True):
            assert text.endswith("<|im_start|>assistant\n", 0, start)
            assert text.endswith("<|im_end|>", 0, end) and text[end] == "\n"
            assert rendered.messages[index] == ((start, end),)

    check()


@pytest.mark.parametrize("policy", ["escape", "reject"])
def test_chatml_safety_spans_equal_those_of_the_guarded_messages(policy: str) -> None:
    """``render_spans`` under the guard (whichever path it takes) gives what the unguarded renderer
    gives for the tools and messages the guard returns (the checked path), or the same error:
    control tokens drawn into every untrusted field."""
    from prompt_formats.formats.chatml.untrusted import CHATML_READING
    from tests.support.guard_cases import sprinkle

    fmt = pf.get_format("chatml-safety", policy=policy)
    unguarded = pf.get_format("chatml-safety", policy="allow")

    @differential_settings
    @given(st.data(), conversation(), tools, st.booleans(), chatml_options)
    def check(data: st.DataObject, messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> None:
        messages, tool_list = sprinkle(data, messages, tool_list)
        try:
            guarded_tools = fmt.guard.guard_tools(tool_list)
            checked = unguarded.render_spans(fmt.guard.guard_messages(messages, CHATML_READING), guarded_tools,
                                             gen, **options)
        except pf.FormatError as exc:
            with pytest.raises(type(exc)) as raised:
                fmt.render_spans(messages, tool_list, gen, **options)
            assert str(raised.value) == str(exc)
            return
        assert fmt.render_spans(messages, tool_list, gen, **options) == checked

    check()


class _NeverEqual(str):
    """A role whose own ``==`` and ``!=`` lie: the walk, as transformers, reads its plain text."""

    def __eq__(self, other: object) -> bool:
        return False

    def __ne__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


@pytest.mark.parametrize("name", ["chatml-multi-system", "qwen3.6", "qwen3.8"])
def test_an_assistant_role_given_as_a_str_subclass_loses_what_a_str_role_loses(name: str) -> None:
    fmt = pf.get_format(name)
    reply = {"content": "a", "reasoning_content": "r", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]}
    query = {"role": "user", "content": "q"}
    plain = fmt.render_spans([query, {"role": "assistant", **reply}], None, True)
    posing = fmt.render_spans([query, {"role": _NeverEqual("assistant"), **reply}], None, True)
    assert (posing.text, posing.dropped) == (plain.text, plain.dropped)
