"""``render_spans`` and ``strict=True`` under ``continue_final_message`` for the ChatML formats (issue #38, item 14).

The reference is transformers' own ``render_jinja_template(continue_final_message=...)`` on the
fixture templates: ``render_spans(...).text`` is its prompt; ``dropped`` is exactly what that prompt
leaves out, decided by transformers alone (``tests/support/drops.py`` perturbs each input and looks
for it in the output: the cut leaves out what the template prints after the continued text, the
template what it always leaves out); ``strict=True`` refuses exactly the inputs that lose something.
The generated ranges are checked against transformers' generation indices in
``tests/spans/test_chatml_spans.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.drops import assert_dropped_exactly
from tests.support.oracles import fixture_text
from tests.support.strategies import chatml_options, conversation, differential_settings, message, text, tools

MULTI = pf.get_format("chatml-multi-system")
UPSTREAM = pf.get_format("chatml-safety", policy="allow")
FORMATS = {"multi": (MULTI, "chatml_multi_system.jinja"), "upstream": (UPSTREAM, "chatml_upstream.jinja")}
MARKERS = ("<think>", "</think>", "<tool_response>", "</tool_response>")
FIELDS = [True, "content", "reasoning_content", "thinking", "reasoning"]


#: transformers' refusal when the continued text is not found in the rendered prompt.
_NOT_FOUND = "continue_final_message is set but the final message does not appear in the chat"


class CutFoundElsewhere(Exception):
    """transformers found the continued text only thanks to another field's text: perturbing that
    field makes it refuse, so perturbation (``tests/support/drops.py``) cannot tell what is present."""


def continued(template: str, messages: list[Any], tool_list: Any, field: Any, options: dict[str, Any],
              perturbed: bool = False) -> str | None:
    """transformers' prompt continuing ``field`` of the final message, or ``None`` where it raises (the
    messages normalised first, as ``apply_chat_template`` does: ``None``-valued keys dropped).

    ``perturbed``: the input is a perturbation of one that rendered, so transformers' refusal to find
    the continued text means it was found in the text perturbed: :class:`CutFoundElsewhere`."""
    from transformers.utils.chat_template_utils import _normalize_chat_messages, render_jinja_template

    try:
        rendered, _ = render_jinja_template(
            conversations=[_normalize_chat_messages(json.loads(json.dumps(messages)))], tools=tool_list,
            chat_template=fixture_text(template),
            continue_final_message=field, add_generation_prompt=False, **options)
    except Exception as error:
        if perturbed and str(error).startswith(_NOT_FOUND):
            raise CutFoundElsewhere from None
        return None
    return str(rendered[0])


@st.composite
def ending_in(draw: st.DrawFn, field: Any) -> list[Any]:
    """A conversation ending with an assistant, user, tool or system message (the one continued),
    which mostly holds the continued ``field`` as text."""
    messages = draw(conversation())
    for _ in range(draw(st.integers(0, 2))):
        messages.insert(draw(st.integers(0, len(messages))), draw(message(("assistant",))))
    roles = ("assistant",) if field not in (True, "content") else ("assistant", "assistant", "user", "tool", "system")
    final = draw(message((draw(st.sampled_from(roles)),)))
    name = "content" if field is True else field
    if not isinstance(final.get(name), (str, list)) and draw(st.integers(0, 9)):
        final[name] = draw(text)
    messages.append(final)
    return messages


@st.composite
def continued_cases(draw: st.DrawFn) -> tuple[list[Any], Any]:
    field = draw(st.sampled_from(FIELDS))
    return draw(ending_in(field)), field


def check_case(name: str, messages: list[Any], tool_list: Any, field: Any, options: dict[str, Any]) -> None:
    fmt, template = FORMATS[name]
    options = {**options, "continue_final_message": field}
    template_options = {key: value for key, value in options.items() if key != "continue_final_message"}
    expected = continued(template, messages, tool_list, field, template_options)
    if expected is None:
        with pytest.raises(pf.FormatError):
            fmt.render_spans(messages, tool_list, **options)
        with pytest.raises(pf.FormatError):
            fmt.render(messages, tool_list, strict=True, **options)
        return
    rendered = fmt.render_spans(messages, tool_list, **options)
    assert rendered.text == expected == fmt.render(messages, tool_list, **options)

    def oracle(messages: list[Any], tool_list: Any) -> str | None:
        return continued(template, messages, tool_list, field, template_options, perturbed=True)

    try:
        assert_dropped_exactly(oracle, messages, tool_list, rendered.dropped, content_markers=MARKERS)
    except CutFoundElsewhere:
        # E.g. a final assistant content '<think>\n</think>\n\n<think>x', which the template rewrites,
        # found only in an earlier message holding the same text: a case perturbation cannot decide.
        assume(False)
    if rendered.dropped:
        with pytest.raises(pf.InvalidInputError) as info:
            fmt.render(messages, tool_list, strict=True, **options)
        assert info.value.path == rendered.dropped[0]
        with pytest.raises(pf.InvalidInputError):
            fmt.render_spans(messages, tool_list, strict=True, **options)
    else:
        assert fmt.render(messages, tool_list, strict=True, **options) == expected
        assert fmt.render_spans(messages, tool_list, strict=True, **options) == rendered


@pytest.mark.jinja
@differential_settings
@given(continued_cases(), tools, chatml_options, st.sampled_from(sorted(FORMATS)))
def test_dropped_is_what_the_continued_prompt_leaves_out(case, tool_list, options, name):
    messages, field = case
    check_case(name, messages, tool_list, field, options)


Q = {"role": "user", "content": "Q"}
CALL = {"type": "function", "function": {"name": "f", "arguments": {"x": "1"}}}


@pytest.mark.jinja
@pytest.mark.parametrize("name", sorted(FORMATS))
@pytest.mark.parametrize(
    ("messages", "field"),
    [
        # nothing after the continued text
        ([Q, {"role": "assistant", "content": "The answer is "}], True),
        ([Q, {"role": "assistant", "content": "A", "reasoning_content": "R"}], "content"),
        ([Q, {"role": "user", "content": [{"type": "text", "text": "Tell me "}, {"type": "image"}]}], True),
        ([Q, {"role": "assistant", "content": "", "tool_calls": [CALL]}, {"role": "tool", "content": "r "}], True),
        # the calls come after the content, the content after the reasoning: the cut leaves them out
        ([Q, {"role": "assistant", "content": "A", "tool_calls": [CALL]}], True),
        ([Q, {"role": "assistant", "content": "A", "reasoning_content": "R"}], "reasoning_content"),
        ([Q, {"role": "assistant", "content": "A", "reasoning": "R", "tool_calls": [CALL]}], "reasoning"),
        ([Q, {"role": "assistant", "content": " ", "thinking": "R"}], "thinking"),
        # and what the template leaves out anyway
        ([Q, {"role": "assistant", "content": "A", "reasoning_content": "R"}, Q,
          {"role": "assistant", "content": "B"}], True),
    ],
)
def test_examples(name: str, messages: list[Any], field: Any) -> None:
    check_case(name, messages, None, field, {})


@pytest.mark.jinja
def test_a_system_message_continued_cuts_every_turn_after_the_system_turn() -> None:
    messages = [Q, {"role": "assistant", "content": "A"}, {"role": "system", "content": "Be brief. "}]
    check_case("multi", messages, None, True, {})
    rendered = MULTI.render_spans(messages, continue_final_message=True)
    assert rendered.text == "<|im_start|>system\nBe brief."
    assert rendered.messages == ((), (), ((len("<|im_start|>system\n"), len(rendered.text)),))
    assert rendered.generated == ()
    assert rendered.dropped == ("messages[0].content", "messages[1].content")


def test_the_continued_assistant_message_is_generated_to_the_end_of_the_prompt() -> None:
    messages = [Q, {"role": "assistant", "content": "A", "tool_calls": [CALL]}]
    for fmt, _ in FORMATS.values():
        rendered = fmt.render_spans(messages, continue_final_message=True)
        start = rendered.text.index("<|im_start|>assistant\n") + len("<|im_start|>assistant\n")
        assert rendered.text[start:] == "<think>\n\n</think>\n\nA"
        turn = ((start, len(rendered.text)),)
        assert rendered.messages[1] == turn and rendered.generated == turn
        assert rendered.dropped == ("messages[1].tool_calls",)
        assert rendered.assistant_mask() == bytearray(start) + b"\x01" * (len(rendered.text) - start)


@pytest.mark.jinja
@pytest.mark.parametrize("name", sorted(FORMATS))
def test_text_holding_the_tag_is_refused(name: str) -> None:
    """transformers cuts at the last "CONTINUE_FINAL_MESSAGE_TAG" of the prompt: where the input holds that
    text, render gives transformers' prompt, and render_spans refuses to guess what the cut left out."""
    fmt, template = FORMATS[name]
    for messages in (
        [{"role": "user", "content": "Say CONTINUE_FINAL_MESSAGE_TAG"}, {"role": "assistant", "content": "OK"}],
        [Q, {"role": "assistant", "content": "A", "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": {"x": "CONTINUE_FINAL_MESSAGE_TAG"}}}]}],
    ):
        assert fmt.render(messages, continue_final_message=True) == continued(template, messages, None, True, {})
        with pytest.raises(pf.InvalidInputError, match=r"^messages\[[01]\]\.(content|tool_calls): holds "):
            fmt.render_spans(messages, continue_final_message=True)


