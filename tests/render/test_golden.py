"""Every format against its reference engine's stored outputs (tests/support/golden.py).

The quick tier runs no engine; these tests are how it still sees a renderer's output change. The
stored outcomes are the engines' own: the default tier renders every stored case with the engine
again and requires the very same outcome.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

import prompt_formats as pf
from tests.support.golden import CORPORA, LEAST, Corpus, engine_outcomes, kinds, load, render_args
from tests.support.oracles import render_ours

_IDS = [corpus.format for corpus in CORPORA]


def test_every_registered_format_has_stored_outputs() -> None:
    assert sorted(_IDS) == sorted(pf.available_formats())


@pytest.mark.parametrize("corpus", CORPORA, ids=_IDS)
def test_render_gives_the_engines_stored_outcomes(corpus: Corpus) -> None:
    fmt = pf.get_format(corpus.format, **corpus.options)
    cases = load(corpus)
    found = Counter(kind for case in cases for kind in kinds(case))
    assert {kind: min(found[kind], least) for kind, least in LEAST.items()} == {
        kind: 0 if kind == "error" and not corpus.raises else least for kind, least in LEAST.items()
    }, f"too few stored cases of a kind to stand for the format: {dict(found)}"
    wrong = []
    for index, case in enumerate(cases):
        args, options = render_args(case)
        got = render_ours(fmt.render, *args, **options)
        if got != case["outcome"]:
            wrong.append((index, case["outcome"], got))
    assert wrong == [], f"{len(wrong)} of {len(cases)} cases differ; the first: {wrong[0]}"


@pytest.mark.parametrize("corpus", CORPORA, ids=_IDS)
def test_render_spans_writes_the_engines_stored_text(corpus: Corpus) -> None:
    fmt = pf.get_format(corpus.format, **corpus.options)
    for index, case in enumerate(load(corpus)):
        kind, text = case["outcome"]
        if kind == "ok":
            args, options = render_args(case)
            assert fmt.render_spans(*args, **options).text == text, index


def _engine_marks(corpus: Corpus) -> Any:
    return pytest.param(corpus, id=corpus.format,
                        marks=pytest.mark.go if corpus.format == "harmony" else pytest.mark.jinja)


@pytest.mark.parametrize("corpus", [_engine_marks(corpus) for corpus in CORPORA])
def test_the_stored_outcomes_are_the_engines(corpus: Corpus, request: pytest.FixtureRequest) -> None:
    cases = load(corpus)
    go = request.getfixturevalue("oracle") if corpus.format == "harmony" else None
    differ = [(index, case["outcome"], now) for index, (case, now)
              in enumerate(zip(cases, engine_outcomes(corpus, cases, go), strict=True)) if now != case["outcome"]]
    assert differ == [], f"{len(differ)} stored outcomes are not the engine's; the first: {differ[0]}"
