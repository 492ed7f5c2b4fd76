"""Interleaved timing and Markdown tables, shared by the benchmarks.

The headline figures come from :func:`straight`: each round builds a fresh corpus (a new seed, so
no cache of any contender holds anything from an earlier round), then every contender renders it
once, timed; no warm-up pass, the first round counted, the figure the median over rounds.
:func:`interleaved` with :func:`warm_blocks` gives the *warm* figure (each block of work done
twice untimed before the timed pass): shown beside a headline, labelled "warm", never as one.

Fairness rules, because the machine is shared and noisy:

- time is the CPU time of the running thread (``time.thread_time_ns``), not wall time: time spent
  descheduled while other jobs run is nobody's work (a contender that times itself, such as the
  Go reference, reports its own figure);

- every contender's timed run lasts about as long as every other's (``min_run_ms``): a fast
  contender repeats its workload within one run, so a pause of the machine costs all of them alike
  instead of ruining the short runs of the fast one;
- each *round* runs every contender once, in an order that rotates from round to round, so slow
  drifts (other processes, CPU frequency) hit all of them alike;
- the garbage collector stays on, as in a server, but is collected before each timed run so no run
  pays for another's garbage.

A contender's figure is its fastest round (the least disturbed by other processes: on a shared
machine the median mostly measures the neighbours); the median over rounds is kept too.
"""

from __future__ import annotations

import gc
import math
import resource
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

__all__ = ["Contender", "Timing", "child_run", "interleaved", "markdown_table", "straight", "warm_blocks"]

T = TypeVar("T")


class Timing:
    """The per-item times of one contender over all rounds, in microseconds."""

    def __init__(self, name: str, per_item_us: list[float]) -> None:
        self.name = name
        self.per_item_us = per_item_us

    @property
    def median(self) -> float:
        """Median over rounds, µs per item."""
        return statistics.median(self.per_item_us)

    @property
    def best(self) -> float:
        """Fastest round, µs per item."""
        return min(self.per_item_us)


def _timed(run: Callable[[], float | None], repeats: int) -> tuple[float, float | None]:
    gc.collect()
    start = time.thread_time_ns()
    measured = None
    for _ in range(repeats):
        measured = run()
    return (time.thread_time_ns() - start) / repeats, measured


def interleaved(
    contenders: Sequence[tuple[str, Callable[[], float | None]]],
    items: int,
    rounds: int,
    min_run_ms: float = 40.0,
) -> list[Timing]:
    """Time each ``(name, run)``: ``run()`` does the whole workload of ``items`` items once.

    A ``run`` that times itself (another process, say, or a run with untimed set-up steps) returns
    its own µs per item and is run once per round; otherwise it returns ``None``, is repeated to
    last about ``min_run_ms`` of CPU time, and that time is used. The first call of each run is a
    warm-up and calibrates the repetitions.
    """
    repeats = {}
    for name, run in contenders:
        elapsed_ns, measured = _timed(run, 1)
        repeats[name] = 1 if measured is not None else max(1, math.ceil(min_run_ms * 1e6 / max(elapsed_ns, 1)))
    samples: dict[str, list[float]] = {name: [] for name, _ in contenders}
    for r in range(rounds):
        shift = r % len(contenders)
        for name, run in [*contenders[shift:], *contenders[:shift]]:
            elapsed_ns, measured = _timed(run, repeats[name])
            samples[name].append(elapsed_ns / items / 1000 if measured is None else measured)
    return [Timing(name, samples[name]) for name, _ in contenders]


def warm_blocks(
    work: Callable[[Sequence[T]], None], items: Sequence[T], block: int, min_run_ms: float = 40.0, warmups: int = 2
) -> Callable[[], float]:
    """A self-timed *warm* run for :func:`interleaved`: ``work`` over ``items`` a block at a time, untimed then timed.

    Each block of ``block`` items is worked through ``warmups`` times untimed (so what the work
    leaves behind for later passes over the same items, such as a cache entry and its one-time
    check, is in place, and every contender meets its block equally warm in the CPU's caches), then
    once timed. The sweep over all blocks is repeated to last about ``min_run_ms`` of timed CPU
    time. Returns CPU µs per item.
    """
    blocks = [items[i : i + block] for i in range(0, len(items), block)]
    sweeps = 0

    def sweep() -> int:
        timed = 0
        for chunk in blocks:
            for _ in range(warmups):
                work(chunk)
            start = time.thread_time_ns()
            work(chunk)
            timed += time.thread_time_ns() - start
        return timed

    def run() -> float:
        nonlocal sweeps
        if not sweeps:  # the first call calibrates
            sweeps = max(1, math.ceil(min_run_ms * 1e6 / max(sweep(), 1)))
        timed = sum(sweep() for _ in range(sweeps))
        return timed / sweeps / len(items) / 1000

    return run


Contender = tuple[str, Callable[[Sequence[Any]], Any], bool]
"""``(name, work, self_timed)``: ``work(jobs)`` renders every job once and returns the outputs, or
``(outputs, µs per job)`` when ``self_timed`` (another process that times itself)."""


def straight(
    contenders: Sequence[Contender],
    corpus_for_round: Callable[[int], Sequence[Any]],
    rounds: int,
    check: Callable[[dict[str, list[Any]], Sequence[Any]], None] | None = None,
) -> list[Timing]:
    """Straight passes: per round a fresh corpus (``corpus_for_round(r)``, untimed), each contender once.

    No warm-up and no calibration pass: the first round is counted like the others. Contenders run
    in an order that rotates from round to round. ``check(outputs by name, jobs)`` sees every
    round's outputs (the timed ones: nothing is rendered untimed) and raises on a difference.
    Returns CPU µs per job of each contender, per round.
    """
    samples: dict[str, list[float]] = {name: [] for name, _, _ in contenders}
    for r in range(rounds):
        jobs = corpus_for_round(r)
        outputs: dict[str, list[Any]] = {}
        shift = r % len(contenders)
        for name, work, self_timed in [*contenders[shift:], *contenders[:shift]]:
            gc.collect()
            start = time.thread_time_ns()
            result = work(jobs)
            elapsed_us = (time.thread_time_ns() - start) / 1000 / len(jobs)
            if self_timed:
                result, elapsed_us = result
            outputs[name] = list(result)
            samples[name].append(elapsed_us)
        if check is not None:
            check(outputs, jobs)
    return [Timing(name, samples[name]) for name, _, _ in contenders]


def child_run(command: Sequence[str], env: dict[str, str], cwd: str | None = None) -> tuple[float, float, int]:
    """Run ``command`` to its end: its CPU seconds (user + system, the process and its children),
    wall seconds and exit code. For whole processes (the command's rows), start-up included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(list(command), env=env, cwd=cwd, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # 1: the command's "some records were bad"
        raise SystemExit(f"{command[0]} exited {done.returncode}:\n" + done.stderr.decode(errors="replace")[-2000:])
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall, done.returncode


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table (numbers already formatted by the caller)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
