"""render_spans against render, per format, on the agent sessions and the everyday corpus, in one run.

The issue's budget: ``render_spans`` (the default ``generated="all"``) at most 1.2 times ``render``
on the same requests (``add_generation_prompt=True``, prepared toolsets, so both pay the same for the
tools block). Each ``render_spans`` text is compared with ``render``'s first (the script stops on a
difference). Timing: ``timing.interleaved`` (CPU time of the thread, rotating rounds), the fastest
round and the median shown.

Usage::

    .venv/bin/python benchmarks/bench_spans.py [--rounds 11] [--formats chatml-multi-system,chatml-safety,harmony]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

import corpus
from timing import interleaved, markdown_table

import prompt_formats as pf

Job = tuple[Any, Any]


def _corpora() -> dict[str, list[Job]]:
    everyday = [(r.messages, r.tools) for r in corpus.realistic_requests(300, 0)]
    agent = [(r.messages, r.tools) for r in (corpus.agent_request(257, 40, seed) for seed in range(3))]
    prepare = pf.prepare_tools
    return {
        "everyday (300 conversations)": [(m, prepare(t) if t else None) for m, t in everyday],
        "agent (257 messages, 40 tools)": [(m, prepare(t) if t else None) for m, t in agent],
    }


def _renders(fmt: pf.ChatFormat, job: Job) -> bool:
    try:
        fmt.render(job[0], job[1], True)
    except pf.FormatError:
        return False
    return True


def _runner(call: Callable[..., Any], jobs: Sequence[Job]) -> Callable[[], None]:
    def run() -> None:
        for messages, tools in jobs:
            call(messages, tools, True)

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--formats", default="chatml-multi-system,chatml-safety,harmony")
    args = parser.parse_args(argv)
    rows = []
    for name in args.formats.split(","):
        fmt = pf.get_format(name)
        for corpus_name, all_jobs in _corpora().items():
            jobs = [job for job in all_jobs if _renders(fmt, job)]  # chatml-safety refuses late system messages
            if not jobs:
                continue
            for messages, tools in jobs:
                if fmt.render_spans(messages, tools, True).text != fmt.render(messages, tools, True):
                    raise SystemExit(f"bench_spans: {name}: render_spans' text differs on {corpus_name}")
            timings = interleaved(
                [("render", _runner(fmt.render, jobs)), ("render_spans", _runner(fmt.render_spans, jobs))],
                items=len(jobs), rounds=args.rounds,
            )
            base = timings[0].best
            for t in timings:
                figure = f"{t.best:.1f} ({t.median:.1f})"
                rows.append([name, f"{corpus_name}, {len(jobs)} rendered", t.name, figure, f"{t.best / base:.2f}"])
            print(f"measured {name} on {corpus_name}", file=sys.stderr)
    print(markdown_table(["format", "corpus", "call", "µs per request, best (median)", "relative to render"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
