"""Harmony in the agent loop (issue 15 items 1 and 2), against the Go template (Ollama's).

The template renders no tool call and drops reasoning before the last user message, so the round
trip does not hold for tool calls (docs/harmony.md). What holds, checked here: ``parse`` gives the
reply back, and in the next request (the reply sent back as ``reply.to_openai()``, then a user
message) the reply is written as the completion wrote its final message, its reasoning and calls
dropped; ``decode_tool_arguments`` changes nothing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.harmony_oracle import HarmonyOracle, to_case
from tests.support.parser_cases import counting_ids
from tests.support.strategies import differential_settings

pytestmark = [pytest.mark.go]

HARMONY = pf.get_format("harmony")
DAY = "2025-08-05"


def go(oracle: HarmonyOracle, messages: list[Any]) -> str:
    result = oracle.render(to_case(messages, None, {"current_date": DAY}))
    assert "output" in result, result
    return str(result["output"])


body = st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="<|>"), min_size=1,
               max_size=10)
histories = st.sampled_from([
    [{"role": "user", "content": "q"}],
    [{"role": "system", "content": "S"}, {"role": "user", "content": "q1"},
     {"role": "assistant", "content": "a1", "reasoning_content": "t1"}, {"role": "user", "content": "q2"}],
])


@differential_settings
@given(history=histories, reasoning=st.one_of(st.none(), body), content=body,
       call=st.one_of(st.none(), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)))
def test_what_the_round_trip_keeps(oracle, history, reasoning, content, call):
    completion = "" if reasoning is None else f"<|channel|>analysis<|message|>{reasoning}<|end|><|start|>assistant"
    if call is not None:
        completion += (f"<|channel|>commentary to=functions.f <|constrain|>json<|message|>{json.dumps(call)}<|call|>"
                       "<|start|>assistant")
    completion += f"<|channel|>final<|message|>{content}<|end|>"
    reply = HARMONY.parse(completion, id_factory=counting_ids())
    assert not reply.malformed
    assert (reply.reasoning, reply.content) == (reasoning, content)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == ([] if call is None else [("f", call)])
    prompt = go(oracle, history)
    assert prompt.endswith("<|start|>assistant")
    next_user = {"role": "user", "content": "next"}
    expected = (prompt + f"<|channel|>final<|message|>{content}<|end|>"
                "<|start|>user<|message|>next<|end|><|start|>assistant")
    sent_back = [*history, reply.to_openai(), next_user]
    assert go(oracle, sent_back) == expected
    assert HARMONY.render(sent_back, current_date=DAY, decode_tool_arguments=True) == expected
    assert HARMONY.render(sent_back, current_date=DAY) == expected


def test_decode_tool_arguments_is_accepted_and_changes_nothing(oracle) -> None:
    messages = [{"role": "user", "content": "q"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c1", "function": {"name": "python", "arguments": '{"code": "1"}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "1"}]
    python = [{"type": "function", "function": {"name": "python"}}]
    expected = oracle.render(to_case(messages, python, {"current_date": DAY}))["output"]
    for value in (True, False, None):
        assert HARMONY.render(messages, python, current_date=DAY, decode_tool_arguments=value) == expected
