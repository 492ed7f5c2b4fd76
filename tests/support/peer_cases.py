"""The peers' own test cases as data: what Ollama, vLLM, SGLang, llama.cpp and openai-harmony recover.

Each :class:`PeerCase` is one model output as the model writes it after our generation prompt, the
tools the request offered, and what that peer's test asserts it recovers (calls, content,
reasoning). The facts (the outputs, the tools, the expected values) are the peers'; the structure
is ours. A case that had to be adapted to our formats says how in ``adapted``.

Only the cases about our formats' output grammar are taken: ChatML / Qwen3.5-3.6 (``<think>``,
``<tool_call>`` + ``<function=NAME>`` + ``<parameter=P>``, and the JSON form of a call older Qwen models
write, ``<tool_call>`` + ``{"name": …, "arguments": …}``) and Harmony (gpt-oss channels). Cases about
other model families, token-level decoding, prompt rendering or a parser's internal events with no
recovery asserted are left out. ``SOURCE_FILES`` lists every file read; ``case_counts()`` counts
the cases taken per source.

The sources (public repositories, as stored for this project's research):

- ollama/ollama ``model/parsers/qwen3coder_test.go``, ``qwen3coder_bare_test.go``, ``qwen35_test.go``,
  ``qwen35_boundary_test.go``, ``qwen38_test.go``, ``qwen3_test.go`` (the JSON form),
  ``harmony/harmonyparser_test.go``;
- vllm-project/vllm ``tests/tool_parsers/test_qwen3coder_tool_parser.py``,
  ``test_qwen3_xml_coder_shared.py``, ``test_qwen36_bugs.py``, ``test_qwen3xml_tool_parser.py``,
  ``test_openai_tool_parser.py``, ``test_hermes_tool_parser.py`` (the JSON form);
- sgl-project/sglang ``test/registered/function_call/test_qwen3_coder_detector/test_cases.py``,
  ``test/srt/function_call/test_qwen3_coder_detector.py``,
  ``test/registered/function_call/test_function_call_parser.py`` (its Qwen3-Coder detector tests),
  ``test/registered/function_call/test_gpt_oss_detector.py``;
- ggml-org/llama.cpp ``tests/test-chat.cpp`` (the Qwen3.5-4B, Qwen3-Coder and GPT-OSS templates);
- openai/harmony ``tests/test_harmony.py`` (the parser and StreamableParser tests).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ANY",
    "Call",
    "PeerCase",
    "all_cases",
    "case_counts",
    "tool",
]


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


def tool(name: str, properties: Mapping[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """An OpenAI function tool with these parameter schemas (``properties=None``: no properties key)."""
    parameters: dict[str, Any] = {"type": "object"}
    if properties is not None:
        parameters["properties"] = dict(properties)
    parameters.update(extra)
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


def tools(*items: dict[str, Any]) -> tuple[Mapping[str, Any], ...]:
    return tuple(items)


def all_cases() -> list[PeerCase]:
    """Every peer case taken, in source order."""
    from . import (
        peer_cases_harmony,
        peer_cases_json_calls,
        peer_cases_llamacpp,
        peer_cases_llamacpp_gpt_oss,
        peer_cases_ollama,
        peer_cases_ollama_qwen35,
        peer_cases_sglang,
        peer_cases_vllm,
        peer_cases_vllm_more,
    )

    modules = (
        peer_cases_ollama,
        peer_cases_ollama_qwen35,
        peer_cases_vllm,
        peer_cases_vllm_more,
        peer_cases_sglang,
        peer_cases_llamacpp,
        peer_cases_llamacpp_gpt_oss,
        peer_cases_harmony,
        peer_cases_json_calls,
    )
    cases: list[PeerCase] = []
    for module in modules:
        cases.extend(module.CASES)
    ids = [case.id for case in cases]
    duplicates = [i for i, n in Counter(ids).items() if n > 1]
    assert not duplicates, duplicates
    return cases


def case_counts(cases: Sequence[PeerCase] | None = None) -> dict[str, int]:
    """How many cases were taken from each source file (``repo path``)."""
    counts: Counter[str] = Counter(case.source.split("::")[0] for case in cases or all_cases())
    return dict(sorted(counts.items()))
