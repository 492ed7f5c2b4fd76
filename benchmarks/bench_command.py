"""``prompt-formats render`` in one process: records per CPU-second, start-up included, now and at a revision.

The corpus is the command row's of ``run_all.py`` (``run_all_extra.write_records``: everyday
records of the held-out corpus, seed 0, two of them bad lines). Each round runs the working tree's
command and, with ``--against REV``, that revision's (its ``prompt_formats`` extracted with ``git
archive`` and put first on ``PYTHONPATH``), one after the other, so that the load of a shared
machine falls on both alike. Every run's output and error files are checked equal to the first
run's, byte for byte. Also reported: the start-up alone (the command on an empty file).

``--floor`` adds the command's floor (``floor_command.py``: the records decoded, rendered by
``floor_chatml.floor_render`` and encoded, with nothing else), timed in the same rounds; its prompts
file must equal the command's byte for byte. ``--floor-from DIR`` takes ``floor_command`` and
``floor_chatml`` from DIR (compiled with mypyc, for the compiled build's floor). ``--installed``
measures the package the interpreter imports (an installed build, e.g. the compiled one) instead of
the working tree.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/bench_command.py [--against REV] [--floor [--floor-from DIR]]
[--installed] [--records N] [--rounds R]``
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import run_all_extra  # noqa: E402


def extract(revision: str, into: Path) -> Path:
    """``revision``'s ``prompt_formats`` under ``into``; returns the directory to put on ``PYTHONPATH``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", revision, "prompt_formats"],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


#: The side that runs the floor (``floor_command.py``) instead of the command.
FLOOR = "floor"


def run_once(path: Path | None, records: Path, output: Path, errors: Path,
             floor_from: Path | None = None) -> tuple[float, float]:
    """CPU seconds (user + system) and wall seconds of one run of the command with ``path`` first on
    ``PYTHONPATH`` (``None``: the interpreter's installed package), or of the floor (``floor_from``:
    the directory of its modules)."""
    if floor_from is not None:
        command = [sys.executable, str(floor_from / "floor_command.py"), str(records), str(output), str(errors)]
        compiled = next(floor_from.glob("floor_command.*.so"), None)
        if compiled is not None:  # the compiled module, not the script beside it
            command = [sys.executable, "-c", "import sys, floor_command; sys.exit(floor_command.main(sys.argv))",
                       str(records), str(output), str(errors)]
        paths = [str(floor_from), str(HERE)] + ([str(path)] if path is not None else [])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    else:
        command = [sys.executable, "-m", "prompt_formats", "render", "-f", "chatml-multi-system", "--workers", "1",
                   "-q", "-o", str(output), "--errors", str(errors), str(records)]
        env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
        if path is not None:
            env["PYTHONPATH"] = str(path)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # Run from the records' directory: ``-m`` puts the working directory first on the path, which
    # must not be a checkout whose prompt_formats would be imported instead of ``path``'s.
    done = subprocess.run(command, env=env, capture_output=True, check=False, cwd=records.parent)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"bench_command: the run with PYTHONPATH={path} exited {done.returncode}:\n"
                         + done.stderr.decode(errors="replace")[-2000:])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def check_imported(path: Path | None, cwd: Path) -> None:
    """Stop unless a run with ``path`` imports ``path``'s prompt_formats (``None``: an installed one)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if path is not None:
        env["PYTHONPATH"] = str(path)
    where = subprocess.run([sys.executable, "-c", "import prompt_formats; print(prompt_formats.__file__)"],
                           env=env, cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()
    found = Path(where).resolve()
    # An installed build must not be the source tree's package; a given path's package must be under it.
    wrong = found.parent == ROOT / "prompt_formats" if path is None else not found.is_relative_to(path.resolve())
    if wrong:
        raise SystemExit(f"bench_command: PYTHONPATH={path or ''} imports {where}; not reporting")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--against", help="a git revision to measure beside the working tree")
    parser.add_argument("--floor", action="store_true", help="the floor (floor_command.py) beside the command")
    parser.add_argument("--floor-from", type=Path, help="the floor's modules, e.g. compiled with mypyc")
    parser.add_argument("--installed", action="store_true", help="the installed package, not the working tree")
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pf-bench-command-") as tmp_name:
        tmp = Path(tmp_name)
        now: Path | None = None if args.installed else ROOT
        sides: dict[str, Path | None] = {"now": now}
        if args.against:
            sides[args.against] = extract(args.against, tmp / "revision")
        floor_from = args.floor_from.resolve() if args.floor_from else HERE
        if args.floor or args.floor_from:
            sides[FLOOR] = now
        records, empty = tmp / "records.jsonl", tmp / "empty.jsonl"
        run_all_extra.write_records(records, args.records)
        empty.write_bytes(b"")
        for path in sides.values():
            check_imported(path, tmp)
        cpu: dict[str, list[float]] = {side: [] for side in sides}
        wall: dict[str, list[float]] = {side: [] for side in sides}
        start_up: dict[str, list[float]] = {side: [] for side in sides}
        reference: tuple[bytes, bytes] | None = None
        for _ in range(args.rounds):
            for side, path in sides.items():
                output, errors = tmp / f"out-{len(cpu[side])}.jsonl", tmp / f"err-{len(cpu[side])}.jsonl"
                floor = floor_from if side == FLOOR else None
                seconds, elapsed = run_once(path, records, output, errors, floor)
                cpu[side].append(seconds)
                wall[side].append(elapsed)
                got = (output.read_bytes(), errors.read_bytes())
                if side == FLOOR:  # its error lines are its own; their number must be the command's
                    got = (got[0], b"\n" * got[1].count(b"\n"))
                    if reference is not None and got != (reference[0], b"\n" * reference[1].count(b"\n")):
                        raise SystemExit("bench_command: the floor's prompts differ from the command's; not reporting")
                else:
                    reference = reference or got
                    if got != reference:  # (the prompts are the same whichever code wrote them)
                        raise SystemExit(f"bench_command: {side}'s output differs from the first run's; not reporting")
                start_up[side].append(run_once(path, empty, tmp / "o.jsonl", tmp / "e.jsonl", floor)[0])
        lines = reference[0].count(b"\n") if reference else 0
        print(f"{args.records:,} everyday records ({lines:,} prompts written), chatml-multi-system, --workers 1, "
              f"{args.rounds} rounds; Python {platform.python_version()}, {platform.machine()}, "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end; "
              f"prompt_formats {'installed' if args.installed else 'of the working tree'}"
              + (f", the floor from {floor_from}" if FLOOR in sides else "") + "\n")
        print("| revision | CPU ms (median) | wall ms (median) | start-up CPU ms | records per CPU-second |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for side in sides:
            median = statistics.median(cpu[side])
            print(f"| {side} | {median * 1000:.0f} | {statistics.median(wall[side]) * 1000:.0f} | "
                  f"{statistics.median(start_up[side]) * 1000:.0f} | **{args.records / median:,.0f}** |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
