"""DeepSeek-V3's reply parser: reasoning to ``</think>`` (the generation prompt opens it), content,
calls in json code blocks; any split streams to the one-shot parse; vLLM's ``deepseek_v3`` tool
parser's public test vectors agree (after the reasoning's end, which its reasoning parser takes off
first), or differ where this page says why."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.oracles import render_jinja_as_transformers
from tests.support.parser_cases import DEEPSEEK_MARKERS, completions, counting_ids, splits, stream
from tests.support.strategies import differential_settings

FMT = pf.get_format("deepseek-v3")
BEGIN, CALL, SEP, END, CALLS_END, EOS = ("<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>",
                                         "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>", "<｜end▁of▁sentence｜>")


def call(name: str, arguments: str) -> str:
    return f"{CALL}function{SEP}{name}\n```json\n{arguments}\n```{END}"


def summary(completion: str) -> tuple[Any, ...]:
    reply = FMT.parse(completion, id_factory=counting_ids())
    return (reply.reasoning, reply.content, [(c.name, c.arguments) for c in reply.tool_calls], len(reply.malformed),
            reply.notes)


PARIS = call("get_weather", '{"city": "Paris"}')
LISTED = call("b", '{"x": [1]}')
CASES = [
    ("Just thinking", ("Just thinking", None, [], 0, ())),
    ("Hmm.</think>\n\nHello.", ("Hmm.", "Hello.", [], 0, ())),
    ("Hmm.</think>Hello.<｜end▁of▁sentence｜>", ("Hmm.", "Hello.", [], 0, ())),
    (f"r</think>Let me check.{BEGIN}{PARIS}{CALLS_END}{EOS}",
     ("r", "Let me check.", [("get_weather", {"city": "Paris"})], 0, ())),
    (f"</think>{BEGIN}{call('a', '{}')}\n{LISTED}{CALLS_END}",
     (None, None, [("a", {}), ("b", {"x": [1]})], 0, ())),
    (f"</think>{BEGIN}{call('a', 'not json')}{CALLS_END}", (None, None, [("a", "not json")], 1, ())),
    (f"</think>{BEGIN}{CALL}function{SEP}a\n```json\n{{}}", (None, f"{CALL}function{SEP}a\n```json\n{{}}", [], 1, ())),
    (f"</think>x{EOS}more", (None, "x", [], 0, ("text after the end of the reply ('<｜end▁of▁sentence｜>') ignored",))),
    (f"r{BEGIN}{call('a', '{}')}{CALLS_END}", ("r", None, [("a", {})], 0, ())),
]


@pytest.mark.parametrize(("completion", "expected"), CASES)
def test_parse(completion: str, expected: tuple[Any, ...]) -> None:
    assert summary(completion) == expected


# vLLM's tests/tool_parsers/test_deepseekv3_tool_parser.py (ToolParserTestConfig of "deepseek_v3"):
# each output with what its tests expect. vLLM runs the reasoning parser first: "</think>" ends it here.
VLLM_SINGLE = (f"{BEGIN}{CALL}function{SEP}get_weather\n```json\n"
               '{"city": "Tokyo", "unit": "celsius"}\n```' f"{END}{CALLS_END}")
VLLM_PARALLEL = (f"{BEGIN}{CALL}function{SEP}get_weather\n```json\n" '{"city": "Tokyo", "unit": "celsius"}\n```'
                 f"{END}{CALL}function{SEP}search_hotels\n```json\n"
                 '{"location": "Tokyo", "check_in": "2025-01-15"}\n```' f"{END}{CALLS_END}")
VLLM_TYPES = (f"{BEGIN}{CALL}function{SEP}test_function\n```json\n"
              '{"string_field": "hello", "int_field": 42, "float_field": 3.14, "bool_field": true, '
              '"null_field": null, "array_field": ["a", "b", "c"], "object_field": {"nested": "value"}, '
              '"empty_array": [], "empty_object": {}}\n```' f"{END}{CALLS_END}")
VLLM_ESCAPED = (f"{BEGIN}{CALL}function{SEP}send_message\n```json\n"
                '{"text": "He said \\"hello\\"", "path": "C:\\\\Users\\\\file", "newline": "line1\\nline2"}\n```'
                f"{END}{CALLS_END}")


def test_vllm_vectors_agree() -> None:
    assert summary("</think>How can I help you today? I can check weather for you.") == (
        None, "How can I help you today? I can check weather for you.", [], 0, ())
    assert summary("</think>" + VLLM_SINGLE)[1:3] == (None, [("get_weather", {"city": "Tokyo", "unit": "celsius"})])
    assert [name for name, _ in summary("</think>" + VLLM_PARALLEL)[2]] == ["get_weather", "search_hotels"]
    assert summary("</think>" + VLLM_TYPES)[2] == [("test_function", {
        "string_field": "hello", "int_field": 42, "float_field": 3.14, "bool_field": True, "null_field": None,
        "array_field": ["a", "b", "c"], "object_field": {"nested": "value"}, "empty_array": [], "empty_object": {}})]
    assert summary(f"</think>{BEGIN}{CALL}function{SEP}get_current_time\n```json\n{{}}\n```{END}{CALLS_END}")[2] == [
        ("get_current_time", {})]
    assert summary("</think>Let me check the weather for you." + VLLM_SINGLE.replace(
        '{"city": "Tokyo", "unit": "celsius"}', '{"city": "Paris"}'))[1:3] == (
        "Let me check the weather for you.", [("get_weather", {"city": "Paris"})])
    assert summary("</think>" + VLLM_ESCAPED)[2] == [
        ("send_message", {"text": 'He said "hello"', "path": "C:\\Users\\file", "newline": "line1\nline2"})]


def test_vllm_malformed_vectors() -> None:
    # No call without its <｜tool▁call▁begin｜>, as vLLM's tests expect: the text is content, noted.
    missing_begin = f"{BEGIN}function{SEP}get_weather\n```json\n" '{"city": "Tokyo"}\n```' f"{CALLS_END}"
    _, content, calls, malformed, _ = summary("</think>" + missing_begin)
    assert calls == [] and malformed == 1 and content is not None
    # Arguments that are not JSON: vLLM reports no call; here the call is kept with its text, noted in
    # malformed (as every parser of this package keeps a call whose arguments are not a JSON object).
    bad_json = f"{BEGIN}{CALL}function{SEP}get_weather\n```json\n" '{"city": "Tokyo"\n```' f"{END}{CALLS_END}"
    assert summary("</think>" + bad_json)[2:4] == ([("get_weather", '{"city": "Tokyo"')], 1)


@differential_settings
@given(data=st.data())
def test_any_split_streams_to_the_one_shot_parse(data: st.DataObject) -> None:
    text = data.draw(completions(DEEPSEEK_MARKERS), label="completion")
    deltas = data.draw(splits(text), label="deltas")
    _, streamed = stream(lambda: FMT.stream_parser(id_factory=counting_ids()), deltas)
    assert streamed == FMT.parse(text, id_factory=counting_ids())


@pytest.mark.jinja
def test_a_reply_of_calls_alone_goes_back_with_empty_content() -> None:
    # docs/deepseek.md: to_openai()'s None is refused, as transformers refuses it; "" renders as the
    # template's own branch for a missing content writes the call (checked against Jinja2).
    reply = FMT.parse('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"a": 1}\n```'
                      "<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>", id_factory=counting_ids())
    sent_back = reply.to_openai()
    assert sent_back["content"] is None and reply.malformed == ()
    history = [{"role": "user", "content": "Hi"}]
    with pytest.raises(pf.InvalidInputError):
        FMT.render([*history, sent_back])
    ours = FMT.render([*history, {**sent_back, "content": ""}])
    bos = "<｜begin▁of▁sentence｜>"
    assert render_jinja_as_transformers("families/deepseekv3.jinja", [*history, {**sent_back, "content": ""}],
                                        bos_token=bos) == ("ok", ours)
    assert ours.endswith('<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n'
                         '{"a": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>')
