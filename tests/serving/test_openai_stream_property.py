"""A client accumulating the OpenAI deltas of a stream gets exactly the parsed reply's to_openai(), for every format.

The stream opens with ``{"role": "assistant", "content": ""}``, once, before any other delta, as OpenAI's does.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.serving.openai import accumulate, stream_deltas
from tests.support.parser_cases import (
    CHATML_MARKERS,
    DEEPSEEK_MARKERS,
    GEMMA4_MARKERS,
    GEMMA_MARKERS,
    GLM_MARKERS,
    HARMONY_MARKERS,
    JSON_CALL_MARKERS,
    LLAMA_MARKERS,
    completions,
    counting_ids,
    splits,
    stream,
)
from tests.support.strategies import differential_settings

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": ["integer", "null"]},
                                         "tags": {"type": "array"}}}}},
    {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}},
]
EXTRA_CHATML = ["<parameter=days>\n", "<parameter=tags>\n", "3", "[1, 2]", "\n</function>", "<parameter=x>"]
EXTRA_HARMONY = ['{"city":  "Paris" ,"n":[1, 2.50]}', "{ }", " to=functions.get_weather"]
# Each parsing format's markers; a format that parses and is missing here fails the test below.
MARKERS = {
    "chatml-multi-system": CHATML_MARKERS + EXTRA_CHATML,
    "chatml-safety": CHATML_MARKERS + EXTRA_CHATML,
    "qwen3.5": CHATML_MARKERS + EXTRA_CHATML,
    "qwen3.5-nothink": CHATML_MARKERS + EXTRA_CHATML,
    "qwen3.6": CHATML_MARKERS + EXTRA_CHATML,
    "qwen3.8": CHATML_MARKERS + EXTRA_CHATML,
    "qwen3": JSON_CALL_MARKERS + CHATML_MARKERS[:6],
    "qwen3-instruct-2507": JSON_CALL_MARKERS,
    "qwen2.5": JSON_CALL_MARKERS,
    "qwen3-vl": JSON_CALL_MARKERS,
    "nemotron-3-nano": CHATML_MARKERS + EXTRA_CHATML,
    "nemotron-3-super": CHATML_MARKERS + EXTRA_CHATML,
    "nemotron-3-ultra": CHATML_MARKERS + EXTRA_CHATML,
    "nemotron-3.5": CHATML_MARKERS + EXTRA_CHATML,
    "harmony": HARMONY_MARKERS + EXTRA_HARMONY,
    "gpt-oss": HARMONY_MARKERS + EXTRA_HARMONY,
    "gemma-3": GEMMA_MARKERS,
    "gemma-4": GEMMA4_MARKERS,
    "deepseek-v3": DEEPSEEK_MARKERS,
    "glm-4.5": GLM_MARKERS,
    "llama-3.1": LLAMA_MARKERS,
    "llama-3.2": LLAMA_MARKERS,
}
PARSING = [name for name in pf.available_formats() if pf.get_format(name).parses]


def test_every_parsing_format_has_markers() -> None:
    assert PARSING and set(PARSING) <= set(MARKERS)


def check_deltas_accumulate_to_the_reply(name: str, text: str, deltas: list[str], tools: object) -> None:
    fmt = pf.get_format(name)
    events, reply = stream(lambda: fmt.stream_parser(tools, id_factory=counting_ids()), deltas)
    pieces = list(stream_deltas(events))
    assert pieces[0] == {"role": "assistant", "content": ""}
    assert not any("role" in piece for piece in pieces[1:])
    assert accumulate(pieces) == reply.to_openai()
    assert reply == fmt.parse(text, tools, id_factory=counting_ids())


@pytest.mark.parametrize("name", PARSING)
@pytest.mark.parametrize("with_tools", [False, True], ids=["no-tools", "tools"])
@differential_settings
@given(data=st.data())
def test_accumulated_deltas_are_the_reply(name: str, with_tools: bool, data: st.DataObject) -> None:
    text = data.draw(completions(MARKERS[name]))
    check_deltas_accumulate_to_the_reply(name, text, data.draw(splits(text)), TOOLS if with_tools else None)


@pytest.mark.parametrize("text", [
    '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris", "days": 3}<|call|>',
    "<|channel|>analysis to=python code<|message|>print('é\\n')<|call|>",
    '<|channel|>commentary to=functions.f<|message|>{"a": [1,\n 2]}',
])
@pytest.mark.parametrize("name", ["harmony", "gpt-oss"])
def test_harmony_arguments_as_written_reach_the_client(name: str, text: str) -> None:
    check_deltas_accumulate_to_the_reply(name, text, list(text), None)
    check_deltas_accumulate_to_the_reply(name, text, [text], None)
