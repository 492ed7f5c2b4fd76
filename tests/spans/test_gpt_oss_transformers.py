"""The gpt-oss oracle is transformers' own path: ``apply_chat_template``'s message normalisation and
``render_jinja_template`` agree with it, and with our formatter, on generated conversations.

A smaller set than the main differential test (transformers is slower to drive). transformers takes
the date from ``datetime.now()``; the test replaces its module's ``datetime`` with one whose ``now``
is the option's day.
"""

from __future__ import annotations

import datetime
from typing import Any

import jinja2
import pytest
import transformers.utils.chat_template_utils as ctu
from hypothesis import given, settings
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.gpt_oss_drops import crashing_as_outcome, ours_outcome, outcome
from tests.support.gpt_oss_strategies import conversation, options, tools
from tests.support.oracles import fixture_text
from tests.support.settings import examples

pytestmark = [pytest.mark.jinja]

EXAMPLES = examples(0.1, floor=200)
FMT = pf.get_format("gpt-oss")


class _Clock:
    """Stands in for ``datetime.datetime`` in transformers' module: ``now()`` is a set day."""

    day: Any = None

    @classmethod
    def now(cls) -> Any:
        return cls.day


def render_transformers(messages: list[Any], tool_list: Any, gen: bool, **opts: Any) -> tuple[str, str]:
    day = opts.pop("current_date")
    _Clock.day = datetime.datetime.fromisoformat(day) if isinstance(day, str) else day
    kwargs = {key: value for key, value in opts.items() if value is not None}
    try:
        rendered, _ = ctu.render_jinja_template(
            conversations=[ctu._normalize_chat_messages(messages)], tools=tool_list,
            chat_template=fixture_text("gpt_oss.jinja"), add_generation_prompt=gen, **kwargs,
        )
    except jinja2.exceptions.TemplateError as exc:
        assert type(exc) is jinja2.exceptions.TemplateError, exc
        return ("error", str(exc))
    return ("ok", rendered[0])


def test_transformers_agrees_with_oracle_and_formatter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ctu, "datetime", _Clock)

    @settings(max_examples=EXAMPLES, deadline=None)
    @given(conversation(), tools, st.booleans(), options())
    def check(messages: list[Any], tool_list: Any, gen: bool, opts: dict[str, Any]) -> None:
        expected = crashing_as_outcome(render_transformers, messages, tool_list, gen, **opts)
        assert outcome(messages, tool_list, gen, opts) == expected
        assert ours_outcome(FMT.render, messages, tool_list, gen, **opts) == expected

    check()
