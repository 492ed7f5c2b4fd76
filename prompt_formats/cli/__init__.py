"""The ``prompt-formats`` command: render and parse JSONL files of chat requests and completions.

::

    prompt-formats render --format NAME [--add-generation-prompt] [--keep-tool-arguments] [--option KEY=VALUE ...]
                          [--spans] [--tokenizer TOKENIZER.json|MODEL_DIR|HUB_NAME] IN.jsonl [-o OUT.jsonl]
    prompt-formats parse  --format NAME [--option KEY=VALUE ...] IN.jsonl [-o OUT.jsonl]
    prompt-formats formats [--json]

Record shapes are described in :mod:`prompt_formats.records`. ``-`` is standard input or output.

Exit status: 0 when every record was rendered (parsed); 1 when at least one record failed (each is
reported on standard error or in ``--errors FILE``; the others are in the output, unless ``--fail-fast``
stopped the run, which then writes no output file); 2 for a usage error or when the run could not be
carried out (unknown format, unreadable input, unwritable output, a worker process that died, an
internal error); 130 when interrupted; 128 + the signal's number when stopped by SIGTERM (143), SIGHUP
(129) or another stopping signal (:mod:`prompt_formats.cli.signals`); 141, without a message,
when the reader of standard output (or error) went away (``| head``), the status a shell shows for a
command stopped by SIGPIPE. A regular output file (``-o FILE``, ``--errors FILE``) is written under a
temporary name in the same directory and renamed into place only when the run ends normally, so a crash
never leaves a half-written file under the final name; a device or FIFO is written directly (see
:mod:`prompt_formats.cli.files`).
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import io
import itertools
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import IO, Any, NamedTuple, cast

import orjson

from ..format.registry import available_formats, get_format
from ..records import BlockResult, RecordParser, RecordRenderer
from .allocator import keep_freed_memory
from .arguments import BLOCK_SIZE, build_parser
from .files import OutputFile, UsageError, refuse_same_file, write_stderr
from .progress import Progress, terminal_width
from .settings import make_format, make_job, settle_format
from .signals import Stopped, StopSignals, caught_elsewhere, shield_resource_tracker, stop_on_signals
from .spool import Spool, Spooled

__all__ = ["BLOCK_SIZE", "build_parser", "main"]

EXIT_OK = 0
EXIT_RECORDS_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
#: 128 + SIGPIPE: the status a shell shows for `cat` or `grep` stopped by a closed pipe.
EXIT_BROKEN_PIPE = 141


# ---------------------------------------------------------------------------------------------------
# Input.


class FileRange(NamedTuple):
    """A block of the input file that a worker reads itself (``os.pread``), instead of receiving it."""

    path: str
    offset: int
    length: int


class BlockReader:
    """A binary input cut into blocks of whole lines, each with the 1-based number of its first line.

    A UTF-8 byte-order mark at the start of the input is skipped (as ``utf-8-sig`` reads a file).

    Workers split the blocks into lines themselves, so the parent process does no per-record work.
    With ``ranges=True`` and a regular file, the blocks are :class:`FileRange` s: the parent reads
    the file only to count lines, and each worker reads its blocks from the file directly, which
    costs far less than sending them through a pipe.
    """

    def __init__(self, path: str, block_size: int, ranges: bool = False) -> None:
        self.path = path
        self.block_size = block_size
        self.bytes_read = 0
        self.total: int | None = None
        if path == "-":
            if sys.stdin is None:  # closed when the command started (``<&-``)
                raise UsageError("cannot read standard input: it is closed")
            self._stream: IO[bytes] = sys.stdin.buffer
        else:
            try:
                self._stream = open(path, "rb")  # noqa: SIM115 (closed by close())
            except OSError as exc:
                raise UsageError(f"cannot read {path}: {exc.strerror}") from None
        with contextlib.suppress(OSError, ValueError):
            stat = os.fstat(self._stream.fileno())
            # Only a named file can be re-read by the workers: "-" is stdin, whatever it is redirected from.
            if stat.st_size and path != "-" and os.path.isfile(path):
                self.total = stat.st_size
        self.ranges = ranges and self.total is not None

    def __iter__(self) -> Iterator[tuple[int, bytes | FileRange]]:
        return self._ranges() if self.ranges else self._blocks()

    def _blocks(self) -> Iterator[tuple[int, bytes | FileRange]]:
        line = 1
        read = self._stream.read
        readline = self._stream.readline
        first = True
        # read(n) allocates n bytes first: no more than the file holds (a huge --block-size, a small file).
        size = min(self.block_size, self.total) if self.total else self.block_size
        while True:
            block = _read_up_to(read, size)
            if not block:
                return
            if not block.endswith(b"\n"):
                block += readline()  # a BOM has no newline: the first block holds all of one, if any
            if first and block.startswith(codecs.BOM_UTF8):
                # As Python's utf-8-sig reads a file: a byte-order mark at its start is no part of the text
                # (Windows editors write one). Anywhere else it stays in the line, whose error it is.
                block = block[len(codecs.BOM_UTF8):]
                self.bytes_read += len(codecs.BOM_UTF8)
            first = False
            if not block:
                continue
            self.bytes_read += len(block)
            yield line, block
            line += block.count(b"\n")

    def _ranges(self) -> Iterator[tuple[int, bytes | FileRange]]:
        """The blocks as :class:`FileRange` s: the file is read into one buffer, reused, only to find
        where the blocks' last lines end and to count the lines (the workers read the bytes)."""
        path = os.path.abspath(self.path)
        # (no bigger than the file: a huge --block-size costs no memory for a small file)
        buffer = bytearray(min(self.block_size, self.total or 1))
        readinto = cast(io.BufferedReader, self._stream).readinto  # (a named file: opened by open(path, "rb"))
        line, filled, first = 1, 0, True
        while True:
            with memoryview(buffer) as view:
                read = readinto(view[filled:])
            filled += read
            if first and (filled >= len(codecs.BOM_UTF8) or not read):
                first = False  # a byte-order mark at the start is skipped (see _blocks)
                if buffer.startswith(codecs.BOM_UTF8):
                    del buffer[: len(codecs.BOM_UTF8)]
                    buffer.extend(codecs.BOM_UTF8)  # (the same size)
                    filled -= len(codecs.BOM_UTF8)
                    self.bytes_read += len(codecs.BOM_UTF8)
            end = filled if not read else buffer.rfind(b"\n", 0, filled) + 1
            if not end:
                if not read:  # the end of the file, and nothing left
                    return
                if filled == len(buffer):  # a line longer than the buffer: a bigger buffer for it
                    buffer.extend(bytes(len(buffer)))
                continue
            first = False  # only the file's first bytes can be its byte-order mark
            yield line, FileRange(path, self.bytes_read, end)
            line += _count_lines(buffer, end)
            self.bytes_read += end
            buffer[: filled - end] = buffer[end:filled]
            filled -= end
            if len(buffer) > self.block_size > filled:  # back to the block size after a long line
                del buffer[self.block_size:]

    def close(self) -> None:
        if self.path != "-":  # (standard input stays open: it is this process's)
            self._stream.close()


