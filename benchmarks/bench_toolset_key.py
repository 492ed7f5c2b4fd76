"""What a content key of a plain tool list costs: today's ``marshal`` dump against the candidates.

``prompt_formats.tools.PlainToolsCache`` keys a plain tool list by ``marshal.dumps``. This script
times that and the cheaper candidates on the benchmark corpora's tool lists (the everyday requests'
small lists and the 40-tool agent lists), each list decoded from JSON as a server would hand it
over: CPU time of the thread per list, the fastest of interleaved rounds. Which candidates are
exact, and the inputs that break the others, are in docs/performance.md (the toolset key).

Usage::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_toolset_key.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import marshal
import pickle
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import corpus
import orjson
from timing import markdown_table

from prompt_formats.tools import _EXACT_TYPES_ONLY


def _best_us(key: Callable[[Any], Any], lists: list[Any], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time_ns()
        for tools in lists:
            key(tools)
        best = min(best, time.thread_time_ns() - start)
    return best / len(lists) / 1e3


def candidates(stored: dict[int, Any]) -> dict[str, Callable[[Any], Any]]:
    """The keys timed; ``stored`` holds, per list, an equal list of other objects (a cache entry's)."""
    return {
        "marshal.dumps (today)": marshal.dumps,
        "orjson.dumps, subclasses refused": lambda t: orjson.dumps(t, option=_EXACT_TYPES_ONLY),
        "orjson, and no 'null' in the bytes": lambda t: b"null" in orjson.dumps(t, option=_EXACT_TYPES_ONLY),
        "orjson, and == the entry's list": lambda t: orjson.dumps(t, option=_EXACT_TYPES_ONLY) and t == stored[id(t)],
        "pickle.dumps (protocol 5)": lambda t: pickle.dumps(t, 5),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    corpora = {
        "everyday tool lists": [r.tools for r in corpus.realistic_requests(300, 0) if r.tools],
        "agent tool lists (40 tools)": [corpus.agent_tools(40, seed) for seed in range(3)],
    }
    rows = []
    for name, original in corpora.items():
        lists = [json.loads(json.dumps(tools)) for tools in original]
        stored = {id(tools): json.loads(json.dumps(tools)) for tools in lists}
        repeats = 12 if name.startswith("everyday") else 60
        keys = candidates(stored)
        best = {label: float("inf") for label in keys}
        for _ in range(args.rounds):  # interleaved, so that load affects every candidate alike
            for label, key in keys.items():
                best[label] = min(best[label], _best_us(key, lists, repeats))
        size = sum(len(orjson.dumps(tools)) for tools in lists) // len(lists)
        rows += [[f"{name} ({size:,} bytes of JSON)", label, f"{us:.2f}"] for label, us in best.items()]
    print(markdown_table(["tool lists", "key", "µs per list"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
