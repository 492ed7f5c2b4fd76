"""The reference engines' outputs, stored: what the quick tier compares the renderers with.

``tests/fixtures/golden/<format>.json`` holds, for every registered format, generated cases (the
differential tests' strategies, drawn at a fixed seed, kept where they are JSON) and what the
format's reference engine made of each: ``["ok", text]`` or ``["error", message]`` (the template's
own error). The texts come only from the engines: ``python -m tests.support.golden`` writes the files
with them, and ``tests/render/test_golden.py`` checks in the default tier that every stored outcome
is still the engine's (so a stored file cannot drift, nor hold our own output), and in every tier
that ours equals it.

Cases the engines cannot make reproducible are left out: a crash of the engine itself (gpt-oss's
Jinja2 type errors, the Qwen templates' ``arguments|items`` of a non-object, which ours meets with
InvalidInputError), and a gpt-oss or Harmony case without
a ``current_date`` string (the default is today's date).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "golden"

#: Cases stored per format, and the least of each kind among them (where the engine has them: the
#: Go template never raises): rendered, rendered with tools, the template's error.
SIZE = 160
LEAST = {"ok": 100, "tools": 25, "error": 25}

Outcome = tuple[str, str]


@dataclass(frozen=True)
class Corpus:
    """One format's stored cases: how they are drawn and which engine renders them."""

    format: str
    options: dict[str, Any]  # get_format's options: chatml-safety's guard lets everything through
    engine: str
    cases: Callable[[], st.SearchStrategy[dict[str, Any]]]
    raises: bool = True  # the template has errors of its own (the Go template and the JSON-call ones have none)
    drops_nones: bool = False  # the engine is fed the messages without their None-valued keys, as transformers

    @property
    def path(self) -> Path:
        return FIXTURES / f"{self.format}.json"


def _chatml_cases() -> st.SearchStrategy[dict[str, Any]]:
    from tests.support.strategies import chatml_options, conversation, tools

    return st.fixed_dictionaries({
        "messages": conversation(extra_roles=("developer",)), "tools": tools,
        "add_generation_prompt": st.booleans(), "options": chatml_options,
    })


def _qwen3_5_cases() -> st.SearchStrategy[dict[str, Any]]:
    from tests.support.strategies import chatml_options, conversation, tools

    # Qwen3.5's templates read no preserve_thinking (the format refuses it).
    options = chatml_options.map(lambda o: {k: v for k, v in o.items() if k != "preserve_thinking"})
    return st.fixed_dictionaries({
        "messages": conversation(extra_roles=("developer",)), "tools": tools,
        "add_generation_prompt": st.booleans(), "options": options,
    })


def _qwen3_8_cases() -> st.SearchStrategy[dict[str, Any]]:
    from tests.support.strategies import chatml_options, conversation, tools

    effort = st.sampled_from(["xhigh", "medium", "low", "max"])
    efforts = st.fixed_dictionaries({}, optional={"reasoning_effort": effort})
    return st.fixed_dictionaries({
        "messages": conversation(extra_roles=("developer",)), "tools": tools, "add_generation_prompt": st.booleans(),
        "options": st.tuples(chatml_options, efforts).map(lambda pair: {**pair[0], **pair[1]}),
    })


def _json_call_cases(thinking: bool) -> Callable[[], st.SearchStrategy[dict[str, Any]]]:
    def cases() -> st.SearchStrategy[dict[str, Any]]:
        from tests.support.strategies import conversation, tools
        from tests.support.usual import usual_conversation, with_string_contents

        options = st.fixed_dictionaries({}, optional={"enable_thinking": st.sampled_from([True, False, None])})
        messages = st.one_of(conversation(extra_roles=("developer",)),
                             usual_conversation(strict=True).map(with_string_contents))
        return st.fixed_dictionaries({
            "messages": messages, "tools": tools,
            "add_generation_prompt": st.booleans(), "options": options if thinking else st.just({}),
        })

    return cases


def _nemotron_cases(name: str) -> Callable[[], st.SearchStrategy[dict[str, Any]]]:
    def cases() -> st.SearchStrategy[dict[str, Any]]:
        from tests.support.nemotron_strategies import options
        from tests.support.strategies import conversation, tools
        from tests.support.usual import usual_conversation

        messages = st.one_of(conversation(extra_roles=("developer",)), usual_conversation(strict=True))
        return st.fixed_dictionaries({
            "messages": messages, "tools": tools, "add_generation_prompt": st.booleans(), "options": options(name),
        })

    return cases


def _gemma3_cases() -> st.SearchStrategy[dict[str, Any]]:
    from tests.support.gemma_strategies import conversation
    from tests.support.strategies import tools

    return st.fixed_dictionaries({  # (the tokenizer's bos_token, which transformers passes the template)
        "messages": conversation(), "tools": tools, "add_generation_prompt": st.booleans(),
        "options": st.sampled_from([{"bos_token": "<bos>"}, {"bos_token": ""}]),
    })