#: Lines at least this long (on average, over a block's first :data:`_SAMPLE_LINES`) are counted by
#: finding each: ``find`` skips a line at the stride of ``memchr``, about ten times faster than
#: ``count`` reads its bytes, but costs about 0.1 µs a line, which ``count`` does not.
_LONG_LINE = 1024
_SAMPLE_LINES = 8


def _count_lines(buffer: bytearray, end: int) -> int:
    """The newlines in ``buffer[:end]``, found one by one in a block of long lines, counted otherwise."""
    find = buffer.find
    at = lines = 0
    while lines < _SAMPLE_LINES:
        at = find(b"\n", at, end) + 1
        if not at:
            return lines
        lines += 1
    if at < _SAMPLE_LINES * _LONG_LINE:
        return lines + buffer.count(b"\n", at, end)
    while at := find(b"\n", at, end) + 1:
        lines += 1
    return lines


#: The most a single read asks for: read(n) reserves n bytes before any arrives, so a block of a
#: stream (whose size is not known) is read in pieces of this size, and holds only what came.
_READ_PIECE = 1 << 24


def _read_up_to(read: Callable[[int], bytes], size: int) -> bytes:
    """``size`` bytes from ``read``, or fewer at the end of the input. (read1 would return short reads
    from a pipe; read(n) waits for n bytes or the end.)"""
    if size <= _READ_PIECE:
        return read(size)
    pieces: list[bytes] = []
    while size and (piece := read(min(size, _READ_PIECE))):
        pieces.append(piece)
        size -= len(piece)
    return b"".join(pieces)


