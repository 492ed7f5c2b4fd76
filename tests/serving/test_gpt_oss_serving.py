"""gpt-oss in the agent loop (issue 15 items 1 and 2): decode_tool_arguments and the round trip.

- ``decode_tool_arguments=True`` equals the Jinja2 oracle on the messages decoded by the reference
  rule (``json.loads``, strict: no NaN/Infinity, no key twice, no number beyond a double, integers
  exact; only a JSON object counts), written here with the standard library;
- the round trip: a completion spelled as gpt-oss spells a reply, parsed, sent back as
  ``reply.to_openai()`` (JSON-string arguments) with the option on, renders — through the template
  (the Jinja2 oracle, on the reference-decoded message) and through ours — as the generation prompt
  plus that completion, with exactly the changes docs/gpt-oss.md lists applied.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.gpt_oss_drops import ours_outcome, outcome
from tests.support.gpt_oss_oracle import render_gpt_oss_jinja
from tests.support.gpt_oss_strategies import conversation, json_value, options, text, tools
from tests.support.oracles import render_ours
from tests.support.parser_cases import counting_ids
from tests.support.serving_reference import reference_decoded
from tests.support.strategies import differential_settings

FMT = pf.get_format("gpt-oss")
DAY = "2025-08-05"


def decode_first_calls(messages: list[Any]) -> list[Any]:
    out = []
    for message in messages:
        calls = message.get("tool_calls") if isinstance(message, dict) and message.get("role") == "assistant" else None
        if isinstance(calls, list) and calls and isinstance(calls[0], dict):
            call = calls[0]
            body = call["function"] if call.get("function") else call
            if isinstance(body, dict) and "arguments" in body:
                body = {**body, "arguments": reference_decoded(body["arguments"])}
                call = {**call, "function": body} if call.get("function") else body
                message = {**message, "tool_calls": [call, *calls[1:]]}
        out.append(message)
    return out


# JSON texts of every kind a client sends: objects in any spelling, other JSON, not JSON, and the
# objects Python cannot hold exactly.
object_texts = st.builds(
    lambda value, separators, indent: json.dumps(value, ensure_ascii=bool(indent), separators=separators,
                                                 indent=indent),
    st.dictionaries(text, json_value.filter(lambda v: not (isinstance(v, float) and not math.isfinite(v))),
                    max_size=3),
    st.sampled_from([(",", ":"), (", ", ": "), (" , ", " : ")]),
    st.sampled_from([None, 0, 2]),
)
argument_texts = st.one_of(
    object_texts,
    object_texts.map(lambda t: f" \n{t}\t"),
    st.sampled_from([
        '{"a": NaN}', '{"a": Infinity}', '{"a": 1, "a": 2}', '{"a": 1e400}', '{"a": -1E999}', '{"n": 1e308}',
        '{"big": 123456789012345678901234567890}', '[1, 2]', '"{}"', "3", "null", "", "{", '{"a": 1} x',
        "{}", '{"a": {"b": [1, {"c": null}]}}', '{"a": 1.0, "b": 1e5, "c": "\\u00e9\\ud800"}',
        '{"n": 1' + "0" * 5000 + "}", "[" * 100000 + "]" * 100000,
    ]),
    text,
)


@st.composite
def with_string_arguments(draw: st.DrawFn) -> list[Any]:
    messages = draw(conversation())
    for message in messages:
        calls = message.get("tool_calls")
        if message.get("role") == "assistant" and isinstance(calls, list) and calls and draw(st.integers(0, 3)):
            call = calls[0]
            body = call["function"] if call.get("function") else call
            body["arguments"] = draw(argument_texts)
    return messages


@pytest.mark.jinja
@differential_settings
@given(with_string_arguments(), tools, st.booleans(), options())
def test_decode_tool_arguments_matches_jinja_on_the_decoded_messages(messages, tool_list, gen, opts):
    expected = outcome(decode_first_calls(messages), tool_list, gen, opts)
    assert ours_outcome(FMT.render, messages, tool_list, gen, decode_tool_arguments=True, **opts) == expected
    # Off (the default, and None): the template's own reading, the string written as a JSON string.
    plain = outcome(messages, tool_list, gen, opts)
    assert ours_outcome(FMT.render, messages, tool_list, gen, **opts) == plain
    assert ours_outcome(FMT.render, messages, tool_list, gen, decode_tool_arguments=None, **opts) == plain


def test_decode_tool_arguments_by_hand() -> None:
    def call(arguments: Any, wrapped: bool = True) -> list[Any]:
        body = {"name": "f", "arguments": arguments}
        return [{"role": "user", "content": "q"},
                {"role": "assistant", "tool_calls": [{"type": "function", "function": body} if wrapped else body]}]

    def written(arguments: Any, wrapped: bool = True, **extra: Any) -> str:
        prompt = FMT.render(call(arguments, wrapped), current_date=DAY, **extra)
        return prompt.split("json<|message|>", 1)[1].removesuffix("<|call|>")

    big = "1" + "0" * 30
    decoded = written('{"city":"Paris","n":' + big + "}", decode_tool_arguments=True)
    assert decoded == '{"city": "Paris", "n": ' + big + "}"
    assert written('{"city":"Paris"}', wrapped=False, decode_tool_arguments=True) == '{"city": "Paris"}'
    assert written('{"city":"Paris"}') == '"{\\"city\\":\\"Paris\\"}"'  # the default: the template's own branch
    for kept in ['{"a": NaN}', '{"a":1,"a":2}', '{"a": 1e400}', "[1]", "not json"]:
        assert written(kept, decode_tool_arguments=True) == json.dumps(kept, ensure_ascii=False)
    # A Message with a string argument, and a later call (not rendered by the template) left alone.
    message = pf.Message("assistant", tool_calls=(pf.ToolCall("f", '{"a":1}'), pf.ToolCall("g", "{")))
    prompt = FMT.render([{"role": "user", "content": "q"}, message], current_date=DAY, decode_tool_arguments=True)
    assert prompt.endswith('json<|message|>{"a": 1}<|return|>'.replace("<|return|>", "<|call|>"))
    # The guard sees the decoded strings: an escaped token stays inside valid JSON.
    guarded = pf.get_format("gpt-oss", guard=pf.ControlTokenGuard(pf.HARMONY_CONTROL_TOKENS))
    prompt = guarded.render(call('{"a":"<|end|>"}'), current_date=DAY, decode_tool_arguments=True)
    assert prompt.endswith('json<|message|>{"a": "<\\\\|end|>"}<|call|>')


@pytest.mark.parametrize("value", [1, "yes", [True]])
def test_decode_tool_arguments_takes_a_bool(value: Any) -> None:
    with pytest.raises(pf.InvalidInputError, match=r"^decode_tool_arguments: expected a bool or null"):
        FMT.render([{"role": "user", "content": "q"}], current_date=DAY, decode_tool_arguments=value)
    assert "decode_tool_arguments" in FMT.options


# ---------------------------------------------------------------------------------------------------
# The round trip.

body = st.text(min_size=1, max_size=12).filter(
    lambda t: not any(m in t for m in ("<|", "|>")) and t.strip() == t
)
call_arguments = st.dictionaries(
    st.text(max_size=4),
    st.one_of(st.integers(-(10**30), 10**30), st.booleans(), st.none(), body,
              st.floats(allow_nan=False, allow_infinity=False), st.lists(st.integers(), max_size=2)),
    max_size=3,
)
CALL = {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "g", "arguments": {"x": 1}}}]}
histories = st.sampled_from([
    [{"role": "user", "content": "q"}],
    [{"role": "system", "content": "S"}, {"role": "user", "content": "q"}, CALL, {"role": "tool", "content": "r"}],
    [{"role": "user", "content": "q"}, {**CALL, "reasoning_content": "plan"}, {"role": "tool", "content": {"ok": 1}}],
    [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a", "reasoning_content": "t"},
     {"role": "user", "content": "q2"}],
])
SPELLINGS = ["template", "compact", "spaced", "harmony"]


def spelled_call(name: str, arguments: dict[str, Any], spelling: str) -> str:
    """A call as a model may write it: the template's header and json.dumps arguments, compact or
    loosely spaced arguments, or openai-harmony's header (recipient after the channel, <|constrain|>)."""
    if spelling == "compact":
        args = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    elif spelling == "spaced":
        args = " " + json.dumps(arguments, ensure_ascii=True, indent=1) + "\n"
    else:
        args = json.dumps(arguments, ensure_ascii=False)
    if spelling == "harmony":
        return f"<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{args}<|call|>"
    return f" to=functions.{name}<|channel|>commentary json<|message|>{args}<|call|>"


