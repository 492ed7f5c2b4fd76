"""prompt_formats.serving.openai: events as chat.completion.chunk deltas, finish_reason, client-side merging."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import prompt_formats as pf
from prompt_formats import (
    AssistantReply,
    ContentDelta,
    Malformed,
    ReasoningDelta,
    ToolCall,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from prompt_formats.replies.streaming import Note
from prompt_formats.serving.openai import accumulate, delta, finish_reason, opening_delta, stream_deltas

# The first delta of every OpenAI chat-completion stream (and of vLLM's and SGLang's).
OPENING = {"role": "assistant", "content": ""}


def test_each_event_maps_to_the_delta_openai_streams() -> None:
    assert delta(ReasoningDelta("hm")) == {"reasoning_content": "hm"}
    assert delta(ContentDelta("Hi")) == {"content": "Hi"}
    assert delta(ToolCallStart(0, "call_1", "ls")) == {
        "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "ls", "arguments": ""}}]
    }
    assert delta(ToolCallArgumentsDelta(0, '{"p')) == {"tool_calls": [{"index": 0, "function": {"arguments": '{"p'}}]}
    assert delta(ToolCallEnd(0, ToolCall("ls", {}, "call_1"))) is None
    assert delta(Malformed("note")) is None
    assert delta(Note("note")) is None


def test_the_opening_delta_is_openais() -> None:
    first = opening_delta()
    assert first == OPENING
    first["content"] = "changed"
    assert opening_delta() == OPENING  # a new dict each time


def test_a_stream_opens_with_the_role_once_before_any_other_delta() -> None:
    events = [ReasoningDelta("hm"), Malformed("m"), ContentDelta("Hi"), ToolCallStart(0, "c0", "f"),
              ToolCallArgumentsDelta(0, "{}"), ToolCallEnd(0, ToolCall("f", {}, "c0")), Note("n")]
    assert list(stream_deltas(events)) == [
        OPENING, {"reasoning_content": "hm"}, {"content": "Hi"},
        {"tool_calls": [{"index": 0, "id": "c0", "type": "function", "function": {"name": "f", "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]},
    ]


def test_an_empty_completion_streams_the_opening_delta_alone() -> None:
    assert list(stream_deltas([])) == [OPENING]
    assert accumulate(stream_deltas([])) == {"role": "assistant", "content": ""}


def test_the_opening_delta_goes_out_before_the_first_event_is_asked_for() -> None:
    def no_events_yet() -> Iterator[ContentDelta]:
        raise AssertionError("an event was asked for before the opening delta went out")
        yield ContentDelta("x")  # a generator

    assert next(stream_deltas(no_events_yet())) == OPENING


def test_the_opening_delta_adds_no_content_to_a_call() -> None:
    events = [ToolCallStart(0, "c0", "f"), ToolCallArgumentsDelta(0, "{}")]
    assert accumulate(stream_deltas(events)) == AssistantReply(tool_calls=(ToolCall("f", {}, "c0"),)).to_openai()


def test_accumulated_deltas_give_the_assistant_message() -> None:
    events = [
        ReasoningDelta("a"), ReasoningDelta("b"), ContentDelta("x"),
        ToolCallStart(0, "c0", "f"), ToolCallArgumentsDelta(0, '{"a":'), ToolCallStart(1, "c1", "g"),
        ToolCallArgumentsDelta(0, "1}"), ToolCallArgumentsDelta(1, "{}"), ToolCallEnd(0, ToolCall("f")),
    ]
    assert accumulate(map(delta, events)) == {
        "role": "assistant", "content": "x", "reasoning_content": "ab",
        "tool_calls": [
            {"id": "c0", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}},
            {"id": "c1", "type": "function", "function": {"name": "g", "arguments": "{}"}},
        ],
    }
    assert accumulate([]) == {"role": "assistant", "content": ""}


@pytest.mark.parametrize(
    ("reply", "length", "expected"),
    [
        (AssistantReply(content="x"), False, "stop"),
        (AssistantReply(tool_calls=(ToolCall("f"),)), False, "tool_calls"),
        (AssistantReply(tool_calls=(ToolCall("f"),)), True, "length"),
        (AssistantReply(), True, "length"),
    ],
)
def test_finish_reason(reply: AssistantReply, length: bool, expected: str) -> None:
    assert finish_reason(reply, length=length) == expected


@pytest.mark.parametrize("name", pf.available_formats())
def test_an_empty_reply_is_a_message_every_format_renders_back(name: str) -> None:
    # An empty completion is a reply without text or calls; sent back, it is the empty message the
    # model wrote (a template that joins the content to text refuses a null one).
    fmt = pf.get_format(name)
    sent_back = fmt.parse("").to_openai()
    assert sent_back == accumulate(stream_deltas([])) == {"role": "assistant", "content": ""}
    messages = [{"role": "user", "content": "Hi"}, sent_back, {"role": "user", "content": "again"}]
    assert fmt.render(messages, add_generation_prompt=True)


@pytest.mark.parametrize(("name", "completion"), [("gpt-oss", "<|channel|>final<|message|><|return|>"),
                                                  ("qwen2.5", "<|im_end|>\n")])
def test_an_empty_final_answer_round_trips(name: str, completion: str) -> None:
    fmt = pf.get_format(name)
    history = [{"role": "user", "content": "Hi"}]
    sent_back = fmt.parse(completion).to_openai()
    assert fmt.render([*history, sent_back]) == fmt.render(history, add_generation_prompt=True) + completion
