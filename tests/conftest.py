"""The tier: its hypothesis profile (tests/support/settings.py), loaded before any test module makes
its settings, and which tests it runs; the oracle markers checked where the engines run
(tests/support/oracle_marks.py)."""

from __future__ import annotations

import math
from collections.abc import Generator, Iterator
from typing import Any

import pytest

import tests.support.settings  # noqa: F401  (registers and loads the hypothesis profile on import)
from tests.support import oracle_marks
from tests.support.harmony_oracle import HarmonyOracle, running_oracle
from tests.support.tier import TIER

oracle_marks.install()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that needs an engine ``oracle``; the quick tier deselects those."""
    for item in items:
        if oracle_marks.allowed([mark.name for mark in item.iter_markers()]):
            item.add_marker(pytest.mark.oracle)
    if TIER != "quick":
        return
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        (dropped if item.get_closest_marker("oracle") else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
    oracle_marks.enter([mark.name for mark in item.iter_markers()])
    try:
        return (yield)
    finally:
        oracle_marks.leave()


@pytest.fixture(autouse=True)
def workers_from_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches with ``workers > 1`` start their workers at once (the library first works alone for a
    few seconds, which no test batch lasts) and send them chunks whatever sending costs: the tests of
    workers test workers, never the clock.
    tests/batch/test_batch.py sets it otherwise where it tests that."""
    monkeypatch.setattr("prompt_formats.format.batch.SERIAL_FIRST_SECONDS", 0.0)
    monkeypatch.setattr("prompt_formats.format.batch.SEND_SHARE", math.inf)


@pytest.fixture(scope="session")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HarmonyOracle]:
    """Ollama's Harmony template run by Go's text/template, built once per session, for tests marked
    ``go`` (it fails, does not skip, when Go is missing). A module whose ``oracle`` is another
    engine's defines its own fixture, which overrides this one."""
    with running_oracle(tmp_path_factory.mktemp("harmony_go")) as instance:
        yield instance
