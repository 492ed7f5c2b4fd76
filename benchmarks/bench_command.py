"""``prompt-formats render``, the command: records per CPU-second, workers, and where a record's time goes.

Records: the held-out everyday corpus (corpus.py, seed 0) as JSONL, two of them bad lines (one invalid
JSON, one invalid message), as the headline's command row; ``--corpus tools`` keeps the records with
tools only. Modes:

- ``rate`` (the default): the command (``-f chatml-multi-system --workers 1``) in one process,
  records per CPU-second of the whole process, start-up included, and the start-up alone (an empty
  file); every run's outputs checked equal to the first's. ``--installed``: the package the
  interpreter imports (an installed build, e.g. the compiled one) instead of the working tree.
  The row of the records/jsonl.py fast path (a sixth of the bytes translated in the long-integer
  check); a revision beside it: ``compare.py --command --against REV``.
- ``batch``: ``--workers 1`` and ``--workers N`` against the loop users run today (``orjson.loads``,
  Jinja2 as transformers configures it, ``orjson.dumps``) on the first ``--jinja-subset`` records,
  extrapolated; wall and CPU rates; every prompt checked equal to Jinja2's on the subset.
- ``scaling``: the command at ``-j 1, 2, … N`` (``--max-workers``, default the CPUs) on the same
  records (the everyday corpus, or ``--corpus agent``: agent requests): records per wall-second,
  speed-up and CPU time against ``-j 1`` (ratios within each round), every run's output checked
  byte-identical to ``-j 1``'s; beside each, the machine's ceiling: ``j`` separate ``-j 1`` commands
  on ``j`` parts of the records, at once; then the serial share those speed-ups imply (Amdahl's
  law fitted to them) and what it predicts at 16 and 64 cores (docs/performance.md, "Scaling").
- ``render-batch``: ``render_batch`` (not the command) with ``workers=2`` beside ``workers=1``, in
  alternating runs, workers started at once (``SERIAL_FIRST_SECONDS`` 0: the case where they must
  pay for themselves; ``--as-shipped``: as a user's call starts them, after its first seconds in
  this process): ``--records`` everyday conversations (``chatml-multi-system``) or, with
  ``--corpus agent``, agent requests of 120 messages; wall and CPU (this process and its workers)
  against ``workers=1``, the median of the rounds' ratios, after one untimed run of each (the first
  run that grows the process's memory costs several times more in system time); every result
  checked equal to serial's.
- ``stages``: one record's CPU time by stage inside the command (the long-integer check, decode,
  toolset preparation, handle, encode, and a whole block as the command runs it), the fastest of
  ``--rounds`` passes (warm: a breakdown, not a headline).

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_command.py [rate|batch|scaling|render-batch|stages] [--records N]
        [--rounds R] [--installed] [--workers N] [--max-workers N] [--corpus everyday|tools|agent]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402
import engines  # noqa: E402
from timing import child_run, markdown_table  # noqa: E402


def write_records(path: Path, n: int, kind: str = "everyday", bad: bool = True) -> int:
    """``n`` records of the held-out everyday corpus (seed 0) as JSONL, two of them bad lines unless
    ``bad`` is false; ``kind="tools"``: only the records with tools. Returns the file's size."""
    if kind == "agent":  # agent requests: long, tool-heavy histories (cycled to n records)
        agent = corpus.agent_jobs(2, 0, "chatml")
        jobs = [agent[i % len(agent)] for i in range(n)]
    else:
        jobs = [job for job in corpus.everyday_jobs(n if kind == "everyday" else 2 * n, 0, "chatml")
                if kind == "everyday" or job.tools][:n]
    with path.open("w", encoding="utf-8") as out:
        for i, (messages, tools, options) in enumerate(jobs):
            if bad and i in (n // 3, 2 * n // 3):
                out.write('{"messages": [{"role": "user", "content": 1}]}\n' if i == n // 3 else "{not json\n")
                continue
            record: dict[str, Any] = {"id": f"r{i}", "messages": messages, **options}
            if tools is not None:
                record["tools"] = tools
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path.stat().st_size


def command(records: Path, output: Path, errors: Path, workers: int = 1) -> list[str]:
    """The command of the headline's row."""
    return [sys.executable, "-m", "prompt_formats", "render", "-f", "chatml-multi-system", "--workers", str(workers),
            "-q", "-o", str(output), "--errors", str(errors), str(records)]


def environment(path: Path | None, tmp: Path) -> dict[str, str]:
    """The environment of the command's runs, with ``path`` first on ``PYTHONPATH`` (``None``: the
    installed package), its bytecode cached in ``tmp`` as an installed package's is, and that cache
    written by one run on no records first: no measured run compiles the package's modules (where
    ``PYTHONDONTWRITEBYTECODE`` is set, each run would)."""
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "bytecode")
    if path is not None:
        env["PYTHONPATH"] = str(path)
    empty = tmp / "no-records.jsonl"
    empty.write_bytes(b"")
    child_run(command(empty, tmp / "no-records.out", tmp / "no-records.err"), env, str(tmp))
    return env


def rate(args: argparse.Namespace, tmp: Path) -> None:
    path = None if args.installed else ROOT
    records, empty = tmp / "records.jsonl", tmp / "empty.jsonl"
    write_records(records, args.records, args.corpus)
    empty.write_bytes(b"")
    cpu, wall, start_up = [], [], []
    first: bytes | None = None
    env = environment(path, tmp)
    for r in range(args.rounds):
        output, errors = tmp / f"out-{r}.jsonl", tmp / f"err-{r}.jsonl"
        # Run from the records' directory: ``-m`` puts the working directory first on the path.
        seconds, elapsed, _ = child_run(command(records, output, errors), env, str(tmp))
        cpu.append(seconds)
        wall.append(elapsed)
        got = output.read_bytes() + errors.read_bytes()
        first = first or got
        if got != first:
            raise SystemExit("bench_command: a run's output differs from the first run's; not reporting")
        start_up.append(child_run(command(empty, tmp / "o.jsonl", tmp / "e.jsonl"), env, str(tmp))[0])
    median = statistics.median(cpu)
    print(f"{args.records:,} {args.corpus} records, chatml-multi-system, --workers 1, {args.rounds} rounds; "
          f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} "
          f"at the end; prompt_formats {'installed' if args.installed else 'of the working tree'}\n")
    print(markdown_table(["CPU ms (median)", "wall ms (median)", "start-up CPU ms", "records per CPU-second"],
                         [[f"{median * 1000:.0f}", f"{statistics.median(wall) * 1000:.0f}",
                           f"{statistics.median(start_up) * 1000:.0f}", f"**{args.records / median:,.0f}**"]]))


