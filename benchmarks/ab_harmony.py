"""Before/after: Harmony's ``render`` and ``render_spans`` of a git revision against the working tree's, in one process.

The revision's ``prompt_formats`` is loaded as ``ab_chatml.py`` loads it (extracted with ``git archive``,
imported under another name, so every module it imports is its own). Both render the everyday corpus
and the agent requests of ``bench_spans.py`` (``add_generation_prompt=True``, each side's prepared
toolsets, ``current_date`` fixed); every output of the working tree is first compared with the
revision's (the script stops on a difference). Timing: ``timing.interleaved`` (CPU time of the thread,
rotating rounds), the fastest round and the median shown, each row relative to the revision's render.

Usage::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/ab_harmony.py [--against main] [--rounds 15] [--spans]
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import corpus
from ab_chatml import load_revision
from timing import interleaved, markdown_table

import prompt_formats as pf

OPTIONS = {"current_date": "2025-08-05"}
Job = tuple[Any, Any]


def _runner(call: Callable[..., Any], jobs: Sequence[Job]) -> Callable[[], None]:
    def run() -> None:
        for messages, tools in jobs:
            call(messages, tools, True, **OPTIONS)

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--against", default="main")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--spans", action="store_true", help="time render_spans too")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        _, old_prepare, _ = load_revision(args.against, Path(tmp))
        name = "prompt_formats_at_" + "".join(c if c.isalnum() else "_" for c in args.against)
        old = importlib.import_module(f"{name}.formats.harmony").HarmonyFormat()
        new = pf.get_format("harmony")
        corpora = {
            "everyday (300 conversations)": [(r.messages, r.tools) for r in corpus.realistic_requests(300, 0)],
            "agent (257 messages, 40 tools)": [
                (r.messages, r.tools) for r in (corpus.agent_request(257, 40, seed) for seed in range(3))
            ],
        }
        rows = []
        for corpus_name, plain in corpora.items():
            before = [(m, old_prepare(t) if t else None) for m, t in plain]
            after = [(m, pf.prepare_tools(t) if t else None) for m, t in plain]
            for (m, t), (_, t2) in zip(before, after, strict=True):
                if old.render(m, t, True, **OPTIONS) != new.render(m, t2, True, **OPTIONS):
                    raise SystemExit(f"ab_harmony: the working tree renders differently on {corpus_name}")
            contenders = [
                (f"{args.against} render", _runner(old.render, before)),
                ("tree render", _runner(new.render, after)),
            ]
            if args.spans:
                contenders += [
                    (f"{args.against} render_spans", _runner(old.render_spans, before)),
                    ("tree render_spans", _runner(new.render_spans, after)),
                ]
            timings = interleaved(contenders, items=len(plain), rounds=args.rounds)
            base = timings[0].best
            for t in timings:
                rows.append([corpus_name, t.name, f"{t.best:.2f} ({t.median:.2f})", f"{t.best / base:.3f}"])
    header = ["corpus", "call", "µs per request, best (median)", f"relative to {args.against} render"]
    print(markdown_table(header, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