#: A block's result as a worker hands it back: its output in the result, or left in the spool.
Done = tuple[BlockResult, "Spooled | None"]


class WorkerJob:
    """What each worker runs: read a block (given, or a :class:`FileRange` of the input) and process its records.

    Picklable; the input file is opened once per worker. With a ``spool``, a worker process leaves
    each block's output in it and hands back only the rest of the result; the blocks this process
    runs itself keep theirs.
    """

    def __init__(self, job: RecordRenderer | RecordParser, spool: Spool | None = None, parent: int = 0) -> None:
        self.job = job
        self.spool = spool
        self.parent = parent or os.getpid()
        self._files: dict[str, int] = {}

    def __getstate__(self) -> tuple[RecordRenderer | RecordParser, Spool | None, int]:
        return self.job, self.spool, self.parent

    def __setstate__(self, state: tuple[RecordRenderer | RecordParser, Spool | None, int]) -> None:
        keep_freed_memory()  # (a worker process, taking its job: it runs many blocks, as the command does)
        self.__init__(*state)  # type: ignore[misc]

    def close(self) -> None:
        """Close the input files this process opened to read its blocks."""
        for fd in self._files.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._files.clear()

    def _read(self, source: FileRange) -> bytes:
        fd = self._files.get(source.path)
        if fd is None:
            fd = self._files[source.path] = os.open(source.path, os.O_RDONLY)
        pieces = []
        offset, remaining = source.offset, source.length
        while remaining:
            piece = os.pread(fd, remaining, offset)
            if not piece:
                raise OSError(f"{source.path}: the file became shorter during the run")
            pieces.append(piece)
            offset += len(piece)
            remaining -= len(piece)
        return b"".join(pieces)

    def __call__(self, chunk: list[tuple[int, bytes | FileRange]]) -> list[Done]:
        results = [
            self.job.process_block(first_line, source if isinstance(source, bytes) else self._read(source))
            for first_line, source in chunk
        ]
        spool = self.spool
        if spool is None or os.getpid() == self.parent:
            return [(result, None) for result in results]
        return [(result._replace(output=b""), spool.put(result.output)) for result in results]


# ---------------------------------------------------------------------------------------------------
# Commands.


