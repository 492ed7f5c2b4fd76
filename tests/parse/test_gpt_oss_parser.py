"""gpt-oss replies: Harmony's parser configured for this prompt, stream equal to parse, the round trip.

The parser is Harmony's (its rules are tested in tests/parse/test_harmony_parser.py); these tests show the
gpt-oss format hands it the completion as its generation prompt leaves it (at a message header),
and that a reply parsed from a completion spelled as the template spells assistant turns renders
back, through the template (the Jinja2 oracle), to exactly the prompt plus that completion.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.gpt_oss_oracle import render_gpt_oss_jinja
from tests.support.parser_cases import HARMONY_MARKERS, completions, counting_ids, splits, stream
from tests.support.strategies import differential_settings

FMT = pf.get_format("gpt-oss")
HARMONY = pf.get_format("harmony")
DAY = "2025-08-05"


@differential_settings
@given(st.data(), completions(HARMONY_MARKERS))
def test_stream_equals_parse_and_harmony_reads_it_alike(data: st.DataObject, text: str) -> None:
    deltas = data.draw(splits(text))
    _, streamed = stream(lambda: FMT.stream_parser(id_factory=counting_ids()), deltas)
    parsed = FMT.parse(text, id_factory=counting_ids())
    assert streamed == parsed
    assert parsed == HARMONY.parse(text, id_factory=counting_ids())


body = st.text(min_size=1, max_size=12).filter(
    lambda t: not any(m in t for m in ("<|end|>", "<|call|>", "<|return|>", "<|channel|>final<|message|>",
                                       "<|channel|>analysis<|message|>")))
arguments = st.dictionaries(st.text(max_size=4), st.one_of(st.integers(), st.booleans(), st.none(), body), max_size=3)
histories = st.sampled_from([
    [{"role": "user", "content": "q"}],
    [{"role": "system", "content": "S"}, {"role": "user", "content": "q"},
     {"role": "assistant", "tool_calls": [{"function": {"name": "g", "arguments": {}}}]},
     {"role": "tool", "content": "r"}],
])


@pytest.mark.jinja
@differential_settings
@given(histories, st.one_of(st.none(), body), st.one_of(body, arguments), st.sampled_from(["f", "get_weather"]))
def test_round_trip_through_the_template(history: list[Any], thinking: str | None, answer: Any, name: str) -> None:
    completion = "" if thinking is None else f"<|channel|>analysis<|message|>{thinking}<|end|><|start|>assistant"
    if isinstance(answer, str):
        completion += f"<|channel|>final<|message|>{answer}<|return|>"
    else:
        call_json = json.dumps(answer, ensure_ascii=False)
        completion += f" to=functions.{name}<|channel|>commentary json<|message|>{call_json}<|call|>"
    reply = FMT.parse(completion, id_factory=counting_ids(), current_date=DAY)
    assert not reply.malformed
    message: dict[str, Any] = {"role": "assistant", "thinking": reply.reasoning, "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [{"function": {"name": c.name, "arguments": c.arguments}} for c in reply.tool_calls]
    prompt = render_gpt_oss_jinja(history, None, True, current_date=DAY)
    assert render_gpt_oss_jinja([*history, message], None, False, current_date=DAY) == ("ok", prompt[1] + completion)
    assert FMT.render([*history, message], None, False, current_date=DAY) == prompt[1] + completion
