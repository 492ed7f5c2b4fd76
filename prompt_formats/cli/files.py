"""The command's output files: what ``-o`` and ``--errors`` do with whatever is at their path.

- standard output (``-``), a character device (``/dev/null``, a terminal), a FIFO or a socket is
  written directly, as records complete: it cannot be renamed, and replacing it would destroy it;
- a regular file, or a path where nothing exists, is written under a temporary name in the same
  directory and renamed into place when the run ends (an existing file keeps its mode bits);
- a symbolic link is followed: its target is what is written (renamed onto, for a regular file), and
  the link stays a link.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Callable
from typing import IO

__all__ = ["OutputFile", "UsageError", "refuse_same_file", "write_stderr"]

# The kernel's copies from one file descriptor to another, where the platform has them; each raises
# one of _NOT_HERE where it cannot copy between these two files (another file system, a pipe...).
_KERNEL_COPIES: list[Callable[[int, int, int], int]] = []
if hasattr(os, "copy_file_range"):
    _KERNEL_COPIES.append(os.copy_file_range)
if sys.platform == "linux":  # (elsewhere sendfile's target must be a socket)
    _KERNEL_COPIES.append(lambda source, target, length: os.sendfile(target, source, None, length))
_NOT_HERE = {errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EBADF, errno.ENOTSUP}


def _copy_in_kernel(source: int, target: int, length: int) -> int:
    """Copy up to ``length`` bytes from ``source`` to ``target`` by the kernel; the bytes left to copy."""
    for copy in _KERNEL_COPIES:
        try:
            while length and (copied := copy(source, target, length)):
                length -= copied
            return length
        except OSError as exc:
            if exc.errno not in _NOT_HERE:
                raise
    return length


class UsageError(Exception):
    """The run cannot be carried out as asked; exit status 2."""


def _strerror(exc: OSError) -> str:
    return exc.strerror or str(exc)


class OutputFile:
    """A binary output named on the command line: :meth:`write`, then :meth:`finish` and :meth:`publish`.

    Written atomically (temporary file, then rename) when the path is a regular file or does not
    exist, directly otherwise (see the module docstring). :meth:`discard` removes the temporary
    file; a process that dies leaves only a ``.NAME.*.tmp`` file, never a half-written ``NAME``.
    Finishing (where a full disk shows) and publishing are separate steps, so that several outputs
    are all finished before any is published.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._temp: str | None = None
        self._target = path
        self._mode: int | None = None
        self._stream: IO[bytes] | None = None
        if path == "-":
            if sys.stdout is None:  # closed when the command started (``>&-``)
                raise UsageError("cannot write standard output: it is closed")
            self._stream = sys.stdout.buffer
            self.direct = True
            return
        # The link's target is what the user means: replacing the link with a file would cut it.
        self._target = os.path.realpath(path)
        try:
            existing: os.stat_result | None = os.stat(self._target)
        except FileNotFoundError:
            existing = None
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {_strerror(exc)}") from None
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            # Found now rather than at the final rename, after all the work.
            raise UsageError(f"cannot write {path}: Is a directory")
        self.direct = existing is not None and not stat.S_ISREG(existing.st_mode)
        if self.direct:
            # A device, a FIFO, a socket: written in place, streaming; opened by open(), not here, since
            # a FIFO's open waits for its reader and this runs where the stopping signals are held.
            if not os.access(self._target, os.W_OK):
                raise UsageError(f"cannot write {path}: {os.strerror(errno.EACCES)}")
            return
        try:
            if existing is not None:
                self._mode = stat.S_IMODE(existing.st_mode)
            fd, self._temp = tempfile.mkstemp(
                prefix="." + os.path.basename(self._target) + ".", suffix=".tmp", dir=os.path.dirname(self._target)
            )
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {_strerror(exc)}") from None
        self._stream = os.fdopen(fd, "wb", buffering=1 << 20)

    def open(self) -> IO[bytes]:
        """The output, open for writing: a direct one (a device, a FIFO, whose open waits for a reader)
        is opened the first time, to be called outside the held steps, so that a stopping signal
        meanwhile stops the run. (Else the first write opens it.)"""
        if self._stream is None:
            try:
                self._stream = open(self._target, "wb", buffering=1 << 16)  # noqa: SIM115 (closed by finish())
            except OSError as exc:
                raise UsageError(f"cannot write {self.path}: {_strerror(exc)}") from None
        return self._stream

    @property
    def stream(self) -> IO[bytes]:
        """The output open for writing (:meth:`open`)."""
        return self.open()

    def write(self, data: bytes) -> None:
        try:
            self.stream.write(data)
        except BrokenPipeError:
            raise  # the reader went away: main() ends quietly
        except OSError as exc:  # a full disk, an I/O error: say which file
            raise self._failed(exc) from None

    def write_from(self, source: int, length: int) -> None:
        """Write the ``length`` bytes that follow the position of the file descriptor ``source``.

        Copied by the kernel where it can (``copy_file_range`` between files of one file system,
        ``sendfile`` to anything else), so that the bytes never pass through this process; otherwise
        read and written a megabyte at a time.
        """
        try:
            self.stream.flush()  # what was written before goes first
            left = _copy_in_kernel(source, self.stream.fileno(), length)
            while left and (data := os.read(source, min(left, 1 << 20))):
                self.stream.write(data)
                left -= len(data)
        except BrokenPipeError:
            raise  # the reader went away: main() ends quietly
        except OSError as exc:
            raise self._failed(exc) from None
        if left:
            raise self._failed(OSError(errno.EIO, f"{left} bytes of a block were missing"))

    def finish(self) -> None:
        """Flush, sync and close the temporary file, still under its temporary name (a direct output: flush)."""
        try:
            self.stream.flush()
            if self._temp is None:
                if self.path != "-":  # (standard output stays open: it is this process's)
                    self.stream.close()
                return
            os.fsync(self.stream.fileno())
            self.stream.close()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._failed(exc) from None
        if self._mode is None:
            # mkstemp creates the file 0600; give it the mode an ordinary new file would have.
            umask = os.umask(0)
            os.umask(umask)
            self._mode = 0o666 & ~umask
        os.chmod(self._temp, self._mode)

    def _failed(self, exc: OSError) -> UsageError:
        name = "standard output" if self.path == "-" else self.path
        return UsageError(f"cannot write {name}: {_strerror(exc)}")

    def publish(self) -> None:
        """Rename the finished temporary file onto its target (a direct output: nothing to do)."""
        if self._temp is None:
            return
        try:
            os.replace(self._temp, self._target)
        except OSError as exc:  # for instance, the final name is now a directory
            raise UsageError(f"cannot write {self.path}: {exc.strerror}") from None
        self._temp = None

    def discard(self) -> None:
        """Remove the temporary file, if any; the final name is left untouched (a direct output is closed)."""
        if self._temp is None:
            if self.path != "-" and self._stream is not None:  # (one never opened is left so)
                with contextlib.suppress(OSError):
                    self._stream.close()
            return
        with contextlib.suppress(OSError):
            self.stream.close()
        with contextlib.suppress(OSError):
            os.unlink(self._temp)
        self._temp = None


