"""How many cases each property test generates, and from which seed: the suite's two tiers.

Every hypothesis test takes its size and its seed from here (``tests/conftest.py`` imports this
module before any test module, so the profile below is the parent of every ``settings`` object the
tests make).

- **The default tier** (``bash scripts/test.sh``): ``derandomize`` — each test's examples come from
  a seed derived from the test itself, so two runs of the same code generate the same cases and give
  the same answer; no example database is read or written. Sizes keep the whole run short.
- **The deep tier** (``bash scripts/test.sh --deep``, which sets ``PF_TEST_TIER=deep``): random
  seeds, the example database kept in ``.hypothesis/`` (so a failure found once is tried first next
  time), and ``PF_HYPOTHESIS_EXAMPLES`` cases (5,000 unless set). A failure it finds is added to the
  test as an ``@example``, so the default tier keeps checking it.
- **The quick tier** (``bash scripts/test.sh --quick``, ``PF_TEST_TIER=quick``): the default tier's
  seeds and sizes, without the tests that need a reference engine (:mod:`tests.support.oracle_marks`);
  the engines' stored outputs (:mod:`tests.support.golden`) stand in for them.

``PF_HYPOTHESIS_EXAMPLES`` is the scale of both tiers: a test asks for a share of it with
:func:`budget`, so its size follows the scale and the deep tier restores thousands.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from .tier import TIER

ROOT = Path(__file__).resolve().parents[2]


#: The scale: the number of cases of a main differential test (``PF_HYPOTHESIS_EXAMPLES`` sets it).
EXAMPLES = int(os.environ.get("PF_HYPOTHESIS_EXAMPLES", "5000" if TIER == "deep" else "100"))

# Generated conversations are large and some oracles are slow per case: neither is a defect here.
_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile(
    "default",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=_SUPPRESSED,
)
settings.register_profile(
    "deep",
    max_examples=EXAMPLES,
    derandomize=False,
    database=DirectoryBasedExampleDatabase(ROOT / ".hypothesis" / "examples"),
    deadline=None,
    print_blob=True,
    suppress_health_check=_SUPPRESSED,
)
settings.load_profile("deep" if TIER == "deep" else "default")


def examples(share: float = 1.0, floor: int = 1) -> int:
    """``share`` of the scale, at least ``floor`` cases."""
    return max(floor, round(EXAMPLES * share))


def budget(share: float = 1.0, floor: int = 1) -> settings:
    """Settings for a property test that runs ``share`` of the scale (at least ``floor`` cases),
    with the tier's seed and database."""
    return settings(max_examples=examples(share, floor))


#: The main differential tests: the whole scale.
differential_settings = budget()