def _gemma4_cases() -> st.SearchStrategy[dict[str, Any]]:
    from tests.support.gemma4_strategies import conversation, options, oracle_options, tool_list

    return st.fixed_dictionaries({  # (the tokenizer's bos_token, which transformers passes the template)
        "messages": conversation(), "tools": tool_list, "add_generation_prompt": st.booleans(),
        "options": options().map(oracle_options),
    })


def _deepseek_v3_cases() -> st.SearchStrategy[dict[str, Any]]:
    from tests.support.deepseek_strategies import BOS, conversation
    from tests.support.strategies import tools

    return st.fixed_dictionaries({  # (the tokenizer's bos_token, which transformers passes the template)
        "messages": conversation(), "tools": tools, "add_generation_prompt": st.booleans(),
        "options": st.sampled_from([{"bos_token": BOS}, {"bos_token": ""}]),
    })


def _glm_cases() -> st.SearchStrategy[dict[str, Any]]:
    from tests.support.glm_strategies import conversation, options
    from tests.support.strategies import tools

    return st.fixed_dictionaries({
        "messages": conversation(), "tools": tools, "add_generation_prompt": st.booleans(), "options": options(),
    })


def _llama_cases(name: str) -> Callable[[], st.SearchStrategy[dict[str, Any]]]:
    def cases() -> st.SearchStrategy[dict[str, Any]]:
        from tests.support.llama_strategies import BOS, DATE, conversation, options
        from tests.support.strategies import tools

        dated = options(name).map(lambda given: {"bos_token": BOS, "date_string": DATE, **given})  # (3.2: not today's)
        return st.fixed_dictionaries({
            "messages": conversation(), "tools": st.one_of(st.none(), tools), "add_generation_prompt": st.booleans(),
            "options": dated,
        })

    return cases


def _gpt_oss_cases() -> st.SearchStrategy[dict[str, Any]]:
    from tests.support.gpt_oss_strategies import conversation, options, tools

    return st.fixed_dictionaries({
        "messages": conversation(), "tools": tools, "add_generation_prompt": st.booleans(), "options": options(),
    })


def _harmony_cases() -> st.SearchStrategy[dict[str, Any]]:
    from tests.support.harmony_strategies import conversation, options, tools

    return st.fixed_dictionaries({"messages": conversation(), "tools": tools, "options": options()})


CORPORA = (
    Corpus("chatml-multi-system", {}, "Jinja2: chatml_multi_system.jinja", _chatml_cases),
    Corpus("chatml-safety", {"policy": "allow"}, "Jinja2: chatml_upstream.jinja", _chatml_cases),
    Corpus("qwen3.5", {}, "Jinja2: families/qwen3_5_think.jinja", _qwen3_5_cases),
    Corpus("qwen3.5-nothink", {}, "Jinja2: families/qwen3_5_nothink.jinja", _qwen3_5_cases),
    Corpus("qwen3.6", {}, "Jinja2: families/qwen3_6.jinja", _chatml_cases),
    Corpus("qwen3.8", {}, "Jinja2: families/qwen3_8.jinja", _qwen3_8_cases),
    Corpus("qwen3", {}, "Jinja2: families/qwen3.jinja", _json_call_cases(True), False, True),
    Corpus("qwen3-instruct-2507", {}, "Jinja2: families/qwen3_instruct_2507.jinja", _json_call_cases(False), False,
           True),
    Corpus("qwen2.5", {}, "Jinja2: families/qwen2_5.jinja", _json_call_cases(False), False, True),
    Corpus("qwen3-vl", {}, "Jinja2: families/qwen3_vl.jinja", _json_call_cases(False), False, True),
    *(Corpus(name, {}, f"Jinja2: families/{fixture}.jinja", _nemotron_cases(name), False, True)
      for name, fixture in (("nemotron-3-nano", "nemotron_3_nano"), ("nemotron-3-super", "nemotron_3_super"),
                            ("nemotron-3-ultra", "nemotron_3_ultra"), ("nemotron-3.5", "nemotron_3_5"))),
    Corpus("gemma-3", {}, "Jinja2: families/gemma3.jinja", _gemma3_cases, True, True),
    Corpus("gemma-4", {}, "Jinja2: families/gemma4.jinja", _gemma4_cases, True, True),
    Corpus("deepseek-v3", {}, "Jinja2: families/deepseekv3.jinja", _deepseek_v3_cases, False, True),
    Corpus("glm-4.5", {}, "Jinja2: families/glm4moe.jinja", _glm_cases, False, True),
    Corpus("llama-3.1", {}, "Jinja2: families/llama3_1.jinja", _llama_cases("llama-3.1"), True, True),
    Corpus("llama-3.2", {}, "Jinja2: families/llama3_2.jinja", _llama_cases("llama-3.2"), True, True),
    Corpus("gpt-oss", {}, "Jinja2: gpt_oss.jinja", _gpt_oss_cases),
    Corpus("harmony", {}, "Go text/template: harmony_gpt_oss.gotmpl", _harmony_cases, False),
)


