"""Harmony against its Go template executed as Ollama executes it, on generated conversations.

Every case is rendered by our formatter and by the Go oracle (``tests/support/oracle/harmony``: Go's
``text/template`` with Ollama's collation and think mapping); the bytes must be identical. Expected
values come only from the oracle. Go is required: without it the oracle fixture fails, it does not
skip.

The test turns each OpenAI-style input into the oracle's Ollama-style case with
:func:`harmony_oracle.to_case`, the format's input contract written out plainly.
"""

from __future__ import annotations

import datetime
import importlib.util
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.harmony_oracle import ROOT, HarmonyOracle, to_case
from tests.support.harmony_strategies import EFFORT, ROLES, THINK, conversation, options, tools
from tests.support.strategies import differential_settings

pytestmark = [pytest.mark.go]

HARMONY = pf.get_format("harmony")


def check(oracle: HarmonyOracle, messages: list[Any], tools: Any, options: dict[str, Any], prepared: bool) -> None:
    expected = oracle.render(to_case(messages, tools, options))
    assert "output" in expected, expected
    our_tools = pf.prepare_tools(tools) if prepared and tools else tools
    got = HARMONY.render(messages, our_tools, **options)
    assert got == expected["output"]


# ---------------------------------------------------------------------------------------------------
# Tests.


@differential_settings
@given(conversation(), tools, options(), st.booleans())
def test_harmony_matches_go_template(oracle, messages, tool_list, opts, prepared):
    check(oracle, messages, tool_list, opts, prepared)


def _random_case(rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None, dict[str, Any]]:
    words = ["hi", "python", "print(1)", "", "日本", "<|end|>", "a\nb", "🙂", " "]
    messages = []
    for _ in range(rng.randrange(0, 10)):
        m: dict[str, Any] = {"role": rng.choice([*ROLES, "assistant", "user"]), "content": rng.choice(words)}
        if rng.random() < 0.4:
            m[rng.choice(["thinking", "reasoning_content", "reasoning"])] = rng.choice(words)
        if rng.random() < 0.5:
            m[rng.choice(["tool_name", "name"])] = rng.choice(["python", "browser"])
        messages.append(m)
    tool_list = None
    if rng.random() < 0.6:
        tool_list = [
            {"type": "function", "function": {"name": rng.choice(["python", "x"])}} for _ in range(rng.randrange(3))
        ]
    date = f"{rng.randrange(1, 9999):04d}-0{rng.randrange(1, 10)}-1{rng.randrange(10)}"
    opts: dict[str, Any] = {"current_date": date}
    if rng.random() < 0.5:
        opts["think"] = rng.choice(THINK)
    elif rng.random() < 0.5:
        opts["reasoning_effort"] = rng.choice(EFFORT)
    return messages, tool_list, opts


def test_harmony_matches_go_template_bulk(oracle):
    """Thousands of seeded random conversations, checked through one oracle process."""
    rng = random.Random(4)
    cases = [_random_case(rng) for _ in range(5000)]
    expected = oracle.render_many([to_case(*case) for case in cases])
    for (messages, tool_list, opts), want in zip(cases, expected, strict=True):
        assert HARMONY.render(messages, tool_list, **opts) == want["output"], (messages, tool_list, opts)


def _m(role: str, content: Any = "", **fields: Any) -> dict[str, Any]:
    return {"role": role, "content": content, **fields}


