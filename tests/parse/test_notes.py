"""``malformed`` and ``notes`` apart (issue 38 item 12).

``reply.malformed`` holds only what could not be read as the format says (a cut-off call, JSON that
is not an object, a block not closed, a header without ``<|message|>``); ``reply.notes`` what was
read as the format says but is worth knowing (a ChatML call in the JSON form, a call to a tool not
offered, a value kept as text for Python's digit limit, text after the reply's end). A server that
refuses any reply with a non-empty ``malformed`` accepts a valid Qwen2.5/Qwen3 JSON-form call.

The expected notes are the texts docs/parsing.md, chatml.md and harmony.md give for them. Every case
is streamed whole, one character at a time and cut in two at every position: the events give the
reply ``parse`` gives, both fields included.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

import prompt_formats as pf
from prompt_formats.replies.streaming import Malformed, Note, ReplyBuilder, assemble
from tests.support.parser_cases import counting_ids, stream

WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
DIGITS = max(sys.get_int_max_str_digits(), 4300) + 700
LIMIT = f"{sys.get_int_max_str_digits():,}"

JSON_FORM = ("written in the JSON form (a JSON object of name and arguments in '<tool_call>', as Qwen2.5 and "
             "Qwen3 write it): read as a call")
CUT_OFF = "cut off by the end of the completion: kept with the arguments written so far"
JSON_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
XML_CALL = "<tool_call>\n<function=get_time>\n<parameter=zone>\nUTC\n</parameter>\n</function>\n</tool_call>"
HARMONY_CALL = '<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{"zone": "UTC"}<|call|>'

# (format, completion, tools, context, malformed, notes)
CASES: list[tuple[str, str, Any, dict[str, Any], tuple[str, ...], tuple[str, ...]]] = [
    # Qwen2.5 / Qwen3 JSON form, offered tool: nothing malformed.
    ("chatml-multi-system", JSON_CALL, WEATHER, {"enable_thinking": False}, (),
     (f"tool call 0 (get_weather) {JSON_FORM}",)),
    ("chatml-safety", "Plan.\n</think>\n\n" + JSON_CALL + "<|im_end|>", WEATHER, {}, (),
     (f"tool call 0 (get_weather) {JSON_FORM}",)),
    # JSON form of a tool not offered: both notes, still nothing malformed.
    ("chatml-multi-system", JSON_CALL.replace("get_weather", "get_time"), WEATHER, {"enable_thinking": False}, (),
     (f"tool call 0 (get_time) {JSON_FORM}", "tool call 0 (get_time) to a tool not offered: read as a call")),
    # JSON form not closed by </tool_call>: that part is malformed, the form is a note.
    ("chatml-multi-system", JSON_CALL.removesuffix("\n</tool_call>"), WEATHER, {"enable_thinking": False},
     ("tool call 0 (get_weather) not closed by '</tool_call>': its JSON read up to where the next tag or the "
      "end of the completion begins",),
     (f"tool call 0 (get_weather) {JSON_FORM}",)),
    # XML form to a tool not offered.
    ("chatml-multi-system", XML_CALL, WEATHER, {"enable_thinking": False}, (),
     ("tool call 0 (get_time) to a tool not offered: read as a call, its values untyped",)),
    # ... and cut off: the cut is malformed, the tool a note.
    ("chatml-multi-system", XML_CALL[:XML_CALL.index("</parameter>")], WEATHER, {"enable_thinking": False},
     (f"tool call 0 (get_time) {CUT_OFF}",),
     ("tool call 0 (get_time) to a tool not offered: read as a call, its values untyped",)),
    # Text after the reply's end is not part of it.
    ("chatml-multi-system", "Answer.<|im_end|>\nuser: more", None, {"enable_thinking": False}, (),
     ("text after the end of the reply ('<|im_end|>'/'<|endoftext|>') ignored",)),
    # An integer beyond Python's conversion limit, written as the format says: kept as text.
    ("chatml-multi-system", "<tool_call>\n<function=get_weather>\n<parameter=days>\n" + "7" * DIGITS
     + "\n</parameter>\n</function>\n</tool_call>", WEATHER, {"enable_thinking": False}, (),
     (f"tool call 0 (get_weather): parameter 'days' has an integer of more than {LIMIT} digits: kept as text",)),
    # Still malformed: a repeated parameter, '<tool_call>' without a call, a missing '</parameter>'.
    ("chatml-multi-system", "<tool_call>\n<function=get_weather>\n<parameter=city>\nA\n</parameter>\n"
     "<parameter=city>\nB\n</parameter>\n</function>\n</tool_call>", WEATHER, {"enable_thinking": False},
     ("tool call 0 (get_weather): parameter 'city' repeated: the first value kept, the repeat kept as text",), ()),
    ("chatml-multi-system", "<tool_call> hm", WEATHER, {"enable_thinking": False},
     ("'<tool_call>' not followed by '<function=NAME>': kept as text",), ()),
    ("chatml-multi-system", "<function=get_weather>\n<parameter=city>\nA\n</parameter>\n</function>", WEATHER,
     {"enable_thinking": False},
     ("tool call 0 (get_weather) written without '<tool_call>': read as a call",), ()),
    # Harmony and gpt-oss: a call to a tool not offered is a note; its arguments not JSON, malformed.
    ("harmony", HARMONY_CALL, WEATHER, {}, (), ("tool call 0 (get_time) to a tool not offered: read as a call",)),
    ("gpt-oss", HARMONY_CALL, WEATHER, {}, (), ("tool call 0 (get_time) to a tool not offered: read as a call",)),
    ("harmony", HARMONY_CALL.replace('{"zone": "UTC"}', "zone=UTC"), WEATHER, {},
     ("tool call 0 (get_time): arguments are not a JSON object, kept raw",),
     ("tool call 0 (get_time) to a tool not offered: read as a call",)),
    ("harmony", "<|channel|>analysis<|message|>The user wants", None, {},
     ("analysis message cut off by the end of the completion: kept as reasoning, as written so far",), ()),
    ("gpt-oss", "<|channel|>chat<|message|>Hello", None, {}, ("message on unknown channel 'chat': kept as text",), ()),
]


def _splits(text: str) -> list[list[str]]:
    return [[text], list(text), *([text[:cut], text[cut:]] for cut in range(1, len(text), 7))]


@pytest.mark.parametrize(("name", "text", "tools", "context", "malformed", "notes"), CASES)
def test_malformed_and_notes_apart(name: str, text: str, tools: Any, context: dict[str, Any],
                                   malformed: tuple[str, ...], notes: tuple[str, ...]) -> None:
    fmt = pf.get_format(name)
    reply = fmt.parse(text, tools, id_factory=counting_ids(), **context)
    assert (reply.malformed, reply.notes) == (malformed, notes)
    for deltas in _splits(text):
        events, streamed = stream(lambda: fmt.stream_parser(tools, id_factory=counting_ids(), **context), deltas)
        assert streamed == reply
        assert tuple(e.note for e in events if type(e) is Note) == notes
        assert tuple(e.note for e in events if type(e) is Malformed) == malformed


def test_a_strict_server_accepts_a_valid_qwen3_json_call() -> None:
    reply = pf.get_format("chatml-multi-system").parse("I'll check.\n</think>\n\n" + JSON_CALL + "<|im_end|>", WEATHER)
    assert not reply.malformed
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("get_weather", {"city": "Paris"})]


def test_note_events_reach_the_reply_apart_from_malformed() -> None:
    events = [pf.ContentDelta("a"), Note("seen"), Malformed("broken"), pf.ContentDelta("b"), Note("again")]
    expected = pf.AssistantReply(content="ab", malformed=("broken",), notes=("seen", "again"))
    assert assemble(events) == expected
    builder = ReplyBuilder()
    for event in events:
        builder.add([event])
    assert builder.reply() == expected


def test_notes_are_not_part_of_the_openai_message() -> None:
    reply = pf.AssistantReply(content="x", notes=("n",), malformed=("m",))
    assert reply.to_openai() == {"role": "assistant", "content": "x"}
