"""``continue_final_message`` for the ChatML formats (issue 15 item 3), against transformers itself.

The reference is transformers' own ``render_jinja_template(continue_final_message=...)`` on the
fixture template: the same prompt, or, where transformers raises ``ValueError``, a
``pf.FormatError`` with its text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.oracles import fixture_text
from tests.support.strategies import chatml_options, conversation, differential_settings, message, tools

MULTI = pf.get_format("chatml-multi-system")
ALLOW = pf.get_format("chatml-safety", policy="allow")
FORMATS = [(MULTI, "chatml_multi_system.jinja"), (ALLOW, "chatml_upstream.jinja")]


def transformers_outcome(template: str, messages: list[Any], tool_list: Any, field: Any,
                         options: dict[str, Any]) -> tuple[str, str]:
    """transformers' prompt: ("ok", text), ("value", message) for its ValueError, ("template", message);
    the messages normalised first, as ``apply_chat_template`` does (``None``-valued keys dropped)."""
    import jinja2
    from transformers.utils.chat_template_utils import _normalize_chat_messages, render_jinja_template

    try:
        rendered, _ = render_jinja_template(
            conversations=[_normalize_chat_messages(json.loads(json.dumps(messages)))], tools=tool_list,
            chat_template=fixture_text(template),
            continue_final_message=field, add_generation_prompt=False, **options)
    except ValueError as exc:
        return ("value", str(exc))
    except jinja2.exceptions.TemplateError as exc:
        return ("template", str(exc))
    return ("ok", rendered[0])


def our_outcome(fmt: pf.ChatFormat, messages: list[Any], tool_list: Any, field: Any,
                options: dict[str, Any]) -> tuple[str, str]:
    try:
        return ("ok", fmt.render(messages, tool_list, False, continue_final_message=field, **options))
    except pf.TemplateError as exc:
        return ("template", str(exc))
    except pf.InvalidInputError:
        raise
    except pf.FormatError as exc:
        return ("value", str(exc))


@st.composite
def ending_in(draw: st.DrawFn) -> list[Any]:
    """A conversation whose last message is an assistant or a user message."""
    messages = draw(conversation())
    messages.append(draw(message(("assistant", "user"))))
    return messages


@pytest.mark.jinja
@pytest.mark.parametrize(("fmt", "template"), FORMATS, ids=["multi", "safety-allow"])
@differential_settings
@given(messages=ending_in(), tool_list=tools,
       field=st.sampled_from([True, "content", "reasoning_content", "thinking", "reasoning"]),
       options=chatml_options)
def test_continue_final_message_matches_transformers(fmt, template, messages, tool_list, field, options):
    assert our_outcome(fmt, messages, tool_list, field, options) == transformers_outcome(
        template, messages, tool_list, field, options)


@pytest.mark.jinja
@pytest.mark.parametrize(("messages", "prompt"), [
    ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "The answer is "}],
     "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nThe answer is"),
    ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "reasoning_content": "First, "}],
     "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\nFirst,"),
    ([{"role": "user", "content": [{"type": "text", "text": "Tell me "}, {"type": "image"}]}],
     "<|im_start|>user\nTell me "),  # the tag is followed by the image, not trimmed: the space stays
])
def test_continue_final_message_by_hand(messages: list[Any], prompt: str) -> None:
    field = "reasoning_content" if messages[-1].get("reasoning_content") else True
    assert MULTI.render(messages, continue_final_message=field) == prompt
    assert transformers_outcome("chatml_multi_system.jinja", messages, None, field, {}) == ("ok", prompt)


@pytest.mark.transformers
def test_continue_final_message_raises_what_transformers_raises() -> None:
    assert our_outcome(MULTI, [], None, True, {}) == transformers_outcome("chatml_multi_system.jinja", [], None,
                                                                          True, {})
    no_text = [{"role": "user", "content": [{"type": "image"}]}]
    assert our_outcome(MULTI, no_text, None, True, {})[0] == "value"
    assert our_outcome(MULTI, no_text, None, True, {}) == transformers_outcome("chatml_multi_system.jinja", no_text,
                                                                               None, True, {})
    with pytest.raises(pf.FormatError, match="continue_final_message and add_generation_prompt are not compatible"):
        MULTI.render([{"role": "user", "content": "q"}], add_generation_prompt=True, continue_final_message=True)
    with pytest.raises(pf.InvalidInputError, match=r"^continue_final_message: expected a bool, null or one of"):
        MULTI.render([{"role": "user", "content": "q"}], continue_final_message="role")
    # Off: False and None render the plain prompt.
    hello = [{"role": "user", "content": "q"}]
    assert MULTI.render(hello, continue_final_message=False) == MULTI.render(hello, continue_final_message=None)
    assert "continue_final_message" in MULTI.options and "continue_final_message" not in pf.get_format(
        "harmony").options


def test_a_record_may_continue_its_final_message() -> None:
    from prompt_formats.records import RecordRenderer

    record = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "Sure, "}],
              "continue_final_message": True}
    assert RecordRenderer(MULTI).handle(record, 1)["prompt"] == MULTI.render(record["messages"],
                                                                            continue_final_message=True)
    ok, line = RecordRenderer(pf.get_format("harmony")).process_line(1, json.dumps(record).encode())
    assert not ok and "continue_final_message" in json.loads(line)["message"]
