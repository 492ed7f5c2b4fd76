"""Notes where a reply is not as the prompt offered (issue 29 item 5).

A call to a tool the request did not offer is a call with a note in ``reply.notes`` (not
``malformed``: it is well formed) in every format's parser (ChatML, Harmony, gpt-oss); a Harmony
analysis message cut off by the end of the completion (no ``<|end|>``) is kept as reasoning with a
note in ``reply.malformed``, as a cut-off call is.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.parser_cases import HARMONY_MARKERS, completions, counting_ids, splits, stream
from tests.support.strategies import differential_settings

WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
HARMONY_FORMATS = ["harmony", "gpt-oss"]
NOT_OFFERED = "to a tool not offered"
CUT_OFF_ANALYSIS = "analysis message cut off by the end of the completion"


def parse(name: str, text: str, tools: object = None, **context: object) -> pf.AssistantReply:
    return pf.get_format(name).parse(text, tools, id_factory=counting_ids(), **context)


@pytest.mark.parametrize("text", [
    "<tool_call>\n<function=get_time>\n<parameter=zone>\nUTC\n</parameter>\n</function>\n</tool_call>",
    '<tool_call>\n{"name": "get_time", "arguments": {"zone": "UTC"}}\n</tool_call>',
])
@pytest.mark.parametrize("name", ["chatml-multi-system", "chatml-safety"])
def test_chatml_notes_a_call_to_a_tool_not_offered(name: str, text: str) -> None:
    reply = parse(name, text, WEATHER, enable_thinking=False)
    assert [c.name for c in reply.tool_calls] == ["get_time"]
    assert any(note.startswith("tool call 0 (get_time) " + NOT_OFFERED) for note in reply.notes), reply.notes
    assert not any(NOT_OFFERED in note for note in reply.malformed), reply.malformed
    assert not any(NOT_OFFERED in note for note in parse(name, text, None, enable_thinking=False).notes)


@pytest.mark.parametrize("name", HARMONY_FORMATS)
@pytest.mark.parametrize("recipient", ["functions.get_time", "browser.search", "python"])
def test_harmony_notes_a_call_to_a_tool_not_offered(name: str, recipient: str) -> None:
    text = f"<|channel|>commentary to={recipient} <|constrain|>json<|message|>{{\"zone\": \"UTC\"}}<|call|>"
    called = recipient.removeprefix("functions.")
    reply = parse(name, text, WEATHER)
    assert [c.name for c in reply.tool_calls] == [called]
    assert (reply.malformed, reply.notes) == ((), (f"tool call 0 ({called}) {NOT_OFFERED}: read as a call",))
    # Without tools nothing was offered or refused: no note; an offered tool: no note.
    assert not any(NOT_OFFERED in n for n in parse(name, text).notes)
    offered = [*WEATHER, {"type": "function", "function": {"name": called, "parameters": {"type": "object"}}}]
    assert not any(NOT_OFFERED in n for n in parse(name, text, offered).notes)


def test_gpt_oss_builtin_tools_are_offered_by_the_option() -> None:
    python = "<|channel|>analysis to=python code<|message|>print(1)<|call|>"
    browse = '<|channel|>analysis to=browser.search code<|message|>{"query": "x"}<|call|>'
    for text, builtin in ((python, ["python"]), (browse, ["browser"])):
        assert any(NOT_OFFERED in n for n in parse("gpt-oss", text, WEATHER).notes)
        assert not any(NOT_OFFERED in n for n in parse("gpt-oss", text, WEATHER, builtin_tools=builtin).notes)


@pytest.mark.parametrize("name", HARMONY_FORMATS)
def test_a_cut_off_analysis_is_kept_as_reasoning_with_a_note(name: str) -> None:
    reply = parse(name, "<|channel|>analysis<|message|>The user wants the weath")
    assert reply.reasoning == "The user wants the weath" and reply.content is None
    assert reply.malformed == (f"{CUT_OFF_ANALYSIS}: kept as reasoning, as written so far",)
    # Ended, it has no note; a prefilled analysis cut off has one too; a final answer without its
    # end marker (the server strips '<|return|>') has none.
    assert parse(name, "<|channel|>analysis<|message|>Done.<|end|>").malformed == ()
    if name == "harmony":
        assert parse(name, "more", prefill="analysis").malformed == (f"{CUT_OFF_ANALYSIS}: kept as reasoning, "
                                                                     "as written so far",)
    assert parse(name, "<|channel|>final<|message|>The answer").malformed == ()


@differential_settings
@given(text=completions(HARMONY_MARKERS), name=st.sampled_from(HARMONY_FORMATS), offered=st.booleans(),
       data=st.data())
def test_stream_equals_parse_with_tools(text: str, name: str, offered: bool, data: st.DataObject) -> None:
    fmt = pf.get_format(name)
    tools = WEATHER if offered else None
    expected = fmt.parse(text, tools, id_factory=counting_ids())
    got = stream(lambda: fmt.stream_parser(tools, id_factory=counting_ids()), data.draw(splits(text)))[1]
    assert got == expected