def batch(args: argparse.Namespace, tmp: Path) -> None:
    import orjson

    src = tmp / "records.jsonl"
    size = write_records(src, args.records, args.corpus, bad=False)
    env = environment(None if args.installed else ROOT, tmp)
    rows = []
    for workers in dict.fromkeys((1, args.workers)):
        # --keep-tool-arguments: JSON-string arguments as written, as the Jinja2 loop renders them.
        run = [*command(src, tmp / f"prompts-{workers}.jsonl", tmp / "errors.jsonl", workers), "--keep-tool-arguments"]
        seconds, elapsed, _ = child_run(run, env, str(tmp))
        rows.append((f"prompt-formats render --workers {workers}", elapsed, seconds, workers))
    render = engines.jinja2_renderer(engines.TEMPLATES["chatml-multi-system"])
    prompts = []
    cpu, start = time.process_time(), time.perf_counter()
    with src.open("rb") as lines:
        for number, line in enumerate(lines):
            if number == args.jinja_subset:
                break
            record = orjson.loads(line)
            options = {k: v for k, v in record.items() if k not in ("id", "messages", "tools")}
            prompt = render(record["messages"], record.get("tools"), False, **options)
            orjson.dumps({"id": record["id"], "prompt": prompt})
            prompts.append(prompt)
    scale = args.records / len(prompts)
    rows.append((f"Jinja2 loop (first {len(prompts):,}, extrapolated)", (time.perf_counter() - start) * scale,
                 (time.process_time() - cpu) * scale, 0))
    for _, _, _, workers in rows[:-1]:  # the same bytes, or the comparison means nothing
        with (tmp / f"prompts-{workers}.jsonl").open("rb") as out:
            for expected, line in zip(prompts, out, strict=False):
                if orjson.loads(line)["prompt"] != expected:
                    raise SystemExit(f"bench_command: --workers {workers}: a prompt differs from Jinja2's")
    jinja_wall, jinja_cpu = rows[-1][1], rows[-1][2]
    print(f"{args.records:,} {args.corpus} records, {size / args.records / 1e3:.1f} kB each; {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f} at the end; Python {platform.python_version()}\n")
    print(markdown_table(
        ["run", "records/s (wall)", "per CPU-second", "time for the file", "vs Jinja2 (wall)", "vs Jinja2 (CPU)"],
        [[name, f"{args.records / wall:,.0f}", f"{args.records / cpu:,.0f}", f"{wall:,.1f} s",
          f"{jinja_wall / wall:.1f}×", f"{jinja_cpu / cpu:.1f}×"] for name, wall, cpu, _ in rows]))


