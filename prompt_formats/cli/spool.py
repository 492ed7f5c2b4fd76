"""Where worker processes leave the blocks they rendered: one file per block, in a directory of the run.

A block's output sent back through the pool's pipe has to be received by the parent's result thread,
which waits for the interpreter lock while the parent renders blocks of its own: a worker with a
megabyte to send then stalls, a pipe's worth at a time. Written to a file instead, the worker goes on
at once, and the parent reads the whole block with one call when its turn comes.

The directory is made by the parent (:meth:`Spool.make`, in the system's temporary directory)
and removed by it, with whatever is left in it, when the run ends however it ends (:meth:`Spool.remove`,
called after the workers have stopped, so that none writes into it again).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import shutil
import tempfile
from typing import NamedTuple

from .files import OutputFile

__all__ = ["Spool", "Spooled"]


class Spooled(NamedTuple):
    """A block's output, left by a worker process in a file of the spool: its name and length."""

    name: str
    length: int


class Spool:
    """A directory for blocks' outputs; picklable (by its path), so that it travels with the workers' job."""

    def __init__(self, path: str | None = None) -> None:
        """A spool at ``path``; none given: a new name in the system's temporary directory (``$TMPDIR``),
        not yet made (:meth:`make`)."""
        self.path = path if path is not None else self._new_name()
        self._names = itertools.count()

    @staticmethod
    def _new_name() -> str:
        return os.path.join(tempfile.gettempdir(), f"prompt-formats-{secrets.token_hex(8)}")

    def make(self) -> None:
        """Create the directory, readable by this user only (under a new name if the name is taken)."""
        while True:
            try:
                os.mkdir(self.path, 0o700)
                return
            except FileExistsError:
                self.path = self._new_name()

    def __reduce__(self) -> tuple[type[Spool], tuple[str]]:
        return Spool, (self.path,)

    def put(self, data: bytes) -> Spooled:
        """Write ``data`` to a new file of the spool (a worker's side); its name is unique to this process.

        An error names the spool (a full disk is the disk of ``$TMPDIR``).
        """
        name = f"{os.getpid()}-{next(self._names)}"
        try:
            fd = os.open(os.path.join(self.path, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
        except OSError as exc:
            raise OSError(exc.errno, f"cannot write the workers' spool in {self.path}: {exc.strerror}") from None
        return Spooled(name, len(data))

    def take_into(self, block: Spooled, output: OutputFile) -> None:
        """Write the block's output to ``output`` and remove its file (the parent's side)."""
        path = os.path.join(self.path, block.name)
        fd = os.open(path, os.O_RDONLY)
        try:
            output.write_from(fd, block.length)
        finally:
            os.close(fd)
        os.unlink(path)

    def take(self, block: Spooled) -> bytes:
        """The block's output, its file removed (the parent's side)."""
        path = os.path.join(self.path, block.name)
        with open(path, "rb") as file:
            data = file.read()
        os.unlink(path)
        if len(data) != block.length:
            raise OSError(f"{path}: {len(data)} bytes where the worker wrote {block.length}")
        return data

    def remove(self) -> None:
        """Remove the directory and whatever is left in it (the blocks of a run that stopped)."""
        with contextlib.suppress(OSError):
            shutil.rmtree(self.path)
