"""The command's progress line on standard error: one line, redrawn in place, never wider than the terminal."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["Progress", "duration", "terminal_width"]

#: Columns assumed when standard error's width cannot be read (``--progress always`` into a file).
DEFAULT_WIDTH = 80


class InputPosition(Protocol):
    """What the progress line reads of the input: its size in bytes, if known, and the bytes read so far."""

    total: int | None
    bytes_read: int


def terminal_width(fd: int) -> int:
    """The width of the terminal on ``fd`` now (it changes when the window is resized); else ``$COLUMNS`` or 80."""
    try:
        return os.get_terminal_size(fd).columns
    except (OSError, ValueError):
        try:
            return int(os.environ.get("COLUMNS", "")) or DEFAULT_WIDTH
        except ValueError:
            return DEFAULT_WIDTH


def duration(seconds: float) -> str:
    """``45s``, ``1m20s``, ``2h05m``: short enough for a narrow terminal."""
    seconds = int(seconds + 0.5)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m"


class Progress:
    """Records done, records per second, failures, elapsed time and, for a file, an ETA from the bytes read.

    Each redraw is ``\\r`` + the line + erase-to-end-of-line, so the line is rewritten in place; it is
    cut to one column less than the terminal's width, read again at every redraw, so that it never
    wraps onto a second line (which ``\\r`` cannot erase). The ETA is labelled ``(by bytes)``: it
    assumes the rest of the input renders at the speed its first bytes did.
    """

    INTERVAL = 0.2

    def __init__(
        self,
        verb: str,
        position: InputPosition,
        enabled: bool,
        write: Callable[[str], None],
        width: Callable[[], int],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.verb = verb
        self.position = position
        self.enabled = enabled
        self._write = write
        self._width = width
        self._clock = clock
        self.start = clock()
        self._last = float("-inf")
        self._shown = False

    def pieces(self, done: int, failed: int, now: float) -> list[str]:
        """What the line says, most important first."""
        elapsed = max(now - self.start, 1e-9)
        pieces = [f"{self.verb} {done:,} records", f"{done / elapsed:,.0f}/s", f"{failed:,} failed"]
        total = self.position.total
        if total:
            fraction = min(self.position.bytes_read / total, 1.0)
            if fraction > 0:
                pieces.append(f"ETA ~{duration(elapsed * (1 - fraction) / fraction)} (by bytes)")
        pieces.append(duration(elapsed))
        return pieces

    def line(self, done: int, failed: int, now: float) -> str:
        """The line cut to the terminal's width less one column (writing the last column wraps some terminals).

        Whole pieces are dropped from the end first; a first piece too long for the width is cut.
        """
        room = max(self._width() - 1, 1)
        first, *rest = self.pieces(done, failed, now)
        line = first[:room]
        for piece in rest:
            if len(line) + 2 + len(piece) > room:
                break
            line += "  " + piece
        return line

    def update(self, done: int, failed: int, force: bool = False) -> None:
        """Redraw the line, at most every :attr:`INTERVAL` seconds unless ``force``."""
        if not self.enabled:
            return
        now = self._clock()
        if not force and now - self._last < self.INTERVAL:
            return
        self._last = now
        self._write("\r" + self.line(done, failed, now) + "\x1b[K")
        self._shown = True

    def clear(self) -> None:
        """Erase the progress line (before another message is written to standard error)."""
        if self._shown:
            self._write("\r\x1b[K")
            self._shown = False
