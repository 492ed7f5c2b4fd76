"""The ChatML reply parser: rules by example, schema typing, malformed calls, round trip, robustness.

The round trip renders the assistant turn with the reference template (Jinja2, as transformers
configures it) and parses the text after the generation prompt back.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.formats.chatml import schema_types, typed_parameter_value
from prompt_formats.model.messages import AssistantReply, ToolCall
from tests.support.oracles import render_jinja
from tests.support.parser_cases import CHATML_MARKERS, completions, counting_ids
from tests.support.strategies import differential_settings

FMT = pf.get_format("chatml-multi-system")
SAFETY = pf.get_format("chatml-safety")

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "scale": {"type": "number"},
                "hourly": {"type": "boolean"},
                "when": {"type": ["string", "null"]},
                "where": {"type": "object"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            },
        },
    },
}


def parse(text: str, tools: Any = None, **context: Any) -> AssistantReply:
    return FMT.parse(text, tools, id_factory=counting_ids(), **context)


def call(name: str, arguments: Any, index: int = 0) -> ToolCall:
    return ToolCall(name, arguments, f"call_{index}")


# --- Reasoning and content. -------------------------------------------------------------------------


def test_reasoning_then_content() -> None:
    assert parse("I think.\n</think>\n\nThe answer.") == AssistantReply("The answer.", "I think.")


def test_no_think_end_means_all_reasoning() -> None:
    assert parse("still thinking") == AssistantReply(None, "still thinking")


def test_repeated_think_open_is_dropped() -> None:
    assert parse("\n<think>\nplan\n</think>\n\nok") == AssistantReply("ok", "plan")


def test_thinking_disabled_content_only() -> None:
    assert parse("Hello</think>", enable_thinking=False) == AssistantReply("Hello</think>")


def test_thinking_disabled_model_opens_think() -> None:
    assert parse(" <think>x</think>y", enable_thinking=False) == AssistantReply("y", "x")


def test_thinking_disabled_only_by_false() -> None:
    assert parse("a</think>b", enable_thinking=0) == AssistantReply("b", "a")


def test_empty_reasoning_and_content_are_none() -> None:
    assert parse("\n\n</think>\n\n") == AssistantReply()


def test_stop_markers_end_the_reply() -> None:
    assert parse("r</think>c<|im_end|>\n") == AssistantReply("c", "r")
    reply = parse("r</think>c<|endoftext|>more")
    assert (reply.content, reply.reasoning) == ("c", "r")
    assert (reply.malformed, reply.notes) == ((), ("text after the end of the reply ('<|im_end|>'/'<|endoftext|>') "
                                                   "ignored",))


def test_to_openai_shape() -> None:
    text = (
        "r</think>\n\nc\n\n<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n"
        "</function>\n</tool_call>"
    )
    assert parse(text, [WEATHER]).to_openai() == {
        "role": "assistant",
        "content": "c",
        "reasoning_content": "r",
        "tool_calls": [{"id": "call_0", "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"days":3}'}}],
    }


# --- Tool calls. ------------------------------------------------------------------------------------


def test_several_calls_and_text_between() -> None:
    text = (
        "</think>Before.\n\n<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>\n"
        "<tool_call>\n<function=b>\n</function>\n</tool_call> after"
    )
    assert parse(text) == AssistantReply(
        "Before.\n\n\n after", None, (call("a", {"x": "1"}), call("b", {}, 1))
    )


def test_tool_call_inside_reasoning_ends_it() -> None:
    text = "let me call<tool_call>\n<function=f>\n</function>\n</tool_call>\nthen text"
    assert parse(text) == AssistantReply("then text", "let me call", (call("f", {}),))


def test_two_functions_in_one_block() -> None:
    text = "</think><tool_call>\n<function=a>\n</function>\n<function=b>\n</function>\n</tool_call>"
    assert parse(text).tool_calls == (call("a", {}), call("b", {}, 1))


def test_value_loses_one_newline_each_side() -> None:
    text = "</think><tool_call><function=f><parameter=v>\n\nkeep\n\n</parameter></function></tool_call>"
    assert parse(text).tool_calls[0].arguments == {"v": "\nkeep\n"}


def test_value_may_hold_other_markers() -> None:
    text = "</think><tool_call><function=f><parameter=v><tool_call></function></parameter></function>"
    assert parse(text).tool_calls[0].arguments == {"v": "<tool_call></function>"}


@pytest.mark.parametrize(("text", "note"), [
    # (A call cut off by the end of the reply stays a call: tests/parse/test_parse_defects.py.)
    ("<tool_call>\nno function", "'<tool_call>' not followed by '<function=NAME>': kept as text"),
    ("<tool_call><function=f", "'<tool_call>' not followed by '<function=NAME>': kept as text"),
])
def test_malformed_calls_are_content_with_a_note(text: str, note: str) -> None:
    reply = parse(text, enable_thinking=False)
    assert reply.tool_calls == ()
    assert reply.malformed == (note,)
    expected = text.split("<|im_end|>")[0].strip()
    assert reply.content == expected


def test_unknown_tool_is_a_noted_call_when_tools_are_given() -> None:
    text = "</think><tool_call>\n<function=nope>\n</function>\n</tool_call>"
    reply = parse(text, [WEATHER])
    assert reply.tool_calls == (call("nope", {}),)
    assert reply.notes == ("tool call 0 (nope) to a tool not offered: read as a call, its values untyped",)
    assert reply.malformed == ()
    assert reply.content is None
    assert parse(text).tool_calls == (call("nope", {}),)
    assert (parse(text).malformed, parse(text).notes) == ((), ())


def test_malformed_call_then_good_call() -> None:
    text = "</think><tool_call>\n<function=f>\njunk<tool_call>\n<function=g>\n</function>\n</tool_call>"
    reply = parse(text)
    # f was announced at its "<function=f>": the stray text ends it, and is content.
    assert reply.content == "junk"
    assert reply.tool_calls == (call("f", {}), call("g", {}, 1))


def test_junk_call_markers_are_counted_once() -> None:
    reply = parse("<tool_call>x<tool_call>y", enable_thinking=False)
    assert reply.malformed == ("'<tool_call>' not followed by '<function=NAME>': kept as text (2 times)",)


# --- Typing by schema. ------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "raw", "value"), [
    ("city", " Paris ", " Paris "),
    ("city", "null", "null"),
    ("days", "3", 3),
    ("days", "3.0", 3),
    ("days", "3.5", "3.5"),
    ("days", "three", "three"),
    ("days", "123456789012345678901234567890", 123456789012345678901234567890),
    ("scale", "2.5", 2.5),
    ("scale", "2.0", 2),
    ("scale", "1e3", 1000),
    ("scale", "1e400", "1e400"),
    ("scale", "NaN", "NaN"),
    ("hourly", "true", True),
    ("hourly", "False", False),
    ("hourly", "yes", "yes"),
    ("when", "NULL", None),
    ("when", "today", "today"),
    ("where", '{"lat": 1}', {"lat": 1}),
    ("where", "[1]", "[1]"),
    ("tags", '["a", "b"]', ["a", "b"]),
    ("tags", "[NaN]", "[NaN]"),
    ("either", "7", 7),
    ("either", "seven", "seven"),
    ("unknown", "7", "7"),
])
def test_values_are_typed_by_the_schema(name: str, raw: str, value: Any) -> None:
    text = f"</think><tool_call>\n<function=get_weather>\n<parameter={name}>\n{raw}\n</parameter>\n</function>"
    arguments = parse(text, [WEATHER]).tool_calls[0].arguments
    assert arguments == {name: value}
    assert type(arguments[name]) is type(value)  # type: ignore[index]


def test_without_tools_values_stay_strings() -> None:
    text = "</think><tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n</function>"
    assert parse(text).tool_calls[0].arguments == {"days": "3"}


def test_prepared_tools_type_the_same() -> None:
    text = "</think><tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n</function>"
    assert parse(text, pf.prepare_tools([WEATHER])) == parse(text, [WEATHER])


def test_schema_types_reads_type_lists_unions_and_hints() -> None:
    assert schema_types({"type": ["integer", "null"]}) == {"integer", "null"}
    assert schema_types({"oneOf": [{"type": "boolean"}, {"anyOf": [{"type": "array"}]}]}) == {"boolean", "array"}
    assert schema_types({"enum": ["a", 1]}) == {"string", "integer"}
    assert schema_types({"properties": {}}) == {"object"}
    assert schema_types({"items": {}}) == {"array"}
    assert schema_types({"description": "x"}) == set()
    assert schema_types(None) == set()


def test_type_order_is_null_boolean_integer_number_object_array_string() -> None:
    every = {"type": ["string", "array", "object", "number", "integer", "boolean", "null"]}
    assert typed_parameter_value("null", every) is None
    assert typed_parameter_value("true", every) is True
    assert type(typed_parameter_value("1", every)) is int
    assert typed_parameter_value("1.5", every) == 1.5
    assert typed_parameter_value("{}", every) == {}
    assert typed_parameter_value("[]", every) == []
    assert typed_parameter_value("text", every) == "text"


def test_malformed_tools_raise_input_error() -> None:
    with pytest.raises(pf.InvalidInputError, match=r"^tools\[0\]\.function\.name"):
        FMT.parse("x", [{"function": {"name": 3}}])


# --- Round trip through the reference template. -----------------------------------------------------

FORBIDDEN = ("<tool_call>", "</think>", "<think>", "<|im_end|>", "<|endoftext|>", "</parameter>")
piece = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["<", ">", "</", "<tool", "</function>", "<function=x>", "<|im_start|>", "\n", " ", "é"]),
)
free_text = st.lists(piece, max_size=5).map("".join).filter(lambda t: not any(f in t for f in FORBIDDEN))
canonical_text = st.one_of(st.none(), free_text.map(str.strip).filter(bool))

SCHEMAS: dict[str, tuple[dict[str, Any], st.SearchStrategy[Any]]] = {
    "s": ({"type": "string"}, free_text),
    "i": ({"type": "integer"}, st.integers()),
    "n": ({"type": "number"}, st.one_of(
        st.integers(-(2**53) + 1, 2**53 - 1),
        st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: not x.is_integer() or abs(x) >= 2**53),
    )),
    "b": ({"type": "boolean"}, st.booleans()),
    "z": ({"type": ["integer", "null"]}, st.one_of(st.none(), st.integers())),
    "o": ({"type": "object"}, st.dictionaries(st.text(max_size=3), st.one_of(st.integers(), free_text), max_size=3)),
    "a": ({"type": "array"}, st.lists(st.one_of(st.booleans(), free_text), max_size=3)),
    "ns": ({"type": ["string", "null"]}, free_text.filter(lambda t: t.strip().lower() != "null")),
}
TOOLS = [
    {"type": "function", "function": {"name": "tool one", "parameters": {
        "type": "object", "properties": {k: schema for k, (schema, _) in SCHEMAS.items()}}}},
    {"type": "function", "function": {"name": "t\nwo", "parameters": {"type": "object", "properties": {}}}},
]


@st.composite
def canonical_calls(draw: st.DrawFn) -> list[dict[str, Any]]:
    calls = []
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            keys = draw(st.lists(st.sampled_from(sorted(SCHEMAS)), unique=True, max_size=4))
            arguments = {k: draw(SCHEMAS[k][1]) for k in keys}
            calls.append({"type": "function", "function": {"name": "tool one", "arguments": arguments}})
        else:
            # A tool without declared parameters: every value is a string.
            arguments = draw(st.dictionaries(st.sampled_from(["p", "q r", "é"]), free_text, max_size=2))
            calls.append({"type": "function", "function": {"name": "t\nwo", "arguments": arguments}})
    return calls


@pytest.mark.jinja
@pytest.mark.parametrize("template", ["chatml_multi_system.jinja", "chatml_upstream.jinja"])
@pytest.mark.parametrize("thinking", [True, False])
@differential_settings
@given(reasoning=canonical_text, content=canonical_text, calls=canonical_calls(), with_system=st.booleans())
def test_round_trip_through_the_template(template: str, thinking: bool, reasoning: str | None,
                                         content: str | None, calls: list[dict[str, Any]], with_system: bool) -> None:
    if not thinking:
        reasoning = None
    options = {} if thinking else {"enable_thinking": False}
    history: list[dict[str, Any]] = [{"role": "system", "content": "sys"}] if with_system else []
    history.append({"role": "user", "content": "question"})
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = calls
    status, prompt = render_jinja(template, history, TOOLS, True, **options)
    assert status == "ok"
    status, full = render_jinja(template, [*history, message], TOOLS, False, **options)
    assert status == "ok"
    assert full.startswith(prompt)
    completion = full[len(prompt):]
    expected = AssistantReply(
        content=content,
        reasoning=reasoning,
        tool_calls=tuple(
            ToolCall(c["function"]["name"], c["function"]["arguments"], f"call_{i}") for i, c in enumerate(calls)
        ),
    )
    for fmt in (FMT, SAFETY):
        assert fmt.parse(completion, TOOLS, id_factory=counting_ids(), **options) == expected


# --- Robustness and coverage. -----------------------------------------------------------------------


def pieces_of(reply: AssistantReply) -> list[str]:
    out = [reply.reasoning or "", reply.content or ""]
    for c in reply.tool_calls:
        out.append(c.name)
        assert isinstance(c.arguments, dict)
        for key, value in c.arguments.items():
            out += [key, value]
    return out


MARKER_TEXTS = ["<think>", "</think>", "<tool_call>", "</tool_call>", "</function>", "</parameter>",
                "<|im_end|>", "<|endoftext|>", "<function=", "<parameter=", ">"]


# One pass from left to right, the longest marker first at each position: taking a marker out never
# forms another from the text around it ("<tool_</think>call>" keeps "<tool_call").
_MARKER = re.compile("|".join(map(re.escape, sorted(MARKER_TEXTS, key=len, reverse=True))))


def without_markers(text: str) -> str:
    return "".join(_MARKER.sub("", text).split())


def kept_characters(reply: AssistantReply) -> list[str]:
    """The reply's characters, markers and whitespace aside, each piece on its own (exact for replies
    whose pieces spell no marker the input did not hold; see :func:`reply_characters`)."""
    return sorted("".join(without_markers(piece) for piece in pieces_of(reply)))


def reply_characters(reply: AssistantReply) -> Counter[str]:
    """Every character of the reply's pieces, whitespace aside. Markers are not taken out: a piece can
    join text from both sides of a call and so spell a marker the input never held ("<tool_call"
    before the call, ">" after it, content "<tool_call>"), and two pieces side by side can too."""
    return Counter("".join("".join(piece.split()) for piece in pieces_of(reply)))


@pytest.mark.parametrize("thinking", [True, False])
@differential_settings
@given(text=st.one_of(completions(CHATML_MARKERS), st.text(), st.binary().map(lambda b: b.decode("utf-8", "replace"))))
@example(text="<think</think>>")
@example(text="<tool_</think>call>")
@example(text="<tool_call<tool_call>\n<function=get_weather>>")
def test_any_text_parses_and_nothing_is_lost(thinking: bool, text: str) -> None:
    options = {} if thinking else {"enable_thinking": False}
    reply = parse(text, **options)  # never raises
    body = text
    for stop in ("<|im_end|>", "<|endoftext|>"):
        body = body.split(stop)[0]
    kept = reply_characters(reply)
    # Every character of the input, markers and whitespace aside, is in a piece of the reply ...
    assert not Counter(without_markers(body)) - kept
    # ... and the reply holds no character the input did not (each piece is the input's own text).
    assert not kept - Counter("".join(body.split()))


@differential_settings
@given(text=completions(CHATML_MARKERS))
def test_any_text_with_tools_parses(text: str) -> None:
    reply = parse(text, TOOLS)
    for index, c in enumerate(reply.tool_calls):
        if c.name not in ("tool one", "t\nwo"):  # a tool not offered: a call only with its note
            assert f"tool call {index} ({c.name}) to a tool not offered: read as a call, its values untyped" in (
                reply.notes)
            assert not any(ch in "{}'\"" or ch.isspace() for ch in c.name)
        json.loads(c.arguments_json())  # arguments always serialise


def test_cut_at_every_position_never_raises_and_loses_nothing() -> None:
    full = (
        "<think>plan</think>\n\nok\n\n<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n"
        "<parameter=where>\n{\"a\": [1, 2]}\n</parameter>\n</function>\n</tool_call><|im_end|>"
    )
    for cut in range(len(full) + 1):
        text = full[:cut]
        parse(text, [WEATHER])
        reply = parse(text)
        body = text.split("<|im_end|>")[0]
        assert kept_characters(reply) == sorted(without_markers(body))


def test_infinite_float_is_not_a_number() -> None:
    assert typed_parameter_value("1e999", {"type": "number"}) == "1e999"
    assert not math.isinf(typed_parameter_value("1e300", {"type": "number"}))


def test_long_names_do_not_open_calls() -> None:
    name = "n" * 257
    reply = parse(f"</think><tool_call><function={name}></function>")
    assert reply.tool_calls == () and reply.content is not None and name in reply.content

