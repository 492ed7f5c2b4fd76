"""Rendering and parsing many conversations: in order, optionally over several processes, in bounded memory.

Everything here is built on :func:`ordered_map`, which cuts an iterable into chunks, runs a *job* on
each chunk (in this process, and with ``workers > 1`` in worker processes too), and yields the
results in input order. At most ``max_in_flight`` chunks are submitted and not yet consumed at any
time, so an input iterator of any length (a JSONL file of millions of lines) is processed in bounded
memory.

A job is pickled once and sent to each worker process when it starts: a batch's tools and options
travel with the job, so they are pickled once, not once per conversation, and the tools' rendered
form is built once per worker and then reused from the :class:`~prompt_formats.model.tools.PreparedTools`
cache. What cannot be pickled (a chunk holding a lambda or a value nested too deeply, or the job
itself) is run in this process instead: the results never depend on the number of workers.

Worker processes are started with the ``spawn`` method (see :data:`START_METHOD`; the command,
which knows it runs no other thread, forks them on Linux: ``ordered_map(start_method=)``). As with any
:mod:`multiprocessing` code, a script that calls these functions with ``workers > 1`` must guard its
entry point with ``if __name__ == "__main__":``.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import itertools
import math
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TYPE_CHECKING, Any, Generic, Literal, ParamSpec, TypeVar

from ..errors import FormatError, InvalidInputError, in_batch, type_name
from .session import shared_tools

if TYPE_CHECKING:
    from ..model.messages import AssistantReply
    from .interface import Conversation, FormatInterface, Tools

__all__ = [
    "ErrorMode",
    "cpu_count",
    "iter_parse",
    "iter_render",
    "ordered_map",
    "parse_batch",
    "render_batch",
]

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")

ErrorMode = Literal["raise", "collect"]

#: Chunk size for an input whose length is unknown (an iterator): big enough that pickling and
#: inter-process overhead is small per item, small enough that the first results come quickly.
DEFAULT_CHUNK_SIZE = 256
#: Chunks per worker that may be submitted and not yet consumed (keeps every worker busy while the
#: parent consumes results, and bounds memory).
IN_FLIGHT_PER_WORKER = 3
#: Chunks sent to each worker process and not yet back: one to run and two waiting, so that it
#: never waits for this process (busy with a chunk of its own) to hand it more.
POOL_QUEUE_PER_PROCESS = 3
#: Seconds of work :func:`iter_render` and :func:`iter_parse` do in this process before they start
#: worker processes: workers cost their start (about a third of a second) and the sending of every
#: item and result, more than a cheap render, so a batch shorter than this never pays for them
#: (the measurements are in docs/guide.md, "Many conversations").
SERIAL_FIRST_SECONDS = 3.0
#: A piece goes to a worker process only while sending an item (pickling it, the pool's threads
#: passing it on and taking its result back) costs this process less than this share of running it
#: here: this process is one of the workers, so an item it sends saves it the work and costs it the
#: sending, and on a machine with few cores the sending takes CPU the workers would use.
#: Infinite: every piece is sent while a worker has room for it.
SEND_SHARE = 0.5
#: Seconds of work (measured in this process) a chunk is cut into pieces of, each run here or sent
#: to a worker process: the processes keep even, and the batch's last pieces, which the others may
#: wait for, are short. A piece costs about a tenth of a millisecond to send and receive.
PIECE_SECONDS = 0.01
#: Seconds a batch is shared with the workers before what sending costs, and its pace against this
#: process's alone, are judged.
SHARED_SECONDS = 0.5
#: How often a worker process looks whether the process that started it still lives: one killed
#: outright (SIGKILL, the out-of-memory killer) cannot stop its workers, which would wait for work
#: for ever, holding its standard output and error open (a pipeline would never end).
PARENT_CHECK_SECONDS = 1.0


#: How often a batch that is shutting its workers down looks whether one of them has died.
DEATH_CHECK_SECONDS = 0.05


def cpu_count() -> int:
    """The number of CPUs this process may run on (its affinity mask where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


#: ``spawn``: safe in a parent that runs threads (``fork`` is not), and, unlike ``forkserver``, the
#: workers are children of this process, so their CPU time is accounted to it and nothing outlives it.
#: Starting a worker costs one interpreter start and one import of the package, paid once per call.
START_METHOD = "spawn"


def _check_workers(workers: int | None) -> int:
    if workers is None:
        return 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise FormatError(f"workers must be a positive integer, 0 (one per CPU) or None, got {workers!r}")
    return cpu_count() if workers == 0 else workers


def _check_count(name: str, value: int | None) -> None:
    """``value``, a keyword of the batch functions, is ``None`` or an integer of at least 1."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise FormatError(f"{name} must be a positive integer or None, got {value!r}")


def _check_iterable(items: Any, name: str) -> None:
    """``items`` (the batch's ``name``) can be iterated: the error that it cannot names it, before any work.

    Told by its type, as ``iter()`` tells it, without calling its ``__iter__``: that may start work
    (a fetch, a loader), and an iterable may be iterable only once.
    """
    kind = type(items)
    if getattr(kind, "__iter__", None) is None and not hasattr(kind, "__getitem__"):
        raise InvalidInputError(name, f"expected an iterable, got {type_name(items)}")


def _check_errors(errors: str) -> None:
    if errors not in ("raise", "collect"):
        raise FormatError(f"errors must be 'raise' or 'collect', got {errors!r}")


def _chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


# The job of a worker process, installed once by the pool's initializer.
_WORKER_JOB: Callable[[list[Any]], list[Any]] | None = None


def _exit_when_orphaned(parent: int) -> None:
    """A worker process's watch: its end (``os._exit``) once ``parent``, the process that started it,
    is gone (it is then another's child)."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(1)


def _install_job(pickled_job: bytes, parent: int, blocked: frozenset[int], forked: bool) -> None:
    global _WORKER_JOB
    # ``parent`` as the parent gave it: one killed while this process started has already been
    # replaced as its parent, which is what os.getppid() would say here.
    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=_exit_when_orphaned, args=(parent,), name="parent-watch", daemon=True).start()
    _WORKER_JOB = pickle.loads(pickled_job)
    # A forked worker has its parent's Python signal handlers, which are the parent's business (one
    # that stops the parent's run would raise in the worker): here each signal does what it does by
    # default. Ctrl-C reaches the whole process group: the parent handles it (and stops the pool); a
    # worker that also raised KeyboardInterrupt would only print a traceback per worker. The worker
    # started with these signals blocked (:func:`_submitted`): one that came meanwhile is acted on here.
    if forked:
        for signum in blocked - {signal.SIGINT}:
            signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, blocked)


def _handled_signals() -> frozenset[int]:
    """SIGINT and the signals this process handles in Python: those a new worker process starts with
    blocked, until it has made them its own (:func:`_install_job`). Empty where signals cannot be blocked."""
    if not hasattr(signal, "pthread_sigmask"):
        return frozenset()
    handled = {signum for signum in signal.valid_signals() if callable(_handler(signum))}
    return frozenset(handled | {signal.SIGINT})


def _handler(signum: int) -> Any:
    try:
        return signal.getsignal(signum)
    except (ValueError, OSError):  # (a number valid_signals lists that this platform will not name)
        return None


def _submitted(pool: ProcessPoolExecutor, blocked: frozenset[int], function: Callable[..., Any],
               *args: Any) -> Future[Any]:
    """``pool.submit(function, *args)``, with the ``blocked`` signals (:func:`_handled_signals`) blocked meanwhile.

    A submit may start a worker process, which inherits the mask: a Ctrl-C while it imports the
    package, before :func:`_install_job` ignores SIGINT, would otherwise print its traceback, and a
    forked worker would run its parent's handler of a signal sent to the process group. Here the
    signal waits the few microseconds until the mask is restored. (As the standard library starts
    its resource tracker.)
    """
    if not blocked:
        return pool.submit(function, *args)
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    try:
        return pool.submit(function, *args)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _run_installed_job(pickled_chunk: bytes) -> list[Any]:
    assert _WORKER_JOB is not None, "worker started without a job"
    return _WORKER_JOB(pickle.loads(pickled_chunk))


def _pickled(value: Any) -> bytes | None:
    """``value`` pickled, or ``None`` when it cannot be (an unpicklable or too deeply nested item).

    (With the pickler's memo, though it is most of the cost of pickling a chunk of conversations:
    without it an object met twice is written twice, and a structure that shares its parts (``x =
    [x, x]`` forty times over) would take for ever.)
    """
    try:
        return pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    except Exception:  # TypeError, PicklingError, AttributeError, RecursionError, ...: whatever pickling raises
        return None


def ordered_map(
    job: Callable[[list[T]], list[R]],
    items: Iterable[T],
    *,
    workers: int | None = None,
    chunk_size: int | None = None,
    max_in_flight: int | None = None,
    serial_first: float = 0.0,
    start_method: str = START_METHOD,
) -> Iterator[R]:
    """``job`` applied to ``items`` chunk by chunk; yields ``job``'s results in input order.

    ``job(chunk)`` must return one result per item of ``chunk``, in order. With ``workers`` ``None``
    or 1 it runs in this process; with ``workers > 1`` (0: one per CPU) in this process and
    ``workers - 1`` worker processes, this one taking the next chunk whenever the oldest is not back
    yet: ``job`` is pickled once and sent to each worker process, each chunk it gets is pickled and sent;
    a chunk that cannot be pickled (an item holding a lambda, or nested too deeply) is run here
    instead, and a ``job`` that cannot be pickled runs every chunk here, so the results never
    depend on ``workers``; chunks are cut into pieces to share them (:class:`_Sharing`). At most
    ``max_in_flight`` chunks' worth of items (default three chunks per worker) are taken and not yet
    yielded, so memory stays bounded whatever the length of ``items``. An exception raised by
    ``job`` is raised here, after the results of every piece before it were yielded (with workers,
    ``job`` may be given any piece of a chunk); the remaining chunks are cancelled.
    Closing the iterator early cancels the chunks not yet started and stops the workers.
    ``serial_first``: with ``workers > 1``, chunks run in this process until that many seconds have
    passed, and workers start only for the chunks left then (none: none start).
    ``start_method``: how worker processes start (:data:`START_METHOD`); ``"fork"`` only from a
    process that runs no other thread.
    """
    n_workers = _check_workers(workers)
    _check_count("chunk_size", chunk_size)
    _check_count("max_in_flight", max_in_flight)
    if chunk_size is None:
        chunk_size = _auto_chunk_size(items, n_workers)
    limit = max_in_flight if max_in_flight is not None else IN_FLIGHT_PER_WORKER * n_workers
    left: Iterator[list[T]] | None = _chunks(items, chunk_size)
    if n_workers == 1 or serial_first > 0:
        deadline = time.perf_counter() + serial_first if n_workers > 1 else math.inf
        left = yield from _serial_prefix(job, left, deadline)
    if left is None:
        return
    chunks = left
    pickled_job = _pickled(job)
    if pickled_job is None:  # (tools that cannot be pickled): the results are the same here
        for chunk in chunks:
            yield from job(chunk)
        return
    blocked = _handled_signals()
    pool = _pool(n_workers - 1, pickled_job, start_method, blocked)
    try:
        sharing = _Sharing(pool, job, chunks, chunk_size, limit, POOL_QUEUE_PER_PROCESS * (n_workers - 1), blocked)
        yield from sharing.results()
    finally:
        # Normal end: nothing pending. Error or early close: drop what has not started.
        _shut_down(pool)


def _shut_down(pool: ProcessPoolExecutor) -> None:
    """Shut ``pool`` down, the pieces not started dropped, and wait for its workers to end.

    A worker killed (SIGKILL, the out-of-memory killer) while it waited for work held the lock of the
    pool's queue: the other workers wait on it for ever, and so does a shutdown that asks them to stop,
    which the pool makes when the death comes as the batch ends, before the pool has seen it. Here a
    worker's death, once seen, ends every other worker.
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    results = getattr(pool, "_result_queue", None)
    pool.shutdown(wait=manager is None, cancel_futures=True)
    if manager is None:
        return
    while manager.is_alive():
        manager.join(DEATH_CHECK_SECONDS)
        if any(process.exitcode not in (None, 0) for process in processes):
            for process in processes:
                if process.exitcode is None:
                    process.terminate()
    if results is not None:  # (as the pool's own shutdown with wait does: its pipes closed now)
        results.close()


def _pool(processes: int, pickled_job: bytes, start_method: str, blocked: frozenset[int]) -> ProcessPoolExecutor:
    """A pool of ``processes`` worker processes, not yet started, each to take ``pickled_job`` first."""
    context = multiprocessing.get_context(start_method)
    forked = context.get_start_method() == "fork"
    if forked:
        # A forked worker flushes the standard streams it inherited when it ends: what this process
        # had not yet written would be written twice.
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.flush()
    return ProcessPoolExecutor(processes, mp_context=context, initializer=_install_job,
                               initargs=(pickled_job, os.getpid(), blocked, forked))


def _done(job: Callable[[list[T]], list[R]], chunk: list[T]) -> Future[list[R]]:
    """``job(chunk)`` run here, as a finished future: its error is raised when the chunk's turn comes."""
    done: Future[list[R]] = Future()
    try:
        done.set_result(job(chunk))
    except Exception as error:  # raised where a worker's error would be: when this chunk's turn comes
        done.set_exception(error)
    return done


def _started() -> bool:
    """A worker process's first job: done once one has started and taken its job."""
    return True


class _Costs:
    """What the batch's items cost this process: in CPU seconds, run here or sent to a worker process
    (``own``: this process's CPU, every thread's, while the batch had it; what was spent neither
    running pieces here nor taking the input (``taking``) was spent sending pieces and receiving
    their results); in wall seconds, this process alone (the pieces it ran before it sent any) and
    shared (the batch's time since it sent one, and the items yielded since)."""

    __slots__ = ("alone", "alone_items", "here", "here_items", "own", "sent_items", "shared", "shared_items",
                 "stopped", "taking")

    def __init__(self) -> None:
        self.here = self.own = self.taking = self.alone = self.shared = 0.0
        self.here_items = self.sent_items = self.alone_items = self.shared_items = 0
        self.stopped = False

    def sending_pays(self) -> bool:
        """Whether to send the next piece: the first one (what sending costs is not known before),
        then none until one was run here, then every one for :data:`SHARED_SECONDS` of the batch's
        time, then while sending an item costs less than :data:`SEND_SHARE` of running it here and
        the batch yields more items a second than this process did alone (where cores are shared,
        a worker slows this process down by more than its CPU time tells). Once it does not pay, it
        never does again in this batch. ``SEND_SHARE`` infinite: always."""
        if self.sent_items == 0 or math.isinf(SEND_SHARE):
            return True
        if self.here_items == 0 or self.stopped:
            return False
        if self.shared < SHARED_SECONDS:  # (too soon: what starting the pool cost would count as sending)
            return True
        slower = self.alone_items > 0 and self.shared_items * self.alone < self.alone_items * self.shared
        sending = self.own - self.here - self.taking
        self.stopped = slower or sending * self.here_items >= SEND_SHARE * self.here * self.sent_items
        return not self.stopped

    def piece_size(self, chunk_size: int) -> int:
        """How many items make :data:`PIECE_SECONDS` of work here (a whole chunk until that is known)."""
        if self.here_items == 0 or self.here <= 0.0:
            return chunk_size
        return max(1, min(chunk_size, int(PIECE_SECONDS * self.here_items / self.here)))


class _Sharing(Generic[T, R]):
    """The chunks' results in order, the work shared between the pool's processes and this one.

    The chunks are cut into pieces of about :data:`PIECE_SECONDS` of work (measured here), so that
    the processes stay even and the last pieces are short. This process is one of the workers: it
    runs every piece until a worker process has started (a piece sent earlier would wait for it),
    then keeps each worker process ``pool_limit`` pieces ahead while sending pays
    (:meth:`_Costs.sending_pays`), and while the oldest piece is not back, runs the next one itself
    rather than wait; once none is left to take, it takes back the newest piece no worker has started.
    Its share costs nothing to send or receive, and its CPU would otherwise sit idle. At most
    ``limit`` chunks' worth of items are taken and not yet yielded. Per call.
    """

    def __init__(self, pool: ProcessPoolExecutor, job: Callable[[list[T]], list[R]], chunks: Iterator[list[T]],
                 chunk_size: int, limit: int, pool_limit: int, blocked: frozenset[int]) -> None:
        self.pool = pool
        self.blocked = blocked  # (while a piece is submitted: see _submitted)
        self.job = job
        self.chunks: Iterator[list[T]] | None = chunks  # None: all taken
        self.cut: list[T] = []  # the chunk being cut into pieces: from ``cut_at`` on, what is left of it
        self.cut_at = 0
        self.chunk_size = chunk_size  # (the most items a chunk of ``chunks`` holds)
        self.in_hand = 0  # items taken and not yet yielded, the piece being cut included
        self.limit = limit
        self.pool_limit = pool_limit
        self.started = _submitted(pool, blocked, _started)
        # Each piece's future, with the piece itself while a worker process has it (to take it back).
        self.pending: deque[tuple[Future[list[R]], list[T] | None]] = deque()
        self.costs = _Costs()
        self.resumed, self.resumed_wall = time.process_time(), time.perf_counter()

    def results(self) -> Generator[R, None, None]:
        pending = self.pending
        while True:
            self._send()
            if not (pending and pending[0][0].done()) and (self._run_next_here() or self._take_back()):
                continue
            if not pending:
                return
            done = pending.popleft()[0].result()
            self.in_hand -= len(done)
            self._clock()
            if self.costs.sent_items:
                self.costs.shared_items += len(done)
            yield from done
            # (the consumer's time between results is not the batch's)
            self.resumed, self.resumed_wall = time.process_time(), time.perf_counter()

    def _clock(self) -> None:
        """Counts this process's CPU since the batch last had it, and the time shared since."""
        now, wall = time.process_time(), time.perf_counter()
        self.costs.own += now - self.resumed
        if self.costs.sent_items:
            self.costs.shared += wall - self.resumed_wall
        self.resumed, self.resumed_wall = now, wall

    def _send(self) -> None:
        """Pieces to the worker processes, once one has started, up to ``pool_limit`` not back."""
        if not self.started.done():
            return
        self.started.result()  # (raises when the pool broke before its first worker started)
        self._clock()
        in_pool = sum(1 for future, piece in self.pending if piece is not None and not future.done())
        while in_pool < self.pool_limit and self.costs.sending_pays():
            piece = self._next()
            if piece is None:
                return
            pickled = _pickled(piece)
            if pickled is None:  # (cannot travel: run here, with the same results)
                self.pending.append((self._here(piece), None))
                continue
            self.pending.append((_submitted(self.pool, self.blocked, _run_installed_job, pickled), piece))
            in_pool += 1
            self.costs.sent_items += len(piece)

    def _run_next_here(self) -> bool:
        """Runs the next piece here, if one is left and the limit allows."""
        piece = self._next()
        if piece is None:
            return False
        self.pending.append((self._here(piece), None))
        return True

    def _take_back(self) -> bool:
        """Runs here the newest piece no worker process has started (cancelled in the pool), if any,
        once no input is left: the batch's end then waits for no worker process that has not begun.
        (Earlier, the worker keeps its pieces: taking them back would leave it idle and this process
        with more to do.)"""
        if self.chunks is not None or self.cut_at < len(self.cut):
            return False
        for k in range(len(self.pending) - 1, -1, -1):
            future, piece = self.pending[k]
            if piece is not None and future.cancel():
                self.pending[k] = (self._here(piece), None)
                return True
        return False

    def _here(self, piece: list[T]) -> Future[list[R]]:
        costs = self.costs
        began, began_wall = time.thread_time(), time.perf_counter()  # (the pool's threads meanwhile are sending)
        done = _done(self.job, piece)
        costs.here += time.thread_time() - began
        costs.here_items += len(piece)
        if costs.sent_items == 0:
            costs.alone += time.perf_counter() - began_wall
            costs.alone_items += len(piece)
        return done

    def _next(self) -> list[T] | None:
        """The next piece (``None``: none left, or the limit is reached)."""
        if self.cut_at == len(self.cut):
            if self.chunks is None or self.in_hand + self.chunk_size > self.limit * self.chunk_size:
                return None
            began = time.thread_time()  # (reading the input is no cost of sending)
            chunk = next(self.chunks, None)
            self.costs.taking += time.thread_time() - began
            if chunk is None:
                self.chunks = None
                return None
            self.cut, self.cut_at = chunk, 0
            self.in_hand += len(chunk)
        size = self.costs.piece_size(self.chunk_size)
        piece = self.cut[self.cut_at:self.cut_at + size]  # (the rest not copied for each piece)
        self.cut_at += len(piece)
        if self.cut_at == len(self.cut):  # (its items are the pieces' now: held no longer here)
            self.cut, self.cut_at = [], 0
        return piece


def _serial_prefix(job: Callable[[list[T]], list[R]], chunks: Iterator[list[T]] | None,
                   deadline: float) -> Generator[R, None, Iterator[list[T]] | None]:
    """Runs chunks here until ``deadline`` has passed; returns the chunks left (``None``: none)."""
    if chunks is None:
        return None
    for chunk in chunks:
        yield from job(chunk)
        if time.perf_counter() >= deadline:
            following = next(chunks, None)  # (none left: no worker is started for nothing)
            return None if following is None else itertools.chain((following,), chunks)
    return None


def _auto_chunk_size(items: Iterable[Any], workers: int) -> int:
    if workers == 1 or not isinstance(items, Sequence):
        return DEFAULT_CHUNK_SIZE
    # A known length: about eight chunks per worker balances the load without tiny chunks.
    return max(1, min(DEFAULT_CHUNK_SIZE * 4, -(-len(items) // (workers * 8))))


def _raise_or_collect(results: Iterator[Any], errors: ErrorMode, items: str, own: str) -> Iterator[Any]:
    """The results, each error with its item's index: collected as it is (``index`` set), or
    raised naming the item (:func:`~prompt_formats.errors.in_batch`; ``items``, ``own`` as there)."""
    if errors == "collect":
        return _indexed(results)
    return _raise_first(results, items, own)


def _indexed(results: Iterator[Any]) -> Iterator[Any]:
    for index, result in enumerate(results):
        if isinstance(result, FormatError):
            if result.index is not None:  # one error object in two places keeps the first index
                result = copy.copy(result)
            result.index = index
        yield result


def _raise_first(results: Iterator[Any], items: str, own: str) -> Iterator[Any]:
    try:
        for index, result in enumerate(results):
            if isinstance(result, FormatError):
                raise in_batch(result, index, items, own) from result
            yield result
    finally:
        # Stops the workers now rather than when the suspended generator is garbage-collected.
        close = getattr(results, "close", None)
        if close is not None:
            close()


def _outcomes(
    each: Callable[..., R], chunk: list[Any], args: tuple[Any, ...], keywords: Mapping[str, Any]
) -> list[R | FormatError]:
    """``each(item, *args, **keywords)`` for the chunk's items, in order; a :class:`FormatError`
    takes its item's place."""
    out: list[R | FormatError] = []
    for item in chunk:
        try:
            out.append(each(item, *args, **keywords))
        except FormatError as error:
            out.append(error)
    return out


class _ChunkJob:
    """A job's pickling: its state is the tuple of its slots' values (one small pickle per worker)."""

    __slots__: tuple[str, ...] = ()

    def __getstate__(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self.__slots__, state, strict=True):
            setattr(self, name, value)


class RenderJob(_ChunkJob):
    """Renders a chunk of conversations with one format, one toolset and one set of options.

    Picklable; a :class:`FormatError` for a conversation takes that conversation's place in the result.
    """

    __slots__ = ("add_generation_prompt", "fmt", "options", "tools")

    def __init__(
        self, fmt: FormatInterface, tools: Tools, add_generation_prompt: Any, options: Mapping[str, Any]
    ) -> None:
        self.fmt = fmt
        self.tools = tools
        self.add_generation_prompt = add_generation_prompt
        self.options = dict(options)

    def __call__(self, chunk: list[Conversation]) -> list[str | FormatError]:
        return _outcomes(self.fmt.render, chunk, (self.tools, self.add_generation_prompt), self.options)


class ParseJob(_ChunkJob):
    """Parses a chunk of completions with one format, one toolset and one parse context. Picklable.

    ``id_factory``, when given, is passed to ``fmt.parse`` (each worker process has its own copy).
    """

    __slots__ = ("context", "fmt", "id_factory", "tools")

    def __init__(
        self,
        fmt: FormatInterface,
        tools: Tools,
        context: Mapping[str, Any],
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        self.fmt = fmt
        self.tools = tools
        self.context = dict(context)
        self.id_factory = id_factory

    def __call__(self, chunk: list[str]) -> list[AssistantReply | FormatError]:
        context = self.context
        if self.id_factory is not None:
            context = {**context, "id_factory": self.id_factory}
        return _outcomes(self.fmt.parse, chunk, (self.tools,), context)


def iter_render(
    fmt: FormatInterface,
    conversations: Iterable[Conversation],
    tools: Tools = None,
    add_generation_prompt: bool | None = None,
    *,
    workers: int | None = None,
    errors: ErrorMode = "raise",
    chunk_size: int | None = None,
    **options: Any,
) -> Iterator[str | FormatError]:
    """Yield ``fmt.render(messages, tools, add_generation_prompt, **options)`` for each conversation, in order.

    ``add_generation_prompt`` is passed as given; ``None`` (unset) is the format's default.

    The streaming form of :func:`render_batch`: ``conversations`` may be an iterator of any length,
    and memory stays bounded (see :func:`ordered_map`). ``tools`` are prepared once, when
    :func:`~prompt_formats.model.tools.prepare_tools` takes them (otherwise each render gets them as given).
    With ``errors="raise"`` the first conversation that fails raises its :class:`FormatError` (after
    every earlier prompt was yielded), of the same class, naming the conversation: ``index`` set and
    the text ``conversations[1].messages[0].role: …`` (see :func:`~prompt_formats.errors.in_batch`;
    the original error is its ``__cause__``); with ``"collect"`` the error ``render`` raised is
    yielded in its place, its ``index`` set, and the others are still rendered. Options are checked
    before anything is rendered.
    """
    _check_errors(errors)
    _check_workers(workers)
    _check_count("chunk_size", chunk_size)
    _check_iterable(conversations, "conversations")
    fmt.check_options(options)
    job = RenderJob(fmt, shared_tools(tools), add_generation_prompt, options)
    results = ordered_map(job, conversations, workers=workers, chunk_size=chunk_size,
                          serial_first=SERIAL_FIRST_SECONDS)
    return _raise_or_collect(results, errors, "conversations", "messages")


def iter_parse(
    fmt: FormatInterface,
    completions: Iterable[str],
    tools: Tools = None,
    *,
    workers: int | None = None,
    errors: ErrorMode = "raise",
    chunk_size: int | None = None,
    id_factory: Callable[[], str] | None = None,
    **context: Any,
) -> Iterator[AssistantReply | FormatError]:
    """Yield ``fmt.parse(completion, tools, **context)`` for each completion, in order (see :func:`iter_render`).

    Tool-call ids are the parser's (random by default); ``id_factory`` is passed to every ``parse``
    call — with ``workers > 1`` each worker has its own copy of it, so it must be picklable and ids
    should not depend on its call count. A raised error names the completion as a render error
    names the conversation (``completions[2]: expected a string, got int``). A format without a
    reply parser raises
    :class:`NotImplementedError` before anything is parsed.
    """
    _check_errors(errors)
    _check_workers(workers)
    _check_count("chunk_size", chunk_size)
    _check_iterable(completions, "completions")
    fmt.check_options(context, fmt.parse_options)
    shared = shared_tools(tools)
    # Fail here, not inside a worker, when the format cannot parse at all.
    if not fmt.parses:
        raise NotImplementedError(f"format {fmt.name!r} has no reply parser")
    job = ParseJob(fmt, shared, context, id_factory)
    results = ordered_map(job, completions, workers=workers, chunk_size=chunk_size,
                          serial_first=SERIAL_FIRST_SECONDS)
    return _raise_or_collect(results, errors, "completions", "completion")


def _listed(iterate: Callable[P, Iterator[T]], name: str, doc: str) -> Callable[P, list[T]]:
    """``iterate``'s results as one list: its signature, checks and errors, under ``name`` and ``doc``.

    One signature for the iterating and the listing form of each batch function, so they cannot drift.
    """

    @functools.wraps(iterate)
    def listed(*args: P.args, **kwargs: P.kwargs) -> list[T]:
        return list(iterate(*args, **kwargs))

    listed.__name__ = listed.__qualname__ = name  # pickled by reference under its module-level name
    listed.__doc__ = doc
    return listed


render_batch = _listed(iter_render, "render_batch", """The list of :func:`iter_render`'s results: one prompt
    (or, with ``errors="collect"``, error) per conversation.

    Takes :func:`iter_render`'s arguments. The result is the same, element for element, whatever
    ``workers`` is.
    """)

parse_batch = _listed(iter_parse, "parse_batch", """The list of :func:`iter_parse`'s results; the same whatever
    ``workers`` is, tool-call ids aside. Takes :func:`iter_parse`'s arguments.
    """)
