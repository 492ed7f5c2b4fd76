"""Regression tests of issue 13's parsing defects: huge integers, deep schemas, a late ``</think>``,
repeated parameters, calls cut off by the end of the completion.

Each case is also streamed (whole, and one character at a time) to check stream == parse.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats._text.unbounded import unbounded_compact_json
from prompt_formats.formats.chatml import schema_types
from prompt_formats.model.messages import AssistantReply, ToolCall
from tests.support.parser_cases import counting_ids, splits, stream
from tests.support.strategies import differential_settings

CHATML = pf.get_format("chatml-multi-system")
HARMONY = pf.get_format("harmony")
# More digits than Python converts by default (the limit is 4300; the test reads the process's own).
DIGITS = max(sys.get_int_max_str_digits(), 4300) + 700


def tool(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": properties}}}


def parse_both(fmt: pf.ChatFormat, text: str, tools: Any = None, **context: Any) -> AssistantReply:
    """``fmt.parse(text)``, after checking that streaming it whole and one character at a time gives the same."""
    whole = fmt.parse(text, tools, id_factory=counting_ids(), **context)
    for deltas in ([text], list(text)):
        _, streamed = stream(lambda: fmt.stream_parser(tools, id_factory=counting_ids(), **context), deltas)
        assert streamed == whole
    return whole


def chatml_call(name: str, *params: tuple[str, str]) -> str:
    body = "".join(f"<parameter={p}>\n{v}\n</parameter>\n" for p, v in params)
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


# --- Item 2: integers with more digits than Python converts. ----------------------------------------


@pytest.mark.parametrize("kind", ["integer", "number", ["integer", "null"]])
def test_huge_integer_parameter_stays_text_with_a_note(kind: Any) -> None:
    digits = "7" * DIGITS
    text = "</think>" + chatml_call("f", ("n", digits))
    reply = parse_both(CHATML, text, [tool("f", {"n": {"type": kind}})])
    assert reply.tool_calls[0].arguments == {"n": digits}
    # Written as the format says (only this process cannot convert it): a note, nothing malformed.
    assert reply.malformed == () and len(reply.notes) == 1
    assert "'n'" in reply.notes[0] and "digits" in reply.notes[0]
    assert json.loads(reply.to_openai()["tool_calls"][0]["function"]["arguments"]) == {"n": digits}


def test_huge_integer_inside_an_array_parameter_stays_text_with_a_note() -> None:
    value = "[1, " + "3" * DIGITS + "]"
    reply = parse_both(CHATML, "</think>" + chatml_call("f", ("xs", value)), [tool("f", {"xs": {"type": "array"}})])
    assert reply.tool_calls[0].arguments == {"xs": value}
    assert reply.malformed == () and len(reply.notes) == 1 and "digits" in reply.notes[0]


def test_ordinary_integers_are_still_typed_without_a_note() -> None:
    reply = parse_both(CHATML, "</think>" + chatml_call("f", ("n", "9" * 600)), [tool("f", {"n": {"type": "integer"}})])
    assert reply.tool_calls[0].arguments == {"n": 10**600 - 1}
    assert (reply.malformed, reply.notes) == ((), ())


def test_harmony_huge_integer_arguments_are_kept_raw_with_a_note() -> None:
    body = '{"n": ' + "5" * DIGITS + "}"
    reply = parse_both(HARMONY, "<|channel|>commentary to=functions.f <|constrain|>json<|message|>" + body + "<|call|>")
    assert reply.tool_calls[0].arguments == body
    # The arguments as a whole could not be read (kept raw): malformed, unlike a ChatML value kept as text.
    assert len(reply.malformed) == 1 and "digits" in reply.malformed[0] and reply.notes == ()


# Numbers beyond a double's range: Python reads 1e400 as infinity, which no JSON text writes back
# (a call's argument text then said null). Kept as the model wrote them, as an integer too long is.
DEEPSEEK_CALL = ("<\uff5ctool\u2581calls\u2581begin\uff5c><\uff5ctool\u2581call\u2581begin\uff5c>function"
                 "<\uff5ctool\u2581sep\uff5c>f\n")
TOO_LARGE = [
    ("llama-3.1", '{"name": "f", "parameters": {"x": 1e400}}<|eot_id|>', None),
    ("llama-3.1", '{"name": "f", "parameters": [-1e400]}<|eot_id|>', None),
    ("qwen3", '<tool_call>\n{"name": "f", "arguments": {"x": 1e400}}\n</tool_call>', None),
    ("chatml-multi-system", "</think>" + chatml_call("f", ("a", "[1e400]")), [tool("f", {"a": {"type": "array"}})]),
    ("chatml-multi-system", "</think>" + chatml_call("f", ("a", '{"b": 1e400}')),
     [tool("f", {"a": {"type": "object"}})]),
    ("deepseek-v3", DEEPSEEK_CALL + '```json\n{"x": 1e400}\n```<\uff5ctool\u2581call\u2581end\uff5c>', None),
    ("harmony", '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"x": 1e400}<|call|>', None),
    ("gpt-oss", '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"x": 1e400}<|call|>', None),
    ("glm-4.5", "<tool_call>f\n<arg_key>x</arg_key>\n<arg_value>[1e400]</arg_value>\n</tool_call>", None),
]


@pytest.mark.parametrize(("name", "text", "tools"), TOO_LARGE)
def test_a_number_beyond_a_doubles_range_stays_as_the_model_wrote_it(name: str, text: str, tools: Any) -> None:
    reply = parse_both(pf.get_format(name), text, tools)
    number = re.search(r"-?1e400", text).group()  # type: ignore[union-attr]
    assert number in json.dumps(reply.to_openai())  # in a call's arguments, or in the content
    for call in reply.tool_calls:
        sent = call.arguments_json()
        assert number in sent and "null" not in sent
        if isinstance(call.arguments, dict):
            assert json.loads(sent) == call.arguments


def test_arguments_json_writes_integers_beyond_the_conversion_limit() -> None:
    ones = (10**DIGITS - 1) // 9  # DIGITS ones, built without a decimal conversion
    near = -(10**DIGITS + 7)
    call = ToolCall("f", {"a": ones, "b": [near, {"c": ones}], "d": 1.5, "e": "x"}, "call_0")
    expected = (
        '{"a":' + "1" * DIGITS + ',"b":[-1' + "0" * (DIGITS - 1) + '7,{"c":' + "1" * DIGITS + '}],"d":1.5,"e":"x"}'
    )
    assert call.arguments_json() == expected
    reply = AssistantReply(tool_calls=(call,))
    assert reply.to_openai()["tool_calls"][0]["function"]["arguments"] == expected


def test_arguments_json_of_deeply_nested_arguments() -> None:
    value: Any = "x"
    for _ in range(5000):
        value = [value]
    assert ToolCall("f", {"a": value}).arguments_json() == '{"a":' + "[" * 5000 + '"x"' + "]" * 5000 + "}"


def test_command_parse_with_a_huge_integer(tmp_path: Path) -> None:
    digits = "8" * DIGITS
    record = {"id": "r1", "tools": [tool("f", {"n": {"type": "integer"}})],
              "completion": "</think>" + chatml_call("f", ("n", digits))}
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(record) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "prompt_formats", "parse", "-f", "chatml-multi-system", str(source)],
        capture_output=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    out = json.loads(line)
    assert json.loads(out["message"]["tool_calls"][0]["function"]["arguments"]) == {"n": digits}
    assert "malformed" not in out
    assert len(out["notes"]) == 1 and "digits" in out["notes"][0]


# --- Item 4 (part): a schema of 1,000 nested anyOf. -------------------------------------------------


def nested_any_of(depth: int, inner: dict[str, Any]) -> dict[str, Any]:
    schema = inner
    for _ in range(depth):
        schema = {"anyOf": [schema]}
    return schema


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_deeply_nested_any_of_types_the_value(depth: int) -> None:
    schema = nested_any_of(depth, {"type": "integer"})
    assert schema_types(schema) == {"integer"}
    reply = parse_both(CHATML, "</think>" + chatml_call("f", ("n", "5")), [tool("f", {"n": schema})])
    assert reply.tool_calls[0].arguments == {"n": 5}
    reply = parse_both(HARMONY, '<|channel|>commentary to=functions.f<|message|>{"n": 5}<|call|>',
                       [tool("f", {"n": schema})])
    assert reply.tool_calls[0].arguments == {"n": 5}


def test_enum_hint_of_a_deep_branch_is_read() -> None:
    assert schema_types(nested_any_of(2_000, {"enum": [1, "a"]})) == {"integer", "string"}
    assert schema_types({"anyOf": [{"enum": [True]}, {"type": "null"}]}) == {"boolean", "null"}


def test_cyclic_schema_neither_hangs_nor_raises() -> None:
    schema: dict[str, Any] = {"type": "integer"}
    schema["anyOf"] = [schema, {"type": "null"}]
    assert schema_types(schema) == {"integer", "null"}


# --- Item 15: a '</think>' after the tool call that ended the reasoning. ----------------------------


def test_late_think_end_after_a_call_is_not_content() -> None:
    text = (
        "<think>verify result\n<tool_call>\n<function=Finish>\n<parameter=answer>\n204\n</parameter>\n"
        "</function>\n</tool_call></think>Here is the answer."
    )
    reply = parse_both(CHATML, text)
    assert reply.content == "Here is the answer."
    assert reply.reasoning == "verify result"
    assert reply.tool_calls == (ToolCall("Finish", {"answer": "204"}, "call_0"),)


@pytest.mark.parametrize("thinking", [True, False])
def test_late_think_end_after_several_calls_and_text(thinking: bool) -> None:
    text = "<think>r" + chatml_call("a") + "\n" + chatml_call("b") + "\nmore\n</think>\n\nanswer"
    reply = parse_both(CHATML, text, enable_thinking=thinking)
    assert "</think>" not in (reply.content or "")
    assert reply.content == "more\n\n\nanswer"
    assert [c.name for c in reply.tool_calls] == ["a", "b"]


def test_think_end_is_text_when_the_reasoning_ended_with_its_marker() -> None:
    # Only the marker that closes the reasoning is structure; the template's own shape is unchanged.
    reply = parse_both(CHATML, "r\n</think>\n\na </think> b")
    assert (reply.reasoning, reply.content) == ("r", "a </think> b")


# --- Item 16: a repeated parameter. -----------------------------------------------------------------


def test_repeated_parameter_keeps_the_first_and_the_repeat_as_text() -> None:
    text = ("<tool_call>\n<function=w>\n<parameter=a>\n1\n</parameter>\n<parameter=a>\n2\n</parameter>\n"
            "</function>\n</tool_call>")
    reply = parse_both(CHATML, text, enable_thinking=False)
    assert reply.tool_calls == (ToolCall("w", {"a": "1"}, "call_0"),)
    assert reply.content == "<parameter=a>\n2\n</parameter>"
    assert len(reply.malformed) == 1
    assert "'a'" in reply.malformed[0] and "repeated" in reply.malformed[0]


def test_repeats_keep_the_whitespace_between_them() -> None:
    text = "</think>" + chatml_call("w", ("a", "1"), ("b", "x"), ("a", "2"), ("a", "3"))
    reply = parse_both(CHATML, text)
    assert reply.tool_calls == (ToolCall("w", {"a": "1", "b": "x"}, "call_0"),)
    assert reply.content == "<parameter=a>\n2\n</parameter>\n<parameter=a>\n3\n</parameter>"
    assert len(reply.malformed) == 2


def test_repeated_parameter_in_a_malformed_call_stays_in_place() -> None:
    text = "<tool_call>\n<function=w>\n<parameter=a>\n1\n</parameter>\n<parameter=a>\n2\n</parameter>\njunk"
    reply = parse_both(CHATML, text, enable_thinking=False)
    # The call was announced at "<function=w>": the stray text ends it; the repeat and the text are content.
    assert reply.content == "<parameter=a>\n2\n</parameter>\njunk"
    assert reply.tool_calls == (ToolCall("w", {"a": "1"}, "call_0"),)
    assert reply.malformed == (
        "tool call 0 (w): parameter 'a' repeated: the first value kept, the repeat kept as text",
        "tool call 0 (w) has text outside its parameters: the call ends there with the arguments read so far, "
        "the text kept as content",
    )


# --- Item 17: calls cut off by the end of the completion: one rule for both formats. ----------------


def test_harmony_cut_off_call_is_a_call_named_as_cut_off() -> None:
    header = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
    reply = parse_both(HARMONY, header + '{"city":"Par')
    assert reply.tool_calls == (ToolCall("get_weather", '{"city":"Par', "call_0"),)
    assert reply.content is None
    assert reply.malformed == ("tool call 0 (get_weather) cut off by the end of the completion: "
                               "kept with the arguments written so far",)


def test_harmony_complete_arguments_without_an_end_marker_are_not_cut_off() -> None:
    # Servers strip the stop token (<|call|>): a complete JSON object at the end is a complete call.
    reply = parse_both(HARMONY, '<|channel|>commentary to=functions.f<|message|>{"a": 1}')
    assert reply.tool_calls == (ToolCall("f", {"a": 1}, "call_0"),)
    assert reply.malformed == ()


CUT_OFF = "tool call 0 (w) cut off by the end of the completion: kept with the arguments written so far"


@pytest.mark.parametrize(("text", "arguments", "note"), [
    ("<tool_call>\n<function=w>", {}, CUT_OFF),
    ("<tool_call>\n<function=w>\n<parameter=a>\n1\n</parameter>\n", {"a": 1}, CUT_OFF),
    ("<tool_call>\n<function=w>\n<parameter=a>\n1\n</parameter>\n<parameter=b>\nPar", {"a": 1, "b": "Par"}, CUT_OFF),
    ("<tool_call>\n<function=w>\n<parameter=b>\n12", {"b": "12"}, CUT_OFF),
    ("<tool_call>\n<function=w>\n<parameter=b>\nx\n</param", {"b": "x\n</param"}, CUT_OFF),
    ("<tool_call>\n<function=w>\n<parameter=a>\n1\n</parameter>\n<parameter=b", {"a": 1},
     CUT_OFF + " (the unfinished '<parameter=b' kept as text)"),
    ("<tool_call>\n<function=w>\n<parameter=a>\n1\n</parameter>\n</func", {"a": 1},
     CUT_OFF + " (the unfinished '</func' kept as text)"),
    ("<tool_call>\n<function=w>\n<parameter=a>\n1\n</parameter>\n<|im_end|>", {"a": 1}, CUT_OFF),
    ("<tool_call>\n<function=w>\n<parameter=b>\nPa<|im_end|>ignored", {"b": "Pa"}, CUT_OFF),
])
def test_chatml_cut_off_call_is_a_call_named_as_cut_off(text: str, arguments: dict[str, Any], note: str) -> None:
    tools = [tool("w", {"a": {"type": "integer"}, "b": {"type": "integer"}})]
    reply = parse_both(CHATML, text, tools, enable_thinking=False)
    assert reply.tool_calls == (ToolCall("w", arguments, "call_0"),)
    unfinished = note.partition("unfinished ")[2].partition("' kept")[0][1:]
    assert reply.content == (unfinished or None)
    assert reply.malformed[0] == note


def test_chatml_cut_off_call_to_an_unknown_tool_is_a_call_cut_off() -> None:
    text = "<tool_call>\n<function=nope>\n<parameter=a>\n1"
    reply = parse_both(CHATML, text, [tool("w", {})], enable_thinking=False)
    assert reply.tool_calls == (ToolCall("nope", {"a": "1"}, "call_0"),)
    assert reply.content is None
    assert reply.malformed[-1].startswith("tool call 0 (nope) cut off by the end of the completion")


# --- Property: what a prefix of a well-formed completion gives (the rule for calls cut off). --------
#
# Every call seen in a prefix is in every longer prefix, under the same index, id and name (an announced
# call cannot be taken back); a call that is not complete yet is named in a "cut off" note; stream ==
# parse for the prefix, however it is split.

_VALUE_TEXT = st.text(st.sampled_from("ab1 \n{}\"<>/é"), max_size=8)
_NAMES = st.sampled_from(["f", "get_weather", "do.it"])
# Where each format announces a call: once its name is read.
_OPENINGS = {
    "chatml-multi-system": re.compile(r"<tool_call>\n<function=[^<>]+>"),
    "harmony": re.compile(r"to=functions\.\S+ <\|constrain\|>json<\|message\|>"),
}


def _chatml_completion(reasoning: str, content: str, calls: list[tuple[str, dict[str, str]]]) -> str:
    text = f"{reasoning}\n</think>\n\n{content}"
    for name, arguments in calls:
        params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in arguments.items())
        text += f"\n\n<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"
    return text + "<|im_end|>"


def _harmony_completion(reasoning: str, content: str, calls: list[tuple[str, dict[str, str]]]) -> str:
    text = (f"<|channel|>analysis<|message|>{reasoning}<|end|>"
            f"<|start|>assistant<|channel|>final<|message|>{content}<|end|>")
    for name, arguments in calls:
        text += (f"<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>"
                 f"{json.dumps(arguments)}<|call|>")
    return text


_REPLIES = st.tuples(
    st.text(st.sampled_from("ab \n"), max_size=6),
    st.text(st.sampled_from("cd \n"), max_size=6),
    st.lists(st.tuples(_NAMES, st.dictionaries(st.sampled_from(["x", "y"]), _VALUE_TEXT, max_size=2)), max_size=3),
)


def _check_prefixes(fmt: pf.ChatFormat, full: str, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(full)), min_size=1, max_size=4)))
    earlier: tuple[ToolCall, ...] = ()
    for cut in [*cuts, len(full)]:
        text = full[:cut]
        reply = fmt.parse(text, id_factory=counting_ids())
        deltas = data.draw(splits(text))
        assert stream(lambda: fmt.stream_parser(id_factory=counting_ids()), deltas)[1] == reply
        calls = reply.tool_calls
        assert len(calls) == len(_OPENINGS[fmt.name].findall(text))
        assert [(c.id, c.name) for c in calls[: len(earlier)]] == [(c.id, c.name) for c in earlier]
        for index, call_ in enumerate(calls):
            if not any(note.startswith(f"tool call {index} ({call_.name}) cut off") for note in reply.malformed):
                assert call_.arguments is not None and not isinstance(call_.arguments, str)
        earlier = calls


@differential_settings
@given(reply=_REPLIES, data=st.data())
def test_chatml_prefixes_keep_their_calls(reply: Any, data: st.DataObject) -> None:
    reasoning, content, calls = reply
    calls = [(name, {k: v for k, v in arguments.items() if "</parameter>" not in v}) for name, arguments in calls]
    _check_prefixes(CHATML, _chatml_completion(reasoning, content, calls), data)


@differential_settings
@given(reply=_REPLIES, data=st.data())
def test_harmony_prefixes_keep_their_calls(reply: Any, data: st.DataObject) -> None:
    _check_prefixes(HARMONY, _harmony_completion(*reply), data)


_JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text()),
    lambda kids: st.one_of(
        st.lists(kids, max_size=3),
        st.tuples(kids, kids),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers(), st.floats(), st.booleans(), st.none()),
                        kids, max_size=3),
    ),
    max_leaves=10,
)


@differential_settings
@given(value=_JSON_VALUES)
def test_unbounded_writer_is_json_dumps_where_json_dumps_writes(value: Any) -> None:
    assert unbounded_compact_json(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_unbounded_writer_refuses_what_json_dumps_refuses() -> None:
    looped: list[Any] = []
    looped.append(looped)
    for bad, error in ((looped, ValueError), ({"a": {1, 2}}, TypeError), ({(1,): 2}, TypeError)):
        with pytest.raises(error) as ours:
            unbounded_compact_json(bad)
        with pytest.raises(error) as reference:
            json.dumps(bad, separators=(",", ":"))
        assert str(ours.value) == str(reference.value)
