"""How ``ordered_map`` shares a batch between this process and its workers (issue 43, item 3): when
sending pays, how pieces are cut, and taking back what no worker has started. The numbers are made
up, never measured: what is tested is the rule, not this machine's clock."""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from prompt_formats.format import batch
from prompt_formats.format.batch import _Costs, _Sharing
from tests.support.processes import SAFETY_NET, children, running, wait_for


def costs(here: float, here_items: int, own: float, sent_items: int, taking: float = 0.0) -> _Costs:
    """Costs shared for long enough to be judged (a second), with no pace measured alone."""
    made = _Costs()
    made.here, made.here_items, made.own, made.sent_items, made.taking = here, here_items, own, sent_items, taking
    made.shared = 1.0
    return made


def test_sending_pays_until_it_costs_the_share_of_running_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "SEND_SHARE", 0.5)
    monkeypatch.setattr(batch, "SHARED_SECONDS", 0.5)
    assert costs(0.0, 0, 0.0, 0).sending_pays()  # nothing known: send, to learn what it costs
    assert costs(1.0, 100, 1.0, 0).sending_pays()  # nothing sent yet
    assert not costs(0.0, 0, 5.0, 100).sending_pays()  # one sent, and nothing run here yet to compare
    # Run here: 10 ms an item. Sent: everything else this process spent, per item sent.
    assert costs(1.0, 100, 1.4, 100).sending_pays()  # 4 ms an item sent: 0.4 of running it
    assert not costs(1.0, 100, 1.5, 100).sending_pays()  # 5 ms: half of it, no longer paying
    assert not costs(1.0, 100, 3.0, 10).sending_pays()
    assert costs(1.0, 100, 3.0, 100, taking=1.6).sending_pays()  # reading the input is no cost of sending
    too_soon = costs(1.0, 100, 3.0, 10)
    too_soon.shared = 0.4  # (what starting the pool cost still weighs on what sending seems to cost)
    assert too_soon.sending_pays()
    monkeypatch.setattr(batch, "SEND_SHARE", math.inf)
    assert costs(1.0, 100, 3.0, 10).sending_pays()


def paced(alone: float, alone_items: int, shared: float, shared_items: int) -> _Costs:
    """Costs whose CPU says sending pays (1 ms an item sent against 10 ms run here), with a pace."""
    made = costs(1.0, 100, 1.1, 100)
    made.alone, made.alone_items, made.shared, made.shared_items = alone, alone_items, shared, shared_items
    return made


def test_sending_stops_for_good_once_the_shared_batch_is_slower_than_this_process_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "SEND_SHARE", 0.5)
    monkeypatch.setattr(batch, "SHARED_SECONDS", 0.5)
    # Alone: 100 items a second.
    assert paced(1.0, 100, 0.4, 10).sending_pays()  # slower, but not shared long enough to tell
    assert paced(1.0, 100, 1.0, 120).sending_pays()  # 120 a second
    slower = paced(1.0, 100, 1.0, 90)  # 90 a second: no longer
    assert not slower.sending_pays()
    slower.shared_items = 1000
    assert not slower.sending_pays()  # (stopped: the pace it has since is this process's own)
    expensive = costs(1.0, 100, 1.6, 100)
    assert not expensive.sending_pays()
    expensive.own = 1.0
    assert not expensive.sending_pays()


def test_pieces_are_the_piece_seconds_of_work_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "PIECE_SECONDS", 0.01)
    assert costs(0.0, 0, 0.0, 0).piece_size(256) == 256  # not known yet: the whole chunk
    assert costs(1.0, 1000, 1.0, 0).piece_size(256) == 10  # 1 ms an item: ten
    assert costs(1.0, 10, 1.0, 0).piece_size(256) == 1  # 100 ms an item: one, never none
    assert costs(1e-6, 1000, 1.0, 0).piece_size(256) == 256  # cheaper: never more than a chunk


class NeverRuns(Future):  # type: ignore[type-arg]
    """A worker's piece that no worker ever starts: waiting for it would wait for ever."""

    def result(self, timeout: float | None = None) -> Any:
        if not self.done():
            raise AssertionError("waited for a piece no worker has started")
        return super().result(timeout)


class IdlePool:
    """A pool whose worker has started and then takes nothing: every piece sent stays pending."""

    def __init__(self) -> None:
        self.sent = 0

    def submit(self, fn: Any, *args: Any) -> Future:  # type: ignore[type-arg]
        if fn is batch._started:
            started: Future[bool] = Future()
            started.set_result(True)
            return started
        self.sent += 1
        return NeverRuns()


def doubled(chunk: list[int]) -> list[int]:
    return [2 * item for item in chunk]


@pytest.mark.parametrize("pool_limit", [1, 3])
def test_at_the_end_pieces_no_worker_started_are_taken_back_and_run_here(pool_limit: int) -> None:
    pool = IdlePool()
    chunks = iter([list(range(k, k + 4)) for k in range(0, 40, 4)])
    sharing: _Sharing[int, int] = _Sharing(pool, doubled, chunks, 4, 100, pool_limit, frozenset())  # type: ignore[arg-type]
    assert list(sharing.results()) == [2 * item for item in range(40)]
    assert pool.sent == pool_limit  # pieces went to the pool, and came back here
    assert all(piece is None for _, piece in sharing.pending)


def test_no_piece_is_sent_once_sending_does_not_pay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "SEND_SHARE", 0.0)  # an item sent never costs less than nothing
    monkeypatch.setattr(batch, "SHARED_SECONDS", 0.0)
    pool = IdlePool()
    chunks = iter([list(range(k, k + 4)) for k in range(0, 400, 4)])
    sharing: _Sharing[int, int] = _Sharing(pool, doubled, chunks, 4, 1000, 10, frozenset())  # type: ignore[arg-type]
    assert list(sharing.results()) == [2 * item for item in range(400)]
    assert pool.sent == 1  # the one that told what sending costs