def _serial_share(speedups: dict[int, float]) -> float | None:
    """The serial share ``s`` of Amdahl's law (``speed-up(j) = 1 / (s + (1 - s) / j)``) that fits the
    measured speed-ups best (least squares over ``j > 1``); ``None`` with only ``-j 1``."""
    points = [(1 - 1 / j, 1 / speedup - 1 / j) for j, speedup in speedups.items() if j > 1]
    if not points:
        return None
    # 1/speed-up - 1/j = s (1 - 1/j): a line through the origin.
    return max(0.0, min(1.0, sum(x * y for x, y in points) / sum(x * x for x, _ in points)))


def _parts(src: Path, count: int) -> list[Path]:
    """``src`` cut into ``count`` files of whole lines, about equal in size."""
    data = src.read_bytes()
    paths, start = [], 0
    for k in range(1, count + 1):
        end = len(data) if k == count else data.find(b"\n", len(data) * k // count) + 1 or len(data)
        path = src.with_name(f"{src.stem}-part{k}.jsonl")
        path.write_bytes(data[start:end])
        paths.append(path)
        start = end
    return paths


def _remove(*paths: Path) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def _at_once(commands: list[list[str]], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """Run ``commands`` at the same time: their CPU seconds (together) and the wall seconds until the last ends."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    procs = [subprocess.Popen(c, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for c in commands]
    codes = [proc.wait() for proc in procs]
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if any(code not in (0, 1) for code in codes):
        raise SystemExit(f"bench_command: a command of the ceiling exited {codes}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def scaling(args: argparse.Namespace, tmp: Path) -> None:
    src = tmp / "records.jsonl"
    size = write_records(src, args.records, args.corpus, bad=False)
    env = environment(None if args.installed else ROOT, tmp)
    most = args.max_workers or os.cpu_count() or 1
    # Per round, each -j j's wall and CPU seconds, then the ceiling's: j separate -j 1 commands, each
    # on a j-th of the records, at the same time (what the machine gives j processes that share nothing).
    runs: dict[int, list[tuple[float, float]]] = {j: [] for j in range(1, most + 1)}
    ceiling: dict[int, list[tuple[float, float]]] = {j: [] for j in range(2, most + 1)}
    parts = {j: _parts(src, j) for j in ceiling}
    first: bytes | None = None
    for _ in range(args.rounds):  # everything takes turns within each round
        for j in runs:
            output = tmp / f"prompts-{j}.jsonl"
            # Every run writes a new file: replacing the last round's would add the kernel's freeing of
            # it (tens of milliseconds for hundreds of megabytes) to each run, the same at every -j.
            _remove(output, *(tmp / f"part-{k}.jsonl" for k in range(j)))
            seconds, elapsed, _ = child_run(command(src, output, tmp / "errors.jsonl", j), env, str(tmp))
            runs[j].append((elapsed, seconds))
            got = _file_digest(output)  # (not the bytes: two outputs of agent requests held are gigabytes)
            first = first or got
            if got != first:
                raise SystemExit(f"bench_command: -j {j}'s output differs from -j 1's; not reporting")
            if j in ceiling:
                commands = [command(part, tmp / f"part-{k}.jsonl", tmp / f"part-{k}.errors", 1)
                            for k, part in enumerate(parts[j])]
                seconds, elapsed = _at_once(commands, env, str(tmp))
                ceiling[j].append((elapsed, seconds))
    _scaling_report(args, size, runs, ceiling)


Runs = dict[int, list[tuple[float, float]]]


def _ratios(runs: Runs, one: list[tuple[float, float]]) -> dict[int, tuple[float, float]]:
    """Each entry's median over rounds of (speed-up, CPU ratio) against ``-j 1`` in the same round."""
    return {j: (statistics.median(w1 / w for (w, _), (w1, _) in zip(found, one, strict=True)),
                statistics.median(c / c1 for (_, c), (_, c1) in zip(found, one, strict=True)))
            for j, found in runs.items()}


def _scaling_report(args: argparse.Namespace, size: int, runs: dict[int, list[tuple[float, float]]],
                    ceiling: dict[int, list[tuple[float, float]]]) -> None:
    one = runs[1]
    ratios, bounds = _ratios(runs, one), _ratios(ceiling, one)
    wall = {j: statistics.median(w for w, _ in found) for j, found in runs.items()}
    print(f"{args.records:,} {args.corpus} records ({size / args.records / 1e3:.1f} kB each), chatml-multi-system, "
          f"{args.rounds} rounds (medians; ratios taken within each round); {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f} at the end; Python {platform.python_version()}\n")
    rows = [[f"{j}", f"{args.records / wall[j]:,.0f}", f"{ratios[j][0]:.2f}×", f"{ratios[j][1]:.2f}×",
             f"{bounds[j][0]:.2f}× / {bounds[j][1]:.2f}×" if j in bounds else "–"] for j in runs]
    print(markdown_table(["-j", "records/s (wall)", "speed-up", "CPU vs -j 1",
                          "ceiling: j separate -j 1 on j-ths, at once (speed-up / CPU)"], rows))
    share = _serial_share({j: speedup for j, (speedup, _) in ratios.items()})
    if share is not None:
        predicted = ", ".join(f"{cores} cores {1 / (share + (1 - share) / cores):.1f}×" for cores in (16, 64))
        print(f"\nAmdahl's law fitted to these: a serial share of {share:.1%}; predicted speed-up: {predicted}.")


STAGES = ("digit check", "decode", "toolset preparation", "handle", "encode", "whole block")


def stages(args: argparse.Namespace, tmp: Path) -> None:
    sys.path.insert(0, str(ROOT))
    import orjson

    import prompt_formats as pf
    from prompt_formats.cli import BLOCK_SIZE
    from prompt_formats.records import RecordRenderer, has_long_digit_run

    src = tmp / "records.jsonl"
    size = write_records(src, args.records, args.corpus, bad=False)
    data = src.read_bytes()
    blocks, start = [], 0
    while start < len(data):  # blocks of about BLOCK_SIZE bytes, each ending with a whole line
        end = data.find(b"\n", start + BLOCK_SIZE)
        end = len(data) if end < 0 else end + 1
        blocks.append(data[start:end])
        start = end
    fmt = pf.get_format("chatml-multi-system")

    def one_pass(new_job: Callable[[], RecordRenderer]) -> dict[str, int]:
        # A record goes through its stages one right after the other, as in the command; stages timed
        # with the monotonic clock (a thread-CPU-time reading is a system call), the whole block with CPU time.
        spent = dict.fromkeys(STAGES, 0)
        clock = time.perf_counter_ns
        job, whole_job = new_job(), new_job()
        prepare = job._tools.get  # the command's own toolset cache: what handling a record does first
        for block in blocks:
            t0 = clock()
            has_long_digit_run(block)
            spent["digit check"] += clock() - t0
            for number, line in enumerate(block.splitlines(), 1):
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

    best = dict.fromkeys(STAGES, float("inf"))
    for _ in range(args.rounds):
        for stage, ns in one_pass(lambda: RecordRenderer(fmt, True)).items():
            best[stage] = min(best[stage], ns / args.records / 1000)
    print(f"{args.records:,} {args.corpus} records, {size / args.records / 1e3:.1f} kB each; fastest of "
          f"{args.rounds} passes; Python {platform.python_version()}, orjson {orjson.__version__}\n")
    print(markdown_table(["stage", "µs per record"], [[stage, f"{best[stage]:.1f}"] for stage in STAGES]))
    json_floor = best["decode"] + best["encode"]
    print(f"\n- JSON alone (decode + encode): {json_floor:.1f} µs per record, so at most {1e6 / json_floor:,.0f} "
          "records per CPU-second with a renderer that cost nothing")


def _file_digest(path: Path) -> bytes:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while piece := file.read(1 << 24):
            digest.update(piece)
    return digest.digest()


def _digest(prompts: list[Any]) -> bytes:
    digest = hashlib.sha256()
    for prompt in prompts:
        digest.update(prompt.encode("utf-8", "surrogatepass") + b"\0")
    return digest.digest()


def render_batch(args: argparse.Namespace, tmp: Path) -> None:
    """``render_batch`` with ``workers=args.workers`` against ``workers=1``, alternating, workers at once
    (or, ``--as-shipped``, after the batch's first seconds in this process)."""
    import prompt_formats as pf
    from prompt_formats.format import batch as batch_module

    if not args.as_shipped:
        batch_module.SERIAL_FIRST_SECONDS = 0.0
    fmt = pf.get_format("chatml-multi-system")
    if args.corpus == "agent":
        conversations = [corpus.agent_request(120, 40, seed).messages for seed in range(args.records)]
    else:
        conversations = [request.messages for request in corpus.realistic_requests(args.records, 7)]
    # The prompts are compared by digest: two lists of agent prompts held at once are a gigabyte.
    serial = _digest(fmt.render_batch(conversations, None, True))
    fmt.render_batch(conversations, None, True, workers=args.workers)  # (untimed: this VM's memory first grows)
    ratios: list[tuple[float, float]] = []
    for _ in range(args.rounds):
        times = {}
        for workers in (1, args.workers):
            before, began = os.times(), time.perf_counter()
            out = fmt.render_batch(conversations, None, True, workers=workers)
            wall, after = time.perf_counter() - began, os.times()
            cpu = sum(after[:4]) - sum(before[:4])  # (this process's and its finished workers', user and system)
            if _digest(out) != serial:
                raise SystemExit(f"workers={workers}: the prompts differ from serial's")
            del out
            times[workers] = (wall, cpu)
        ratios.append((times[args.workers][0] / times[1][0], times[args.workers][1] / times[1][1]))
        print(f"round: workers=1 {times[1][0]:.2f} s; workers={args.workers} {times[args.workers][0]:.2f} s",
              flush=True)
    wall = statistics.median(r[0] for r in ratios)
    cpu = statistics.median(r[1] for r in ratios)
    print(f"{len(conversations):,} {args.corpus} conversations, {args.rounds} rounds: workers={args.workers} takes "
          f"{wall:.2f}x the wall time of workers=1 (rounds {min(r[0] for r in ratios):.2f}-"
          f"{max(r[0] for r in ratios):.2f}), {cpu:.2f}x its CPU")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    modes = {"rate": rate, "batch": batch, "scaling": scaling, "render-batch": render_batch, "stages": stages}
    parser.add_argument("mode", nargs="?", choices=tuple(modes), default="rate")
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--corpus", choices=("everyday", "tools", "agent"), default="everyday")
    parser.add_argument("--max-workers", type=int, default=0, help="scaling: the most workers (default: the CPUs)")
    parser.add_argument("--installed", action="store_true", help="the installed package, not the working tree")
    parser.add_argument("--workers", type=int, default=2, help="batch: workers of the parallel run")
    parser.add_argument("--as-shipped", action="store_true",
                        help="render-batch: workers start as in a user's call (SERIAL_FIRST_SECONDS as shipped)")
    parser.add_argument("--jinja-subset", type=int, default=2_000, help="batch: records rendered by Jinja2")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pf-bench-command-") as tmp:
        modes[args.mode](args, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
