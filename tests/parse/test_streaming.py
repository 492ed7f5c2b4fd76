"""The streaming machinery: stream == parse for every split, argument deltas, linear time, the API contract.

Stream/parse equality is checked on completions built from each format's markers (whole and cut at
every position) and arbitrary text, cut into deltas at random points.
"""

from __future__ import annotations

import importlib
import json
import pickle
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.replies.streaming import (
    ContentDelta,
    Malformed,
    Note,
    ReasoningDelta,
    StrippedText,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
    assemble,
)
from tests.support.parser_cases import (
    CHATML_MARKERS,
    HARMONY_MARKERS,
    PROSE,
    best_time,
    completions,
    counting_ids,
    splits,
    stream,
)
from tests.support.strategies import differential_settings

CHATML = pf.get_format("chatml-multi-system")
HARMONY = pf.get_format("harmony")
GPT_OSS = pf.get_format("gpt-oss")
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": ["integer", "null"]}}}}},
    {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}},
]

# Pieces of what ends in reply.notes rather than reply.malformed: ChatML's JSON form, tools not offered.
CHATML_NOTED = [*CHATML_MARKERS, '<tool_call>{"name": "f", "arguments": {}}',
                '\n{"name": "g", "arguments": {"a": 1}}\n', "<tool_call>\n<function=g>\n"]
HARMONY_NOTED = [*HARMONY_MARKERS, "<|channel|>commentary to=functions.g<|message|>",
                 "<|start|>assistant to=functions.g<|channel|>commentary json<|message|>", '{"b": [2]}']
FORMATS = [
    ("chatml", CHATML, CHATML_NOTED, {}),
    ("chatml-no-think", CHATML, CHATML_NOTED, {"enable_thinking": False}),
    ("harmony", HARMONY, HARMONY_NOTED, {}),
    ("harmony-prefill", HARMONY, HARMONY_NOTED, {"prefill": "analysis"}),
    ("gpt-oss", GPT_OSS, HARMONY_NOTED, {}),
]


def check_stream_equals_parse(fmt: pf.ChatFormat, text: str, deltas: list[str], tools: object, context: dict) -> None:
    whole = fmt.parse(text, tools, id_factory=counting_ids(), **context)
    events, streamed = stream(lambda: fmt.stream_parser(tools, id_factory=counting_ids(), **context), deltas)
    assert streamed == whole
    # Both kinds of note, each in its own field, in the order the events gave them.
    assert tuple(e.note for e in events if isinstance(e, Malformed)) == whole.malformed
    assert tuple(e.note for e in events if isinstance(e, Note)) == whole.notes
    # Tool-call events: start, argument deltas, end, per index; the deltas are the arguments' JSON text.
    for call_index, call in enumerate(whole.tool_calls):
        starts = [e for e in events if isinstance(e, ToolCallStart) and e.index == call_index]
        assert starts == [ToolCallStart(call_index, call.id, call.name)]
        text_of_arguments = "".join(
            e.text for e in events if isinstance(e, ToolCallArgumentsDelta) and e.index == call_index
        )
        if isinstance(call.arguments, str):
            assert text_of_arguments == call.arguments
        else:
            assert json.loads(text_of_arguments) == call.arguments
    assert len([e for e in events if isinstance(e, ToolCallEnd)]) == len(whole.tool_calls)


@pytest.mark.parametrize(("label", "fmt", "markers", "context"), FORMATS, ids=[f[0] for f in FORMATS])
@pytest.mark.parametrize("with_tools", [False, True], ids=["no-tools", "tools"])
@differential_settings
@given(data=st.data())
def test_stream_equals_parse(label: str, fmt: pf.ChatFormat, markers: list[str], context: dict,
                             with_tools: bool, data: st.DataObject) -> None:
    text = data.draw(completions(markers))
    deltas = data.draw(splits(text))
    check_stream_equals_parse(fmt, text, deltas, TOOLS if with_tools else None, context)


@pytest.mark.parametrize(("label", "fmt", "markers", "context"), FORMATS, ids=[f[0] for f in FORMATS])
def test_one_character_deltas(label: str, fmt: pf.ChatFormat, markers: list[str], context: dict) -> None:
    text = "".join(markers) + "".join(reversed(markers)) + "tail"
    check_stream_equals_parse(fmt, text, list(text), TOOLS, context)