def template_spelled(completion_reasoning: str | None, answer: Any, name: str) -> str:
    """The completion as the template writes the parsed reply back (docs/gpt-oss.md, the round trip)."""
    out = "" if completion_reasoning is None else (
        f"<|channel|>analysis<|message|>{completion_reasoning}<|end|><|start|>assistant")
    if isinstance(answer, str):
        return out + f"<|channel|>final<|message|>{answer}<|return|>"
    arguments = json.dumps(answer, ensure_ascii=False)
    return out + f" to=functions.{name}<|channel|>commentary json<|message|>{arguments}<|call|>"


def without_call_analysis(history: list[Any]) -> list[Any]:
    """The history as the template renders it once a final answer follows: no tool call's analysis."""
    return [{k: v for k, v in m.items() if k not in ("content", "reasoning_content", "thinking", "reasoning")}
            if m.get("tool_calls") else m for m in history]


@pytest.mark.jinja
@differential_settings
@given(histories, st.one_of(st.none(), body), st.one_of(body, call_arguments), st.sampled_from(["f", "get_weather"]),
       st.sampled_from(SPELLINGS))
def test_round_trip_through_the_template(history, reasoning, answer, name, spelling):
    completion = "" if reasoning is None else f"<|channel|>analysis<|message|>{reasoning}<|end|><|start|>assistant"
    if isinstance(answer, str):
        completion += f"<|channel|>final<|message|>{answer}<|return|>"
    else:
        completion += spelled_call(name, answer, spelling)
    reply = FMT.parse(completion, id_factory=counting_ids())
    # parse gives the reply back
    assert not reply.malformed
    assert (reply.reasoning, reply.content if isinstance(answer, str) else None) == (
        reasoning, answer if isinstance(answer, str) else None)
    if isinstance(answer, str):
        assert reply.tool_calls == ()
    else:
        [call] = reply.tool_calls
        assert (call.name, call.arguments) == (name, answer)
    sent_back = reply.to_openai()  # arguments as a JSON string, as OpenAI's API carries them
    assert all(isinstance(c["function"]["arguments"], str) for c in sent_back.get("tool_calls", []))
    # Before a final answer the template drops every earlier call's analysis (docs/gpt-oss.md).
    shown = without_call_analysis(history) if isinstance(answer, str) else history
    prompt = render_gpt_oss_jinja(shown, None, True, current_date=DAY)
    expected = ("ok", prompt[1] + template_spelled(reasoning, answer, name))
    assert render_gpt_oss_jinja(decode_first_calls([*history, sent_back]), None, False, current_date=DAY) == expected
    ours = render_ours(FMT.render, [*history, sent_back], None, False, current_date=DAY, decode_tool_arguments=True)
    assert ours == expected
    if spelling == "template" and (not isinstance(answer, str) or shown == history):
        assert expected[1] == prompt[1] + completion  # nothing changes: the completion itself
