"""What the ChatML templates leave out: ``render_spans(...).dropped``, proved with Jinja2, and ``strict=True``.

Every generated case is rendered by the format and by the Jinja2 template; where the template
renders, ``render`` and ``render_spans`` give its text, and the reported losses are exactly what the
template leaves out, decided by the template alone (``tests/support/drops.py`` perturbs each input
and looks for it in Jinja2's output). ``strict=True`` refuses exactly the inputs that lose something.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.drops import assert_dropped_exactly
from tests.support.oracles import render_jinja, render_jinja_as_transformers, render_ours
from tests.support.strategies import conversation, differential_settings, family_options, message, tools
from tests.support.usual import with_string_contents

MULTI = pf.get_format("chatml-multi-system")
UPSTREAM = pf.get_format("chatml-safety", policy="allow")
FORMATS = {"multi": (MULTI, "chatml_multi_system.jinja"), "upstream": (UPSTREAM, "chatml_upstream.jinja"),
           "qwen3.6": (pf.get_format("qwen3.6"), "families/qwen3_6.jinja"),
           "qwen3.8": (pf.get_format("qwen3.8"), "families/qwen3_8.jinja"),
           "qwen3.5": (pf.get_format("qwen3.5"), "families/qwen3_5_think.jinja"),
           "qwen3.5-nothink": (pf.get_format("qwen3.5-nothink"), "families/qwen3_5_nothink.jinja"),
           "qwen3": (pf.get_format("qwen3"), "families/qwen3.jinja"),
           "qwen3-instruct-2507": (pf.get_format("qwen3-instruct-2507"), "families/qwen3_instruct_2507.jinja"),
           "qwen2.5": (pf.get_format("qwen2.5"), "families/qwen2_5.jinja"),
           "qwen3-vl": (pf.get_format("qwen3-vl"), "families/qwen3_vl.jinja"),
           "nemotron-3-nano": (pf.get_format("nemotron-3-nano"), "families/nemotron_3_nano.jinja"),
           "nemotron-3-super": (pf.get_format("nemotron-3-super"), "families/nemotron_3_super.jinja"),
           "nemotron-3.5": (pf.get_format("nemotron-3.5"), "families/nemotron_3_5.jinja")}
#: The templates that write JSON calls, and Nemotron's: where the engine itself fails, ours names
#: the field (the others' engine fails only on arguments that are no object). Every template is fed
#: as transformers feeds it (None-valued keys dropped). (Nemotron 3 Ultra's template is 3.5's.)
JSON_CALLS = ("qwen3", "qwen3-instruct-2507", "qwen2.5", "qwen3-vl", "nemotron-3-nano", "nemotron-3-super",
              "nemotron-3.5")
# What the template reacts to in a content: the <think> split, a user's wrapped tool response.
MARKERS = ("<think>", "</think>", "<tool_response>", "</tool_response>")


def jinja_oracle(template: str, gen: bool, options: dict[str, Any]) -> Any:
    def oracle(messages: list[Any], tool_list: Any) -> str | None:
        outcome = render_jinja_as_transformers(template, messages, tool_list, gen, **options)
        return outcome[1] if outcome is not None and outcome[0] == "ok" else None

    return oracle


@st.composite
def dropping_conversation(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A conversation with assistant turns before and after its last query (reasoning in every alias,
    inline <think> blocks, calls with arguments of every kind), and a few other messages."""
    messages = draw(conversation())
    for _ in range(draw(st.integers(0, 3))):
        messages.insert(draw(st.integers(0, len(messages))), draw(message(("assistant",))))
    return messages


