"""Walking JSON-like values without recursion, to a fixed depth.

A recursive walk fails at a depth that depends on the interpreter version and on how deep the
caller's stack already is; a check that gives up there lets through what it did not read. These
walks keep their own stack, so only :data:`MAX_NESTING` decides how deep a value may be, and a
value deeper than that is refused (:class:`TooDeep`), never passed on unread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import FormatError, InjectionError, InvalidInputError

__all__ = ["MAX_NESTING", "Hit", "TooDeep", "nesting_exceeds", "walk_strings"]

#: The most containers (dicts, lists, tuples) nested in one another that a tool definition or a
#: tool-call argument may hold: the guard checks values up to this depth and refuses deeper ones,
#: and :func:`~prompt_formats.tools.prepare_tools` refuses deeper tools. Far beyond any real schema
#: or argument, and far below the depth at which the standard library's JSON encoder gives up.
MAX_NESTING = 256

_CONTAINERS = (dict, list, tuple)


class Hit(Exception):
    """Raised inside a walk with the path steps still to be collected; ``trail`` is innermost first.

    The walkers build no paths while they look: each level adds its step as the exception passes
    through it, so input that raises nothing pays nothing for error reporting.
    """

    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.token = token
        self.trail: list[str] = []

    def error(self, base: str) -> FormatError:
        """The error to raise, its path ``base`` followed by the collected steps."""
        return InjectionError(base + "".join(reversed(self.trail)), self.token)


class TooDeep(Hit):
    """A value nested deeper than :data:`MAX_NESTING`: refused, because it was not read in full."""

    def __init__(self) -> None:
        super().__init__("")

    def error(self, base: str) -> FormatError:
        return InvalidInputError(
            base + "".join(reversed(self.trail)),
            f"nested more than {MAX_NESTING} levels deep (the most the guard checks)",
        )


def nesting_exceeds(value: Any, limit: int = MAX_NESTING) -> bool:
    """True if ``value`` holds more than ``limit`` dicts, lists or tuples nested in one another."""
    if not isinstance(value, _CONTAINERS):
        return False
    level = [value]
    for _ in range(limit):
        children = []
        for container in level:
            items = container.values() if isinstance(container, dict) else container
            children += [item for item in items if isinstance(item, _CONTAINERS)]
        if not children:
            return False
        level = children
    return True


class _Frame:
    """One container being walked: its entries, the next position, and its new entries once one changed."""

    __slots__ = ("container", "entries", "is_dict", "key", "out", "pos")

    def __init__(self, container: Any) -> None:
        self.container = container
        self.is_dict = isinstance(container, dict)
        self.entries: Any = list(container.items()) if self.is_dict else container
        self.pos = 0
        self.key: Any = None  # a dict entry's key as checked, while its value is walked
        self.out: list[Any] | None = None

    def put(self, new: Any, old: Any) -> None:
        """Record the entry at ``pos`` (a value, or a (key, value) pair) as ``new``; ``old`` was there."""
        if self.out is None:
            if new is old or (self.is_dict and new[0] is old[0] and new[1] is old[1]):
                self.pos += 1
                return
            self.out = list(self.entries[: self.pos])
        self.out.append(new)
        self.pos += 1

    def result(self) -> Any:
        if self.out is None:
            return self.container
        return dict(self.out) if self.is_dict else self.out

    def step(self) -> str:
        return f".{self.entries[self.pos][0]}" if self.is_dict else f"[{self.pos}]"


def walk_strings(value: Any, text: Callable[[str], str], limit: int = MAX_NESTING) -> Any:
    """``value`` with ``text`` applied to every string in it (dict keys included), depth first, in order.

    Walks ``dict``, ``list`` and ``tuple`` (a changed one is rebuilt: a tuple as a list, the same
    JSON); anything else is returned as is. Returns ``value`` itself when nothing changed. A value
    holding more than ``limit`` nested containers raises :class:`TooDeep`; a :class:`Hit` raised by
    ``text`` gets the path steps from ``value`` down to the string.
    """
    if isinstance(value, str):
        return text(value)
    if not isinstance(value, _CONTAINERS):
        return value
    stack = [_Frame(value)]
    try:
        while True:
            frame = stack[-1]
            entries = frame.entries
            while frame.pos < len(entries):
                entry = entries[frame.pos]
                item = entry[1] if frame.is_dict else entry
                if frame.is_dict:
                    key = entry[0]
                    frame.key = text(key) if isinstance(key, str) else key
                if isinstance(item, _CONTAINERS):
                    if len(stack) >= limit:
                        raise TooDeep
                    stack.append(_Frame(item))
                    break
                new = text(item) if isinstance(item, str) else item
                frame.put((frame.key, new) if frame.is_dict else new, entry)
            else:
                done = stack.pop().result()
                if not stack:
                    return done
                parent = stack[-1]
                old = parent.entries[parent.pos]
                parent.put((parent.key, done) if parent.is_dict else done, old)
    except TooDeep:  # named by the value's path, not by the steps down to where it went too deep
        raise
    except Hit as hit:
        hit.trail.extend(frame.step() for frame in reversed(stack))
        raise
