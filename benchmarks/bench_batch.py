"""Batch rendering through the command-line tool, against Jinja2 rendering in a loop.

The job measured is the one issue #6 describes: a JSONL file of chat requests in, a JSONL file of
prompts out. Three runs over the same file, side by side:

- ``prompt-formats render`` with ``--workers 1`` (in one process) and with ``--workers N``;
- the loop users run today: for each line, ``orjson.loads``, the template rendered by Jinja2 as
  transformers configures it (``engines.py``), ``orjson.dumps``. Jinja2 is slow, so it runs on
  the first ``--jinja-subset`` records and its time per record is extrapolated to the whole file.

Conversations per second are wall-clock; "per CPU-second" divides by the user+system CPU time of
the process and all its workers, which is what "per core" means on a shared machine. Every output
prompt of the CLI runs is checked to be equal to Jinja2's on the subset.

Run: ``.venv/bin/python benchmarks/bench_batch.py`` (``--help`` for the corpus size and options).
"""

from __future__ import annotations

import argparse
import datetime
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import engines  # noqa: E402
from corpus import realistic_requests  # noqa: E402

TEMPLATES = {"chatml-multi-system": "chatml_multi_system.jinja"}


def write_corpus(path: Path, n: int, kind: str, seed: int) -> int:
    """Write ``n`` requests as JSONL; returns the file size. ``kind="agent"`` keeps only requests with tools."""
    written = 0
    batch = 0
    with path.open("wb") as out:
        while written < n:
            for request in realistic_requests(max(1000, n // 4), seed=seed * 1000 + batch):
                if kind == "agent" and not request.tools:
                    continue
                record: dict[str, Any] = {"id": f"req-{written}", "messages": request.messages}
                if request.tools:
                    record["tools"] = request.tools
                out.write(orjson.dumps(record) + b"\n")
                written += 1
                if written == n:
                    break
            batch += 1
    return path.stat().st_size


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_cli(fmt: str, src: Path, dst: Path, workers: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one CLI run."""
    command = [sys.executable, "-m", "prompt_formats", "render", "--format", fmt, "--add-generation-prompt",
               "--workers", str(workers), "--quiet", str(src), "-o", str(dst)]
    cpu = children_cpu()
    start = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - start, children_cpu() - cpu


def run_jinja(template_name: str, src: Path, limit: int) -> tuple[float, float, list[str]]:
    """(wall seconds, CPU seconds, prompts) of the Jinja2 loop over the first ``limit`` lines."""
    render = engines.jinja2_renderer(template_name)
    prompts = []
    cpu = time.process_time()
    start = time.perf_counter()
    with src.open("rb") as lines:
        for number, line in enumerate(lines):
            if number == limit:
                break
            record = orjson.loads(line)
            prompt = render(record["messages"], record.get("tools"), True)
            orjson.dumps({"id": record["id"], "prompt": prompt})
            prompts.append(prompt)
    return time.perf_counter() - start, time.process_time() - cpu, prompts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="records in the corpus (default 100000)")
    parser.add_argument("--corpus", choices=("realistic", "agent"), default="realistic",
                        help="realistic: the everyday mix of benchmarks/corpus.py; agent: only its requests with tools")
    parser.add_argument("--workers", type=int, default=2, help="workers of the parallel run (default 2)")
    parser.add_argument("--jinja-subset", type=int, default=5_000, help="records rendered by Jinja2 (default 5000)")
    parser.add_argument("--format", default="chatml-multi-system", choices=sorted(TEMPLATES))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="pf-bench-batch-") as tmp:
        src = Path(tmp) / "requests.jsonl"
        size = write_corpus(src, args.n, args.corpus, args.seed)
        print(f"corpus: {args.n:,} {args.corpus} requests, {size / 1e6:,.1f} MB ({size / args.n / 1e3:.1f} kB each)")
        print(f"date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}; "
              f"CPUs: {os.cpu_count()}; load average before: {os.getloadavg()[0]:.2f}; Python {sys.version.split()[0]}")

        rows = []
        for workers in (1, args.workers):
            dst = Path(tmp) / f"prompts-{workers}.jsonl"
            wall, cpu = run_cli(args.format, src, dst, workers)
            rows.append((f"prompt-formats render --workers {workers}", wall, cpu, args.n))
        jinja_wall, jinja_cpu, jinja_prompts = run_jinja(TEMPLATES[args.format], src, args.jinja_subset)
        n_jinja = len(jinja_prompts)
        rows.append((f"Jinja2 loop (first {n_jinja:,}, extrapolated)", jinja_wall * args.n / n_jinja,
                     jinja_cpu * args.n / n_jinja, args.n))

        # The prompts must be the same bytes, or the comparison means nothing.
        for workers in (1, args.workers):
            with (Path(tmp) / f"prompts-{workers}.jsonl").open("rb") as out:
                for expected, line in zip(jinja_prompts, out, strict=False):  # the subset is a prefix
                    if orjson.loads(line)["prompt"] != expected:
                        raise SystemExit(f"--workers {workers}: a prompt differs from Jinja2's")

    jinja_rate = rows[-1][3] / rows[-1][1]
    jinja_cpu_rate = rows[-1][3] / rows[-1][2]
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print()
    print("| run | conversations/s (wall) | per CPU-second | time for the corpus "
          "| vs Jinja2 (wall) | vs Jinja2 (CPU) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, wall, cpu, n in rows:
        rate = n / wall
        print(f"| {name} | {rate:,.0f} | {n / cpu:,.0f} | {wall:,.1f} s | {rate / jinja_rate:.1f}× "
              f"| {n / cpu / jinja_cpu_rate:.1f}× |")


if __name__ == "__main__":
    main()