def test_feed_after_close_and_double_close_raise() -> None:
    parser = CHATML.stream_parser()
    parser.feed("hi")
    parser.close()
    with pytest.raises(pf.ParseError):
        parser.feed("more")
    with pytest.raises(pf.ParseError):
        parser.close()


@pytest.mark.parametrize("fmt", [CHATML, HARMONY, GPT_OSS], ids=["chatml", "harmony", "gpt-oss"])
def test_non_string_input_is_an_input_error(fmt: pf.ChatFormat) -> None:
    with pytest.raises(pf.InvalidInputError, match=r"^completion: expected a string, got bytes"):
        fmt.parse(b"abc")  # type: ignore[arg-type]
    with pytest.raises(pf.InvalidInputError, match=r"^delta: expected a string, got int"):
        fmt.stream_parser().feed(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("fmt", [CHATML, HARMONY, GPT_OSS], ids=["chatml", "harmony", "gpt-oss"])
def test_unknown_context_option_is_refused(fmt: pf.ChatFormat) -> None:
    with pytest.raises(pf.UnknownOptionError, match="bogus"):
        fmt.parse("x", bogus=1)


@pytest.mark.parametrize(("fmt", "text"), [
    (CHATML, "thinking</think>\n\nHi <tool_call>\n<function=f>\n<parameter=a>\nv\n</parameter>\n</function>"),
    (HARMONY, '<|channel|>analysis<|message|>t<|end|><|start|>assistant to=functions.f<|channel|>commentary'
              ' json<|message|>{"a": 1}<|call|>'),
], ids=["chatml", "harmony"])
def test_parser_pickles_mid_stream(fmt: pf.ChatFormat, text: str) -> None:
    expected = fmt.parse(text, id_factory=_fixed_id)
    for cut in range(len(text) + 1):  # every state the parser passes through
        parser = fmt.stream_parser(id_factory=_fixed_id)
        first = parser.feed(text[:cut])
        clone = pickle.loads(pickle.dumps(parser))
        rest = clone.feed(text[cut:]) + clone.close()
        assert assemble(first + rest) == expected, cut


def _fixed_id() -> str:
    return "call_fixed"


def test_default_call_ids_are_call_and_24_hex_digits() -> None:
    reply = CHATML.parse("<tool_call>\n<function=f>\n</function>\n</tool_call>\n" * 3, enable_thinking=False)
    ids = [call.id for call in reply.tool_calls]
    assert len(ids) == 3 and len(set(ids)) == 3
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", i or "") for i in ids)


def test_event_kinds_of_a_chatml_stream() -> None:
    events = CHATML.stream_parser(id_factory=_fixed_id).feed(
        "Plan.\n</think>\n\nSure.<tool_call>\n<function=f>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>"
    )
    assert events == [
        ReasoningDelta("Plan."),
        ContentDelta("Sure."),
        ToolCallStart(0, "call_fixed", "f"),
        ToolCallArgumentsDelta(0, '{"x":"'),
        ToolCallArgumentsDelta(0, "1"),
        ToolCallArgumentsDelta(0, '"'),
        ToolCallArgumentsDelta(0, "}"),
        ToolCallEnd(0, pf.ToolCall("f", {"x": "1"}, "call_fixed")),
    ]


@differential_settings
@given(pieces=st.lists(st.sampled_from([" ", "\n", "a", "b c", "\u3000", "x\t", "\x1c", ""]), max_size=10))
def test_stripped_text_is_strip_of_the_whole(pieces: list[str]) -> None:
    emitted: list[str] = []
    sink = StrippedText(emitted.append)
    for piece in pieces:
        sink.add(piece)
    assert "".join(emitted) == "".join(pieces).strip()


def test_whitespace_class_is_str_isspace() -> None:
    from prompt_formats.formats.chatml.grammar import WS as WHITESPACE

    pattern = re.compile(WHITESPACE)
    for code in range(0x110000):
        char = chr(code)
        assert bool(pattern.fullmatch(char)) == char.isspace(), hex(code)


def test_malformed_event_reaches_the_reply() -> None:
    events = [ContentDelta("a"), Malformed("note"), ContentDelta("b")]
    assert assemble(events) == pf.AssistantReply(content="ab", malformed=("note",))


# --- Linear time. -----------------------------------------------------------------------------------
# Ratios within one run, never absolute times: adversarial input (an unclosed marker repeated
# 100,000 times) against the same amount of prose; streaming in one-character deltas against a
# quarter of the text (linear total cost gives a ratio near 4, re-scanning would give 16).

ADVERSARIAL = {
    "chatml": ["<tool_call><function=", "<tool_call>", "<tool_call>\n", "<think>", "</think>", "<|im_end",
               "<function=", "</parameter>", "<parameter=", "<tool_call><function=f>\n<parameter=p>\n"],
    "harmony": ["<|channel|>", "<|start|>", "<|message|>", "<|end|>", "<|constrain|>", "<|return",
                "<|start|>assistant<|channel|>analysis<|message|>", "<|channel|>commentary to=functions.f"],
}


@pytest.mark.parametrize("unit", ADVERSARIAL["chatml"] + ADVERSARIAL["harmony"])
def test_unclosed_markers_parse_in_linear_time(unit: str) -> None:
    fmt = HARMONY if unit.startswith("<|") and unit != "<|im_end" else CHATML
    text = unit * 100_000
    prose = (PROSE * (len(text) // len(PROSE) + 1))[: len(text)]
    prose_time = best_time(lambda: fmt.parse(prose))
    adversarial_time = best_time(lambda: fmt.parse(text))
    assert adversarial_time <= 10 * prose_time, (unit, adversarial_time, prose_time)


@pytest.mark.parametrize("unit", ["<tool_call><function=", "<tool_call>\n<function=f>\n<parameter=p>\nx",
                                  "<|channel|>", "<|start|>assistant<|channel|>final<|message|>x"])
def test_one_character_streaming_is_linear(unit: str) -> None:
    fmt = HARMONY if unit.startswith("<|") else CHATML
    text = unit * (40_000 // len(unit))

    def run(length: int) -> None:
        parser = fmt.stream_parser()
        feed = parser.feed
        for char in text[:length]:
            feed(char)
        parser.close()

    quarter = best_time(lambda: run(len(text) // 4), 3)
    whole = best_time(lambda: run(len(text)), 3)
    assert whole <= 8 * quarter, (unit, whole, quarter)


# Whitespace a parser holds while it waits for what follows (before a Llama call's "{", a GLM think
# block, DeepSeek's next call) is scanned once, however many deltas bring it: counted, not timed.


class _CountingPattern:
    """A module's whitespace pattern, counting the characters its ``match`` calls read."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.read = pattern, 0

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        found = self.pattern.match(text, pos)
        self.read += (found.end() if found else pos) - pos + 1
        return found


DEEPSEEK_CALLS = "</think><\uff5ctool\u2581calls\u2581begin\uff5c>"
HELD_WHITESPACE = [
    ("llama-3.1", "prompt_formats.formats.llama.parse", "", '{"name": "f", "parameters": {}}'),
    ("llama-3.1", "prompt_formats.formats.llama.parse", "", "text"),
    ("glm-4.5", "prompt_formats.formats.glm.parse", "", "<think>r</think>text"),
    ("glm-4.5", "prompt_formats.formats.glm.parse", "", "text"),
    ("deepseek-v3", "prompt_formats.formats.deepseek.parse", DEEPSEEK_CALLS,
     "<\uff5ctool\u2581call\u2581begin\uff5c>function<\uff5ctool\u2581sep\uff5c>f\n```json\n{}\n```"
     "<\uff5ctool\u2581call\u2581end\uff5c><\uff5ctool\u2581calls\u2581end\uff5c>"),
    ("deepseek-v3", "prompt_formats.formats.deepseek.parse", DEEPSEEK_CALLS, "text"),
]


@pytest.mark.parametrize(("name", "module", "before", "after"), HELD_WHITESPACE)
def test_held_whitespace_is_read_once(name: str, module: str, before: str, after: str,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    counting = _CountingPattern(importlib.import_module(module)._WHITESPACE)
    monkeypatch.setattr(f"{module}._WHITESPACE", counting)
    fmt, spaces = pf.get_format(name), 2000
    deltas = [before, *[" \n"] * spaces, after]
    check_stream_equals_parse(fmt, "".join(deltas), deltas, None, {})
    counting.read = 0
    stream(lambda: fmt.stream_parser(id_factory=counting_ids()), deltas)
    assert counting.read <= 8 * spaces  # (read again at every delta: about spaces² characters)
