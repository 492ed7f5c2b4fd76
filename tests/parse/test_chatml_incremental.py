"""ChatML streaming is incremental: a call is announced at its <function=NAME>, string values stream as they
arrive, typed values when they are known to close; and the sloppy shapes real models write are read as what
they mean."""

from __future__ import annotations

import json

import pytest

import prompt_formats as pf
from prompt_formats.replies.streaming import ToolCallArgumentsDelta, ToolCallEnd, ToolCallStart
from prompt_formats.serving.openai import accumulate, stream_deltas
from tests.support.parser_cases import counting_ids, stream

FMT = pf.get_format("chatml-multi-system")
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"}, "note": {"type": ["string"]}}}}}]
CALL = ("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis is \"big\"\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n<parameter=note>\nline one\nline two\n\n</parameter>\n"
        "</function>\n</tool_call>")


def one_character_events(text: str, tools: object = TOOLS) -> list[list[object]]:
    parser = FMT.stream_parser(tools, id_factory=counting_ids(), enable_thinking=False)
    return [parser.feed(ch) for ch in text] + [parser.close()]


@pytest.mark.parametrize("tools", [TOOLS, None], ids=["tools", "no-tools"])
@pytest.mark.parametrize("prefix", ["", "Let me check.\n\n"])
def test_call_start_comes_with_the_feed_that_completes_the_function_tag(tools: object, prefix: str) -> None:
    text = prefix + CALL
    per_feed = one_character_events(text, tools)
    first = next(i for i, events in enumerate(per_feed) if any(isinstance(e, ToolCallStart) for e in events))
    assert text[: first + 1].endswith("<function=get_weather>")
    assert ToolCallStart(0, "call_0", "get_weather") in per_feed[first]


def test_string_values_stream_as_they_arrive_and_typed_ones_when_they_close() -> None:
    text = CALL
    per_feed = one_character_events(text)
    sent_by = ["".join(e.text for e in events if isinstance(e, ToolCallArgumentsDelta)) for events in per_feed]
    # "Paris" is sent before its </parameter> is read: the delta for "P" comes with the feed of "P".
    p_at = text.index("Paris")
    assert sent_by[p_at] == "P"
    assert "".join(sent_by[: text.index("</parameter>")]).endswith('Paris is \\"big\\"')
    # The integer goes out whole, with the feed that shows its "</parameter>" ends it: the feed that
    # completes the next parameter's tag (a "</parameter>" followed by text would be the value's own).
    days_end = text.index("<parameter=note>") + len("<parameter=note>") - 1
    assert sent_by[days_end].startswith(',"days":3')
    assert all("3" not in piece for piece in sent_by[text.index("<parameter=days>"):days_end])
    events = [e for feed in per_feed for e in feed]
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.call.arguments == {"city": 'Paris is "big"', "days": 3, "note": "line one\nline two\n"}
    assert "".join(sent_by) == end.call.arguments_json()
    assert json.loads("".join(sent_by)) == end.call.arguments


@pytest.mark.parametrize("text", [
    CALL,
    CALL.replace("</parameter>", ""),
    "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>",
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nPa\n",
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nx\n</parameter>\nstray",
    "<tool_call>\n<function=get_weather>\n<parameter=city>\na</function>b\n</parameter>\n</function>",
])
@pytest.mark.parametrize("split", ["chars", "whole"])
def test_deltas_concatenate_to_arguments_json_and_stream_equals_parse(text: str, split: str) -> None:
    deltas = list(text) if split == "chars" else [text]
    make = lambda: FMT.stream_parser(TOOLS, id_factory=counting_ids(), enable_thinking=False)  # noqa: E731
    events, reply = stream(make, deltas)
    assert reply == FMT.parse(text, TOOLS, id_factory=counting_ids(), enable_thinking=False)
    assert reply.tool_calls
    for call_index, call in enumerate(reply.tool_calls):
        sent = "".join(e.text for e in events if isinstance(e, ToolCallArgumentsDelta) and e.index == call_index)
        assert sent == call.arguments_json()
    assert accumulate(stream_deltas(events)) == reply.to_openai()


# --- Tolerated shapes (each with a note). ---------------------------------------------------------------


def parse(text: str, tools: object = TOOLS) -> pf.AssistantReply:
    return FMT.parse(text, tools, id_factory=counting_ids(), enable_thinking=False)


def test_function_block_without_tool_call_is_a_call_with_a_note() -> None:
    reply = parse("Checking.\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\nDone.")
    assert reply.tool_calls == (pf.ToolCall("get_weather", {"city": "Paris"}, "call_0"),)
    assert reply.content == "Checking.\n\nDone."
    assert reply.malformed == ("tool call 0 (get_weather) written without '<tool_call>': read as a call",)


@pytest.mark.parametrize("text", [
    "See <function=get_weather> in the docs.",  # a tag named in prose: no parameter or function end follows
    "<function=get_time>\n</function>",  # not a tool offered
])
def test_function_tag_that_is_not_a_call_stays_text_without_a_note(text: str) -> None:
    reply = parse(text)
    assert (reply.content, reply.tool_calls, reply.malformed) == (text, (), ())


@pytest.mark.parametrize(("body", "arguments"), [
    ("<parameter=city>\nParis\n<parameter=days>\n3\n</parameter>\n</function>", {"city": "Paris", "days": 3}),
    ("<parameter=city>\nParis\n<parameter=days>\n3\n</function>", {"city": "Paris", "days": 3}),
    ("<parameter=days>\n3\n</function>\n</tool_call>", {"days": 3}),
])
def test_value_without_its_closing_tag_ends_at_the_next_tag(body: str, arguments: dict[str, object]) -> None:
    reply = parse("<tool_call>\n<function=get_weather>\n" + body)
    assert reply.tool_calls == (pf.ToolCall("get_weather", arguments, "call_0"),)
    assert reply.content is None
    assert reply.malformed and all("not closed by '</parameter>'" in note for note in reply.malformed)


def test_a_closed_value_may_still_hold_tags() -> None:
    # "</function>", and the tag of a parameter the tool does not have, are the value's text when its
    # "</parameter>" follows (values a client sent render so, and read back the same).
    text = ("<tool_call>\n<function=get_weather>\n<parameter=city>\na\n<parameter=other>\n</function>\n"
            "</parameter>\n</function>")
    reply = parse(text)
    assert reply.tool_calls == (pf.ToolCall("get_weather", {"city": "a\n<parameter=other>\n</function>"}, "call_0"),)
    assert reply.malformed == ()


def test_stray_text_ends_an_announced_call_and_is_content() -> None:
    reply = parse("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\nOops, more.")
    assert reply.tool_calls == (pf.ToolCall("get_weather", {"city": "Paris"}, "call_0"),)
    assert reply.content == "Oops, more."
    assert reply.malformed == ("tool call 0 (get_weather) has text outside its parameters: the call ends there "
                               "with the arguments read so far, the text kept as content",)
