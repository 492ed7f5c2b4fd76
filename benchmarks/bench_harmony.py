"""Harmony: our renderer against Ollama's Go template, per conversation, on the shared corpus.

The corpus is ``benchmarks/corpus.py``: ``realistic_requests(n)`` (everyday chats, tool rounds, agent
loops, several system messages) and one coding-agent request (257 messages, 40 tools). Both sides
render the same requests, each timed inside its own process, so process start-up never counts:

- Go: the oracle (``tests/support/oracle/harmony``) in ``-bench N`` mode renders each request N times after a
  warm-up; each render does what Ollama does per request (collate a copy of the messages, build the
  data map, execute the parsed ``text/template`` into a buffer);
- Python: ``get_format("harmony").render`` on the OpenAI-style request, N times after a warm-up.

Both sides are **warm** (each request rendered again and again, the fastest mean kept): a per-request
breakdown by size, not a headline. The straight-pass headline rows are ``run_all.py --only harmony``
(``docs/performance.md``).

Every request is measured ``--repeats`` times on each side (each repeat goes round all requests, so a
noisy moment hurts one sample, not one request) and its fastest mean kept; a row's time is
the mean over its requests. Before timing, every request is checked to render the same bytes on both
sides (the run stops otherwise).

Usage::

    .venv/bin/python benchmarks/bench_harmony.py [--requests N] [--renders N] [--repeats R]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))  # the tests' oracles
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from corpus import Request, agent_request, realistic_requests  # noqa: E402
from harmony_oracle import HarmonyOracle, build_oracle, to_case  # noqa: E402

import prompt_formats as pf  # noqa: E402

OPTIONS: dict[str, Any] = {"current_date": "2025-08-05", "reasoning_effort": "medium"}


def _time_python(jobs: list[tuple[Request, Any]], renders: int, repeats: int) -> list[float]:
    """Best mean ns per render of each ``(request, tools)``; the repeats go round all jobs in turn."""
    render = pf.get_format("harmony").render
    best = [float("inf")] * len(jobs)
    for _ in range(repeats):
        for i, (request, tools) in enumerate(jobs):
            messages = request.messages
            for _ in range(max(1, renders // 10)):
                render(messages, tools, **OPTIONS)
            start = time.perf_counter_ns()
            for _ in range(renders):
                render(messages, tools, **OPTIONS)
            best[i] = min(best[i], (time.perf_counter_ns() - start) / renders)
    return best


def _go_version() -> str:
    try:
        out = subprocess.run(["go", "version"], capture_output=True, text=True, check=True).stdout.split()
        return f"Go {out[2].removeprefix('go')}"
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "Go (unknown version)"


def run(n_requests: int, renders: int, repeats: int) -> str:
    """Check, time and return the Markdown table (with a line describing the setup)."""
    harmony = pf.get_format("harmony")
    everyday = realistic_requests(n_requests)
    agent = agent_request()
    requests = [*everyday, agent]
    cases = [to_case(r.messages, r.tools, OPTIONS) for r in requests]
    with tempfile.TemporaryDirectory() as tmp:
        oracle = HarmonyOracle(build_oracle(Path(tmp)))
        for i, (request, want) in enumerate(zip(requests, oracle.render_many(cases), strict=True)):
            if harmony.render(request.messages, request.tools, **OPTIONS) != want.get("output"):
                raise SystemExit(f"bench_harmony: request {i} renders differently from the Go template")
        go = [float("inf")] * len(cases)
        for _ in range(repeats):
            for i, result in enumerate(oracle.bench(cases, renders)):
                go[i] = min(go[i], float(result["ns_per_render"]))
    jobs: list[tuple[Request, Any]] = [(r, r.tools) for r in requests]
    if agent.tools:
        jobs.append((agent, pf.prepare_tools(agent.tools)))
    py = _time_python(jobs, renders, repeats)
    prepared = py.pop() if agent.tools else None

    def sizes(rs: list[Request]) -> str:
        counts = [len(r.messages) for r in rs]
        return f"{min(counts)}–{max(counts)}" if len(rs) > 1 else str(counts[0])

    def row(name: str, idx: list[int], py_ns: list[float] | None = None) -> str:
        go_us = statistics.fmean(go[i] for i in idx) / 1000
        py_us = statistics.fmean(py_ns if py_ns is not None else [py[i] for i in idx]) / 1000
        chars = statistics.fmean(len(harmony.render(requests[i].messages, requests[i].tools, **OPTIONS)) for i in idx)
        return (
            f"| {name} | {len(idx)} | {sizes([requests[i] for i in idx])} | {chars:,.0f} | {go_us:,.1f} | "
            f"{py_us:,.1f} | **{go_us / py_us:.1f}×** |"
        )

    small = [i for i, r in enumerate(everyday) if len(r.messages) <= 6]
    medium = [i for i, r in enumerate(everyday) if 6 < len(r.messages) <= 20]
    large = [i for i, r in enumerate(everyday) if len(r.messages) > 20]
    last = len(requests) - 1
    lines = [
        "| requests | count | messages | prompt chars (mean) | Go text/template µs | prompt_formats µs | speed-up |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        row("everyday, ≤ 6 messages", small),
        row("everyday, 7–20 messages", medium),
        row("everyday, > 20 messages", large),
        row("**everyday, all**", list(range(len(everyday)))),
        row("coding agent, 40 tools", [last]),
    ]
    if prepared is not None:
        lines.append(row("coding agent, 40 tools as `PreparedTools`", [last], [prepared]))
    ratios = [g / p for g, p in zip(go[: len(everyday)], py[: len(everyday)], strict=True)]
    lines += [
        "",
        f"Per everyday request, the speed-up ranges from {min(ratios):.1f}× to {max(ratios):.1f}× "
        f"(median {statistics.median(ratios):.1f}×).",
        "",
        f"Python {platform.python_version()} ({platform.python_implementation()}), {_go_version()}, "
        f"{platform.machine()}; {renders:,} renders per measurement, best of {repeats} (warm); "
        f"options {OPTIONS}.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="everyday requests (default 200)")
    parser.add_argument("--renders", type=int, default=200, help="renders per measurement (default 200)")
    parser.add_argument("--repeats", type=int, default=3, help="measurements per request and side; best kept")
    args = parser.parse_args(argv)
    table = run(args.requests, args.renders, args.repeats)
    print(table)


if __name__ == "__main__":
    main()
