"""The peers' own test cases as data: what Ollama, vLLM, SGLang, llama.cpp and openai-harmony recover.

Each :class:`PeerCase` is one model output as the model writes it after our generation prompt, the
tools the request offered, and what that peer's test asserts it recovers (calls, content,
reasoning). The facts (the outputs, the tools, the expected values) are the peers'; the structure
is ours. A case that had to be adapted to our formats says how in ``adapted``.

Only the cases about our formats' output grammar are taken: ChatML / Qwen3.5-3.6 (``<think>``,
``<tool_call>`` + ``<function=NAME>`` + ``<parameter=P>``, and the JSON form of a call older Qwen models
write, ``<tool_call>`` + ``{"name": …, "arguments": …}``) and Harmony (gpt-oss channels). Cases about
other model families, token-level decoding, prompt rendering or a parser's internal events with no
recovery asserted are left out. The list below names every file read; ``case_counts()`` counts the
cases taken per source.

The sources (public repositories, as stored for this project's research):

- ollama/ollama ``model/parsers/qwen3coder_test.go``, ``qwen3coder_bare_test.go``, ``qwen35_test.go``,
  ``qwen35_boundary_test.go``, ``qwen38_test.go``, ``qwen3_test.go`` (the JSON form),
  ``nemotron3nano_test.go`` (Nemotron 3 Nano: the same grammar), ``harmony/harmonyparser_test.go``;
- vllm-project/vllm ``tests/tool_parsers/test_qwen3coder_tool_parser.py``,
  ``test_qwen3_xml_coder_shared.py``, ``test_qwen36_bugs.py``, ``test_qwen3xml_tool_parser.py``,
  ``test_openai_tool_parser.py``, ``test_hermes_tool_parser.py`` (the JSON form);
- sgl-project/sglang ``test/registered/function_call/test_qwen3_coder_detector/test_cases.py``,
  ``test/srt/function_call/test_qwen3_coder_detector.py``,
  ``test/registered/function_call/test_function_call_parser.py`` (its Qwen3-Coder detector tests),
  ``test/registered/function_call/test_gpt_oss_detector.py``;
- ggml-org/llama.cpp ``tests/test-chat.cpp`` (the Qwen3.5-4B, Qwen3-Coder and GPT-OSS templates);
- openai/harmony ``tests/test_harmony.py`` (the parser and StreamableParser tests).

The data is JSON, in ``tests/fixtures/peer_cases/``: one file per group of peer tests (``SOURCES``,
read in that order), each an object ``{"description": [lines], "cases": [case, …]}``; the
description says which tests the file holds and how they were read. A case is an object with the
fields of :class:`PeerCase`: ``source``, ``peer``, ``family``, ``text`` always; the others only when
they are not the field's default (``tools``: a list of OpenAI tool objects; ``thinking``: ``true``;
``calls``: a list of ``{"name": NAME, "arguments": VALUE}``; ``content``, ``reasoning``, ``adapted``:
strings; ``content_has``, ``chunks``, ``notes``: lists of strings). An unknown field is an error.

The encoding of what JSON does not hold:

- a value the peer's test does not assert (:data:`ANY`) is the object ``{"$any": true}``, wherever a
  value of a call's arguments may be (a call's ``arguments`` itself or a value inside them); no
  argument object of the data has the single key ``"$any"``, so nothing else reads as it;
- the sequence fields of :class:`PeerCase` and :class:`Ours` are tuples, written as JSON lists and
  made tuples by the loader; inside arguments and tools a JSON list is a Python list (the data holds
  no tuples there), objects are dicts with string keys (it holds no other keys), and integers stay
  integers and floats floats as JSON writes them (``100`` is the int 100, ``100.0`` the float);
  there is no NaN or infinity in the data and the files hold none;
- characters that do not show (a control, format or separator character other than the space and
  the newline, e.g. U+00A0 or U+3000) are written as ``\\uXXXX`` escapes, the rest as themselves.

``disagreements.json`` holds the cases where our reading differs from the peer's (:func:`disagreements`):
``{"description": [lines], "shared_reasons": {NAME: reason}, "disagreements": [row, …]}``; a row is
``{"case": a case's source, "reason": text}`` or ``{"case": …, "shared_reason": NAME}`` (exactly
one of the two), with what we give instead: ``calls``, ``content``, ``content_has``, ``reasoning``
encoded as in a case.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

__all__ = [
    "ANY",
    "FIXTURES",
    "SOURCES",
    "Call",
    "Ours",
    "PeerCase",
    "all_cases",
    "case_counts",
    "disagreements",
    "load",
]

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "peer_cases"
SOURCES = (
    "ollama",
    "ollama_qwen35",
    "ollama_nemotron",
    "vllm",
    "vllm_more",
    "sglang",
    "llamacpp",
    "llamacpp_gpt_oss",
    "harmony",
    "json_calls",
)


class _Any:
    """A value the peer's test does not assert."""

    def __repr__(self) -> str:
        return "ANY"


ANY: Any = _Any()


@dataclass(frozen=True)
class Call:
    """A tool call a peer recovers: the name and the arguments as a JSON value (``ANY``: not asserted).

    ``arguments`` is a dict for arguments read as a JSON object, or the raw string when the peer
    keeps arguments that are not a JSON object as text.
    """

    name: str
    arguments: Any = ANY