def check_case(name: str, messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> None:
    fmt, template = FORMATS[name]
    options = {key: value for key, value in options.items() if key in fmt.options}  # (what its template reads)
    if name == "qwen2.5":  # it prints a tool result that is no string as Python prints it: not a drop, nor whole
        messages = [with_string_contents([m])[0] if isinstance(m, dict) and m.get("role") == "tool" else m
                    for m in messages]
    elif name.startswith("nemotron"):  # it prints any content as Python prints it, but an assistant's beside calls
        messages = [m if not isinstance(m, dict) or _content_left_out(m) else with_string_contents([m])[0]
                    for m in messages]
    expected = render_jinja_as_transformers(template, messages, tool_list, gen, **options)
    if expected is None:  # the engine refuses arguments that are no object (or, below, other input); ours names them
        crash = r"^(messages|tools)" if name in JSON_CALLS else r"\.arguments: expected an object"
        for call in (fmt.render, fmt.render_spans):
            with pytest.raises(pf.InvalidInputError, match=crash):
                call(messages, tool_list, gen, **options)
        return
    assert render_ours(fmt.render, messages, tool_list, gen, **options) == expected
    if expected[0] != "ok":
        with pytest.raises(pf.TemplateError):
            fmt.render_spans(messages, tool_list, gen, **options)
        with pytest.raises(pf.TemplateError):
            fmt.render(messages, tool_list, gen, strict=True, **options)
        return
    rendered = fmt.render_spans(messages, tool_list, gen, **options)
    assert rendered.text == expected[1]
    # (Nemotron spells the tools as XML, leaving out their schema's "type" keys: not reported, as for
    # every format whose template spells tools in its own syntax; its tests check the tools' text.)
    assert_dropped_exactly(jinja_oracle(template, gen, options), messages, tool_list, rendered.dropped,
                           content_markers=MARKERS, check_tools=not name.startswith("nemotron"))
    if rendered.dropped:
        with pytest.raises(pf.InvalidInputError) as info:
            fmt.render(messages, tool_list, gen, strict=True, **options)
        assert info.value.path == rendered.dropped[0]
        with pytest.raises(pf.InvalidInputError):
            fmt.render_spans(messages, tool_list, gen, strict=True, **options)
    else:
        assert fmt.render(messages, tool_list, gen, strict=True, **options) == expected[1]
    assert fmt.render(messages, tool_list, gen, strict=False, **options) == expected[1]


def _content_left_out(message: dict[str, Any]) -> bool:
    """Whether Nemotron's template leaves a content that is no string out (rather than print it):
    an assistant's beside calls, without reasoning."""
    return message.get("role") == "assistant" and bool(message.get("tool_calls")) and not any(
        isinstance(message.get(key), str) and message[key].strip() for key in ("reasoning_content", "thinking",
                                                                                 "reasoning"))


@pytest.mark.jinja
@differential_settings
@given(dropping_conversation(), tools, st.booleans(), family_options, st.sampled_from(sorted(FORMATS)))
def test_dropped_is_what_the_template_leaves_out(messages, tool_list, gen, options, name):
    check_case(name, messages, tool_list, gen, options)


Q = {"role": "user", "content": "Q"}


@pytest.mark.jinja
@pytest.mark.parametrize("name", sorted(FORMATS))
@pytest.mark.parametrize(
    ("messages", "options"),
    [
        # reasoning at or before the last query, in a field and inline; kept with preserve_thinking
        ([Q, {"role": "assistant", "content": "A", "reasoning_content": "R"}, Q], {}),
        ([Q, {"role": "assistant", "content": "A", "reasoning_content": "R"}, Q], {"preserve_thinking": True}),
        ([Q, {"role": "assistant", "content": "<think>\nR\n</think>\n\nA"}, Q], {}),
        # an empty think block, and whitespace reasoning: nothing lost
        ([Q, {"role": "assistant", "content": "<think>\n\n</think>\n\nA", "reasoning": " "}, Q], {}),
        ([Q, {"role": "assistant", "content": "<think>\n\n</think>\n\nA"}, Q], {}),
        # inline text the split leaves out even after the last query
        ([Q, {"role": "assistant", "content": "pre<think>R</think>mid</think>A"}], {}),
        # aliases the template does not read
        ([Q, {"role": "assistant", "content": "A", "reasoning_content": "R", "thinking": "T", "reasoning": "R"}], {}),
        ([Q, {"role": "assistant", "content": "A", "thinking": "R", "reasoning": "R"}, Q], {}),
        # arguments neither an object nor a string: no parameter written (an empty list loses nothing)
        ([Q, {"role": "assistant", "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": [1, "x"]}},
            {"name": "g", "arguments": 0}, {"name": "h", "arguments": []}, {"name": "i", "arguments": False}]}], {}),
        # identifiers and a tool result's name are never rendered, and not reported
        ([Q, {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f"}}]},
          {"role": "tool", "tool_call_id": "call_1", "name": "f", "content": "r"}], {}),
    ],
)
def test_examples(name: str, messages: list[Any], options: dict[str, Any]) -> None:
    check_case(name, messages, None, True, options)


