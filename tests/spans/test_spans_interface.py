"""render_spans as a declared capability of the ChatFormat interface (issue 16)."""

from __future__ import annotations

from typing import Any

import pytest

import prompt_formats as pf


class NoSpans(pf.ChatFormat):
    name = "no-spans"

    def render(self, messages: Any, tools: Any = None, add_generation_prompt: bool = False, **options: Any) -> str:
        return "x"


def test_a_format_without_render_spans_says_so_and_raises_naming_itself() -> None:
    fmt = NoSpans()
    assert fmt.renders_spans is False
    with pytest.raises(pf.FormatError, match=r"^format 'no-spans' has no render_spans"):
        fmt.render_spans([{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("name", ["chatml-multi-system", "chatml-safety", "gpt-oss", "harmony"])
def test_the_package_formats_declare_render_spans(name: str) -> None:
    fmt = pf.get_format(name)
    declared_by = [klass for klass in type(fmt).__mro__ if "renders_spans" in klass.__dict__]
    assert declared_by[0] is not pf.ChatFormat  # declared by the format's own class, not the default
    assert fmt.renders_spans is True
    rendered = fmt.render_spans([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    assert rendered.text == fmt.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)


def test_masks_refused_for_a_format_without_render_spans() -> None:
    from prompt_formats.integrations.transformers import _render_spans

    with pytest.raises(pf.FormatError, match=r"^format 'no-spans' has no render_spans: assistant masks"):
        _render_spans(NoSpans(), [{"role": "user", "content": "hi"}], None, False, {})

