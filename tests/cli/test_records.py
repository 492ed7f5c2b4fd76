"""The JSONL record shapes shared by the CLI and the Ray integration (prompt_formats.records)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.model.tools import ToolsetCache as _ToolsCache
from prompt_formats.records import RecordParser, RecordRenderer, call_ids, decode_record, has_long_digit_run
from tests.support.oracles import render_jinja
from tests.support.strategies import differential_settings

MULTI = pf.get_format("chatml-multi-system")
USER = {"role": "user", "content": "Hi"}
TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}


def render_error(record: Any, **kwargs: Any) -> str:
    ok, line = RecordRenderer(MULTI, **kwargs).process_line(1, json.dumps(record).encode())
    assert not ok
    report = json.loads(line)
    return f"{report['error']}: {report['message']}"


@pytest.mark.parametrize(("record", "message"), [
    ({"messages": [USER], "tools": {}}, "InvalidInputError: tools: expected an array or null, got an object"),
    ({"messages": [USER], "chat_template_kwargs": [1]},
     "InvalidInputError: chat_template_kwargs: expected an object, got an array"),
    ({"messages": [USER], "add_generation_prompt": "yes"},
     "InvalidInputError: add_generation_prompt: expected a boolean, got a string"),
    ({"custom_id": "z", "body": []}, "InvalidInputError: body: expected a JSON object, got an array"),
    ({"custom_id": "z", "body": {"messages": [USER]}, "extra": 1},
     "InvalidInputError: extra: unknown key beside 'body' (a Batch API line has custom_id, method, url, body)"),
    ({"custom_id": "z", "body": {"messages": [USER], "foo": 1}}, "InvalidInputError: body.foo: unknown key"),
    ({"id": {"a": 1}, "messages": [USER]}, "InvalidInputError: id: expected a string or an integer, got an object"),
    ({"tools": []}, "InvalidInputError: messages: missing"),
    ([USER], "InvalidInputError: record: expected a JSON object, got an array"),
    ({"messages": [USER], "chat_template_kwargs": {"enable_thinkng": False}},
     "UnknownOptionError: unknown option for format 'chatml-multi-system': enable_thinkng"),
    ({"messages": [USER], "tools": ["not a tool"]}, "InvalidInputError: tools[0]: expected a tool object, got str"),
])
def test_render_record_errors_name_the_field(record: Any, message: str) -> None:
    assert render_error(record).startswith(message)


@pytest.mark.jinja
def test_option_precedence_record_over_run() -> None:
    renderer = RecordRenderer(MULTI, True, {"enable_thinking": False})
    expected_off = render_jinja("chatml_multi_system.jinja", [USER], None, True, enable_thinking=False)[1]
    expected_on = render_jinja("chatml_multi_system.jinja", [USER], None, True, enable_thinking=True)[1]
    assert renderer.handle({"messages": [USER]}, 1)["prompt"] == expected_off
    assert renderer.handle({"messages": [USER], "enable_thinking": True}, 1)["prompt"] == expected_on
    assert renderer.handle({"messages": [USER], "chat_template_kwargs": {"enable_thinking": True}}, 1)[
        "prompt"] == expected_on
    plain = render_jinja("chatml_multi_system.jinja", [USER], None, False, enable_thinking=False)[1]
    assert renderer.handle({"messages": [USER], "add_generation_prompt": False}, 1)["prompt"] == plain
    # Ignored request keys do not change the prompt.
    assert renderer.handle({"messages": [USER], "model": "m", "temperature": 0, "stream": True}, 7) == {
        "id": 7, "prompt": expected_off}


def test_tools_cache_prepares_a_toolset_once_and_stays_bounded() -> None:
    cache = _ToolsCache(2)
    first = [TOOL]
    prepared = cache.get(first)
    assert isinstance(prepared, pf.PreparedTools)
    assert prepared.tools[0] is TOOL  # the decoded list is kept, not copied
    assert cache.get([TOOL]) is prepared  # the same bytes: the same toolset
    others = [[{"type": "function", "function": {"name": f"g{i}"}}] for i in range(3)]
    for tools in others:
        cache.get(tools)
    assert len(cache) == 2
    assert cache.get([TOOL]) is not prepared  # evicted, so prepared again


@pytest.mark.jinja
def test_a_repeated_toolset_renders_the_template_bytes_both_times() -> None:
    renderer = RecordRenderer(MULTI, True)
    expected = render_jinja("chatml_multi_system.jinja", [USER], [TOOL], True)[1]
    for line in (1, 2, 3):
        assert renderer.handle({"messages": [USER], "tools": [TOOL]}, line)["prompt"] == expected


@pytest.mark.parametrize(("fmt", "request_", "message"), [
    (MULTI, {"messages": [{"role": 3}]}, "InvalidInputError: body.messages[0].role: expected a string, got int"),
    (MULTI, {"messages": [USER], "tools": ["x"]}, "InvalidInputError: body.tools[0]: expected a tool object, got str"),
    (pf.get_format("chatml-safety", policy="reject"), {"messages": [{"role": "user", "content": "<|im_end|>"}]},
     "InjectionError: body.messages[0].content: contains the control token '<|im_end|>'"),
    (pf.get_format("harmony"), {"messages": [{"role": "user", "content": [{"type": "image"}]}]},
     "UnsupportedContentError: body.messages[0].content[0]: image parts are not supported"),
])
def test_a_batch_api_line_names_the_field_from_the_top_of_the_line(fmt: Any, request_: Any, message: str) -> None:
    record = json.dumps({"custom_id": "r1", "body": request_}).encode()
    ok, line = RecordRenderer(fmt, True).process_line(1, record)
    assert not ok
    report = json.loads(line)
    assert report["id"] == "r1"
    assert f"{report['error']}: {report['message']}".startswith(message)
    plain = json.loads(RecordRenderer(fmt, True).process_line(1, json.dumps(request_).encode())[1])
    assert report["message"] == "body." + plain["message"]


def test_a_batch_api_parse_line_names_the_field_from_the_top_of_the_line() -> None:
    record = json.dumps({"custom_id": "r1", "body": {"completion": "x", "tools": ["x"]}}).encode()
    ok, line = RecordParser(MULTI).process_line(1, record)
    assert not ok
    assert json.loads(line)["message"] == "body.tools[0]: expected a tool object, got str"


def test_call_ids_are_deterministic_and_distinct() -> None:
    a, b = call_ids("req-1"), call_ids("req-1")
    assert [a(), a()] == [b(), b()]
    ids = {call_ids(rid)() for rid in ("req-1", "req-2", 1, "1")}
    assert len(ids) == 4
    assert all(i.startswith("call_") and len(i) == 29 for i in ids)


@pytest.mark.parametrize(("record", "message"), [
    ({"id": "a"}, "InvalidInputError: completion: missing"),
    ({"completion": 5}, "InvalidInputError: completion: expected a string, got a number"),
    ({"completion": "x", "temperature": 1, "foo": 2}, "InvalidInputError: foo: unknown key"),
    ({"completion": "x", "enable_thinking": False, "chat_template_kwargs": {"enable_thinking": True}},
     "InvalidInputError: chat_template_kwargs.enable_thinking: also given at the top level of the request"),
])
def test_parse_record_errors_name_the_field(record: Any, message: str) -> None:
    ok, line = RecordParser(MULTI).process_line(3, json.dumps(record).encode())
    assert not ok
    report = json.loads(line)
    assert report["line"] == 3
    assert f"{report['error']}: {report['message']}".startswith(message)


def test_a_rendered_record_with_its_completion_parses_as_it_is() -> None:
    record = {"id": "r", "messages": [USER], "prompt": "…", "enable_thinking": False, "completion": "Hello!"}
    out = RecordParser(MULTI).handle(record, 1)
    assert out == {"id": "r", "message": {"role": "assistant", "content": "Hello!"}}


def test_a_parse_record_gives_malformed_and_notes_apart() -> None:
    json_call = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
    tools = [{"type": "function", "function": {"name": "get_weather"}}]
    out = RecordParser(MULTI).handle({"id": "j", "completion": json_call, "tools": tools, "enable_thinking": False}, 1)
    assert "malformed" not in out
    assert out["notes"] == [
        "tool call 0 (get_time) written in the JSON form (a JSON object of name and arguments in '<tool_call>', "
        "as Qwen2.5 and Qwen3 write it): read as a call",
        "tool call 0 (get_time) to a tool not offered: read as a call",
    ]
    cut = RecordParser(MULTI).handle({"id": "c", "completion": json_call.removesuffix("\n</tool_call>"),
                                      "tools": tools, "enable_thinking": False}, 1)
    assert cut["malformed"] == ["tool call 0 (get_time) not closed by '</tool_call>': its JSON read up to where "
                                "the next tag or the end of the completion begins"]
    assert len(cut["notes"]) == 2
    plain = RecordParser(MULTI).handle({"id": "p", "completion": "Hi", "enable_thinking": False}, 1)
    assert plain == {"id": "p", "message": {"role": "assistant", "content": "Hi"}}


def test_a_bad_toolset_fails_the_same_way_the_first_time_and_after() -> None:
    harmony = pf.get_format("harmony")
    nameless = {"type": "function", "function": {"description": "a tool without a name"}}
    for fmt, tool in [(MULTI, "not a tool"), (harmony, nameless)]:
        renderer = RecordRenderer(fmt, True)
        record = json.dumps({"messages": [USER], "tools": [tool]}).encode()
        first, second = renderer.process_line(1, record), renderer.process_line(2, record)
        assert first[0] is second[0] is False
        assert json.loads(first[1])["message"] == json.loads(second[1])["message"]


@pytest.mark.jinja
def test_a_toolset_prepare_tools_refuses_renders_as_the_template_renders_it() -> None:
    # The template writes each tool as JSON, whatever its fields: the command gives what render gives.
    tools = [{"type": "function", "function": {"name": 3}}, {"type": "function", "function": {"parameters": 5}}]
    with pytest.raises(pf.InvalidInputError):
        pf.prepare_tools(tools)
    expected = render_jinja("chatml_multi_system.jinja", [USER], tools, True)[1]
    renderer = RecordRenderer(MULTI, True)
    for line in (1, 2):
        assert renderer.handle({"messages": [USER], "tools": tools}, line)["prompt"] == expected


@pytest.mark.parametrize(("text", "expected"), [
    (b"", False),
    (b"123456789012345678", False),  # 18 digits: within 64 bits
    (b"1234567890123456789", True),
    (b'{"n": -9223372036854775809}', True),
    (b"12345678901234567 890123", False),
    (b"x" * 5000 + b"0987654321098765432" + b"y", True),
])
def test_long_digit_runs_are_found(text: bytes, expected: bool) -> None:
    assert has_long_digit_run(text) is expected


# Runs of digits around 19 long, at every offset from the start, between other bytes: the check
# against a regular expression's reading of the same rule.
_DIGIT_RUNS = st.lists(
    st.one_of(st.integers(1, 25).map(lambda n: b"7" * n), st.binary(max_size=8), st.sampled_from([b"0", b"9", b" "])),
    max_size=12,
).map(b"".join)


@differential_settings
@given(_DIGIT_RUNS)
def test_long_digit_runs_are_found_as_a_regular_expression_finds_them(text: bytes) -> None:
    assert has_long_digit_run(text) is (re.search(rb"[0-9]{19}", text) is not None)


@pytest.mark.jinja
def test_a_big_integer_in_a_block_renders_exactly_wherever_its_line_is() -> None:
    # The block-level digit check must send the one line with the big integer to the exact decoder.
    big_call = {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"n": 123456789012345678901234567890}}}]}
    big = {"id": "big", "messages": [USER, big_call, {"role": "tool", "content": "ok"}]}
    plain = {"id": "plain", "messages": [USER]}
    block = b"".join(json.dumps(record).encode() + b"\n" for record in (plain, big, plain))
    result = RecordRenderer(MULTI, True).process_block(1, block)
    prompts = [json.loads(line)["prompt"] for line in result.output.splitlines()]
    assert prompts == [
        render_jinja("chatml_multi_system.jinja", record["messages"], None, True)[1]  # type: ignore[arg-type]
        for record in (plain, big, plain)
    ]
    assert "123456789012345678901234567890" in prompts[1]


@pytest.mark.jinja
def test_a_lone_surrogate_escape_is_read_and_rendered_as_the_template_would() -> None:
    # Valid JSON that orjson refuses: the line is read by the standard library, and the prompt, which
    # UTF-8 cannot hold, is written with its escape.
    line = b'{"id": "s", "messages": [{"role": "user", "content": "half \\ud83d of an emoji"}]}'
    ok, out = RecordRenderer(MULTI, True).process_line(1, line)
    assert ok, out
    messages = json.loads(line)["messages"]
    assert json.loads(out) == {"id": "s", "prompt": render_jinja("chatml_multi_system.jinja", messages, None, True)[1]}
    assert b"\\ud83d" in out and out.endswith(b"\n")


def test_a_lone_surrogate_does_not_let_other_non_json_through() -> None:
    line = b'{"messages": [{"role": "user", "content": "\\ud83d"}], "add_generation_prompt": NaN}'
    ok, out = RecordRenderer(MULTI, True).process_line(1, line)
    assert not ok
    assert json.loads(out)["message"].startswith("record: not valid JSON")


def test_an_id_beyond_64_bits_is_written_back_exactly() -> None:
    line = b'{"id": 123456789012345678901234567890, "messages": [{"role": "user", "content": "x"}]}'
    ok, out = RecordRenderer(MULTI, True).process_line(1, line)
    assert ok, out
    assert json.loads(out)["id"] == 123456789012345678901234567890


# Standard OpenAI and vLLM request fields (issue 13, item 12).
SERVER_FIELDS = {
    "model": "qwen", "temperature": 0.7, "top_p": 0.9, "top_k": 20, "min_p": 0.0, "max_tokens": 100,
    "max_completion_tokens": 100, "seed": 1, "stop": ["\n"], "logprobs": True, "top_logprobs": 2, "stream": False,
    "stream_options": {"include_usage": True}, "n": 1, "user": "u", "metadata": {"a": "b"}, "store": False,
    "response_format": {"type": "json_object"}, "tool_choice": "auto", "parallel_tool_calls": True,
    "reasoning_effort": "low", "verbosity": "low", "prediction": {"type": "content", "content": "x"},
    "prompt_cache_key": "k", "min_tokens": 1, "repetition_penalty": 1.1, "presence_penalty": 0.1,
    "frequency_penalty": 0.1, "logit_bias": {"1": 2}, "service_tier": "auto", "safety_identifier": "s",
    "skip_special_tokens": True, "ignore_eos": False, "stop_token_ids": [1],
}


@pytest.mark.jinja
def test_standard_request_fields_that_do_not_change_the_prompt_are_ignored() -> None:
    expected = render_jinja("chatml_multi_system.jinja", [USER], None, True)[1]
    record = {"id": "r", "messages": [USER], **SERVER_FIELDS, "continue_final_message": False}
    assert RecordRenderer(MULTI, True).handle(record, 1) == {"id": "r", "prompt": expected}
    with_extra_body = {"id": "r", "messages": [USER], "extra_body": {"top_k": 5, "min_tokens": 2}}
    assert RecordRenderer(MULTI, True).handle(with_extra_body, 1) == {"id": "r", "prompt": expected}
    parsed = RecordParser(MULTI).handle({"id": "p", "completion": "Hi</think>Hello", **SERVER_FIELDS}, 1)
    assert parsed == {"id": "p", "message": {"role": "assistant", "content": "Hello", "reasoning_content": "Hi"}}


@pytest.mark.jinja
def test_extra_body_options_reach_the_template() -> None:
    expected = render_jinja("chatml_multi_system.jinja", [USER], None, True, enable_thinking=False)[1]
    record = {"messages": [USER], "extra_body": {"chat_template_kwargs": {"enable_thinking": False}}}
    assert RecordRenderer(MULTI, True).handle(record, 1)["prompt"] == expected


@pytest.mark.parametrize(("record", "message"), [
    ({"messages": [USER], "functions": [{"name": "f"}]}, "InvalidInputError: functions: legacy function definitions"),
    ({"messages": [USER], "chat_template": "{{ x }}"}, "InvalidInputError: chat_template: a request's own chat"),
    ({"messages": [USER], "documents": [{"text": "x"}]}, "InvalidInputError: documents: the format's template"),
    ({"messages": [USER], "extra_body": {"messages": []}},
     "InvalidInputError: extra_body.messages: also given at the top level of the request"),
])
def test_request_fields_that_would_change_the_prompt_fail_the_record(record: Any, message: str) -> None:
    assert render_error(record).startswith(message)


def test_strict_keys_refuses_every_key_that_is_not_read() -> None:
    for key, value in SERVER_FIELDS.items():  # reasoning_effort included: ChatML has no such option
        assert render_error({"messages": [USER], key: value}, strict_keys=True) == (
            f"InvalidInputError: {key}: a request key that does not change the prompt, refused by --strict-keys"
        )
        ok, line = RecordParser(MULTI, strict_keys=True).process_line(1, json.dumps({"completion": "x", key: value}))
        assert not ok and json.loads(line)["message"].startswith(f"{key}: a request key that does not change")
    # Harmony reads reasoning_effort as its option, --strict-keys or not.
    harmony = pf.get_format("harmony")
    record = {"messages": [USER], "reasoning_effort": "low", "current_date": "2026-01-15"}
    strict = RecordRenderer(harmony, True, strict_keys=True).handle(record, 1)
    assert strict == RecordRenderer(harmony, True).handle(record, 1)
    assert "Reasoning: low" in strict["prompt"]


@pytest.mark.jinja
@pytest.mark.parametrize("digits", [309, 400, 4300])
def test_integers_of_309_digits_and_more_are_read_exactly(digits: int) -> None:
    # Beyond the largest double (309 digits), orjson refuses the number; it is valid JSON all the same.
    number = int("9" * digits)
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"n": number}}}]}
    messages = [USER, call, {"role": "tool", "content": "ok"}]
    line = json.dumps({"id": "big", "messages": messages}).encode()
    ok, out = RecordRenderer(MULTI, True).process_line(1, line)
    assert ok, out
    assert json.loads(out)["prompt"] == render_jinja("chatml_multi_system.jinja", messages, None, True)[1]


@pytest.mark.parametrize(("line", "bad"), [
    (b'{"messages": [{"role": "user", "content": "caf\\u00e9 \xe9"}]}', b"\xe9"),
    (b'\xff{"messages": []}', b"\xff"),
    (b'{"messages": [{"role": "user", "content": "\xed\xa0\x80"}]}', b"\xed"),  # an encoded surrogate
    (b'{"messages": [{"role": "user", "content": "ok \xf0\x9f\x98"}]}', b"\xf0"),  # cut short
])
def test_invalid_utf8_is_reported_with_its_byte_and_line(line: bytes, bad: bytes) -> None:
    ok, out = RecordRenderer(MULTI, True).process_line(3, line)
    assert not ok
    assert json.loads(out)["message"] == f"record: invalid UTF-8 at byte {line.index(bad) + 1} of line 3"


def nested(depth: int, inner: str) -> bytes:
    """A valid record whose ``messages`` holds ``inner`` within ``depth`` arrays in all."""
    return ('{"messages": ' + "[" * depth + inner + "]" * depth + "}").encode()


def report_message(line: bytes, number: int = 1) -> str:
    ok, out = RecordRenderer(MULTI, True).process_line(number, line)
    assert not ok, out
    return str(json.loads(out)["message"])


# Plain, an integer beyond 64 bits and a lone surrogate escape (both read by the standard library).
NESTED_INNERS = ['"Hi"', "12345678901234567890123", '"\\ud800"']


@pytest.mark.parametrize("inner", NESTED_INNERS)
def test_a_record_nested_beyond_the_readers_limit_is_reported_as_nested_not_invalid(inner: str) -> None:
    # Valid JSON: the report must not call it invalid, and must name the limit.
    assert report_message(nested(2000, inner)) == "record: nested deeper than 1024 levels: not read"


@pytest.mark.parametrize("inner", NESTED_INNERS)
def test_a_record_at_the_readers_limit_is_read_or_reported_as_nested(inner: str) -> None:
    # 1024 levels in all: orjson reads it. The standard library (integers beyond 64 bits, lone
    # surrogates) may stop sooner, by the interpreter's recursion limit: then a report says so, never a crash.
    message = report_message(nested(1023, inner))
    assert message in (
        "messages[0]: expected a message object, got list",  # read: the shape is refused, as it should be
        "record: nested too deeply to read exactly (a record holding an integer beyond 64 bits or a lone "
        "surrogate escape is read by Python's json module, whose limit is the interpreter's recursion limit)",
    )


def test_a_syntax_error_gives_its_column_within_the_line() -> None:
    line = '{"messages":[{"role":"user","content":"héllo wörld"}'.encode()  # cut short; columns count characters
    assert report_message(line, 2) == "record: not valid JSON (unexpected end of data at column 53)"
    assert report_message(b'{"messages": [x]}', 7) == (
        "record: not valid JSON (unexpected character, expected a JSON value at column 15)")


def test_a_syntax_error_in_a_record_of_several_lines_gives_its_line_within_the_record() -> None:
    # Only a caller's own text can hold a newline (a JSONL line never does): its position is the record's.
    with pytest.raises(pf.FormatError) as caught:
        decode_record('{"messages":\n [x]}')
    assert str(caught.value) == (
        "record: not valid JSON (unexpected character, expected a JSON value at line 2, column 3 of the record)")