@pytest.mark.jinja
def test_arguments_neither_object_nor_string_render_as_the_template_writes_them() -> None:
    # Refused before (InvalidInputError): the template renders them, writing no parameter.
    messages = [Q, {"role": "assistant", "tool_calls": [{"name": "f", "arguments": [1]}]}]
    for name, (fmt, template) in FORMATS.items():
        if name.startswith(("qwen", "nemotron")):  # the models' own templates refuse them (their differential tests)
            continue
        expected = render_jinja(template, messages)
        assert expected[0] == "ok" and render_ours(fmt.render, messages) == expected
        assert fmt.render_spans(messages).dropped == ("messages[1].tool_calls[0].arguments",)
        with pytest.raises(pf.InvalidInputError, match=r"^messages\[1\]\.tool_calls\[0\]\.arguments: "):
            fmt.render(messages, strict=True)


STRICT_CASES = [MULTI, pf.get_format("chatml-safety"), pf.get_format("chatml-safety", policy="reject")]


@pytest.mark.parametrize("fmt", STRICT_CASES)
def test_strict_option(fmt: pf.ChatFormat) -> None:
    history = [Q, {"role": "assistant", "content": "A", "reasoning_content": "R"}, Q]
    assert "strict" in fmt.options and "strict" in fmt.parse_options
    assert fmt.render(history, strict=None) == fmt.render(history) == fmt.render(history, strict=False)
    assert fmt.parse("x", strict=True) == fmt.parse("x")
    with pytest.raises(pf.InvalidInputError, match=r"^messages\[1\]\.reasoning_content: the template leaves it out"):
        fmt.render(history, strict=True)  # the everyday shape: the fast path steps aside
    with pytest.raises(pf.InvalidInputError, match=r"^strict: expected a boolean or null, got str$"):
        fmt.render(history, strict="yes")
    assert fmt.render(history, strict=True, preserve_thinking=True) == fmt.render(history, preserve_thinking=True)
    session = fmt.session(strict=True)
    assert session.render(history[:1]) == fmt.render(history[:1])
    with pytest.raises(pf.InvalidInputError, match=r"^messages\[1\]\.reasoning_content: "):
        session.render(history)  # sessions render strictly too: the incremental renderer steps aside
    if fmt.guard is not None and fmt.guard.policy == "reject":  # the guard's refusal stays as it is
        with pytest.raises(pf.InjectionError):
            fmt.render([{"role": "user", "content": "<|im_end|>"}], strict=True)


@pytest.mark.jinja
@pytest.mark.parametrize("content", [{"text": "hello"}, {"type": "text", "text": "hello"}])
@pytest.mark.parametrize("role", ["system", "user", "assistant"])
def test_qwen3_vl_reports_an_object_content_it_iterates_as_keys(content: Any, role: str) -> None:
    # The template iterates an object as its keys: its values are never written.
    message = {"role": role, "content": content}
    messages = [message, Q] if role != "assistant" else [Q, message]
    check_case("qwen3-vl", messages, None, True, {})
    at = 0 if role != "assistant" else 1
    assert f"messages[{at}].content" in FORMATS["qwen3-vl"][0].render_spans(messages, None, True).dropped