def render_args(case: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments of ``render`` for a stored case."""
    args: tuple[Any, ...] = (case["messages"], case["tools"])
    if "add_generation_prompt" in case:
        args += (case["add_generation_prompt"],)
    return args, dict(case["options"])


def engine_outcomes(corpus: Corpus, cases: list[dict[str, Any]], go_oracle: Any = None) -> list[Outcome | None]:
    """The engine's outcome of each case; None where the engine itself crashes."""
    if corpus.format == "harmony":
        from tests.support.harmony_oracle import to_case

        answers = go_oracle.render_many([to_case(c["messages"], c["tools"], c["options"]) for c in cases])
        return [("ok", a["output"]) if "output" in a else ("error", a["error"]) for a in answers]
    if corpus.format == "gpt-oss":
        from tests.support.gpt_oss_drops import CRASH, outcome

        found = [outcome(c["messages"], c["tools"], c["add_generation_prompt"], c["options"]) for c in cases]
        return [None if o == CRASH else o for o in found]
    from tests.support.oracles import render_jinja_as_transformers, render_jinja_or_crash

    template = corpus.engine.removeprefix("Jinja2: ")
    engine = render_jinja_as_transformers if corpus.drops_nones else render_jinja_or_crash
    return [engine(template, c["messages"], c["tools"], c["add_generation_prompt"], **c["options"])
            for c in cases]


def _as_json(corpus: Corpus, case: dict[str, Any]) -> dict[str, Any] | None:
    """The case as it reads back from JSON, or None where it holds what JSON cannot hold or a date
    the engine would take from today."""
    try:
        loaded: dict[str, Any] = json.loads(json.dumps(case))
    except (TypeError, ValueError):
        return None
    dated = corpus.format not in ("gpt-oss", "harmony") or isinstance(loaded["options"].get("current_date"), str)
    return loaded if dated else None


def draw_cases(corpus: Corpus, size: int = SIZE) -> list[dict[str, Any]]:
    """``size`` distinct JSON cases of the corpus's strategy, at a fixed seed."""
    from hypothesis import HealthCheck, given, settings

    found: dict[str, dict[str, Any]] = {}

    @settings(max_examples=size * 20, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(corpus.cases())
    def collect(case: dict[str, Any]) -> None:
        loaded = _as_json(corpus, case)
        if loaded is not None and len(found) < size:
            found.setdefault(json.dumps(loaded, sort_keys=True), loaded)

    collect()
    return list(found.values())


def load(corpus: Corpus) -> list[dict[str, Any]]:
    """The stored cases, each with its ``outcome`` as a tuple."""
    data = json.loads(corpus.path.read_text(encoding="utf-8"))
    assert data["format"] == corpus.format and data["engine"] == corpus.engine, corpus.path
    return [{**case, "outcome": tuple(case["outcome"])} for case in data["cases"]]


def kinds(case: dict[str, Any]) -> set[str]:
    """What a stored case stands for: ``ok`` or ``error``, and ``tools`` for a rendered case with tools."""
    kind = case["outcome"][0]
    return {kind, "tools"} if kind == "ok" and case["tools"] else {kind}


def _balanced(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """SIZE of ``cases``, in their order, taking first what each kind of :data:`LEAST` still lacks."""
    chosen: list[int] = []
    for kind, least in LEAST.items():
        chosen += [i for i, case in enumerate(cases) if kind in kinds(case) and i not in chosen][:least]
    chosen += [i for i in range(len(cases)) if i not in chosen]
    return [cases[i] for i in sorted(chosen[:SIZE])]


def write(corpus: Corpus, go_oracle: Any = None) -> int:
    """Draw the cases, render them with the engine, store a balanced :data:`SIZE` of them; the number stored."""
    cases = draw_cases(corpus, SIZE * 4)
    stored = _balanced([{**case, "outcome": list(found)}
                        for case, found in zip(cases, engine_outcomes(corpus, cases, go_oracle), strict=True)
                        if found is not None])
    data = {"format": corpus.format, "engine": corpus.engine, "cases": stored}
    corpus.path.parent.mkdir(parents=True, exist_ok=True)
    corpus.path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return len(stored)


if __name__ == "__main__":  # python -m tests.support.golden [FORMAT ...]: those formats' files (default: all)
    import sys
    import tempfile

    chosen = [corpus for corpus in CORPORA if not sys.argv[1:] or corpus.format in sys.argv[1:]]
    with tempfile.TemporaryDirectory() as scratch:
        from tests.support.harmony_oracle import running_oracle

        with running_oracle(Path(scratch)) as go:
            for corpus in chosen:
                print(corpus.format, write(corpus, go))