def _run(args: argparse.Namespace, stop: StopSignals) -> int:
    refuse_same_file(args.output, args.errors)
    settle_format(args)
    fmt = make_format(args.format, args.config)
    job = make_job(args, fmt)
    workers = _cpu_count() if args.workers == 0 else args.workers
    reader = BlockReader(args.input, args.block_size, ranges=workers > 1)
    if reader.total is None or reader.total > args.block_size:  # more than one block (or not known)
        keep_freed_memory()
    outputs: list[OutputFile] = []
    progress = Progress(
        "rendered" if args.command == "render" else "parsed",
        reader,
        enabled=not args.quiet and sys.stderr is not None
        and (args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty())),
        write=write_stderr,
        width=lambda: terminal_width(sys.stderr.fileno()),
    )
    committed = False
    spool: Spool | None = None
    worker_job: WorkerJob | None = None
    results: Generator[Done, None, None] | None = None
    try:
        with stop.held():  # a file created is a file noted, so that the cleanup below removes it
            if workers > 1:
                spool = Spool()  # named before it is made: a Ctrl-C (not held) between the two leaves nothing
                spool.make()
            worker_job = WorkerJob(job, spool)
            results = ordered_map(worker_job, reader, workers=workers, chunk_size=1)
            output = OutputFile(args.output)
            outputs.append(output)
            error_file = OutputFile(args.errors) if args.errors else None
            if error_file is not None:
                outputs.append(error_file)
        for out in outputs:
            out.open()  # (a FIFO's open waits for its reader: not held, so that a signal stops the run)
        done, failed = _write_results(args, results, spool, output, error_file, progress)
        with stop.held():  # every file is put in place, or none
            _finish(output, error_file, stopped=bool(args.fail_fast and failed))
            committed = True
    finally:
        with stop.held():
            if stop.received is not None:
                stop.end_workers()  # their work is not wanted: stop now rather than after their blocks
            if results is not None:
                results.close()  # the workers' pool is shut down here, whatever ended the run
            if spool is not None:
                spool.remove()  # after the workers: none writes into it any more
            reader.close()
            if worker_job is not None:
                worker_job.close()
            if not committed:
                progress.clear()
                for out in outputs:
                    out.discard()
    if not args.quiet and sys.stderr is not None:  # (closed: the summary, which reports no failure, is not missed)
        write_stderr(_summary(args, done, failed, time.monotonic() - progress.start, workers, output.direct))
    return EXIT_RECORDS_FAILED if failed else EXIT_OK


def _write_results(
    args: argparse.Namespace, results: Iterator[Done], spool: Spool | None, output: OutputFile,
    error_file: OutputFile | None, progress: Progress,
) -> tuple[int, int]:
    """Write each block's records and reports; ``(records done, records failed)``."""
    done = failed = 0
    for result, spooled in results:
        last = args.fail_fast and result.failed
        if last:
            # Stop at the first failed record: what came before it, then its report, nothing after.
            done += result.first_error + 1
            records = result.output if spooled is None or spool is None else spool.take(spooled)
            output.write(records[: result.before_error])
            reports = result.errors[: result.errors.index(b"\n") + 1]
            failed += 1
        else:
            done += result.records
            if spooled is None or spool is None:
                output.write(result.output)
            else:
                spool.take_into(spooled, output)
            reports = result.errors
            failed += result.failed
        if error_file is not None:
            error_file.write(reports)
        elif reports:
            progress.clear()
            for report in reports.splitlines():
                _report_error(report)
        if last:
            break
        progress.update(done, failed)
    progress.update(done, failed, force=True)
    progress.clear()
    return done, failed


def _cpu_count() -> int:
    from ..format.batch import cpu_count

    return cpu_count()


def ordered_map(
    job: WorkerJob, items: Iterable[tuple[int, bytes | FileRange]], *, workers: int, chunk_size: int,
) -> Generator[Done, None, None]:
    """:func:`prompt_formats.format.batch.ordered_map` of the blocks; a run in this process (``workers=1``)
    loops here, without importing the worker processes' machinery."""
    if workers == 1:
        blocks = iter(items)
        while chunk := list(itertools.islice(blocks, chunk_size)):
            yield from job(chunk)
        return
    from ..format.batch import START_METHOD
    from ..format.batch import ordered_map as batch_ordered_map

    start_method = "fork" if _may_fork() else START_METHOD
    if start_method != "fork":  # (forked workers' semaphores need no tracker: none is started)
        shield_resource_tracker()
    yield from batch_ordered_map(job, items, workers=workers, chunk_size=chunk_size, start_method=start_method)


