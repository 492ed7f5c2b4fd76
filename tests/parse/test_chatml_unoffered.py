"""ChatML calls to a tool the request did not offer (docs/chatml.md, "Parsing replies").

A ``<tool_call>``-wrapped ``<function=NAME>`` block naming a tool not offered is a call (announced at
its ``<function=NAME>``, its values untyped) with a note in ``reply.notes`` (it is well formed: nothing in
``reply.malformed``); a NAME that cannot be a tool's name (braces,
quotes, whitespace: an unrendered template) and a bare ``<function=NAME>`` of a tool not offered stay
text. Values holding such blocks as examples stay the value's text. Stream == parse on any split.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.model.messages import ToolCall
from prompt_formats.replies.streaming import Note, ToolCallStart
from tests.support.parser_cases import counting_ids, splits, stream
from tests.support.strategies import differential_settings

FMT = pf.get_format("chatml-multi-system")
SAFETY = pf.get_format("chatml-safety")
WRITE_FILE = [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object", "properties": {
    "path": {"type": "string"}, "size": {"type": "integer"}}}}}]


def unoffered_note(index: int, name: str) -> str:
    return f"tool call {index} ({name}) to a tool not offered: read as a call, its values untyped"


def block(name: str, *params: tuple[str, str]) -> str:
    body = "".join(f"<parameter={p}>\n{v}\n</parameter>\n" for p, v in params)
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def parse(text: str, fmt: pf.ChatFormat = FMT) -> pf.AssistantReply:
    return fmt.parse(text, WRITE_FILE, id_factory=counting_ids(), enable_thinking=False)


@pytest.mark.parametrize("fmt", [FMT, SAFETY], ids=lambda f: f.name)
def test_a_wrapped_call_to_a_tool_not_offered_is_a_call_with_a_note(fmt: pf.ChatFormat) -> None:
    reply = parse(block("foo", ("bar", "baz"), ("n", "3")) + "\n" + block("write_file", ("size", "3")), fmt)
    # No schema: "3" stays the text as written (as every value without tools), typed only for write_file.
    assert reply.tool_calls == (ToolCall("foo", {"bar": "baz", "n": "3"}, "call_0"),
                                ToolCall("write_file", {"size": 3}, "call_1"))
    assert (reply.malformed, reply.notes) == ((), (unoffered_note(0, "foo"),))
    assert reply.content is None


def test_the_call_is_announced_by_the_feed_that_completes_its_function_tag() -> None:
    parser = FMT.stream_parser(WRITE_FILE, id_factory=counting_ids(), enable_thinking=False)
    assert not [e for e in parser.feed("Sure.\n<tool_call>\n<function=foo") if isinstance(e, ToolCallStart)]
    started = [e for e in parser.feed(">") if isinstance(e, ToolCallStart)]
    assert started == [ToolCallStart(0, "call_0", "foo")]
    rest = parser.feed("\n<parameter=bar>\nbaz\n</parameter>\n</function>\n</tool_call>") + parser.close()
    assert Note(unoffered_note(0, "foo")) in rest


def test_a_cut_off_call_to_a_tool_not_offered_stays_a_call() -> None:
    reply = parse("<tool_call>\n<function=nope>\n<parameter=a>\n1")
    assert reply.tool_calls == (ToolCall("nope", {"a": "1"}, "call_0"),)
    assert reply.malformed == (
        "tool call 0 (nope) cut off by the end of the completion: kept with the arguments written so far",
    )
    assert reply.notes == (unoffered_note(0, "nope"),)


def test_a_call_to_a_tool_not_offered_in_the_reasoning_ends_it_as_an_offered_one_does() -> None:
    text = "Plan.\n" + block("foo", ("a", "1")) + "\n</think>\n\nDone."
    reply = FMT.parse(text, WRITE_FILE, id_factory=counting_ids())
    assert (reply.reasoning, reply.content) == ("Plan.", "Done.")
    assert reply.tool_calls == (ToolCall("foo", {"a": "1"}, "call_0"),)


def test_a_second_function_in_the_same_block_naming_no_tool_offered_is_a_call() -> None:
    text = "<tool_call>\n<function=write_file>\n</function>\n<function=foo>\n</function>\n</tool_call>"
    reply = parse(text)
    assert reply.tool_calls == (ToolCall("write_file", {}, "call_0"), ToolCall("foo", {}, "call_1"))
    assert (reply.malformed, reply.notes) == ((), (unoffered_note(1, "foo"),))


@pytest.mark.parametrize("name", ["{{ tc.name }}", "get weather", "f'x'", 'a"b', "{name}", "a\tb"])
def test_a_name_that_cannot_be_a_tools_is_text_with_a_note(name: str) -> None:
    text = block(name, ("k", "v"))
    reply = parse(text)
    assert reply.tool_calls == ()
    assert reply.content == text
    assert reply.malformed == (f"tool call to unknown tool {name!r} (not a tool's name): kept as text",)


def test_a_bare_function_block_of_a_tool_not_offered_is_text_without_a_note() -> None:
    text = "For example:\n<function=foo>\n<parameter=bar>\nbaz\n</parameter>\n</function>"
    reply = parse(text)
    assert (reply.content, reply.tool_calls, reply.malformed) == (text, (), ())


def test_values_holding_calls_to_tools_not_offered_stay_the_values_text() -> None:
    example = block("foo", ("bar", "baz"))
    empty_example = "<tool_call>\n<function=foo>\n</function>\n</tool_call>"
    reply = parse(block("write_file", ("path", example)) + "\n" + block("other", ("x", "see " + empty_example)))
    assert reply.tool_calls == (ToolCall("write_file", {"path": example}, "call_0"),
                                ToolCall("other", {"x": "see " + empty_example}, "call_1"))
    assert (reply.malformed, reply.notes) == ((), (unoffered_note(1, "other"),))


def test_a_call_to_a_tool_not_offered_reads_its_values_as_a_call_without_tools_does() -> None:
    # No schema says which "<parameter=…>" tags are the tool's: any is, as without tools.
    text = block("other", ("x", "see " + block("foo", ("bar", "baz"))))
    unoffered = parse(text)
    without_tools = FMT.parse(text, id_factory=counting_ids(), enable_thinking=False)
    assert unoffered.tool_calls == without_tools.tool_calls
    assert unoffered.content == without_tools.content
    assert unoffered.malformed == without_tools.malformed
    assert unoffered.notes == (unoffered_note(0, "other"), *without_tools.notes)


def test_without_tools_every_name_is_a_call_without_a_note() -> None:
    reply = FMT.parse(block("foo", ("n", "3")), id_factory=counting_ids(), enable_thinking=False)
    assert (reply.tool_calls, reply.malformed, reply.notes) == ((ToolCall("foo", {"n": "3"}, "call_0"),), (), ())


_PIECES = st.sampled_from([
    block("foo", ("bar", "baz")), block("write_file", ("path", "a.py"), ("size", "2")),
    block("write_file", ("path", block("foo", ("bar", "baz")))), block("{{ x }}", ("k", "v")),
    "<function=foo>\n<parameter=a>\n1\n</parameter>\n</function>", "<tool_call>\n<function=foo>\n<parameter=a>\n1",
    "text ", "\n", "</think>", "<|im_end|>",
])


@differential_settings
@given(st.lists(_PIECES, max_size=6).map("".join).flatmap(lambda text: st.tuples(st.just(text), splits(text))))
def test_stream_equals_parse_on_random_splits(case: tuple[str, list[str]]) -> None:
    text, deltas = case
    whole = parse(text)
    _, streamed = stream(lambda: FMT.stream_parser(WRITE_FILE, id_factory=counting_ids(), enable_thinking=False),
                         deltas)
    assert streamed == whole
    # Never text lost: each "<function=foo>" before the stop marker opens a call or is content or a value's text.
    assert text.split("<|im_end|>")[0].count("<function=foo>") == (
        sum(1 for c in whole.tool_calls if c.name == "foo")
        + (whole.content or "").count("<function=foo>")
        + sum(str(v).count("<function=foo>") for c in whole.tool_calls for v in c.arguments.values())
    )
