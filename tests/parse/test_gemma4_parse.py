"""Gemma 4's reply parser: a thought channel, content, ``<|tool_call>call:NAME{…}<tool_call|>`` in the
template's notation; any split streams to the one-shot parse; a reply rendered back is the prompt
and the completion (the Jinja2 oracle renders both); Ollama's ``gemma4`` parser's and vLLM's
``gemma4`` tool and reasoning parsers' public test vectors agree, or differ where this file says why."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support import gemma4_strategies as gs
from tests.support.oracles import render_jinja_as_transformers
from tests.support.parser_cases import GEMMA4_MARKERS, completions, counting_ids, splits, stream
from tests.support.strategies import differential_settings

FMT = pf.get_format("gemma-4")
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
Q = '<|"|>'


def summary(completion: str, **context: Any) -> tuple[Any, ...]:
    reply = FMT.parse(completion, TOOLS, id_factory=counting_ids(), **context)
    return (reply.reasoning, reply.content, [(c.name, c.arguments) for c in reply.tool_calls], len(reply.malformed),
            reply.notes)


def call(name: str, body: str) -> str:
    return f"<|tool_call>call:{name}{{{body}}}<tool_call|>"


CASES = [
    ("Hello.", (None, "Hello.", [], 0, ())),
    ("<|channel>thought\nHmm.\n<channel|>Hello.<turn|>", ("Hmm.", "Hello.", [], 0, ())),
    ("Hi<turn|>more", (None, "Hi", [], 0, (
        "text after the end of the reply ('<turn|>'/'<|tool_response>'/'<eos>') ignored",))),
    ("Checking." + call("get_weather", f"city:{Q}Paris{Q},days:3") + "<|tool_response>",
     (None, "Checking.", [("get_weather", {"city": "Paris", "days": 3})], 0, ())),
    (call("f", "a:{b:[1,2.5,true,null]},c:-1e-07") * 2, (None, None, [("f", {"a": {"b": [1, 2.5, True, None]},
                                                                           "c": -1e-07})] * 2, 0, ())),
    ("<|tool_call>call:f{a:" + Q + "open", (None, "<|tool_call>call:f{a:" + Q + "open", [], 1, ())),
    (call("f", "a:bare"), (None, call("f", "a:bare"), [], 1, ())),
    (call("f", "a:1,a:2"), (None, None, [("f", {"a": 1})], 0, ("tool call 0 (f) repeats key 'a': its first value "
                                                                  "is kept",))),
    ("<|channel>a<channel|>x<|channel>thought\nb<channel|>y", ("ab", "xy", [], 0, ())),
]


@pytest.mark.parametrize(("completion", "expected"), CASES)
def test_parse(completion: str, expected: tuple[Any, ...]) -> None:
    assert summary(completion) == expected


def test_in_thought_begins_inside_the_reasoning() -> None:
    # The generation prompt after tool results with thinking on is '<|channel>thought\n'.
    assert summary("The user asked.\n<channel|>go.mod", in_thought=True)[:2] == ("The user asked.", "go.mod")
    assert summary("The user asked.<channel|>go.mod")[:2] == (None, "The user asked.<channel|>go.mod")


# Ollama's model/parsers/gemma4_test.go (its table, run with and without thinking; its Go numbers are
# float64 where ours are JSON's integers). Where it differs: Ollama drops a channel's text when thinking
# is off (here a channel is reasoning whatever the option: the template writes what it reads); a call
# with no end marker is parsed at the end of the stream (here it is kept as content with a note, as
# vLLM's parser keeps it); text after '<|tool_response>' is content (here the reply ends there: the
# tool results come next, and the model's generation config stops at it).
OLLAMA = [
    ("This is a simple response.", None, "This is a simple response.", []),
    ("<|channel>thought\nLet me think about this...<channel|>The answer is 42.", "Let me think about this...",
     "The answer is 42.", []),
    ("<|channel>first thought<channel|><|channel>second thought<channel|>Final answer.",
     "first thoughtsecond thought", "Final answer.", []),
    ("<|channel>just thinking<channel|>", "just thinking", None, []),
    (call("get_weather", f"location:{Q}Paris{Q}"), None, None, [("get_weather", {"location": "Paris"})]),
    (call("get_weather", f"location:{Q}Paris{Q},units:{Q}metric{Q}"), None, None,
     [("get_weather", {"location": "Paris", "units": "metric"})]),
    (call("set_temp", "value:42"), None, None, [("set_temp", {"value": 42})]),
    (call("toggle", "enabled:true"), None, None, [("toggle", {"enabled": True})]),
    (call("set_optional", "value:null,nested:{value:null}"), None, None,
     [("set_optional", {"value": None, "nested": {"value": None}})]),
    (call("process", f"config:{{enabled:true,name:{Q}test{Q}}}"), None, None,
     [("process", {"config": {"enabled": True, "name": "test"}})]),
    (call("process", f'items:[{Q}a{Q},{Q}b "quoted"{Q},{Q}c{Q}]'), None, None,
     [("process", {"items": ["a", 'b "quoted"', "c"]})]),
    (call("bash", f"command:{Q}date\n{Q}"), None, None, [("bash", {"command": "date\n"})]),
    (call("search", f'query:{Q}say \\"hello\\"{Q}'), None, None, [("search", {"query": 'say \\"hello\\"'})]),
    (call("search", f'query:{Q}say "hello", then "goodbye"{Q}'), None, None,
     [("search", {"query": 'say "hello", then "goodbye"'})]),
    (call("search", f'query:"raw \\"quoted\\"",note:{Q}gemma "quoted"{Q}'), None, None,
     [("search", {"query": 'raw "quoted"', "note": 'gemma "quoted"'})]),
    (call("plan", f'steps:[{{title:{Q}step "one"{Q},done:false}},{{title:{Q}step \\"two\\"{Q},done:true}}]'),
     None, None, [("plan", {"steps": [{"title": 'step "one"', "done": False},
                                      {"title": 'step \\"two\\"', "done": True}]})]),
    (call("edit", f"edits:[\n  {{newText:{Q}# Guide\n\nUse \"nvfp4\".\n{Q},oldText:{Q}# Guide\n{Q}}}\n]"), None, None,
     [("edit", {"edits": [{"newText": '# Guide\n\nUse "nvfp4".\n', "oldText": "# Guide\n"}]})]),
    (call("open_file", f"path:{Q}C:\\users\\bob\\file.txt{Q}"), None, None,
     [("open_file", {"path": "C:\\users\\bob\\file.txt"})]),
    (call("get_weather", f"location:{Q}Paris{Q}") + call("get_weather", f"location:{Q}London{Q}"), None, None,
     [("get_weather", {"location": "Paris"}), ("get_weather", {"location": "London"})]),
    ("<|channel>thought\nI need to check the weather<channel|>" + call("get_weather", f"location:{Q}Paris{Q}"),
     "I need to check the weather", None, [("get_weather", {"location": "Paris"})]),
    ("Let me check that for you." + call("get_weather", f"location:{Q}Paris{Q}"), None, "Let me check that for you.",
     [("get_weather", {"location": "Paris"})]),
    (call("create_workflow", f"connections:{{Basic LLM Chain:{{main:[{{node:{Q}Ollama Chat Model{Q}}}]}}, "
          "Ollama Chat Model:{main:[]}}"), None, None,
     [("create_workflow", {"connections": {"Basic LLM Chain": {"main": [{"node": "Ollama Chat Model"}]},
                                           "Ollama Chat Model": {"main": []}}})]),
    (call("foo", f"n:{Q}1{Q},b:{Q}true{Q},z:{Q}null{Q}"), None, None, [("foo", {"n": "1", "b": "true", "z": "null"})]),
    (call("foo", "n:1,b:true,z:null"), None, None, [("foo", {"n": 1, "b": True, "z": None})]),
    (call("foo", 'q:"a,b:c"'), None, None, [("foo", {"q": "a,b:c"})]),
]


@pytest.mark.parametrize(("completion", "reasoning", "content", "calls"), OLLAMA)
def test_ollama_vectors_agree(completion: str, reasoning: str | None, content: str | None,
                              calls: list[tuple[str, Any]]) -> None:
    assert summary(completion)[:3] == (reasoning, content, calls)


def test_ollama_split_vectors_agree() -> None:
    whole = FMT.parse("<|channel>thought\nLet me think...<channel|>The answer is 42.")
    deltas = ["<|channel>thought", "\nLet me think", "...<channel|>The answer", " is 42."]
    assert stream(FMT.stream_parser, deltas)[1] == whole
    assert whole.reasoning == "Let me think..." and whole.content == "The answer is 42."
    deltas = ["<|tool_call>call:get_", f"weather{{location:{Q}Par", f"is{Q}}}<tool_call|>"]
    reply = stream(lambda: FMT.stream_parser(id_factory=counting_ids()), deltas)[1]
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("get_weather", {"location": "Paris"})]
    assert reply.content is None


def test_ollama_differences_are_the_documented_ones() -> None:
    # A call with no end marker: Ollama parses it at the end; here (as vLLM) it is content, noted.
    cut = f"<|tool_call>call:search{{query:{Q}say \"hello\" and \"bye\"{Q}}}"
    assert summary(cut)[1:4] == (cut, [], 1)
    # Thinking off: Ollama drops the channel; here it is reasoning.
    assert summary("<|channel>this is not thinking<channel|>actual content", enable_thinking=False)[:2] == (
        "this is not thinking", "actual content")
    # Text after '<|tool_response>': Ollama's content; here after the reply's end.
    assert summary(call("f", "") + "<|tool_response>Done.")[1:] == (None, [("f", {})], 0, (
        "text after the end of the reply ('<turn|>'/'<|tool_response>'/'<eos>') ignored",))


# vLLM's tests/tool_parsers/test_gemma4_tool_parser.py and tests/reasoning/test_gemma4_reasoning_parser.py
# (its content keeps the space before a call; here the content is stripped as a whole).
VLLM = [
    ("Hello, how can I help you today?", None, "Hello, how can I help you today?", []),
    (call("get_weather", f"location:{Q}London{Q}"), None, None, [("get_weather", {"location": "London"})]),
    ("Let me check the weather for you. " + call("get_weather", f"location:{Q}Paris{Q}"), None,
     "Let me check the weather for you.", [("get_weather", {"location": "Paris"})]),
    (call("complex_function", f"nested:{{inner:{Q}value{Q}}},list:[{Q}a{Q},{Q}b{Q}]"), None, None,
     [("complex_function", {"nested": {"inner": "value"}, "list": ["a", "b"]})]),
    (call("set_status", "is_active:true,count:42,score:3.14"), None, None,
     [("set_status", {"is_active": True, "count": 42, "score": 3.14})]),
    (call("get-weather", f"location:{Q}x{Q}"), None, None, [("get-weather", {"location": "x"})]),
    (call("weather.get", f"location:{Q}x{Q}"), None, None, [("weather.get", {"location": "x"})]),
    (call("get_status", ""), None, None, [("get_status", {})]),
    (call("f", f"record_map:{{{Q}3{Q}:{Q}new text{Q}}}"), None, None, [("f", {"record_map": {"3": "new text"}})]),
    ("<|channel>This is a reasoning section<channel|>This is the rest", "This is a reasoning section",
     "This is the rest", []),
    ("<|channel>This is reasoning", "This is reasoning", None, []),
    ("<|channel>This\nThat<channel|>This is the rest\nThat", "This\nThat", "This is the rest\nThat", []),
    ("Before\n<|channel>This is a reasoning section<channel|>\nThis is the rest", "This is a reasoning section",
     "Before\n\nThis is the rest", []),
    ("<|channel>thought\nActual reasoning here<channel|>Final answer", "Actual reasoning here", "Final answer", []),
    ("<|channel>thought\n<channel|>", None, None, []),
    ("<|channel>thousand reasons<channel|>Done", "thousand reasons", "Done", []),
]


@pytest.mark.parametrize(("completion", "reasoning", "content", "calls"), VLLM)
def test_vllm_vectors_agree(completion: str, reasoning: str | None, content: str | None,
                            calls: list[tuple[str, Any]]) -> None:
    assert summary(completion)[:3] == (reasoning, content, calls)


def test_vllm_incomplete_call_is_content() -> None:
    incomplete = f"<|tool_call>call:get_weather{{location:{Q}London"
    assert summary(incomplete)[1:4] == (incomplete, [], 1)


@differential_settings
@given(data=st.data(), in_thought=st.booleans())
def test_any_split_streams_to_the_one_shot_parse(data: st.DataObject, in_thought: bool) -> None:
    text = data.draw(completions(GEMMA4_MARKERS), label="completion")
    deltas = data.draw(splits(text), label="deltas")
    _, streamed = stream(lambda: FMT.stream_parser(TOOLS, id_factory=counting_ids(), in_thought=in_thought), deltas)
    assert streamed == FMT.parse(text, TOOLS, id_factory=counting_ids(), in_thought=in_thought)


words = st.lists(st.sampled_from(["Sure", " ", "é", "x y", "日本", '"', "\\n"]), min_size=1, max_size=4).map("".join)
values = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), words,
                                st.floats(allow_nan=False, allow_infinity=False)),
                      lambda inner: st.one_of(st.lists(inner, max_size=2),
                                              st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2)),
                      max_leaves=5)


@pytest.mark.jinja
@differential_settings
@given(history=gs.conversation(), reasoning=words, content=words, arguments=st.dictionaries(
    st.sampled_from(["city", "days", "b"]), values, max_size=3), thinking=st.booleans())
def test_the_reply_rendered_back_is_the_prompt_and_the_completion(history: list[Any], reasoning: str, content: str,
                                                                  arguments: dict[str, Any], thinking: bool) -> None:
    history = [*history, {"role": "user", "content": "Weather?"}]
    options = gs.oracle_options({"enable_thinking": thinking})
    prompt = render_jinja_as_transformers(gs.TEMPLATE, history, TOOLS, True, **options)
    if prompt is None or prompt[0] != "ok":
        return
    reasoning, content = reasoning.strip(), content.strip()
    arguments = dict(sorted(arguments.items()))  # (as the template writes them: by key)
    written = render_jinja_as_transformers(gs.TEMPLATE, [{"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": arguments}}]}], None, False, bos_token="")
    assert written is not None and written[0] == "ok"
    the_call = written[1].split("<|turn>model\n", 1)[1].removesuffix("<|tool_response>")
    thought = f"<|channel>thought\n{reasoning}\n<channel|>" if reasoning else ""  # (as the template writes it)
    completion = f"{thought}{the_call}{content}<|tool_response>"
    reply = FMT.parse(completion, TOOLS, id_factory=counting_ids())
    assert [call.arguments for call in reply.tool_calls] == [arguments]
    calls = [{"type": "function", "function": {"name": call.name, "arguments": call.arguments}}
             for call in reply.tool_calls]
    message = {**reply.to_openai(), "tool_calls": calls}
    back = render_jinja_as_transformers(gs.TEMPLATE, [*history, message], TOOLS, False, **options)
    assert back == ("ok", prompt[1] + completion)
