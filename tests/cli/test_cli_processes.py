"""How the command sets up its processes for a long run: the C allocator keeps the memory a block
frees (:mod:`prompt_formats.cli.allocator`), and the ``-j`` workers are forked where that is safe.

That the forked workers write what ``-j 1`` writes, and end as they should on a signal or a death,
is in test_cli_workers.py, test_cli_signals.py and test_cli.py.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import prompt_formats.cli
from prompt_formats.cli import allocator, main
from tests.support.processes import SAFETY_NET


def _glibc() -> bool:
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc ")
    except (AttributeError, ValueError, OSError):
        return False


@pytest.mark.skipif(not _glibc(), reason="mallopt is glibc's")
def test_with_glibc_the_allocator_is_told_to_keep_freed_memory() -> None:
    assert allocator.keep_freed_memory() is True


@pytest.mark.parametrize("answer", [None, "musl 1.2", ValueError("unknown name")])
def test_another_c_library_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch, answer: object) -> None:
    def confstr(name: str) -> object:
        assert name == "CS_GNU_LIBC_VERSION"
        if isinstance(answer, Exception):
            raise answer
        return answer

    def no_library(name: object) -> None:
        raise AssertionError("no C library may be loaded")

    monkeypatch.setattr(os, "confstr", confstr)
    monkeypatch.setattr(ctypes, "CDLL", no_library)
    assert allocator.keep_freed_memory() is False


@pytest.mark.parametrize(("lines", "calls"), [(1, 0), (40, 1)])
def test_only_a_run_of_more_than_one_block_sets_the_allocator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: int, calls: int
) -> None:
    told = []
    monkeypatch.setattr(prompt_formats.cli, "keep_freed_memory", lambda: told.append(True))
    path = tmp_path / "in.jsonl"
    path.write_text((json.dumps({"messages": [{"role": "user", "content": "Hi"}]}) + "\n") * lines)
    assert main(["render", "-f", "chatml-multi-system", "-q", "--block-size", "1000", str(path),
                 "-o", str(tmp_path / "out.jsonl")]) == 0
    assert len(told) == calls


FORK_SCRIPT = """
import faulthandler, signal, sys, threading
from prompt_formats.cli import _may_fork
if sys.argv[1] == "thread":
    stop = threading.Event()
    threading.Thread(target=stop.wait).start()
    print(_may_fork())
    stop.set()
else:
    if sys.argv[1] == "faulthandler":  # a handler outside Python's signal module, which a fork would keep
        faulthandler.register(signal.SIGUSR1)
    print(_may_fork())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command forks its workers on Linux only")
@pytest.mark.parametrize(("host", "forks"), [("plain", "True"), ("thread", "False"), ("faulthandler", "False")])
def test_the_command_forks_its_workers_only_from_a_plain_process(host: str, forks: str) -> None:
    # No other thread (it may hold a lock), no signal handler but Python's (a forked worker would run it).
    done = subprocess.run([sys.executable, "-c", FORK_SCRIPT, host], capture_output=True, text=True,
                          timeout=SAFETY_NET, check=True)
    assert done.stdout.split() == [forks]