class Survivor:
    """A worker waiting on the queue's lock a dead worker held: it ends only when it is terminated."""

    def __init__(self) -> None:
        self.ended = threading.Event()

    @property
    def exitcode(self) -> int | None:
        return -signal.SIGTERM if self.ended.is_set() else None

    def terminate(self) -> None:
        self.ended.set()


class Dead:
    exitcode = -signal.SIGKILL

    def terminate(self) -> None:
        raise AssertionError("a dead worker is not ended again")


class StuckPool:
    """A pool whose manager thread waits for its workers' end, as ProcessPoolExecutor's does."""

    def __init__(self, processes: list[Any]) -> None:
        self._processes = dict(enumerate(processes))
        survivors = [process for process in processes if isinstance(process, Survivor)]
        self._executor_manager_thread = threading.Thread(
            target=lambda: [survivor.ended.wait(SAFETY_NET) for survivor in survivors])
        self._executor_manager_thread.start()
        self.shut: tuple[bool, bool] | None = None

    def shutdown(self, wait: bool, cancel_futures: bool) -> None:
        self.shut = (wait, cancel_futures)


def test_a_worker_that_died_ends_the_others_when_the_batch_shuts_down() -> None:
    # Killed while it waited for work, a worker held the queue's lock: the others would wait on it
    # for ever, and the shutdown for them, when the death came as the batch ended.
    survivors = [Survivor(), Survivor()]
    pool = StuckPool([survivors[0], Dead(), survivors[1]])
    batch._shut_down(pool)  # type: ignore[arg-type]
    assert all(survivor.ended.is_set() for survivor in survivors)
    assert pool.shut == (False, True)
    assert not pool._executor_manager_thread.is_alive()


def test_the_pool_keeps_what_its_shutdown_reads() -> None:
    # batch._shut_down reads the standard library pool's processes and manager thread.
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    try:
        assert pool.submit(abs, -1).result(timeout=SAFETY_NET) == 1
        processes = list(pool._processes.values())  # type: ignore[attr-defined]
        assert [process.exitcode for process in processes] == [None]
        assert pool._executor_manager_thread.is_alive()  # type: ignore[attr-defined]
    finally:
        batch._shut_down(pool)
    assert [process.exitcode for process in processes] == [0]


WORKER_MASK_SCRIPT = '''
import os
import signal
import sys

if __name__ == "__mp_main__":  # a spawned worker imports the main script so, before its initializer runs
    with open(os.environ["PF_MASK_FILE"], "a") as record:
        record.write(f"{signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])}\\n")

if __name__ == "__main__":
    import math

    import prompt_formats as pf
    from prompt_formats.format import batch

    batch.SERIAL_FIRST_SECONDS, batch.SEND_SHARE = 0.0, math.inf  # workers at once, every piece sent
    fmt = pf.get_format("chatml-multi-system")
    conversations = [[{"role": "user", "content": f"hi {k}"}] for k in range(3000)]
    sys.exit(fmt.render_batch(conversations, workers=3, chunk_size=10) != [fmt.render(c) for c in conversations])
'''


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no signal masks on this platform")
def test_a_worker_process_starts_with_ctrl_c_held_until_it_ignores_it(tmp_path: Path) -> None:
    # Ctrl-C reaches the process group: a worker still importing when it came printed a traceback.
    (tmp_path / "main.py").write_text(WORKER_MASK_SCRIPT)
    record = tmp_path / "mask.txt"
    done = subprocess.run([sys.executable, str(tmp_path / "main.py")], env={**os.environ, "PF_MASK_FILE": str(record)},
                          capture_output=True, timeout=SAFETY_NET, check=False)
    assert done.returncode == 0, done.stderr
    seen = record.read_text().split()
    assert seen and set(seen) == {"True"}  # every worker started, and each with SIGINT blocked


SLOW_START_SCRIPT = '''
import os
import sys
import time

if __name__ == "__mp_main__":  # a spawned worker imports the main script so: it waits here for the test
    while not os.path.exists(os.environ["PF_GO_FILE"]):
        time.sleep(0.01)

if __name__ == "__main__":
    import math

    import prompt_formats as pf
    from prompt_formats.format import batch

    batch.SERIAL_FIRST_SECONDS, batch.SEND_SHARE = 0.0, math.inf
    fmt = pf.get_format("chatml-multi-system")
    conversations = [[{"role": "user", "content": f"hi {k}"}] for k in range(100_000)]
    fmt.render_batch(conversations, workers=2, chunk_size=10)
'''


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the worker through /proc")
def test_a_worker_whose_caller_is_killed_while_it_starts_ends(tmp_path: Path) -> None:
    # Killed outright (SIGKILL, the out-of-memory killer), the caller cannot stop its workers: each ends
    # by itself, even one still starting then (it must not take its new parent for the one it had).
    (tmp_path / "main.py").write_text(SLOW_START_SCRIPT)
    go = tmp_path / "go"
    proc = subprocess.Popen([sys.executable, str(tmp_path / "main.py")], env={**os.environ, "PF_GO_FILE": str(go)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        worker = wait_for(lambda: [pid for pid, line in children(proc.pid).items() if b"spawn_main" in line],
                          "the worker process started")[0]
        proc.kill()
        proc.wait(timeout=SAFETY_NET)
        go.touch()
        wait_for(lambda: not running(worker), "the orphaned worker's end")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
