"""A session reads its options exactly as ``render`` reads them (issue #38, item 5).

For every registered format and every option it declares, a value of any kind (the wrong ones
above all: ``0``, ``1``, ``""``, ``[]``, ``1.0``, ...) given to ``fmt.session(tools, **options)``
gives, request after request, what ``fmt.render(messages, tools, add_generation_prompt, **options)``
gives: the same prompt, or an error of the same class with the same message. The requests grow
(so an incremental renderer takes the later ones), end with a user or an assistant message (so
``continue_final_message`` can apply), and ask for the generation prompt or not.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

import prompt_formats as pf
from tests.support.settings import budget
from tests.support.strategies import json_values

TOOLS = [{"type": "function", "function": {
    "name": "python", "description": "Run code.",
    "parameters": {"type": "object", "properties": {"code": {"type": "string"}}},
}}]
CALL = {"id": "call_1", "type": "function", "function": {"name": "python", "arguments": '{"code": "1+1"}'}}
CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "What is 1+1?"},
    {"role": "assistant", "content": "", "reasoning_content": "Run it.", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "name": "python", "content": "2"},
    {"role": "assistant", "content": "It is 2.", "reasoning_content": "Done."},
    {"role": "user", "content": "And 2+2?"},
    {"role": "assistant", "content": "It is "},
]
# (messages rendered, add_generation_prompt): each request extends the one before, some end with
# an assistant message (continued, or its generation prompt left off), some ask for the prompt.
REQUESTS = [(2, True), (2, None), (4, True), (5, False), (6, True), (7, False), (7, None), (6, False)]
WRONG_VALUES = [0, 1, -1, 0.0, 1.0, "", "x", "true", "content", "reasoning_content", [], ["python"], {},
                {"a": 1}, None, True, False, "2025-08-05", "low", "high"]
CASES = [(name, option.name) for name in pf.available_formats() for option in pf.get_format(name).option_specs]


def outcome(call: Any, *arguments: Any, **options: Any) -> tuple[Any, ...]:
    """``("ok", text)``, or the error's class and message (any exception: a leak must show too)."""
    try:
        return ("ok", call(*arguments, **options))
    except Exception as error:
        return (type(error), str(error))


def session_outcomes(fmt: pf.ChatFormat, options: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Every request rendered through one session (made once: its own error stands for every request)."""
    made = outcome(lambda: fmt.session(TOOLS, **options))
    if made[0] != "ok":
        return [made] * len(REQUESTS)
    session = made[1]
    return [outcome(session.render, CONVERSATION[:count], generation) for count, generation in REQUESTS]


def render_outcomes(fmt: pf.ChatFormat, options: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [outcome(fmt.render, CONVERSATION[:count], TOOLS, generation, **options) for count, generation in REQUESTS]


def fixed_date(name: str, option: str) -> dict[str, Any]:
    """A fixed date for the formats that read today's (not when the date is the option tested)."""
    dated = "current_date" in pf.get_format(name).options and option != "current_date"
    return {"current_date": "2025-08-05"} if dated else {}


@pytest.mark.parametrize("value", WRONG_VALUES, ids=repr)
@pytest.mark.parametrize(("name", "option"), CASES)
def test_a_session_reads_an_option_as_render_does(name: str, option: str, value: Any) -> None:
    fmt = pf.get_format(name)
    options = {**fixed_date(name, option), option: value}
    assert session_outcomes(fmt, options) == render_outcomes(fmt, options)


@pytest.mark.parametrize(("name", "option"), CASES)
def test_a_session_reads_any_value_as_render_does(name: str, option: str) -> None:
    fmt = pf.get_format(name)

    @budget(0.1, 10)
    @given(json_values)
    def check(value: Any) -> None:
        options = {**fixed_date(name, option), option: value}
        assert session_outcomes(fmt, options) == render_outcomes(fmt, options)

    check()
