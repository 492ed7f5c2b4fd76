"""The peers' own test cases (tests/support/peer_cases.py): we recover what they recover, parse == stream.

For every case where a peer recovers tool calls, content or reasoning, ``parse`` gives the same
(calls by name and arguments as JSON values; content and reasoning up to the whitespace each side,
which our parsers strip as the templates do) and does not return a recovered call as text. Where
the peers disagree with each other, or our answer differs for a documented reason, the case is in
``DISAGREEMENTS`` with what we give instead and why (the parse-rule sections of docs/chatml.md and
docs/harmony.md say the same). The stream parser gives what ``parse`` gives for fixed and random splits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.model.messages import AssistantReply
from tests.support.parser_cases import counting_ids, splits, stream
from tests.support.peer_cases import ANY, Call, Ours, PeerCase, all_cases, case_counts, disagreements

CASES = all_cases()
DISAGREEMENTS = disagreements()
FORMATS = {"chatml": ("chatml-multi-system", "chatml-safety"), "harmony": ("harmony", "gpt-oss")}
#: The formats whose prompt never opens a think block (the model writes its own): they take the
#: ChatML cases read with thinking off.
JSON_CALL_FORMATS = ("qwen3", "qwen3-instruct-2507", "qwen2.5", "qwen3-vl")
#: The formats whose prompt opens a think block unless enable_thinking is falsy: they take every ChatML case.
NEMOTRON_FORMATS = ("nemotron-3-nano", "nemotron-3.5")


def formats_of(case: PeerCase) -> tuple[str, ...]:
    """The formats a case is read by."""
    if case.family != "chatml":
        return FORMATS[case.family]
    return FORMATS["chatml"] + NEMOTRON_FORMATS + (() if case.thinking else JSON_CALL_FORMATS)


def context_of(case: PeerCase, fmt_name: str) -> dict[str, Any]:
    """The parse options that say where the case's completion starts."""
    reads = ("chatml-multi-system", "chatml-safety", *NEMOTRON_FORMATS)
    return {"enable_thinking": case.thinking} if fmt_name in reads else {}


def json_equal(got: Any, want: Any) -> bool:
    """Equal as JSON values: numbers by value, booleans only to booleans, objects by keys."""
    if want is ANY:
        return True
    if isinstance(got, bool) or isinstance(want, bool):
        return type(got) is type(want) and got == want
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        return got == want
    if isinstance(got, Mapping) and isinstance(want, Mapping):
        return got.keys() == want.keys() and all(json_equal(got[k], want[k]) for k in got)
    if isinstance(got, (list, tuple)) and isinstance(want, (list, tuple)):
        return len(got) == len(want) and all(json_equal(g, w) for g, w in zip(got, want, strict=True))
    return type(got) is type(want) and got == want


@dataclass(frozen=True)
class Expected:
    calls: tuple[Call, ...] | None
    content: str | None
    content_has: tuple[str, ...]
    reasoning: str | None


def expected_of(case: PeerCase) -> Expected:
    ours: Ours | None = DISAGREEMENTS.get(case.id)
    if ours is None:
        return Expected(case.calls, case.content, case.content_has, case.reasoning)
    return Expected(ours.calls, ours.content, ours.content_has, ours.reasoning)


def parse(case: PeerCase, fmt_name: str) -> AssistantReply:
    fmt = pf.get_format(fmt_name)
    tools = list(case.tools) if case.tools is not None else None
    return fmt.parse(case.text, tools, id_factory=counting_ids(), **context_of(case, fmt_name))


def call_markup(case: PeerCase, name: str) -> Sequence[str]:
    """How the text of a call to ``name`` begins, in the case's format."""
    if case.family == "chatml":
        return (f"<function={name}>",)
    return (f"to=functions.{name}", f"to={name}<", f"to={name} ")


def problems(case: PeerCase, reply: AssistantReply, want: Expected) -> list[str]:
    found = []
    if want.calls is not None:
        got = [(c.name, c.arguments) for c in reply.tool_calls]
        if len(got) != len(want.calls) or not all(
            name == w.name and json_equal(args, w.arguments) for (name, args), w in zip(got, want.calls, strict=True)
        ):
            found.append(f"calls {got!r}, expected {[(w.name, w.arguments) for w in want.calls]!r}")
        for w in want.calls:
            if any(m in (reply.content or "") for m in call_markup(case, w.name)):
                found.append(f"the call to {w.name!r} is (also) in the content: {reply.content!r}")
    if want.content is not None and (reply.content or "").strip() != want.content.strip():
        found.append(f"content {reply.content!r}, expected {want.content!r}")
    found += [f"content {reply.content!r} lacks {h!r}" for h in want.content_has if h not in (reply.content or "")]
    if want.reasoning is not None and (reply.reasoning or "").strip() != want.reasoning.strip():
        found.append(f"reasoning {reply.reasoning!r}, expected {want.reasoning!r}")
    return found


def _params() -> list[Any]:
    return [pytest.param(case, fmt, id=f"{fmt}:{case.id}") for case in CASES for fmt in formats_of(case)]


@pytest.mark.parametrize(("case", "fmt_name"), _params())
def test_we_recover_what_the_peer_recovers(case: PeerCase, fmt_name: str) -> None:
    reply = parse(case, fmt_name)
    assert problems(case, reply, expected_of(case)) == []
    if case.id in DISAGREEMENTS:
        # The table must stay a table of differences: where we now agree with the peer, the row goes.
        assert problems(case, reply, Expected(case.calls, case.content, case.content_has, case.reasoning)) != [], (
            "we now recover what the peer recovers: remove the row from DISAGREEMENTS"
        )


def _fixed_splits(case: PeerCase) -> list[list[str]]:
    text = case.text
    cuts = [list(case.chunks)] if case.chunks is not None else []
    thirds = [text[: len(text) // 3], text[len(text) // 3 : 2 * len(text) // 3], text[2 * len(text) // 3 :]]
    return [*cuts, [text], list(text), thirds]


@pytest.mark.parametrize(("case", "fmt_name"), _params())
def test_stream_gives_what_parse_gives(case: PeerCase, fmt_name: str) -> None:
    fmt = pf.get_format(fmt_name)
    tools = list(case.tools) if case.tools is not None else None
    context = context_of(case, fmt_name)
    assert "".join(case.chunks or ()) in ("", case.text)
    want = parse(case, fmt_name)
    for deltas in _fixed_splits(case):
        _, got = stream(lambda: fmt.stream_parser(tools, id_factory=counting_ids(), **context), deltas)
        assert got == want, deltas


@given(st.data())
def test_stream_gives_what_parse_gives_for_random_splits(data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(CASES))
    fmt_name = data.draw(st.sampled_from(formats_of(case)))
    fmt = pf.get_format(fmt_name)
    tools = list(case.tools) if case.tools is not None else None
    context = context_of(case, fmt_name)
    deltas = data.draw(splits(case.text))
    _, got = stream(lambda: fmt.stream_parser(tools, id_factory=counting_ids(), **context), deltas)
    assert got == parse(case, fmt_name)


def test_every_disagreement_names_a_case_and_a_reason() -> None:
    ids = {case.id for case in CASES}
    assert set(DISAGREEMENTS) <= ids, set(DISAGREEMENTS) - ids
    assert all(ours.reason for ours in DISAGREEMENTS.values())


def test_the_cases_cover_every_peer_suite() -> None:
    counts = case_counts(CASES)
    peers = {case.peer for case in CASES}
    assert peers == {"ollama", "vllm", "sglang", "llama.cpp", "openai-harmony"}
    assert all(n > 0 for n in counts.values())
