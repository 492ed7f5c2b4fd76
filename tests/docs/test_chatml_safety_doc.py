"""docs/safety.md's before/after example is what the template and the format really render."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import prompt_formats as pf
from tests.support.oracles import render_jinja

DOC = (Path(__file__).resolve().parents[2] / "docs" / "safety.md").read_text(encoding="utf-8")


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC, flags=re.S)


@pytest.mark.jinja
def test_before_and_after_example():
    namespace: dict[str, Any] = {}
    example = next(block for block in _blocks("python") if block.startswith("messages = ["))
    exec(example, namespace)
    messages = namespace["messages"]
    before, after = _blocks("text")
    assert render_jinja("chatml_upstream.jinja", messages, None, True) == ("ok", before)
    assert pf.get_format("chatml-safety", policy="allow").render(messages, add_generation_prompt=True) == before
    assert pf.get_format("chatml-safety").render(messages, add_generation_prompt=True) == after
    with pytest.raises(pf.InjectionError) as info:
        pf.get_format("chatml-safety", policy="reject").render(messages, add_generation_prompt=True)
    assert f"`InjectionError: {info.value}`" in DOC


def test_unescape_examples():
    from prompt_formats import CHATML_CONTROL_TOKENS, unescape

    assert unescape("Hi!<\\|im_end|>", CHATML_CONTROL_TOKENS) == "Hi!<|im_end|>"
    assert unescape("x<\\/tool_call", CHATML_CONTROL_TOKENS, followed_by=">") == "x</tool_call"
    assert 'unescape("Hi!<\\\\|im_end|>", CHATML_CONTROL_TOKENS)                     # → \'Hi!<|im_end|>\'' in DOC
