"""Where one record's CPU time goes inside the command-line tool: a stage-by-stage breakdown.

``bench_batch.py`` times whole runs of ``prompt-formats render``; this script opens one up. It
writes the same corpus (``bench_batch.write_corpus``), reads it in the blocks the command reads
(1 MiB of whole lines), and for every record times its stages one after the other:

- **digit check**: the block-level search for 19-digit runs (integers beyond 64 bits), per record;
- **decode**: ``orjson.loads`` of the line, as ``RecordRenderer.process_line`` calls it;
- **toolset preparation**: the record's toolset through the command's toolset cache — at its first
  sight validation and the tools' JSON, later a look-up by its JSON bytes;
- **handle**: ``RecordRenderer.handle`` — reading the record and rendering it, toolset prepared;
- **encode**: ``orjson.dumps`` of the output record, as the command writes it;
- **whole block**: ``RecordRenderer.process_block`` with its own, empty toolset cache: all of the
  above as the command runs it, plus splitting the block into lines and joining the output.

Each stage's figure is its fastest of ``--rounds`` passes over the corpus (warm: a breakdown, not a
headline; the command's records/s headline is ``run_all.py --only command``). Run::

    .venv/bin/python benchmarks/bench_record_costs.py [--corpus agent] [--n 20000]
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_batch import write_corpus  # noqa: E402

import prompt_formats as pf  # noqa: E402
from prompt_formats.cli import BLOCK_SIZE  # noqa: E402
from prompt_formats.records import RecordRenderer, has_long_digit_run  # noqa: E402

STAGES = ("digit check", "decode", "toolset preparation", "handle", "encode", "whole block")


def blocks_of(data: bytes, size: int) -> list[bytes]:
    """``data`` cut into blocks of about ``size`` bytes, each ending with a whole line."""
    blocks = []
    start = 0
    while start < len(data):
        end = data.find(b"\n", start + size)
        end = len(data) if end < 0 else end + 1
        blocks.append(data[start:end])
        start = end
    return blocks


def one_pass(blocks: list[bytes], new_job: Callable[[], RecordRenderer]) -> dict[str, int]:
    """Nanoseconds per stage for one pass over every block.

    A record goes through its stages one right after the other, as in the command, so that each
    stage finds the record in the CPU caches as it would there. Stages are timed with the
    monotonic clock (a thread-CPU-time reading is a system call, too slow to take five times per
    record); the whole block with the thread's CPU time.
    """
    spent = dict.fromkeys(STAGES, 0)
    clock = time.perf_counter_ns
    job = new_job()
    whole_job = new_job()
    # The command's own toolset cache (private): preparing a record's toolset ahead of handling
    # the record is what handling it would do first.
    prepare = job._tools.get
    for block in blocks:
        lines = block.splitlines()
        t0 = clock()
        has_long_digit_run(block)
        spent["digit check"] += clock() - t0
        for number, line in enumerate(lines, 1):
            t0 = clock()
            record = orjson.loads(line)
            t1 = clock()
            if record.get("tools"):
                prepare(record["tools"])
            t2 = clock()
            output = job.handle(record, number)
            t3 = clock()
            orjson.dumps(output, option=orjson.OPT_APPEND_NEWLINE)
            t4 = clock()
            spent["decode"] += t1 - t0
            spent["toolset preparation"] += t2 - t1
            spent["handle"] += t3 - t2
            spent["encode"] += t4 - t3
        t0 = time.thread_time_ns()
        whole_job.process_block(1, block)
        spent["whole block"] += time.thread_time_ns() - t0
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="records in the corpus (default 20000)")
    parser.add_argument("--corpus", choices=("realistic", "agent"), default="agent")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    fmt = pf.get_format("chatml-multi-system")
    with tempfile.TemporaryDirectory(prefix="pf-bench-costs-") as tmp:
        src = Path(tmp) / "requests.jsonl"
        size = write_corpus(src, args.n, args.corpus, args.seed)
        blocks = blocks_of(src.read_bytes(), BLOCK_SIZE)
    best: dict[str, float] = dict.fromkeys(STAGES, float("inf"))
    for _ in range(args.rounds):
        spent = one_pass(blocks, lambda: RecordRenderer(fmt, True))
        for stage, ns in spent.items():
            best[stage] = min(best[stage], ns / args.n / 1000)

    print(f"## Per-record CPU time by stage, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
    print()
    print(f"Corpus: {args.n:,} {args.corpus} requests, {size / args.n / 1e3:.1f} kB each; format "
          f"chatml-multi-system, --add-generation-prompt; fastest of {args.rounds} passes; Python "
          f"{sys.version.split()[0]}, orjson {orjson.__version__}; load average {os.getloadavg()[0]:.2f}.")
    print()
    print("| stage | µs per record |")
    print("| --- | ---: |")
    for stage in STAGES:
        print(f"| {stage} | {best[stage]:.1f} |")
    json_floor = best["decode"] + best["encode"]
    print()
    print(f"- sum of the stages: {sum(best[stage] for stage in STAGES[:-1]):.1f} µs per record")
    print(f"- JSON alone (decode + encode): {json_floor:.1f} µs per record, so at most "
          f"{1e6 / json_floor:,.0f} records per CPU-second with a renderer that cost nothing")
    print(f"- whole block: {1e6 / best['whole block']:,.0f} records per CPU-second")


if __name__ == "__main__":
    main()