def _may_fork() -> bool:
    """Whether the workers may be forked from this process: on Linux, while it runs no other thread
    (a thread may hold a lock a forked child would wait on for ever) and handles no signal outside
    Python's ``signal`` module (``faulthandler.register``, a C extension's handler: a forked worker
    would run it; those Python handles, it gives their default action). A forked worker starts in a
    few milliseconds; a spawned one starts an interpreter and imports the package and the format
    (about a fifth of a CPU-second). Told from ``/proc``, which counts threads that C code started too."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        if len(os.listdir("/proc/self/task")) != 1:
            return False
    except OSError:
        return False
    # (the standard signals: the C library keeps handlers of its own among the real-time ones)
    return not any(signum < _FIRST_REAL_TIME and not callable(signal.getsignal(signum))
                   for signum in caught_elsewhere())


_FIRST_REAL_TIME = 32


def _is_broken_pool(exc: BaseException) -> bool:
    """Whether ``exc`` says a worker process died (only a run that started workers imported their module)."""
    pool_module = sys.modules.get("concurrent.futures.process")
    return pool_module is not None and isinstance(exc, pool_module.BrokenProcessPool)


def _finish(output: OutputFile, error_file: OutputFile | None, stopped: bool) -> None:
    """Put the finished files in place; a run ``stopped`` by ``--fail-fast`` writes no output file."""
    if stopped:
        output.discard()
    finished = [out for out in (None if stopped else output, error_file) if out is not None]
    # Every file is complete and synced before any is renamed, and the output is renamed first: an
    # error file must not be put in place without the output whose failures it reports.
    for out in finished:
        out.finish()
    for out in finished:
        out.publish()


def _summary(args: argparse.Namespace, done: int, failed: int, elapsed: float, workers: int, direct: bool) -> str:
    rate = done / elapsed if elapsed > 0 else 0.0
    verb = "rendered" if args.command == "render" else "parsed"
    summary = f"prompt-formats: {done - failed:,} of {done:,} records {verb}, {failed:,} failed, {elapsed:.2f} s"
    summary += f" ({rate:,.0f} records/s, {workers} worker{'s' if workers > 1 else ''})"
    if args.fail_fast and failed:
        summary += "; stopped at the first failure (--fail-fast)"
        if not direct:  # standard output, a device or a FIFO got the records before the failure
            summary += ", no output file written"
    return summary + "\n"


def _report_error(data: bytes) -> None:
    report = orjson.loads(data)
    record = f" (id {report['id']!r})" if report["id"] is not None else ""
    write_stderr(f"line {report['line']}{record}: {report['error']}: {report['message']}\n")


def _formats(args: argparse.Namespace) -> int:
    if sys.stdout is None:  # closed when the command started (``>&-``)
        raise UsageError("cannot write standard output: it is closed")
    listing: list[dict[str, Any]] = []
    for name in available_formats():
        try:
            fmt = get_format(name)
        except ImportError as exc:  # registered but not installed in this build
            listing.append({"name": name, "available": False, "reason": str(exc)})
            continue
        listing.append({
            "name": name,
            "available": True,
            "summary": fmt.summary,
            "options": dict(fmt.options),
            "parse_options": dict(fmt.parse_options),
            "option_kinds": {spec.name: sorted(spec.kinds) for spec in fmt.option_specs},
            "parse_option_kinds": {spec.name: sorted(spec.kinds) for spec in fmt.parse_option_specs},
        })
    if args.json:
        sys.stdout.buffer.write(orjson.dumps(listing, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))
        return EXIT_OK
    blocks = []
    for entry in listing:
        if not entry["available"]:
            blocks.append(f"{entry['name']}\n    not available: {entry['reason']}")
            continue
        lines = [entry["name"], f"    {entry['summary']}"]
        for kind, label in (("options", "render options"), ("parse_options", "parse options")):
            if entry[kind]:
                lines.append(f"    {label}:")
            kinds = entry[kind.replace("options", "option_kinds")]
            for key, description in entry[kind].items():
                takes = f" ({', '.join(kinds[key])})" if key in kinds else ""
                lines.append(f"      {key}{takes}: {description}")
        blocks.append("\n".join(lines))
    sys.stdout.write("\n\n".join(blocks) + "\n")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (see the module docstring). A run of more than
    one block sets glibc's ``malloc`` to keep freed memory (:mod:`prompt_formats.cli.allocator`) in
    the process that runs it, for the rest of that process."""
    args = build_parser().parse_args(argv)
    _fill_closed_standard_descriptors()
    with stop_on_signals() as stop:
        try:
            status = _formats(args) if args.command == "formats" else _run(args, stop)
            # Here rather than at exit, where Python would report a closed pipe as an ignored exception.
            if sys.stdout is not None:
                sys.stdout.flush()
            return status
        except Stopped as exc:
            return _stopped(exc.signum)
        except Exception as exc:
            if stop.received is not None:
                # Whatever the signal cut short (a worker it killed, a cleanup step), the run was stopped.
                return _stopped(stop.received)
            return _failure(exc)
        except KeyboardInterrupt:
            _last_words("prompt-formats: interrupted")
            return EXIT_INTERRUPTED


