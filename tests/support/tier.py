"""The tier this run is (``PF_TEST_TIER``): ``"default"``, ``"quick"`` or ``"deep"`` (tests/support/settings.py
says what each runs). Its own module, importing nothing, so the oracles' support code (which the
benchmarks import too) can ask it without importing pytest or hypothesis."""

from __future__ import annotations

import os

TIER = {"deep": "deep", "quick": "quick"}.get(os.environ.get("PF_TEST_TIER", ""), "default")
