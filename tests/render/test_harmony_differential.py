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
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.messages import Message, TextPart, ToolCall
from tests.support.harmony_oracle import ROOT, HarmonyOracle, build_oracle, to_case
from tests.support.strategies import differential_settings

HARMONY = pf.get_format("harmony")


@pytest.fixture(scope="session")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HarmonyOracle]:
    """The Go oracle, built once per session (fails, does not skip, when Go is missing)."""
    instance = HarmonyOracle(build_oracle(tmp_path_factory.mktemp("harmony_oracle")))
    yield instance
    instance.close()


def check(oracle: HarmonyOracle, messages: list[Any], tools: Any, options: dict[str, Any], prepared: bool) -> None:
    expected = oracle.render(to_case(messages, tools, options))
    assert "output" in expected, expected
    our_tools = pf.prepare_tools(tools) if prepared and tools else tools
    got = HARMONY.render(messages, our_tools, **options)
    assert got == expected["output"]


# ---------------------------------------------------------------------------------------------------
# Strategies.

FRAGMENTS = [
    "", " ", "\n", "\n\n", "\t", "python", "assistant", "user", "<|end|>", "<|start|>", "<|message|>",
    "<|channel|>final", "<|return|>", "Reasoning: high", "{{ .System }}", "é", "日本語", "🙂", "\u2028",
    "\x00", "\u200b", "\\", '"',
]
no_surrogates = st.characters(blacklist_categories=["Cs"])  # not representable in Ollama's JSON input
text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(no_surrogates, max_size=8)), max_size=4).map(
    "".join
)
ROLES = ["user", "assistant", "system", "developer", "tool"]
role = st.one_of(
    st.sampled_from(ROLES), st.sampled_from(["user", "assistant", "assistant", "tool"]), st.just("critic")
)
tool_names = st.sampled_from(["python", "python", "browser", "get_weather", "Python", ""])

text_parts = st.lists(
    st.one_of(
        st.builds(lambda t: {"type": "text", "text": t}, text),
        st.builds(lambda t: {"text": t}, text),
    ),
    max_size=3,
)
content = st.one_of(text, text, st.none(), text_parts)
reasoning = st.one_of(st.none(), text)


call_ids = st.sampled_from(["call_1", "call_2", "call_3", ""])
tool_call = st.builds(
    lambda call_id, name, wrapped: {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
    if wrapped
    else {"id": call_id, "name": name, "arguments": {}},
    st.one_of(call_ids, st.none()),
    tool_names,
    st.booleans(),
)


@st.composite
def message_dict(draw: st.DrawFn, role_strategy: st.SearchStrategy[str] = role) -> dict[str, Any]:
    message: dict[str, Any] = {"role": draw(role_strategy)}
    if draw(st.booleans()) or message["role"] != "assistant":
        message["content"] = draw(content)
    # reasoning under any alias, sometimes several (with None in front: the first non-None wins)
    for key in draw(st.lists(st.sampled_from(["reasoning_content", "thinking", "reasoning"]), unique=True, max_size=2)):
        message[key] = draw(reasoning)
    for key in draw(st.lists(st.sampled_from(["tool_name", "name"]), unique=True, max_size=2)):
        message[key] = draw(st.one_of(st.none(), tool_names))
    if message["role"] == "assistant" and draw(st.integers(0, 2)) == 0:
        message["tool_calls"] = draw(st.lists(tool_call, max_size=3))
    if message["role"] == "tool" and draw(st.booleans()):
        message["tool_call_id"] = draw(call_ids)
    return message


@st.composite
def message_object(draw: st.DrawFn) -> Message:
    raw = draw(st.one_of(text, st.none(), st.lists(st.builds(TextPart, text), max_size=2)))
    calls = draw(st.lists(tool_call, max_size=2))
    return Message(
        role=draw(role),
        content=tuple(raw) if isinstance(raw, list) else raw,
        reasoning=draw(reasoning),
        name=draw(st.one_of(st.none(), tool_names)),
        tool_calls=tuple(ToolCall.from_openai(call) for call in calls),
        tool_call_id=draw(st.one_of(st.none(), call_ids)),
    )


message = st.one_of(message_dict(), message_dict(), message_dict(), message_object())


@st.composite
def conversation(draw: st.DrawFn) -> list[Any]:
    messages = draw(st.lists(message, max_size=8))
    shape = draw(st.sampled_from(["plain", "plain", "prefill_content", "prefill_thinking", "run"]))
    if shape == "prefill_content":
        prefill = draw(text.map(lambda t: t or "x"))
        messages.append({"role": "assistant", "content": prefill, "thinking": draw(reasoning)})
    elif shape == "prefill_thinking":
        messages.append({"role": "assistant", "content": draw(st.sampled_from(["", None])), "reasoning": draw(text)})
    elif shape == "run":
        same = draw(st.sampled_from(ROLES))
        messages.extend(draw(st.lists(message_dict(st.just(same)), min_size=2, max_size=4)))
    return messages


tool_dict = st.builds(
    lambda name, wrapped: {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    if wrapped
    else {"name": name, "description": "d"},
    tool_names,
    st.booleans(),
)
tools = st.one_of(st.none(), st.just([]), st.lists(tool_dict, min_size=1, max_size=4))

THINK = [None, True, False, "low", "medium", "high", "max"]
EFFORT = [None, "none", "minimal", "low", "medium", "high", "xhigh"]
dates = st.one_of(
    st.none(), st.dates(), st.dates().map(datetime.date.isoformat), st.datetimes(), st.just("2025-08-05")
)


@st.composite
def options(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    which = draw(st.sampled_from(["none", "think", "effort"]))
    if which == "think":
        out["think"] = draw(st.sampled_from(THINK))
    elif which == "effort":
        out["reasoning_effort"] = draw(st.sampled_from(EFFORT))
    date = draw(dates)
    if date is not None or draw(st.booleans()):
        out["current_date"] = date
    return out


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
