"""prompt_formats.openai: events as chat.completion.chunk deltas, finish_reason, client-side merging."""

from __future__ import annotations

import pytest

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
from prompt_formats.openai import accumulate, delta, finish_reason


def test_each_event_maps_to_the_delta_openai_streams() -> None:
    assert delta(ReasoningDelta("hm")) == {"reasoning_content": "hm"}
    assert delta(ContentDelta("Hi")) == {"content": "Hi"}
    assert delta(ToolCallStart(0, "call_1", "ls")) == {
        "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "ls", "arguments": ""}}]
    }
    assert delta(ToolCallArgumentsDelta(0, '{"p')) == {"tool_calls": [{"index": 0, "function": {"arguments": '{"p'}}]}
    assert delta(ToolCallEnd(0, ToolCall("ls", {}, "call_1"))) is None
    assert delta(Malformed("note")) is None


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
    assert accumulate([]) == {"role": "assistant", "content": None}


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
