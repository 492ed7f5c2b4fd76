"""Harmony's ``RenderedPrompt.dropped`` and ``strict=True``, proved by the Go oracle (issue 26).

On conversations drawn by tests/support/harmony_strategies.py (mid-conversation
system and developer messages, runs Ollama's collation merges, tool results of other tools than
python, unknown roles, reasoning before the last user message and under several aliases, tool calls,
function tools, python tools with and without their own description):

- ``render_spans(...).text`` is ``render(...)``'s and the Go oracle's;
- ``dropped`` is exactly what the template leaves out, by the oracle alone
  (tests/support/harmony_drops.py): every path it names holds text; perturbing all of them, or any
  one, leaves the Go output unchanged; perturbing any other input holding text as well changes it;
- ``strict=True`` raises ``InvalidInputError`` at ``dropped[0]`` exactly when ``dropped`` is not
  empty, and otherwise returns ``render``'s text (``render`` and ``render_spans`` alike).

Each example's renders go to the oracle in one batch (one process).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.harmony_drops import candidates, covered, perturbed
from tests.support.harmony_oracle import HarmonyOracle, to_case
from tests.support.harmony_strategies import conversation, options, tool_dict
from tests.support.strategies import differential_settings

FMT = pf.get_format("harmony")
DATE = {"current_date": "2025-08-05"}

bare_python = st.just({"type": "function", "function": {"name": "python"}})
tool_list = st.lists(st.one_of(bare_python, tool_dict), min_size=1, max_size=4)
tool_lists = st.one_of(tool_list, tool_list, st.none(), st.just([]))


def _outputs(oracle: HarmonyOracle, cases: list[tuple[list[Any], Any]], opts: dict[str, Any]) -> list[str]:
    results = oracle.render_many([to_case(messages, tool_list, opts) for messages, tool_list in cases])
    for result in results:
        assert "output" in result, result
    return [result["output"] for result in results]


def check_dropped(oracle: HarmonyOracle, messages: list[Any], tool_list: Any, opts: dict[str, Any]) -> None:
    spans = FMT.render_spans(messages, tool_list, **opts)
    dropped = spans.dropped
    everything = candidates(messages, tool_list)
    assert set(dropped) <= set(everything), (dropped, everything)  # a loss holds text
    assert len(set(dropped)) == len(dropped)
    others = [path for path in everything if not covered(path, dropped, messages)]
    cases = [(messages, tool_list), perturbed(messages, tool_list, dropped)]
    cases += [perturbed(messages, tool_list, [path]) for path in dropped]
    cases += [perturbed(messages, tool_list, [*dropped, path]) for path in others]
    base, *rest = _outputs(oracle, cases, opts)
    assert spans.text == base == FMT.render(messages, tool_list, **opts)
    alone = rest[: 1 + len(dropped)]
    assert alone == [base] * len(alone), ("a reported loss shows in the Go output", dropped)
    changed = [path for path, output in zip(others, rest[1 + len(dropped) :], strict=True) if output == base]
    assert not changed, ("not reported, but the Go output does not show it", changed, dropped)


def check_strict(messages: list[Any], tool_list: Any, opts: dict[str, Any]) -> None:
    dropped = FMT.render_spans(messages, tool_list, **opts).dropped
    for call in (FMT.render, FMT.render_spans):
        if dropped:
            with pytest.raises(pf.InvalidInputError) as raised:
                call(messages, tool_list, strict=True, **opts)
            assert raised.value.path == dropped[0]
        else:
            got = call(messages, tool_list, strict=True, **opts)
            assert (got if isinstance(got, str) else got.text) == FMT.render(messages, tool_list, **opts)
        for off in (False, None):
            got = call(messages, tool_list, strict=off, **opts)
            assert (got if isinstance(got, str) else got.text) == FMT.render(messages, tool_list, **opts)


LOSSY = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Q1"},
    {"role": "assistant", "content": "", "reasoning_content": "R1", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "18°C"},
    {"role": "developer", "content": "Reminder."},
    {"role": "user", "content": "Q2"},
    {"role": "assistant", "content": "A", "thinking": "R2"},
    {"role": "assistant", "content": "B", "thinking": "R3"},
    {"role": "critic", "content": "meh"},
]
WEATHER = [{"type": "function", "function": {"name": "get_weather", "description": "d"}},
           {"type": "function", "function": {"name": "python", "description": "run code"}}]


@pytest.mark.go
def test_the_lossy_conversation_reports_what_the_oracle_shows_lost(oracle):
    """A worked case (its paths typed here from the template's rules) before the generated ones."""
    dropped = FMT.render_spans(LOSSY, WEATHER, **DATE).dropped
    assert dropped == (
        "tools[0]", "tools[1].function.description", "messages[2].reasoning_content", "messages[2].tool_calls",
        "messages[3]", "messages[7].thinking", "messages[8]",
    )
    check_dropped(oracle, LOSSY, WEATHER, DATE)


# One generated input for both properties: drawing the conversations costs as much as the oracle.
@pytest.mark.go
@differential_settings
@given(conversation(), tool_lists, options())
@example([{"role": "user", "content": "Hi"}], None, DATE)
@example(LOSSY, WEATHER, DATE)
@example([{"role": "user", "content": "q", "tool_calls": [{}, {"function": {"arguments": {}}}]}], None, DATE)
def test_dropped_is_what_the_go_template_leaves_out_and_strict_refuses_exactly_that(
    oracle, messages, tool_list, opts
):
    check_dropped(oracle, messages, tool_list, opts)
    check_strict(messages, tool_list, opts)


def test_strict_names_the_first_loss_and_counts_the_others():
    with pytest.raises(pf.InvalidInputError) as raised:
        FMT.render(LOSSY, WEATHER, strict=True, **DATE)
    assert str(raised.value).startswith("tools[0]: the template leaves it out of the prompt")
    assert "(and 6 more: tools[1].function.description, messages[2].reasoning_content" in str(raised.value)


@pytest.mark.parametrize("value", ["yes", 1, 0])
def test_strict_takes_a_boolean_or_null(value):
    with pytest.raises(pf.InvalidInputError, match=r"^strict: expected a boolean or null"):
        FMT.render([{"role": "user", "content": "Hi"}], strict=value, **DATE)
    with pytest.raises(pf.InvalidInputError, match=r"^strict: expected a boolean or null"):
        FMT.render_spans([{"role": "user", "content": "Hi"}], strict=value, **DATE)


def test_strict_is_declared_for_render_and_parse():
    assert "strict" in FMT.options and "strict" in FMT.parse_options
    assert FMT.parse("<|channel|>final<|message|>x", strict=True).content == "x"


def test_a_session_with_strict_refuses_a_loss_and_renders_the_rest():
    session = FMT.session(strict=True, **DATE)
    hello = [{"role": "user", "content": "Hi"}]
    assert session.render(hello) == FMT.render(hello, **DATE)
    with pytest.raises(pf.InvalidInputError, match=r"^messages\[1\]: the template leaves it out"):
        session.render([*hello, {"role": "tool", "name": "browser", "content": "page"}])