@dataclass(frozen=True)
class PeerCase:
    """One peer test case: the model output and what the peer recovers from it.

    ``calls``/``content``/``reasoning`` are ``None`` when the peer's test does not assert them;
    ``content_has`` lists texts the peer asserts the content contains (``assertIn``). ``chunks``
    are the deltas the peer's streaming test fed, when it fixed them. ``family`` is ``"chatml"``
    (parsed by ``chatml-multi-system`` and ``chatml-safety`` with ``enable_thinking=thinking``) or
    ``"harmony"`` (parsed by ``harmony`` and ``gpt-oss``).
    """

    source: str  # "repo path::test name[variant]"
    peer: str  # ollama | vllm | sglang | llama.cpp | openai-harmony
    family: str
    text: str
    tools: tuple[Mapping[str, Any], ...] | None = None
    thinking: bool = False
    calls: tuple[Call, ...] | None = None
    content: str | None = None
    content_has: tuple[str, ...] = ()
    reasoning: str | None = None
    chunks: tuple[str, ...] | None = None
    adapted: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def id(self) -> str:
        return self.source


@dataclass(frozen=True)
class Ours:
    """What we recover from a peer case, and why it differs from what that peer recovers."""

    reason: str
    calls: tuple[Call, ...] | None = None
    content: str | None = None
    content_has: tuple[str, ...] = ()
    reasoning: str | None = None


def _value(data: Any) -> Any:
    """A JSON value as read, ``{"$any": true}`` as :data:`ANY`."""
    if isinstance(data, dict):
        if set(data) == {"$any"}:
            if data["$any"] is not True:
                raise ValueError(f"the not-asserted marker is {{'$any': true}}, got {data!r}")
            return ANY
        return {key: _value(item) for key, item in data.items()}
    if isinstance(data, list):
        return [_value(item) for item in data]
    return data


def _strings(data: Any, where: str) -> tuple[str, ...]:
    if not isinstance(data, list) or not all(isinstance(item, str) for item in data):
        raise ValueError(f"{where}: expected a list of strings, got {data!r}")
    return tuple(data)


def _calls(data: Any, where: str) -> tuple[Call, ...] | None:
    if data is None:
        return None
    if not isinstance(data, list):
        raise ValueError(f"{where}: calls must be a list, got {data!r}")
    calls = []
    for item in data:
        if not isinstance(item, dict) or set(item) - {"name", "arguments"} or not isinstance(item.get("name"), str):
            raise ValueError(f"{where}: a call is {{'name': str, 'arguments': value}}, got {item!r}")
        calls.append(Call(item["name"], _value(item["arguments"])) if "arguments" in item else Call(item["name"]))
    return tuple(calls)


_CASE_FIELDS = frozenset(f.name for f in fields(PeerCase))


def _case(data: Mapping[str, Any], where: str) -> PeerCase:
    unknown = set(data) - _CASE_FIELDS
    if unknown:
        raise ValueError(f"{where}: unknown fields {sorted(unknown)}")
    values = dict(data)
    if "tools" in values:
        values["tools"] = tuple(_value(values["tools"]))
    if "calls" in values:
        values["calls"] = _calls(values["calls"], where)
    for name in ("content_has", "chunks", "notes"):
        if name in values:
            values[name] = _strings(values[name], f"{where}: {name}")
    return PeerCase(**values)


def _read(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def load(name: str) -> list[PeerCase]:
    """The cases of one fixture file (``SOURCES``), in the file's order."""
    path = FIXTURES / f"{name}.json"
    data = _read(path)
    if set(data) != {"description", "cases"}:
        raise ValueError(f"{path}: expected the keys 'description' and 'cases', got {sorted(data)}")
    return [_case(item, f"{path.name}[{i}]") for i, item in enumerate(data["cases"])]


def all_cases() -> list[PeerCase]:
    """Every peer case taken, in source order."""
    cases: list[PeerCase] = []
    for name in SOURCES:
        cases.extend(load(name))
    ids = [case.id for case in cases]
    duplicates = [i for i, n in Counter(ids).items() if n > 1]
    assert not duplicates, duplicates
    return cases


def case_counts(cases: Sequence[PeerCase] | None = None) -> dict[str, int]:
    """How many cases were taken from each source file (``repo path``)."""
    counts: Counter[str] = Counter(case.source.split("::")[0] for case in cases or all_cases())
    return dict(sorted(counts.items()))


def disagreements() -> dict[str, Ours]:
    """The peer cases where our reading differs from the peer's (by case id): what we give instead, and why.

    Each row is asserted by tests/parse/test_peer_cases.py (we give ``Ours``, and not what the peer
    gives). The reasons are the parse rules written in docs/chatml.md and docs/harmony.md ("Where the
    readings differ"); most rows are cases where the peers disagree with each other.
    """
    path = FIXTURES / "disagreements.json"
    data = _read(path)
    if set(data) != {"description", "shared_reasons", "disagreements"}:
        raise ValueError(f"{path}: expected 'description', 'shared_reasons', 'disagreements', got {sorted(data)}")
    shared: dict[str, str] = data["shared_reasons"]
    rows: dict[str, Ours] = {}
    for i, row in enumerate(data["disagreements"]):
        where = f"{path.name}[{i}]"
        unknown = set(row) - {"case", "reason", "shared_reason", "calls", "content", "content_has", "reasoning"}
        if unknown or ("reason" in row) == ("shared_reason" in row) or row["case"] in rows:
            raise ValueError(f"{where}: unknown fields {sorted(unknown)}, not one reason, or a case twice: {row!r}")
        rows[row["case"]] = Ours(
            row["reason"] if "reason" in row else shared[row["shared_reason"]],
            calls=_calls(row.get("calls"), where),
            content=row.get("content"),
            content_has=_strings(row.get("content_has", []), f"{where}: content_has"),
            reasoning=row.get("reasoning"),
        )
    return rows
