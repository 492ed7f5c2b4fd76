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
