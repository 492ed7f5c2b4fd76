"""GLM-4.5's reply parser: a think block, content, ``<tool_call>NAME`` with ``<arg_key>``/``<arg_value>``
pairs; any split streams to the one-shot parse; a reply rendered back is the prompt and the completion
(the Jinja2 oracle renders both); vLLM's ``glm45`` tool parser's public test vectors agree, or differ
where this page says why."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support import glm_strategies as gs
from tests.support.oracles import render_jinja_as_transformers
from tests.support.parser_cases import GLM_MARKERS, completions, counting_ids, splits, stream
from tests.support.strategies import differential_settings

FMT = pf.get_format("glm-4.5")
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]


def summary(completion: str, tools: Any = TOOLS) -> tuple[Any, ...]:
    reply = FMT.parse(completion, tools, id_factory=counting_ids())
    return (reply.reasoning, reply.content, [(c.name, c.arguments) for c in reply.tool_calls], len(reply.malformed),
            reply.notes)


CALL = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>123</arg_value>\n<arg_key>days</arg_key>\n" \
       "<arg_value>3</arg_value>\n</tool_call>"
TYPED = {"city": "123", "days": 3}  # (a string by the schema, an integer by the schema)
CASES = [
    ("\n<think>Hmm.</think>\nHello.", ("Hmm.", "Hello.", [], 0, ())),
    ("\nHello.<|user|>", (None, "Hello.", [], 0, ())),
    ("\nHi<|observation|>more", (None, "Hi", [], 0, (
        "text after the end of the reply ('<|user|>'/'<|observation|>'/'<|endoftext|>') ignored",))),
    ("\n<think>r</think>\nChecking.\n" + CALL, ("r", "Checking.", [("get_weather", TYPED)], 0, ())),
    (CALL + CALL, (None, None, [("get_weather", TYPED)] * 2, 0, ())),
    ("<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo", (
        None, "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo", [], 1, ())),
    ("<tool_call>get_weather\nstray<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n</tool_call>", (
        None, "<tool_call>get_weather\nstray<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n</tool_call>", [], 1,
        ())),
]


@pytest.mark.parametrize(("completion", "expected"), CASES)
def test_parse(completion: str, expected: tuple[Any, ...]) -> None:
    assert summary(completion) == expected


def test_without_tools_a_value_is_its_json_where_it_is_json() -> None:
    assert summary(CALL, None)[2] == [("get_weather", {"city": 123, "days": 3})]


# vLLM's tests/tool_parsers/test_glm4_moe_tool_parser.py: outputs and what its tests expect (its
# content is left unstripped, and its tool parser leaves a think block in the content: its reasoning
# parser takes it off first).
def vllm_call(name: str, pairs: dict[str, str], indent: str = "    ") -> str:
    body = "".join(f"{indent}<arg_key>{k}</arg_key>\n{indent}<arg_value>{v}</arg_value>\n" for k, v in pairs.items())
    return f"<tool_call>{name}\n{body}{indent}</tool_call>"


DALLAS = {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}


def test_vllm_vectors_agree() -> None:
    assert summary(vllm_call("get_current_weather", DALLAS), None)[1:3] == (None, [("get_current_weather", DALLAS)])
    orlando = {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}
    two = vllm_call("get_current_weather", DALLAS) + "\n    " + vllm_call("get_current_weather", orlando)
    assert summary(two, None)[2] == [("get_current_weather", DALLAS), ("get_current_weather", orlando)]
    seattle = {"city": "Seattle", "state": "WA", "unit": "celsius"}
    assert summary("I'll help you check the weather. " + vllm_call("get_current_weather", seattle), None)[1:3] == (
        "I'll help you check the weather.", [("get_current_weather", seattle)])
    beijing = {"city": "Beijing", "date": "2025-08-01"}
    thinking = ("<think>I want to get the weather.</think>\n\nI will help you get the weather.\n"
                + vllm_call("get_weather", beijing, ""))
    assert summary(thinking, None)[:3] == ("I want to get the weather.", "I will help you get the weather.",
                                           [("get_weather", beijing)])
    assert summary("<tool_call>get_current_time\n</tool_call>", None)[2] == [("get_current_time", {})]
    message = {"recipient": "Amy", "message": "It is a nice day", "priority": "high"}
    assert summary(vllm_call("send_message", message, ""), None)[2] == [("send_message", message)]


def test_vllm_incomplete_call_is_content() -> None:
    # As vLLM's test expects: no call, the text as content (here also noted in malformed).
    incomplete = vllm_call("get_weather", {"city": "Beijing", "date": "2025-08-01"}, "")[:-len("</tool_call>")].rstrip()
    assert summary(incomplete, None)[1:4] == (incomplete, [], 1)


@differential_settings
@given(data=st.data())
def test_any_split_streams_to_the_one_shot_parse(data: st.DataObject) -> None:
    text = data.draw(completions(GLM_MARKERS), label="completion")
    deltas = data.draw(splits(text), label="deltas")
    _, streamed = stream(lambda: FMT.stream_parser(TOOLS, id_factory=counting_ids()), deltas)
    assert streamed == FMT.parse(text, TOOLS, id_factory=counting_ids())


words = st.lists(st.sampled_from(["Sure", " ", "é", "x y", "日本"]), min_size=1, max_size=4).map("".join)


@pytest.mark.jinja
@differential_settings
@given(history=gs.conversation(), reasoning=words, content=words, city=words)
def test_the_reply_rendered_back_is_the_prompt_and_the_completion(history: list[Any], reasoning: str, content: str,
                                                                  city: str) -> None:
    history = [*history, {"role": "user", "content": "Weather?"}]
    prompt = render_jinja_as_transformers(gs.TEMPLATE, history, TOOLS, True)
    if prompt is None or prompt[0] != "ok":
        return
    reasoning, content, city = reasoning.strip(), content.strip(), city.strip()
    completion = (f"\n<think>{reasoning}</think>" + (f"\n{content}" if content else "")  # (as the template writes it)
                  + f"\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>{city}</arg_value>\n"
                  "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>")
    reply = FMT.parse(completion, TOOLS, id_factory=counting_ids())
    calls = [{"type": "function", "function": {"name": call.name, "arguments": call.arguments}}
             for call in reply.tool_calls]  # (the template iterates the arguments as an object)
    message = {**reply.to_openai(), "tool_calls": calls}
    back = render_jinja_as_transformers(gs.TEMPLATE, [*history, message], TOOLS, False)
    assert back == ("ok", prompt[1] + completion)


def test_what_a_review_found() -> None:
    # An empty name is no call; a number JSON cannot write back is its text; a schema that allows a
    # string keeps the text; a repeated parameter keeps its first value, with a note.
    empty = "<tool_call> \n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>"
    assert summary(empty)[2:4] == ([], 1)
    assert summary("<tool_call>f\n<arg_key>x</arg_key>\n<arg_value>1e999</arg_value>\n</tool_call>", None)[2] == [
        ("f", {"x": "1e999"})]
    nullable = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "a": {"type": ["string", "null"]}, "b": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}}}]
    both = ("<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>123</arg_value>\n"
            "<arg_key>b</arg_key>\n<arg_value>4</arg_value>\n")
    assert summary(both + "</tool_call>", nullable)[2] == [("f", {"a": "123", "b": "4"})]
    repeated = summary(both + "<arg_key>a</arg_key>\n<arg_value>5</arg_value>\n</tool_call>", nullable)
    assert repeated[2] == [("f", {"a": "123", "b": "4"})] and repeated[4] == (
        "tool call 0 (f) repeats parameter 'a': its first value is kept",)
