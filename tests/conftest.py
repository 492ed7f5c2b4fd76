"""The tier: its hypothesis profile (tests/support/settings.py), loaded before any test module makes
its settings, and which tests it runs; the oracle markers checked where the engines run
(tests/support/oracle_marks.py)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

import tests.support.settings  # noqa: F401  (registers and loads the hypothesis profile on import)
from tests.support import oracle_marks
from tests.support.tier import TIER

oracle_marks.install()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that needs an engine ``oracle``; the quick tier deselects those."""
    for item in items:
        if oracle_marks.allowed([mark.name for mark in item.iter_markers()]):
            item.add_marker(pytest.mark.oracle)
    if TIER != "quick":
        return
    kept, dropped = [], []
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
