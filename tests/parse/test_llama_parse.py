"""Llama 3.1's and 3.2's reply parser: content, or one or more JSON calls (or 3.1's built-in
``.call``), opened by ``{`` at the start or by ``<|python_tag|>``; any split streams to the one-shot
parse; a reply rendered back through the template is the prompt and the completion (the Jinja2 oracle
renders both); the public test vectors of vLLM's ``llama3_json``, SGLang's ``Llama32Detector`` and
llama.cpp's Llama 3.x parser agree, or differ where this page says why."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support import llama_strategies as ls
from tests.support.oracles import render_jinja_as_transformers
from tests.support.parser_cases import LLAMA_MARKERS, completions, counting_ids, splits, stream
from tests.support.strategies import differential_settings, text

FMT = pf.get_format("llama-3.1")
TAG, EOT, EOM = "<|python_tag|>", "<|eot_id|>", "<|eom_id|>"


def summary(completion: str, fmt: pf.ChatFormat = FMT) -> tuple[Any, ...]:
    reply = fmt.parse(completion, id_factory=counting_ids())
    return (reply.content, [(c.name, c.arguments) for c in reply.tool_calls], len(reply.malformed), reply.notes)


PARIS = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
NOW = '{"name": "now", "parameters": {}}'
CASES = [
    ("Hello.", ("Hello.", [], 0, ())),
    ("  Hello.  <|eot_id|>", ("Hello.", [], 0, ())),
    (PARIS + EOT, (None, [("get_weather", {"city": "Paris"})], 0, ())),
    (" \n" + PARIS, (None, [("get_weather", {"city": "Paris"})], 0, ())),
    (TAG + PARIS + EOM, (None, [("get_weather", {"city": "Paris"})], 0, ())),
    (f'{PARIS}; {NOW}', (None, [("get_weather", {"city": "Paris"}), ("now", {})], 0, ())),
    (f'{PARIS}\n{NOW}', (None, [("get_weather", {"city": "Paris"}), ("now", {})], 0, ())),
    ('{"name": "f", "arguments": {"x": 1}}', (None, [("f", {"x": 1})], 0, ())),
    ('{"name": "f", "parameters": "{\\"a\\": 1}"}', (None, [("f", '{"a": 1}')], 0, ())),
    ('{"name": "f", "parameters": [1]}', (None, [("f", "[1]")], 1, ())),
    ('{"name": "f", "parameters": {}, "id": 3}', (None, [("f", {})], 1, ())),
    (TAG + 'brave_search.call(query="x y", n="2")' + EOM,
     (None, [("brave_search", {"query": "x y", "n": "2"})], 0, ())),
    ('{"a": 1}', ('{"a": 1}', [], 0, ())),
    ('{"name": "John"} is a name.', ('{"name": "John"} is a name.', [], 0, ())),
    ('{"name": "f", "parameters": {NaN}}', ('{"name": "f", "parameters": {NaN}}', [], 0, ())),
    ("Let me check. " + TAG + PARIS + EOM, ("Let me check.", [("get_weather", {"city": "Paris"})], 0, ())),
    (TAG + "print(1)" + EOM, (TAG + "print(1)", [], 1, ())),
    ("Hi" + EOT + "more", ("Hi", [], 0, ("text after the end of the reply ('<|eot_id|>'/'<|eom_id|>') ignored",))),
]


@pytest.mark.parametrize(("completion", "expected"), CASES)
def test_parse(completion: str, expected: tuple[Any, ...]) -> None:
    assert summary(completion) == expected
    assert summary(completion, pf.get_format("llama-3.2")) == expected


def test_vllm_vectors_agree() -> None:
    # vLLM's tests/tool_parsers/test_llama3_json_tool_parser.py (llama3_json), each output with what it expects.
    assert summary('{"name": "searchTool", "parameters": {"query": "test query", "limit": 10}}')[:2] == (
        None, [("searchTool", {"query": "test query", "limit": 10})])
    assert summary("This is just some text without any tool calls")[:2] == (
        "This is just some text without any tool calls", [])
    assert summary('{"name": "invalidTool", "parameters": {invalid json}')[:2] == (
        '{"name": "invalidTool", "parameters": {invalid json}', [])
    assert summary('{"name": "searchTool", "arguments": {"query": "test"}}')[1] == [("searchTool", {"query": "test"})]
    three = ('{"name": "searchTool", "parameters": {"query": "test1"}}; {"name": "getOpenIncidentsTool", '
             '"parameters": {}}; {"name": "searchTool", "parameters": {"query": "test2"}}')
    expected = [("searchTool", {"query": "test1"}), ("getOpenIncidentsTool", {}), ("searchTool", {"query": "test2"})]
    assert summary(three)[1] == expected
    assert summary(three.replace("; ", " ; "))[1] == expected
    assert summary(three.replace("; ", ";\n"))[1] == expected


def test_vllm_vectors_that_differ() -> None:
    # vLLM reads a call anywhere in the text and drops the text around it; the templates write a call
    # as the whole turn, so here a call opens the reply (or follows <|python_tag|>), and text that is
    # not calls throughout is the content as written.
    embedded = 'Here is the result: {"name": "getOpenIncidentsTool", "parameters": {}} Would you like to know more?'
    assert summary(embedded)[:2] == (embedded, [])
    # ... and a reply that opens with a call but goes on with text is content too (vLLM: the call).
    assert summary(PARIS + " Would you like more?")[:2] == (PARIS + " Would you like more?", [])


def test_sglang_vectors() -> None:
    # SGLang's Llama32Detector tests: text before <|python_tag|> is content; calls after it, separated by ";".
    assert summary(f'{TAG}{PARIS};{{"name": "get_tourist_attractions", "parameters": {{"city": "Paris"}}}}')[:2] == (
        None, [("get_weather", {"city": "Paris"}), ("get_tourist_attractions", {"city": "Paris"})])
    assert summary(f'{TAG}{{"name": "get_weather", "parameters": {{}}}}{TAG}'
                   '{"name": "get_tourist_attractions", "parameters": {}}')[1] == [
        ("get_weather", {}), ("get_tourist_attractions", {})]
    assert summary('Let me check. <|python_tag|>{"name": "get_weather", "arguments": {"city": "Tokyo"}}')[:2] == (
        "Let me check.", [("get_weather", {"city": "Tokyo"})])
    assert summary("The weather is nice today.")[:2] == ("The weather is nice today.", [])
    # Differs: SGLang reads the call and keeps the text after it; here such a reply is content (as above).
    assert summary('{"name": "get_weather", "parameters": {}} Some follow-up text')[1] == []
    # Differs: SGLang takes a Python dict literal; here it is not JSON, so content.
    assert summary("{'name': 'get_weather', 'arguments': {'city': 'Beijing'}}")[1] == []


def test_llama_cpp_vectors() -> None:
    # llama.cpp's test-chat.cpp (LLAMA_3_X, LLAMA_3_X_WITH_BUILTIN_TOOLS).
    assert summary('{"name": "special_function", "parameters": {"arg1": 1}}')[1] == [("special_function", {"arg1": 1})]
    assert summary(TAG + 'python.call(code="print(\'hey\')")')[1] == [("python", {"code": "print('hey')"})]


@differential_settings
@given(data=st.data())
def test_any_split_streams_to_the_one_shot_parse(data: st.DataObject) -> None:
    text_ = data.draw(completions(LLAMA_MARKERS), label="completion")
    deltas = data.draw(splits(text_), label="deltas")
    _, streamed = stream(lambda: FMT.stream_parser(id_factory=counting_ids()), deltas)
    assert streamed == FMT.parse(text_, id_factory=counting_ids())


arguments = st.dictionaries(st.sampled_from(["city", "days", "q"]),
                            st.one_of(text, st.integers(-3, 99), st.booleans(), st.none()), max_size=3)


@pytest.mark.jinja
@pytest.mark.parametrize("name", sorted(ls.TEMPLATES))
@differential_settings
@given(content=text, builtin=st.booleans(), call=st.one_of(
    st.none(), st.tuples(st.sampled_from(["get_weather", "now"]), arguments),
    st.tuples(st.just("brave_search"), st.dictionaries(st.sampled_from(["query", "n"]), text.filter(
        lambda value: '"' not in value), max_size=2))))  # (a value holding '"' cannot be told from the text after it)
def test_the_reply_rendered_back_is_the_prompt_and_the_completion(name: str, content: str, call: Any,
                                                                  builtin: bool) -> None:
    fmt = pf.get_format(name)
    options: dict[str, Any] = {"date_string": ls.DATE}
    if builtin and name == "llama-3.1":
        options["builtin_tools"] = ["brave_search"]
    history = [{"role": "user", "content": "Weather?"}]
    if call is None:
        message: dict[str, Any] = {"role": "assistant", "content": content}
    else:
        message = {"role": "assistant", "tool_calls": [{"type": "function", "function": {
            "name": call[0], "arguments": call[1]}}]}
    prompt = render_jinja_as_transformers(ls.TEMPLATES[name], history, None, True, bos_token=ls.BOS, **options)
    full = render_jinja_as_transformers(ls.TEMPLATES[name], [*history, message], None, False, bos_token=ls.BOS,
                                        **options)
    assert prompt is not None and full is not None and prompt[0] == full[0] == "ok"
    assert full[1].startswith(prompt[1])
    completion = full[1][len(prompt[1]):]
    reply = fmt.parse(completion, id_factory=counting_ids(), **options)
    calls = [{"type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in reply.tool_calls]
    back_message = {**reply.to_openai(), **({"tool_calls": calls} if calls else {})}
    back = render_jinja_as_transformers(ls.TEMPLATES[name], [*history, back_message], None, False,
                                        bos_token=ls.BOS, **options)
    assert back == full


@pytest.mark.parametrize(("parameters", "comes_back"), [({"a": 1}, True), ("abc", True), ('{"a": 1}', False)])
def test_the_reply_sent_back_as_openai_text(parameters: Any, comes_back: bool) -> None:
    # docs/llama.md: through to_openai() and decode_tool_arguments=True, an object or a plain string
    # comes back as written; a string holding an object's JSON comes back as the object.
    fmt = pf.get_format("llama-3.1")
    history = [{"role": "user", "content": "Weather?"}]
    message = {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f",
                                                                                      "arguments": parameters}}]}
    full = fmt.render([*history, message], date_string=ls.DATE)
    completion = full[len(fmt.render(history, add_generation_prompt=True, date_string=ls.DATE)):]
    reply = fmt.parse(completion, date_string=ls.DATE)
    assert reply.malformed == ()
    back = fmt.render([*history, reply.to_openai()], decode_tool_arguments=True, date_string=ls.DATE)
    assert (back == full) is comes_back
    if not comes_back:
        assert back == fmt.render([*history, {**message, "tool_calls": [{"type": "function", "function": {
            "name": "f", "arguments": json.loads(parameters)}}]}], date_string=ls.DATE)


def test_built_in_arguments_are_separated_as_the_template_writes_them() -> None:
    # (found by a review) pairs with no ", " between them are no call
    assert summary(TAG + 'brave_search.call(a="1"b="2")')[1:3] == ([], 1)
    assert summary(TAG + 'brave_search.call()')[1] == [("brave_search", {})]