PYTHON = [{"type": "function", "function": {"name": "python"}}]
QUIRKS = {
    "empty conversation": ([], None, {}),
    "empty system still renders its header": ([_m("system", ""), _m("user", "hi")], None, {}),
    "all system messages joined, developer as system": (
        [_m("system", "a"), _m("user", "u"), _m("developer", "b"), _m("system", "c"), _m("user", "v")],
        None,
        {},
    ),
    "consecutive user messages merge": ([_m("user", "a"), _m("user", "b"), _m("user", "c")], None, {}),
    "merged assistant keeps the first message's thinking only": (
        [_m("user", "q"), _m("assistant", "a", thinking="t1"), _m("assistant", "b", thinking="t2")],
        None,
        {},
    ),
    "prefill content drops <|end|> from every final message": (
        [_m("user", "q"), _m("assistant", "one"), _m("user", "q2"), _m("assistant", "two")],
        None,
        {},
    ),
    "prefill thinking only": (
        [_m("user", "q"), _m("assistant", "", thinking="t0"), _m("tool", "r", name="python"),
         _m("assistant", None, reasoning="t1")],
        PYTHON,
        {},
    ),
    "thinking before the last user is dropped": (
        [_m("user", "q"), _m("assistant", "a", thinking="old"), _m("user", "q2"), _m("assistant", "b", thinking="new"),
         _m("user", "q3")],
        None,
        {},
    ),
    "only python tool results render": (
        [_m("user", "q"), _m("tool", "1", name="python"), _m("tool", "2", tool_name="browser"), _m("tool", "3")],
        [{"type": "function", "function": {"name": "browser"}}],
        {},
    ),
    "tool messages do not merge": ([_m("tool", "1", name="python"), _m("tool", "2", name="python")], PYTHON, {}),
    "think false drops the reasoning line": ([_m("user", "q")], None, {"think": False}),
    "think max is high": ([_m("user", "q")], None, {"think": "max"}),
    "reasoning_effort minimal is low": ([_m("user", "q")], None, {"reasoning_effort": "minimal"}),
    "reasoning_effort none disables": ([_m("user", "q")], None, {"reasoning_effort": "none"}),
    "unknown role renders nothing but splits runs": (
        [_m("user", "a"), _m("critic", "x"), _m("user", "b")],
        None,
        {},
    ),
    "tool result named through tool_call_id, last call wins": (
        [_m("user", "q"),
         _m("assistant", "", tool_calls=[{"id": "c1", "type": "function", "function": {"name": "python"}}]),
         _m("tool", "1", tool_call_id="c1"),
         _m("tool", "2", tool_call_id="c2", name=""),
         _m("assistant", "", tool_calls=[{"id": "c2", "name": "python"}, {"id": "c1", "name": "browser"}])],
        PYTHON,
        {},
    ),
    "text parts joined": ([_m("user", [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])], None, {}),
}


@pytest.mark.parametrize("name", sorted(QUIRKS))
def test_documented_quirks_match_go_template(oracle, name):
    messages, tool_list, opts = QUIRKS[name]
    check(oracle, messages, tool_list, {"current_date": "2025-08-05", **opts}, prepared=False)
    check(oracle, messages, tool_list, {"current_date": datetime.date(2025, 8, 5), **opts}, prepared=True)


def test_default_date_is_today(oracle):
    """Without ``current_date`` both use today's local date (as Ollama's ``time.Now()``)."""
    expected = oracle.render({"messages": [{"role": "user", "content": "q"}]})["output"]
    assert HARMONY.render([_m("user", "q")]) == expected
    assert f"Current date: {datetime.date.today().isoformat()}\n" in expected


def test_benchmark_corpus_matches_go_template(oracle):
    """The shared benchmark corpus (everyday requests and a 257-message agent request) renders identically."""
    spec = importlib.util.spec_from_file_location("bench_corpus", ROOT / "benchmarks" / "corpus.py")
    assert spec is not None and spec.loader is not None
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    requests = [*corpus.realistic_requests(300), corpus.agent_request(), corpus.agent_request(64, reminders="inline")]
    options = [{"current_date": "2025-08-05", "reasoning_effort": effort} for effort in EFFORT_CYCLE]
    cases = [(r.messages, r.tools, options[i % len(options)]) for i, r in enumerate(requests)]
    expected = oracle.render_many([to_case(*case) for case in cases])
    for (messages, tool_list, opts), want in zip(cases, expected, strict=True):
        assert HARMONY.render(messages, tool_list, **opts) == want["output"]
        assert HARMONY.render(messages, pf.prepare_tools(tool_list) if tool_list else None, **opts) == want["output"]


EFFORT_CYCLE = [None, "none", "minimal", "low", "medium", "high", "xhigh"]
