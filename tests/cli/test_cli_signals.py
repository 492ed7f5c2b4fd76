"""SIGTERM, SIGHUP and the other signals that would end the process end a ``-j 2`` run of the command
as SIGINT does: no temporary file left beside the output or in the workers' spool, no worker process
left running, exit status 128 + the signal's number.

Each run reads standard input that the test keeps open, so the run is certainly in progress when the
signal comes: the test waits for the temporary output and the ready workers (events, never a time).
The signal goes either to the command alone (``kill PID``, a job runner's stop) or to its whole
process group (a terminal that hangs up, ``kill -- -PGID``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import SAFETY_NET, at_default_action, ready_workers, running, wait_for

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the workers through /proc")

LINE = (json.dumps({"messages": [{"role": "user", "content": "Hi"}]}) + "\n").encode()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def group_is_empty(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return True
    return False


@contextlib.contextmanager
def started(out: Path, spool: Path) -> Iterator[subprocess.Popen[bytes]]:
    """The command rendering standard input to ``out`` with one worker process beside it (``-j 2``), its
    spool in ``spool``, in a session of its own; its whole process group is killed when the block
    ends, so a failed test leaks no process."""
    # Small blocks: the workers get records while standard input is still open.
    spool.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "prompt_formats", "render", "-f", "chatml-multi-system", "-j", "2",
         "--block-size", "100", "-", "-o", str(out)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        preexec_fn=at_default_action(*STOPPING), env={**os.environ, "TMPDIR": str(spool)},
    )
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


#: SIGTERM, SIGHUP, and others a program can catch that would end it: SIGQUIT (Ctrl-backslash), SIGUSR1,
#: SIGALRM, SIGXCPU (a CPU-time limit's). (Those left a temporary file and, with -j 2, workers for ever.)
STOPPING = [signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGALRM, signal.SIGXCPU]


@pytest.mark.parametrize("to_group", [False, True], ids=["the-command", "its-process-group"])
@pytest.mark.parametrize("signum", STOPPING, ids=lambda s: signal.Signals(s).name)
def test_a_terminating_signal_removes_the_temporary_files_and_ends_the_workers(
    tmp_path: Path, signum: int, to_group: bool
) -> None:
    out, errors = tmp_path / "out.jsonl", tmp_path / "errors.jsonl"
    spool = tmp_path / "spool"
    with started(out, spool) as proc:
        assert proc.stdin is not None
        proc.stdin.write(LINE * 2000)
        proc.stdin.flush()
        wait_for(lambda: [p for p in tmp_path.iterdir() if p.name.startswith(".out.jsonl.")], "the temporary output")
        workers = wait_for(lambda: ready_workers(proc.pid, 1), "the worker process ready")
        wait_for(lambda: list(spool.iterdir()), "the workers' spool")
        if to_group:
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)
        status = proc.wait(timeout=SAFETY_NET)
        assert status == 128 + signum
        assert [pid for pid in workers if alive(pid)] == []  # ended (and reaped) before the command exits
        # Nothing else holds the command's standard output and error open: both reach their end.
        stdout, stderr = proc.communicate(timeout=SAFETY_NET)
        wait_for(lambda: group_is_empty(proc.pid), "the process group emptied")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spool"]
    assert list(spool.iterdir()) == []
    assert not errors.exists()
    assert stdout == b""
    assert stderr.decode() == f"prompt-formats: stopped by {signal.Signals(signum).name}\n"


def test_the_workers_of_a_command_killed_outright_end_by_themselves(tmp_path: Path) -> None:
    # SIGKILL (the out-of-memory killer, a job runner's last resort) cannot be handled: the workers,
    # waiting for work, would stay for ever, holding the command's standard output and error open.
    with started(tmp_path / "out.jsonl", tmp_path / "spool") as proc:
        assert proc.stdin is not None
        proc.stdin.write(LINE * 2000)
        proc.stdin.flush()
        workers = wait_for(lambda: ready_workers(proc.pid, 1), "the worker process ready")
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=SAFETY_NET) == -signal.SIGKILL
        wait_for(lambda: not any(running(pid) for pid in workers), "the orphaned workers' end")


def waits_for_a_fifo_reader(pid: int) -> bool:
    """Whether ``pid`` is blocked opening a FIFO that has no reader (Linux's wait channel says so)."""
    try:
        return Path(f"/proc/{pid}/wchan").read_text() == "wait_for_partner"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/wchan").exists(), reason="reads the wait channel from /proc")
@pytest.mark.parametrize("which", ["-o", "--errors"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: signal.Signals(s).name)
def test_a_signal_stops_a_run_waiting_for_the_reader_of_a_fifo(tmp_path: Path, which: str, signum: int) -> None:
    # (The FIFO's open ran with the signals held: the run went on waiting until a reader came.)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "in.jsonl").write_bytes(LINE)
    outputs = ["-o", str(fifo)] if which == "-o" else ["-o", str(tmp_path / "out.jsonl"), "--errors", str(fifo)]
    proc = subprocess.Popen([sys.executable, "-m", "prompt_formats", "render", "-f", "chatml-multi-system",
                             str(tmp_path / "in.jsonl"), *outputs], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=at_default_action(*STOPPING))
    try:
        wait_for(lambda: waits_for_a_fifo_reader(proc.pid), "the command waiting for the FIFO's reader")
        os.kill(proc.pid, signum)
        _, stderr = proc.communicate(timeout=SAFETY_NET)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 128 + signum
    assert stderr.decode() == f"prompt-formats: stopped by {signal.Signals(signum).name}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "in.jsonl"]


def test_a_signal_the_process_handles_outside_python_s_signal_module_is_left_to_it(tmp_path: Path) -> None:
    # faulthandler.register (or a C extension) installs a handler Python's signal module reports as
    # SIG_DFL: main() called in-process took the signal over, then "restored" it to SIG_DFL, so the
    # caller's next SIGUSR1 killed it.
    (tmp_path / "in.jsonl").write_bytes(LINE)
    code = ("import faulthandler, os, signal, sys\n"
            "faulthandler.register(signal.SIGUSR1, file=open(os.devnull, 'w'))\n"
            "from prompt_formats.cli import main\n"
            "status = main(['render', '-f', 'chatml-multi-system', '-q', 'in.jsonl', '-o', 'out.jsonl'])\n"
            "os.kill(os.getpid(), signal.SIGUSR1)\n"
            "print('survived', status)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=tmp_path, timeout=SAFETY_NET,
                          check=False)
    assert (done.returncode, done.stdout) == (0, b"survived 0\n")
