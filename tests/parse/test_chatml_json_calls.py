"""The JSON form of a ChatML tool call, as Qwen2.5 and Qwen3 write it (issue 29 item 4).

``<tool_call>\\n{"name": "f", "arguments": {"x": 1}}\\n</tool_call>`` is a call, its arguments the
JSON's values, with a note naming the form (in ``reply.notes``: the form is well formed, nothing is
malformed); the stream parser gives what ``parse`` gives for any
split. The peers' own cases for the form: tests/fixtures/peer_cases/json_calls.json.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.replies.streaming import ToolCallArgumentsDelta, ToolCallEnd, ToolCallStart
from tests.support.parser_cases import CHATML_MARKERS, completions, counting_ids, splits, stream
from tests.support.strategies import differential_settings

MULTI = pf.get_format("chatml-multi-system")
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
    "x": {"type": "string"}}}}}]
ISSUE = '<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>'
FORM_NOTE = "written in the JSON form"


def parse(text: str, tools: Any = None, **context: Any) -> pf.AssistantReply:
    return MULTI.parse(text, tools, id_factory=counting_ids(), **context)


@pytest.mark.parametrize("thinking", [True, False])
def test_the_json_form_is_a_call_with_its_values_as_written(thinking: bool) -> None:
    reply = parse(ISSUE, TOOLS, enable_thinking=thinking)
    assert reply.tool_calls == (pf.ToolCall("f", {"x": 1}, "call_0"),)  # the JSON's 1, not the schema's string
    assert reply.content is None and reply.reasoning is None
    assert reply.malformed == ()
    (note,) = reply.notes
    assert note.startswith("tool call 0 (f) " + FORM_NOTE)
    assert reply.to_openai()["tool_calls"][0]["function"]["arguments"] == '{"x":1}'


def test_text_around_and_between_calls_is_content() -> None:
    text = 'Let me look.\n<tool_call>{"name": "f", "arguments": {}}</tool_call>\nand\n' + ISSUE + "<|im_end|>"
    reply = parse(text, enable_thinking=False)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("f", {}), ("f", {"x": 1})]
    assert reply.content == "Let me look.\n\nand"


def test_a_call_in_the_reasoning_ends_it() -> None:
    reply = parse("I will call f." + ISSUE + "\n</think>\n\nDone.")
    assert reply.reasoning == "I will call f." and reply.content == "Done."
    assert [c.name for c in reply.tool_calls] == ["f"]


@pytest.mark.parametrize(("text", "note", "malformed"), [
    ('<tool_call>\n{"name": "f", "arguments": {"x": 1}}', "not closed by '</tool_call>'", True),
    ('<tool_call>{"name": "f", "arguments": {"x": 1}}<|im_end|>', "not closed by '</tool_call>'", True),
    ('<tool_call>{"name": "g", "arguments": {"x": 1}}</tool_call>', "to a tool not offered", False),
])
def test_tolerated_forms_are_calls_with_a_note(text: str, note: str, malformed: bool) -> None:
    reply = parse(text, TOOLS, enable_thinking=False)
    assert len(reply.tool_calls) == 1 and reply.content is None
    assert any(note in n for n in (reply.malformed if malformed else reply.notes)), reply
    assert not any(note in n for n in (reply.notes if malformed else reply.malformed)), reply


@pytest.mark.parametrize("text", [
    '<tool_call>\n{"name": "f", "arguments": {"x": 1}\n</tool_call>',  # a brace missing
    '<tool_call>{"arguments": {"x": 1}}</tool_call>',  # no name
    '<tool_call>{"name": 5}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"x": 1}} tail</tool_call>',
])
def test_what_is_not_a_json_call_stays_content_as_written(text: str) -> None:
    reply = parse(text, enable_thinking=False)
    assert reply.tool_calls == () and reply.content == text
    assert reply.malformed == ("'<tool_call>' not followed by '<function=NAME>': kept as text",)


def test_string_arguments_holding_an_object_are_decoded_once() -> None:
    (call,) = parse('<tool_call>{"name": "f", "arguments": "{\\"x\\": 2}"}</tool_call>').tool_calls
    assert call.arguments == {"x": 2}
    (call,) = parse('<tool_call>{"name": "f", "arguments": "hello"}</tool_call>').tool_calls
    assert call.arguments == '"hello"' and json.loads(call.arguments_json()) == "hello"


JSON_MARKERS = [*CHATML_MARKERS, ISSUE, '<tool_call>{"name": "f", "arguments": ', '{"x": [1, "}"]}}', "</tool_call>",
                '"name"', "{", "}"]


@differential_settings
@given(text=completions(JSON_MARKERS), thinking=st.booleans(), data=st.data())
def test_stream_equals_parse_and_the_deltas_are_the_arguments(text: str, thinking: bool,
                                                              data: st.DataObject) -> None:
    expected = parse(text, enable_thinking=thinking)
    events, reply = stream(lambda: MULTI.stream_parser(id_factory=counting_ids(), enable_thinking=thinking),
                           data.draw(splits(text)))
    assert reply == expected
    for start in (e for e in events if isinstance(e, ToolCallStart)):
        sent = "".join(e.text for e in events if isinstance(e, ToolCallArgumentsDelta) and e.index == start.index)
        (end,) = (e for e in events if isinstance(e, ToolCallEnd) and e.index == start.index)
        assert sent == end.call.arguments_json()
