"""What the ChatML tools block costs a request of the everyday corpus: the package's cache against a plain one.

The package finds a plain tool list's rendered block through :class:`~prompt_formats.tools.PlainToolsCache`
(a content seen once costs its key and a build; from its second sighting on it is promoted to a
``PreparedTools`` that keeps the text). The candidate is the simplest cache there is: a dict from
the list's ``marshal.dumps`` bytes (the package's key) to the block's text, built on first sight.
The candidate is not exact (it skips the promotion's exact-type check that keeps lookalike lists
apart, docs/prepared-tools.md): it bounds from below what any cache of this key can cost.

Straight passes, as ``run_all.py``: each round a fresh corpus (``heldout.everyday_jobs``, a new
seed), each variant with a fresh cache, each request's tools decoded from its JSON just before the
lookup (untimed), CPU time of the thread per request, the median over rounds; the two variants take
turns first. Every block is compared with the other variant's; the run stops on a difference.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_tools_text.py [--rounds 11]
"""

from __future__ import annotations

import argparse
import gc
import json
import marshal
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.append(str(Path(__file__).resolve().parent.parent))

import heldout

import prompt_formats as pf
from prompt_formats.formats.chatml.render import _TOOLS_KEY, _tools_text
from prompt_formats.tools import PlainToolsCache

Lookup = Callable[[Any], str]


def package_cache() -> Lookup:
    """The package's cache, fresh: what ``tools_block`` does with a plain list."""
    cache = PlainToolsCache()
    return lambda tools: cache.rendered(tools, _TOOLS_KEY, _tools_text)


def text_cache() -> Lookup:
    """A dict from the list's marshal bytes to its block's text, fresh."""
    texts: dict[bytes, str] = {}

    def lookup(tools: Any) -> str:
        key = marshal.dumps(tools)
        text = texts.get(key)
        if text is None:
            text = texts[key] = _tools_text(tools)
        return text

    return lookup


def timed_pass(lookup: Lookup, wires: list[str]) -> tuple[float, list[str]]:
    """CPU µs per request of the lookups (decoding untimed), and the blocks."""
    elapsed, blocks = 0, []
    clock = time.thread_time_ns
    gc.collect()
    for wire in wires:
        tools = json.loads(wire)
        start = clock()
        blocks.append(lookup(tools) if tools else "")
        elapsed += clock() - start
    return elapsed / len(wires) / 1000, blocks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args(argv)
    variants = {"package cache": package_cache, "marshal key -> text": text_cache}
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for r in range(args.rounds):
        wires = [json.dumps(tools) for _, tools, _ in heldout.everyday_jobs(300, r, "chatml")
                 if tools is None or isinstance(tools, list)]
        order = list(variants) if r % 2 == 0 else list(variants)[::-1]
        blocks = {}
        for name in order:
            us, blocks[name] = timed_pass(variants[name](), wires)
            samples[name].append(us)
        if len({tuple(b) for b in blocks.values()}) != 1:
            raise SystemExit("bench_tools_text: the variants' blocks differ; not reporting")
    offered = sum(1 for wire in wires if wire != "null")
    distinct = len({wire for wire in wires if wire != "null"})
    print(f"{'compiled' if pf.compiled else 'pure'} build; everyday corpus, 300 requests ({offered} with tools, "
          f"{distinct} distinct lists in the last round), {args.rounds} rounds, CPU µs per request (median, fastest):")
    for name, values in samples.items():
        print(f"  {name:22} {statistics.median(values):6.2f} {min(values):6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