@pytest.mark.parametrize("policy", ["escape", "reject"])
def test_under_the_guard_render_spans_gives_renders_text(policy: str) -> None:
    """chatml-safety's guard (whichever path render takes) with continue_final_message: render_spans'
    text is render's, or both raise the same error; its ranges are those of the guarded messages."""
    from prompt_formats.formats.chatml.untrusted import CHATML_READING
    from tests.support.guard_cases import sprinkle

    fmt = pf.get_format("chatml-safety", policy=policy)

    @differential_settings
    @given(st.data(), continued_cases(), tools, chatml_options)
    def check(data: st.DataObject, case: tuple[list[Any], Any], tool_list: Any, options: dict[str, Any]) -> None:
        messages, field = case
        messages, tool_list = sprinkle(data, messages, tool_list)
        options = {**options, "continue_final_message": field}
        try:
            text = fmt.render(messages, tool_list, **options)
        except pf.FormatError as exc:
            with pytest.raises(type(exc)) as raised:
                fmt.render_spans(messages, tool_list, **options)
            assert str(raised.value) == str(exc)
            return
        rendered = fmt.render_spans(messages, tool_list, **options)
        assert rendered.text == text
        guarded = fmt.guard.guard_messages(messages, CHATML_READING)
        assert rendered == UPSTREAM.render_spans(guarded, fmt.guard.guard_tools(tool_list), **options)

    check()


@pytest.mark.parametrize("name", ["chatml-multi-system", "chatml-safety", "qwen3.5", "qwen3.6", "qwen3",
                                  "nemotron-3-nano"])
def test_a_continued_message_loses_only_the_fields_it_holds(name: str) -> None:
    # The continued user message holds `reasoning` alone, which no user turn writes: that field is
    # the loss, not the aliases the continuation's tagged copy carries.
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "more", "reasoning": "why"}]
    fmt = pf.get_format(name, **({"policy": "allow"} if name == "chatml-safety" else {}))
    assert fmt.render_spans(messages, continue_final_message=True).dropped == ("messages[2].reasoning",)
