"""The Jinja2 oracle is the real thing: transformers' own ``render_jinja_template`` agrees with it.

A smaller generated set than the main differential test, because transformers is slower to drive;
it pins the claim that ``tests/support/oracles.py`` configures Jinja2 exactly as transformers does (the
environment, ``tojson``, ``raise_exception`` and the reasoning-field aliases of 5.22+), and checks our
formatters against transformers directly as well.
"""

from __future__ import annotations

from typing import Any

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers.utils.chat_template_utils import render_jinja_template

import prompt_formats as pf
from tests.support.oracles import fixture_text, render_jinja, render_ours
from tests.support.settings import examples
from tests.support.strategies import chatml_options, conversation, tools

pytestmark = [pytest.mark.jinja]

EXAMPLES = examples(0.1, floor=200)
# chatml-safety with policy "allow" is the upstream template itself, on every input.
CASES = [
    ("chatml-multi-system", {}, "chatml_multi_system.jinja"),
    ("chatml-safety", {"policy": "allow"}, "chatml_upstream.jinja"),
]


def render_transformers(
    template: str, messages: list[Any], tool_list: Any, gen: bool, **options: Any
) -> tuple[str, str]:
    try:
        rendered, _ = render_jinja_template(
            conversations=[messages],
            tools=tool_list,
            chat_template=fixture_text(template),
            add_generation_prompt=gen,
            **options,
        )
    except jinja2.exceptions.TemplateError as exc:
        assert type(exc) is jinja2.exceptions.TemplateError, exc
        return ("error", str(exc))
    return ("ok", rendered[0])


@pytest.mark.parametrize(("name", "config", "template"), CASES)
def test_transformers_agrees_with_oracle_and_formatter(name: str, config: dict[str, Any], template: str) -> None:
    fmt = pf.get_format(name, **config)

    @settings(max_examples=EXAMPLES, deadline=None)
    @given(conversation(), tools, st.booleans(), chatml_options)
    def check(messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> None:
        expected = render_transformers(template, messages, tool_list, gen, **options)
        assert render_jinja(template, messages, tool_list, gen, **options) == expected
        assert render_ours(fmt.render, messages, tool_list, gen, **options) == expected

    check()


def test_reasoning_aliases_follow_transformers() -> None:
    # Pinned by hand because the generated set rarely hits every precedence case at once.
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a", "reasoning_content": None, "thinking": "T", "reasoning": "R"},
        {"role": "assistant", "content": "b", "reasoning": "R2"},
    ]
    expected = render_transformers("chatml_multi_system.jinja", messages, None, False)
    assert expected[0] == "ok" and "T" in expected[1] and "R2" in expected[1]
    assert render_ours(pf.get_format("chatml-multi-system").render, messages) == expected
