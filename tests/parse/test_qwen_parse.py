"""The Qwen formats parse as the ChatML parser does, reading ``enable_thinking`` as their templates do:
``qwen3.5-nothink``'s prompt opens a think block only for ``enable_thinking=True``."""

from __future__ import annotations

import pytest

import prompt_formats as pf
from tests.support.parser_cases import counting_ids

MULTI = pf.get_format("chatml-multi-system")
COMPLETIONS = [
    "plan\n</think>\n\nHello",
    "Hello",
    "\n</think>\n\n<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
]


@pytest.mark.parametrize("completion", COMPLETIONS)
@pytest.mark.parametrize("name", ["qwen3.5", "qwen3.6", "qwen3.8"])
def test_thinking_formats_parse_as_chatml(name: str, completion: str) -> None:
    fmt = pf.get_format(name)
    for options in ({}, {"enable_thinking": False}, {"enable_thinking": True}):
        expected = MULTI.parse(completion, id_factory=counting_ids(), **options)
        assert fmt.parse(completion, id_factory=counting_ids(), **options) == expected


@pytest.mark.parametrize("completion", COMPLETIONS)
def test_nothink_reads_a_reply_after_a_closed_think_block_unless_asked_to_think(completion: str) -> None:
    fmt = pf.get_format("qwen3.5-nothink")
    closed = MULTI.parse(completion, id_factory=counting_ids(), enable_thinking=False)
    opened = MULTI.parse(completion, id_factory=counting_ids())
    assert fmt.parse(completion, id_factory=counting_ids()) == closed
    assert fmt.parse(completion, id_factory=counting_ids(), enable_thinking=None) == closed
    assert fmt.parse(completion, id_factory=counting_ids(), enable_thinking=True) == opened


def test_nothink_default_is_the_prompt_its_template_writes() -> None:
    fmt = pf.get_format("qwen3.5-nothink")
    prompt = fmt.render([{"role": "user", "content": "q"}], add_generation_prompt=True)
    assert prompt.endswith("<think>\n\n</think>\n\n")  # the template's closed block (tests/render checks the bytes)
    assert fmt.parse("plan\n</think>\n\nHello").reasoning in (None, "")
    assert fmt.parse("plan\n</think>\n\nHello", enable_thinking=True).reasoning == "plan"


def test_qwen3_5_takes_no_preserve_thinking() -> None:
    with pytest.raises(pf.FormatError, match="preserve_thinking"):
        pf.get_format("qwen3.5").render([{"role": "user", "content": "q"}], preserve_thinking=True)


JSON_COMPLETIONS = [
    "<think>\nplan\n</think>\n\nHello",
    "Hello",
    '<think>\n\n</think>\n\nSure.\n<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>',
    '<tool_call>\n{"name": "f", "arguments": "{\\"a\\": 1}"}\n</tool_call>\n<tool_call>\n{"name": "g"}\n</tool_call>',
    "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
]
JSON_NOTE = "written in the JSON form"


@pytest.mark.parametrize("completion", JSON_COMPLETIONS)
@pytest.mark.parametrize("name", ["qwen3", "qwen3-instruct-2507", "qwen2.5", "qwen3-vl"])
def test_json_call_formats_read_the_json_form_as_their_own(name: str, completion: str) -> None:
    # What the ChatML parser reads after a closed think block (the model opens its own), without
    # the note a JSON call gets where the template writes XML calls.
    fmt = pf.get_format(name)
    expected = MULTI.parse(completion, id_factory=counting_ids(), enable_thinking=False)
    reply = fmt.parse(completion, id_factory=counting_ids())
    assert reply.notes == tuple(note for note in expected.notes if JSON_NOTE not in note)
    assert (reply.reasoning, reply.content, reply.tool_calls, reply.malformed) == (
        expected.reasoning, expected.content, expected.tool_calls, expected.malformed)
    if '{"name"' in completion:
        assert reply.tool_calls and any(JSON_NOTE in note for note in expected.notes)  # the case tests the note


def test_qwen3_takes_enable_thinking_and_the_others_refuse_it() -> None:
    assert pf.get_format("qwen3").parse("Hello", enable_thinking=False).content == "Hello"
    for name in ("qwen3-instruct-2507", "qwen2.5", "qwen3-vl"):
        with pytest.raises(pf.UnknownOptionError, match="enable_thinking"):
            pf.get_format(name).parse("Hello", enable_thinking=False)


NEMOTRON = ("nemotron-3-nano", "nemotron-3-super", "nemotron-3-ultra", "nemotron-3.5")


@pytest.mark.parametrize("name", NEMOTRON)
@pytest.mark.parametrize("completion", JSON_COMPLETIONS)
def test_nemotron_reads_replies_as_the_xml_formats_do(name: str, completion: str) -> None:
    # Its prompt opens a think block unless enable_thinking is passed falsy; its calls are XML.
    fmt = pf.get_format(name)
    for thinking, options in ((True, {}), (True, {"enable_thinking": 1}), (False, {"enable_thinking": None}),
                              (False, {"enable_thinking": False})):
        expected = MULTI.parse(completion, id_factory=counting_ids(), enable_thinking=thinking)
        assert fmt.parse(completion, id_factory=counting_ids(), **options) == expected
    assert fmt.parse("plan\n</think>\nHi.") == pf.AssistantReply(content="Hi.", reasoning="plan")
