"""Gemma 3's reply parser: content alone, stripped, ended by ``<end_of_turn>`` or ``<eos>``; any split
streams to the one-shot parse; the reply rendered back is the prompt plus the completion.

The round trip's expected text is the prompt the Jinja2 oracle renders with the reply as its last
message, never one of ours."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support import gemma_strategies as gs
from tests.support.oracles import render_jinja_as_transformers
from tests.support.parser_cases import GEMMA_MARKERS, completions, splits, stream
from tests.support.strategies import differential_settings

FMT = pf.get_format("gemma-3")

CASES: list[tuple[str, str | None, tuple[str, ...]]] = [
    ("Hello.", "Hello.", ()),
    ("  Hello.\n<end_of_turn>", "Hello.", ()),
    ("Hello.<eos>", "Hello.", ()),
    ("Hi<end_of_turn>\n\n", "Hi", ()),
    ("Hi<end_of_turn>more", "Hi", ("text after the end of the reply ('<end_of_turn>'/'<eos>') ignored",)),
    ("a <start_of_turn>user\nb", "a <start_of_turn>user\nb", ()),
    ("<end_of_tur", "<end_of_tur", ()),
    ("", None, ()),  # no content: None, as for every format
]


@pytest.mark.parametrize(("completion", "content", "notes"), CASES)
def test_parse(completion: str, content: str | None, notes: tuple[str, ...]) -> None:
    reply = FMT.parse(completion)
    assert (reply.content, reply.reasoning, reply.tool_calls, reply.malformed, reply.notes) == (
        content, None, (), (), notes)


@differential_settings
@given(data=st.data())
def test_any_split_streams_to_the_one_shot_parse(data: st.DataObject) -> None:
    text = data.draw(completions(GEMMA_MARKERS), label="completion")
    deltas = data.draw(splits(text), label="deltas")
    _, streamed = stream(FMT.stream_parser, deltas)
    assert streamed == FMT.parse(text)


@pytest.mark.jinja
@differential_settings
@given(history=gs.conversation(), words=st.lists(st.sampled_from(["Sure", " ", "é", "\n", "x<y", "日本"]), max_size=5))
def test_the_reply_rendered_back_is_the_prompt_and_the_completion(history: list[Any], words: list[str]) -> None:
    prompt = render_jinja_as_transformers(gs.GEMMA3_TEMPLATE, history, None, True, bos_token="<bos>")
    if prompt is None or prompt[0] != "ok":
        return
    content = "".join(words).strip()
    completion = content + "<end_of_turn>"
    reply = FMT.parse(completion)
    back = render_jinja_as_transformers(gs.GEMMA3_TEMPLATE, [*history, reply.to_openai()], None, False,
                                        bos_token="<bos>")
    if back is None or back[0] != "ok":  # the reply cannot follow this history (roles out of turn)
        return
    assert back[1] == prompt[1] + completion + "\n"
