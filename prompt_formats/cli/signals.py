"""SIGTERM, SIGHUP and the other signals sent to stop a process (:data:`SIGNALS`) stop a run as Ctrl-C
(SIGINT) does: cleanly, with the conventional status.

Without a handler such a signal killed the command at once: the temporary output files stayed beside
the output, and the ``-j`` workers, which wait for work from a parent that no longer exists, stayed
idle forever, holding the command's standard output and error open, so a pipeline or a job runner
never saw the command end. :func:`stop_on_signals` turns each of them into :class:`Stopped`,
raised in the main thread wherever it waits (reading the input, waiting for a worker, writing). The
run unwinds as it does for KeyboardInterrupt: :meth:`StopSignals.end_workers` ends the workers, the temporary
files are removed, and the command exits with status 128 + the signal's number (143 for SIGTERM,
129 for SIGHUP, 131 for SIGQUIT, 138 for SIGUSR1...): the status a shell shows for a command the
signal killed, as the command's 130 for SIGINT and 141 for SIGPIPE are (an exit status, rather than
killing itself again with the signal, so that :func:`prompt_formats.cli.main` stays a function that
returns its status).

A signal that is ignored when the command starts (``nohup``) stays ignored. The steps that must not
be cut in half (creating an output file and noting it, the cleanup, putting the finished files in
place) run :meth:`StopSignals.held`: a signal that comes meanwhile is acted on when the step ends.
A second signal while the run stops is ignored: the cleanup finishes.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

__all__ = ["StopSignals", "Stopped", "caught_elsewhere", "shield_resource_tracker", "stop_on_signals"]

#: The signals that stop a run: those that end a process by default and that users and systems send
#: to stop one (SIGTERM: ``kill``, job runners; SIGHUP: a closed terminal; SIGQUIT: Ctrl-backslash;
#: SIGXCPU: a CPU-time limit, ``ulimit -t``; SIGALRM, SIGUSR1, SIGUSR2, SIGIO, SIGPWR). SIGINT is
#: KeyboardInterrupt's. Left to their default: SIGPIPE and SIGXFSZ, which the interpreter ignores
#: (the write fails instead); SIGPROF and SIGVTALRM, the ticks of profilers, which must not stop the
#: run they measure; the faults of the process itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
#: SIGSYS, SIGTRAP), after which nothing can be trusted to run; SIGSTKFLT and the real-time signals,
#: which nothing sends to stop a command.
SIGNALS = tuple(
    getattr(signal, name)
    for name in ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGXCPU", "SIGALRM", "SIGUSR1", "SIGUSR2", "SIGIO", "SIGPWR")
    if hasattr(signal, name)
)


def caught_elsewhere() -> set[int]:
    """The signals this process has a handler for, Python's and any other's (``faulthandler.register``'s,
    a C extension's, which Python's ``signal`` module sees as ``SIG_DFL``). Read from Linux's
    ``/proc/self/status`` (``SigCgt``); elsewhere none is known."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            mask = next((int(line.split()[1], 16) for line in status if line.startswith("SigCgt:")), 0)
    except (OSError, ValueError, IndexError):
        return set()
    return {signum for signum in range(1, mask.bit_length() + 1) if mask >> (signum - 1) & 1}


class Stopped(BaseException):
    """A stopping signal arrived; ``signum`` is its number.

    A BaseException, as KeyboardInterrupt is: the handlers that turn a record's exception into its
    error report (``except Exception``) must not take it for the record's own failure.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    def __str__(self) -> str:
        return f"stopped by {signal.Signals(self.signum).name}"


class StopSignals:
    """The handler of the stopping signals during one run, and what it has seen (``received``)."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._holding = 0
        self._raised = False
        # An in-process caller's own child processes, which end_workers leaves alone.
        multiprocessing = sys.modules.get("multiprocessing")
        self._children_before = set(multiprocessing.active_children()) if multiprocessing is not None else set()

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum
        if self._holding or self._raised:
            return  # held: acted on when the step ends; a second signal: the run is already stopping
        self._raised = True
        raise Stopped(signum)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Run the block whole: a signal that comes during it raises :class:`Stopped` when it ends
        (unless the block raised: its exception goes on, and ``received`` tells the signal came)."""
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1
        if not self._holding and self.received is not None and not self._raised:
            self._raised = True
            raise Stopped(self.received)

    def end_workers(self) -> None:
        """End, and reap, every worker process the run started (multiprocessing's children of this
        process, but those that existed before the run), without waiting for their current work."""
        multiprocessing = sys.modules.get("multiprocessing")
        if multiprocessing is None:  # a run in this process (-j 1) starts none
            return
        workers = [child for child in multiprocessing.active_children() if child not in self._children_before]
        for worker in workers:
            with contextlib.suppress(OSError):
                worker.terminate()
        for worker in workers:
            worker.join()


@contextlib.contextmanager
def stop_on_signals() -> Iterator[StopSignals]:
    """Handle the :data:`SIGNALS` with a new :class:`StopSignals` during the block, then restore the
    previous handlers. Only in the main thread (the only one that may set handlers); a signal that is
    ignored, or already has a handler of the caller's (installed through Python or not), is left as it is."""
    stop = StopSignals()
    installed: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        elsewhere = caught_elsewhere()
        for signum in SIGNALS:
            if signal.getsignal(signum) == signal.SIG_DFL and signum not in elsewhere:
                installed[signum] = signal.signal(signum, stop)
    try:
        yield stop
    finally:
        for signum, previous in installed.items():
            signal.signal(signum, previous)


def shield_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (if it is not running) with the :data:`SIGNALS` blocked,
    which it inherits and keeps: it ignores SIGINT and SIGTERM itself, but a hangup (or another of
    them) sent to the process group would kill it, and the pool's shutdown would then relaunch it with
    a warning and a traceback on standard error. This process's mask is restored, and such a signal
    meanwhile is delivered then."""
    if not hasattr(signal, "pthread_sigmask"):  # not POSIX: no SIGHUP either
        return
    from multiprocessing import resource_tracker

    previous = signal.pthread_sigmask(signal.SIG_BLOCK, set(SIGNALS))
    try:
        resource_tracker.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
