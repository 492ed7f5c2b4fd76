"""The recoveries the peer suites asked for, each with its note: ChatML values holding the format's tags, a
block closed by ``</tool_call>`` alone, vLLM's ``float`` type; Harmony headers without ``<|message|>``,
headers with a second channel, JSON calls cut off with only braces missing. Stream == parse throughout."""

from __future__ import annotations

import json

import pytest

import prompt_formats as pf
from prompt_formats.formats.harmony.tolerant import closing_braces
from prompt_formats.replies.streaming import ToolCallArgumentsDelta
from tests.support.parser_cases import counting_ids, stream

CHATML = pf.get_format("chatml-multi-system")
HARMONY = pf.get_format("harmony")
WRITE = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}, "size": {"type": "float"}},
            },
        },
    }
]


def chatml(text: str, tools: object = WRITE) -> pf.AssistantReply:
    reply = CHATML.parse(text, tools, id_factory=counting_ids(), enable_thinking=False)
    make = lambda: CHATML.stream_parser(tools, id_factory=counting_ids(), enable_thinking=False)  # noqa: E731
    assert stream(make, list(text))[1] == reply
    return reply


def harmony(text: str) -> tuple[pf.AssistantReply, str]:
    """The reply, and the argument deltas the stream sent (concatenated)."""
    reply = HARMONY.parse(text, id_factory=counting_ids())
    events, streamed = stream(lambda: HARMONY.stream_parser(id_factory=counting_ids()), list(text))
    assert streamed == reply
    return reply, "".join(e.text for e in events if isinstance(e, ToolCallArgumentsDelta))


def call(*params: tuple[str, str]) -> str:
    body = "".join(f"<parameter={p}>\n{v}\n</parameter>\n" for p, v in params)
    return f"<tool_call>\n<function=write_file>\n{body}</function>\n</tool_call>"


@pytest.mark.parametrize(
    "value",
    [
        'a = "\\n</parameter>\\n"\nb = 1',  # followed by text: the value's own
        "x\n</parameter>\n<parameter=other>\ny\n</parameter>\nz",  # followed by a tag of no parameter of the tool
        "doc:\n<parameter=path>\nliteral\n</parameter>\nend",  # closing a block opened inside the value
        "<tool_call>\n<function=write_file>\n<parameter=content>\nhi"
        "\n</parameter>\n</function>\n</tool_call>",  # a whole call
    ],
)
def test_a_value_may_hold_parameter_closes(value: str) -> None:
    reply = chatml(call(("path", "p.txt"), ("content", value)))
    assert reply.tool_calls == (pf.ToolCall("write_file", {"path": "p.txt", "content": value}, "call_0"),)
    assert (reply.content, reply.malformed) == (None, ())


def test_a_held_parameter_close_with_no_other_after_it_ends_the_value() -> None:
    reply = chatml("<tool_call>\n<function=write_file>\n<parameter=path>\np\n</parameter>\nstray text")
    assert reply.tool_calls == (pf.ToolCall("write_file", {"path": "p"}, "call_0"),)
    assert reply.content == "stray text"
    assert reply.malformed == (
        "tool call 0 (write_file) has text outside its parameters: the call ends there with the "
        "arguments read so far, the text kept as content",
    )


def test_a_block_closed_by_tool_call_end_without_function_end_is_a_call() -> None:
    reply = chatml("Checking. <tool_call><function=write_file><parameter=path>a</parameter></tool_call> Done.")
    assert reply.tool_calls == (pf.ToolCall("write_file", {"path": "a"}, "call_0"),)
    assert reply.content == "Checking.  Done."
    assert reply.malformed == ("tool call 0 (write_file) ended by '</tool_call>' without '</function>'",)


@pytest.mark.parametrize(("declared", "value"), [("float", 2.5), ("double", 2.5), ("int", 3), ("long", 3)])
def test_type_names_vllm_and_sglang_read(declared: str, value: float) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"v": {"type": declared}}}}}]
    text = f"<tool_call>\n<function=f>\n<parameter=v>\n{value}\n</parameter>\n</function>\n</tool_call>"
    assert chatml(text, tools).tool_calls == (pf.ToolCall("f", {"v": value}, "call_0"),)


def test_a_header_ended_without_message_reads_the_text_after_its_channel() -> None:
    reply, _ = harmony(
        "<|channel|>analysis I must refuse<|end|><|start|>assistant<|channel|>final<|message|>No.<|return|>"
    )
    assert (reply.reasoning, reply.content) == ("I must refuse", "No.")
    assert reply.malformed == (
        "message header not followed by '<|message|>': the text after its channel 'analysis' read as the message",
    )


@pytest.mark.parametrize(
    "text", ["I must refuse<|end|>", "<|channel|>bogus I must<|end|>", "<|channel|>final to=x y<|end|>"]
)
def test_other_headers_without_message_stay_text(text: str) -> None:
    reply, _ = harmony(text)
    assert reply.content == text[: -len("<|end|>")]
    assert reply.malformed == ("message header not followed by '<|message|>': kept as text",)


@pytest.mark.parametrize(
    ("body", "braces"), [('{"a":{"b":1}', "}"), ('{"a":{"b":"}{"', "}}"), ("{", "}"), ('{"a": "x\\"}"', "}")]
)
def test_a_json_call_cut_off_with_only_braces_missing_is_closed(body: str, braces: str) -> None:
    reply, sent = harmony("<|channel|>commentary to=functions.f <|constrain|>json<|message|>" + body)
    (tool_call,) = reply.tool_calls
    assert tool_call.arguments == json.loads(body + braces)
    assert sent == tool_call.arguments_json() == body + braces
    assert reply.malformed == (
        f"tool call 0 (f) cut off by the end of the completion: its arguments closed with {len(braces)} '}}'",
    )


@pytest.mark.parametrize("body", ['{"a": [1', '{"a": "unfinished', '{"a":', '{"a": 1,', "[1", "", '{"a": 1}}'])
def test_other_cut_off_json_stays_raw(body: str) -> None:
    assert closing_braces(body) == ""
    reply, _ = harmony("<|channel|>commentary to=functions.f<|message|>" + body)
    assert reply.tool_calls[0].arguments == body
    assert len(reply.malformed) == 1 and "kept with the arguments written so far" in reply.malformed[0]
