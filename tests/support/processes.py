"""Waiting on child processes by event, never by time.

A test that drives a subprocess waits for something the child does — a file appearing, a process
becoming ready, the child exiting — never for a fixed time. ``SAFETY_NET`` bounds every wait only so
that a hung child fails the test instead of the whole run: it is minutes, far beyond what any wait
takes on a loaded machine, and no test measures it.
"""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

#: Seconds before a wait declares the child hung (a safety net, not a measurement).
SAFETY_NET = 300

# How often a condition is looked at again: short, so that a wait ends soon after its event.
_POLL = 0.02


def wait_for(condition: Callable[[], T], what: str) -> T:
    """Look at ``condition()`` until it is true and return it; fail naming ``what`` if the child hangs."""
    deadline = time.monotonic() + SAFETY_NET
    while not (value := condition()):
        assert time.monotonic() < deadline, f"{what}: not seen in {SAFETY_NET} s (the child hangs)"
        time.sleep(_POLL)
    return value


def children(parent: int) -> dict[int, bytes]:
    """``{pid: command line}`` of ``parent``'s living child processes (Linux: read from /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
        if int(stat.rpartition(")")[2].split()[1]) == parent:
            found[int(entry.name)] = cmdline
    return found


def ignores_sigint(pid: int) -> bool:
    """Whether process ``pid`` has set SIGINT to be ignored (False once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    match = re.search(r"^SigIgn:\s*([0-9a-fA-F]+)$", status, re.M)
    return match is not None and bool(int(match.group(1), 16) >> (signal.SIGINT - 1) & 1)


def pool_workers(parent: int) -> list[int]:
    """The pids of ``parent``'s process-pool workers: its children but multiprocessing's resource
    tracker (a spawned worker runs ``spawn_main``, a forked one shows its parent's command line)."""
    return [pid for pid, cmdline in children(parent).items() if b"resource_tracker" not in cmdline]


def ready_workers(parent: int, count: int) -> list[int]:
    """``parent``'s ``count`` pool workers once each has taken its job, else ``[]``.

    A worker's last step of starting is to ignore SIGINT (Ctrl-C is the parent's to handle), as
    multiprocessing's resource tracker does first thing: when every child ignores it, all are ready.
    """
    workers = pool_workers(parent)
    if len(workers) != count or not all(ignores_sigint(pid) for pid in children(parent)):
        return []
    return workers


def running(pid: int) -> bool:
    """Whether process ``pid`` has not ended (Linux: read from /proc; a zombie, ended and not yet
    reaped, has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def at_default_action(*signums: int) -> Callable[[], None]:
    """A ``preexec_fn`` that gives ``signums`` their default action in the child before it starts, as
    a terminal's foreground job has them. A suite started in the background by a non-interactive
    shell has SIGINT and SIGQUIT ignored (under nohup, SIGHUP), and a child inherits that: the
    command would then rightly leave them ignored."""

    def reset() -> None:
        for signum in signums:
            signal.signal(signum, signal.SIG_DFL)

    return reset