def _fill_closed_standard_descriptors() -> None:
    """Open the null device on each standard file descriptor (0, 1, 2) that was closed when Python started
    (its stream is ``None``) and still is, so that no file the run opens takes its number and gets what
    is meant for that stream. The stream stays ``None``: reading or writing it is refused as closed. (A
    descriptor closed later, under a stream that exists, is left: the stream's own use fails, saying so.)"""
    for fd, stream in ((0, sys.stdin), (1, sys.stdout), (2, sys.stderr)):
        if stream is not None:
            continue
        try:
            os.fstat(fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.open(os.devnull, os.O_RDWR)  # the lowest free number: this one (the ones before are open)


def _stopped(signum: int) -> int:
    """The exit status of a run a stopping signal ended (its files removed, its workers ended): 128 + signum."""
    _last_words(f"prompt-formats: {Stopped(signum)}")
    return 128 + signum


def _failure(exc: Exception) -> int:
    """The exit status of a run that raised ``exc``, its reason said on standard error."""
    if isinstance(exc, UsageError):
        _last_words(f"prompt-formats: {exc}")
        return EXIT_USAGE
    if isinstance(exc, BrokenPipeError):
        # The reader of standard output (or error) went away (`| head`): stop quietly, as a command that
        # SIGPIPE stops would. What is still buffered for either goes to /dev/null at exit, without an error.
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:
                    os.dup2(devnull, stream.fileno())
        return EXIT_BROKEN_PIPE
    if isinstance(exc, OSError):
        _last_words(f"prompt-formats: {exc}")
        return EXIT_USAGE
    if isinstance(exc, MemoryError):  # (not a bug: the machine's or the process's limit)
        _last_words("prompt-formats: out of memory; the run is incomplete (a smaller --block-size needs less)")
        return EXIT_USAGE
    if _is_broken_pool(exc):
        # A worker was killed (by a signal, the out-of-memory killer...): its records are lost, so
        # the run cannot be completed. Not 1, which says that records were reported as failed.
        _last_words("prompt-formats: a worker process died before finishing its work (killed, or out of "
                    "memory?); the run is incomplete")
        return EXIT_USAGE
    # A bug of this program (a record's own failure never gets here: it is reported and the run goes
    # on). The traceback is for the report; the status says the run is incomplete, not that records
    # failed, which is what Python's default 1 would say.
    if sys.stderr is not None:  # (else print_exception would write it to standard output)
        with contextlib.suppress(OSError):
            traceback.print_exception(exc)
    _last_words("prompt-formats: internal error (the traceback above is a bug to report); the run is incomplete")
    return EXIT_USAGE


def _last_words(message: str) -> None:
    """The run's one-line reason for its exit status, on standard error if it can still be written."""
    if sys.stderr is None:  # closed when the command started: the status alone says it
        return
    with contextlib.suppress(OSError):
        print(message, file=sys.stderr, flush=True)