def refuse_same_file(output: str, errors: str | None) -> None:
    """Raise :class:`UsageError` when ``-o`` and ``--errors`` name one file (the same path, a link, a hard link).

    Checked before either is opened: the report would replace the records, or interleave with them.
    A character device (``/dev/null``) may take both: each write goes through, nothing is replaced.
    """
    if errors is None:
        return
    output_identity, errors_identity = _identity(output), _identity(errors)
    if output_identity[0] == errors_identity[0] and not output_identity[1]:
        raise UsageError(f"-o {output} and --errors {errors} are the same file: give the error report its own file")


def _identity(path: str) -> tuple[tuple[int, int] | str, bool]:
    """``(the file's identity, whether it is a character device)``: ``(st_dev, st_ino)`` or the resolved path."""
    if path == "-":
        return "-", False
    target = os.path.realpath(path)
    with contextlib.suppress(OSError):
        info = os.stat(target)
        if info.st_ino:  # a platform without inode numbers reports 0
            return (info.st_dev, info.st_ino), stat.S_ISCHR(info.st_mode)
    return os.path.normcase(target), False


def write_stderr(text: str) -> None:
    """Write ``text`` to standard error now; a write that fails makes the run incomplete (exit status 2).

    A failure report that is lost must not end in status 1, which says that every failure was reported.
    """
    if sys.stderr is None:  # closed when the command started (``2>&-``)
        raise UsageError("cannot write standard error: it is closed")
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except BrokenPipeError:
        raise  # the reader went away: main() ends quietly
    except OSError as exc:
        raise UsageError(f"cannot write standard error: {exc.strerror or exc}") from None
