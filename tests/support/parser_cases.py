"""Shared helpers of the reply-parser tests: completions built of markers and text, splits, timing."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st

from prompt_formats.model.messages import AssistantReply
from prompt_formats.replies.streaming import Event, assemble

CHATML_MARKERS = [
    "<think>", "</think>", "<tool_call>", "</tool_call>", "<function=", "</function>", "<parameter=",
    "</parameter>", "<|im_end|>", "<|endoftext|>", "<tool_call>\n<function=get_weather>\n",
    "<parameter=city>\n", "\n</parameter>\n", "</function>\n</tool_call>", "<function=f>", ">",
]
#: The JSON form of a call (Qwen2.5, Qwen3), with the markers around it.
JSON_CALL_MARKERS = [
    "<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_end|>", "<|endoftext|>", "<tool_call>\n",
    '{"name": "get_weather", "arguments": ', '{"name": "f", "arguments": {}}', '{"city": "Paris"}', "}", "\n",
    '"arguments": "{\\"city\\": 1}"', "{",
]
#: Gemma 3's reply markers (its end markers, and the markup it does not read as such).
GEMMA_MARKERS = ["<end_of_turn>", "<eos>", "<start_of_turn>", "model\n", "<start_of_image>", "<", ">", "\n\n"]
#: Gemma 4's reply markers.
GEMMA4_MARKERS = [
    "<|channel>", "thought\n", "<channel|>", "<|tool_call>", "call:", "get_weather", "{", "}", "city:", '<|"|>',
    "Paris", ",", "days:", "3", "[", "]", "true", "null", "<tool_call|>", "<turn|>", "<|tool_response>", "<eos>", "<|",
    " ", "\n",
]
#: DeepSeek-V3's reply markers.
DEEPSEEK_MARKERS = [
    "</think>", "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "function", "<｜tool▁sep｜>", "get_weather",
    "\n```json\n", '{"city": "Paris"}', "\n```", "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>", "<｜end▁of▁sentence｜>",
    "<｜", "\n",
]
#: GLM-4.5's reply markers.
GLM_MARKERS = [
    "<think>", "</think>", "<tool_call>", "get_weather", "\n", "<arg_key>", "city", "</arg_key>", "<arg_value>",
    "Paris", "3", "</arg_value>", "</tool_call>", "<|user|>", "<|observation|>", "<|endoftext|>", "<|", " ",
]
#: Llama 3.1's and 3.2's reply markers.
LLAMA_MARKERS = [
    "{", '{"name": "get_weather", "parameters": ', '{"city": "Paris"}', "}", "; ", ";", "<|python_tag|>",
    "brave_search.call(", 'query="x"', ", ", ")", "<|eot_id|>", "<|eom_id|>", "<|end_of_text|>", "<|", " ", "\n",
    '"arguments": ', "NaN",
]
HARMONY_MARKERS = [
    "<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|call|>", "<|return|>", "<|constrain|>",
    "<|start|>assistant", "analysis", "final", "commentary", " to=functions.f", " to=python", "json",
    '{"a": 1}', "<|channel|>analysis<|message|>", "<|channel|>final<|message|>", "<|", "|>",
]
WORDS = ["hello", " ", "\n", "\n\n", "é", "日本", "🙂", "\x00", "\ud800", "{", '"', "<", ">", "|", "null", "5"]


def completions(markers: Sequence[str]) -> st.SearchStrategy[str]:
    """Texts mixing the format's markers (and their pieces) with ordinary and odd text."""
    pieces = st.one_of(
        st.sampled_from(markers),
        st.sampled_from(markers).flatmap(lambda m: st.integers(1, max(1, len(m) - 1)).map(lambda k: m[:k])),
        st.sampled_from(WORDS),
        st.text(max_size=5),
    )
    return st.lists(pieces, max_size=14).map("".join)


def splits(text: str) -> st.SearchStrategy[list[str]]:
    """``text`` cut at random points (empty deltas included)."""
    return st.lists(st.integers(0, len(text)), max_size=8).map(
        lambda cuts: [text[a:b] for a, b in itertools.pairwise([0, *sorted(cuts), len(text)])]
    )


def counting_ids() -> Callable[[], str]:
    """An id factory giving call_0, call_1, ... (reproducible runs)."""
    counter = itertools.count()
    return lambda: f"call_{next(counter)}"


def stream(make_parser: Callable[[], Any], deltas: Sequence[str]) -> tuple[list[Event], AssistantReply]:
    """Feed ``deltas`` to a new parser, close it; the events and the reply they assemble to."""
    parser = make_parser()
    events: list[Event] = []
    for delta in deltas:
        events += parser.feed(delta)
    events += parser.close()
    return events, assemble(events)


def best_time(function: Callable[[], Any], repeat: int = 5) -> float:
    """The least of ``repeat`` timings of ``function()`` in this thread's CPU time.

    CPU time, not wall-clock time: the other processes of a loaded machine do not count in it, so a
    ratio of two timings says what the code costs, not how busy the machine was.
    """
    best = float("inf")
    for _ in range(repeat):
        start = time.thread_time()
        function()
        best = min(best, time.thread_time() - start)
    return best


_SENTENCE = (
    "The model considered the question carefully, weighed the evidence and wrote an answer that "
    "explained each step in plain words, with numbers like 3.14 and names like Zürich. "
)
#: About 1 MB of plain prose (no markup).
PROSE = (_SENTENCE * (1_000_000 // len(_SENTENCE) + 1))[:1_000_000]
