"""Walking JSON-like values without recursion, to a fixed depth.

A recursive walk fails at a depth that depends on the interpreter version and on how deep the
caller's stack already is; a check that gives up there lets through what it did not read. These
walks keep their own stack, so only :data:`MAX_NESTING` decides how deep a value may be, and a
value deeper than that is refused (:class:`TooDeep`), never passed on unread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import FormatError, InjectionError, InvalidInputError

__all__ = ["MAX_NESTING", "Hit", "TooDeep", "Unreadable", "nesting_exceeds", "walk_strings"]

#: The most containers (dicts, lists, tuples) nested in one another that a tool definition or a
#: tool-call argument may hold: the guard checks values up to this depth and refuses deeper ones,
#: and :func:`~prompt_formats.model.tools.prepare_tools` refuses deeper tools. Far beyond any real schema
#: or argument, and far below the depth at which the standard library's JSON encoder gives up.
MAX_NESTING = 256

_CONTAINERS = (dict, list, tuple)
# What walk_strings walks: those, and any other mapping (read as the dict it is written as). The
# exact types first: isinstance tries them before the ABC.
_WALKED = (*_CONTAINERS, Mapping)
# An ancestor of the container walk_strings is in: its entries, the position, its new entries once
# one changed, the checked key of a dict entry.
_Frame = tuple[Any, Any, bool, int, list[Any] | None, Any]


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


class Unreadable(Hit):
    """A value the guard cannot read as JSON data whose printed text may hold a token: refused."""

    def __init__(self, value: Any) -> None:
        super().__init__("")
        self.kind = type(value).__name__

    def error(self, base: str) -> FormatError:
        return InvalidInputError(
            base + "".join(reversed(self.trail)),
            f"expected JSON data, got {self.kind}, whose printed text the guard cannot check",
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


def walk_strings(
    value: Any, text: Callable[[str], str], limit: int = MAX_NESTING, other: Callable[[Any], Any] | None = None,
) -> Any:
    """``value`` with ``text`` applied to every string in it (dict keys included), depth first, in order.

    Walks ``dict``, ``list`` and ``tuple``, any other mapping as a dict (a changed one is rebuilt:
    a tuple as a list, a mapping as a dict, the same JSON), and a list or tuple of another type by the
    items it iterates, returned as a list of them, changed or not (what was walked is what is passed
    on); ``other``, when given, is applied to every other value that is not exactly an ``int``,
    ``float``, ``bool`` or ``None`` (subclasses included), else such values are returned as they are.
    Returns ``value`` itself when nothing changed (but such a sequence). A value holding more than
    ``limit`` nested containers raises :class:`TooDeep`; a :class:`Hit` raised by ``text`` or
    ``other`` gets the path steps from ``value`` down to it.
    """
    if isinstance(value, str):
        return text(value)
    if not isinstance(value, _WALKED):
        return _leaf(value, other)
    return _walk_container(value, text, limit, other)


def _walk_container(value: Any, text: Callable[[str], str], limit: int, other: Callable[[Any], Any] | None) -> Any:
    """:func:`walk_strings` of a container: a list or a tuple, else a mapping (walked by its items)."""
    # The container being walked is in locals (its entries, the position, its new entries once
    # one changed, the checked key of a dict entry); its ancestors' are on `stack`. One loop, no
    # call per item: this walk runs on every value the guard's prefilter could not clear.
    stack: list[_Frame] = []
    container: Any = value
    is_dict = not isinstance(container, (list, tuple))
    entries: Any = _entries(container, is_dict)
    pos = 0
    out: list[Any] | None = None
    key: Any = None
    try:
        while True:
            while pos < len(entries):
                if is_dict:
                    old_key, item = entries[pos]
                    key = text(old_key) if isinstance(old_key, str) else _leaf(old_key, other)
                else:
                    item = entries[pos]
                if isinstance(item, str):
                    new = text(item)
                elif item is None or type(item) in _SCALARS:
                    new = item
                elif isinstance(item, _WALKED):
                    if len(stack) + 1 >= limit:
                        raise TooDeep
                    stack.append((container, entries, is_dict, pos, out, key))
                    container, is_dict, pos, out = item, not isinstance(item, (list, tuple)), 0, None
                    entries = _entries(container, is_dict)
                    continue
                else:
                    new = item if other is None else other(item)
                if out is None and (new is not item or (is_dict and key is not old_key)):
                    out = list(entries[:pos])
                if out is not None:
                    out.append((key, new) if is_dict else new)
                pos += 1
            if out is None and entries is not container and not is_dict:
                out = list(entries)  # (a sequence of another type: the copy walked is the one passed on)
            done = container if out is None else (dict(out) if is_dict else out)
            if not stack:
                return done
            child = container
            container, entries, is_dict, pos, out, key = stack.pop()
            if out is None and (done is not child or (is_dict and key is not entries[pos][0])):
                out = list(entries[:pos])
            if out is not None:
                out.append((key, done) if is_dict else done)
            pos += 1
    except Hit as hit:
        _add_steps(hit, stack, entries, is_dict, pos)
        raise


_SCALARS = frozenset({int, float, bool})


def _entries(container: Any, is_dict: bool) -> Any:
    """What a walk goes over: a mapping's items; a list or tuple itself; a sequence of another type
    as the items it iterates (what transformers hands a template), never by its own ``len`` and
    indexing, which could say otherwise."""
    if is_dict:
        return list(container.items())
    return container if type(container) is list or type(container) is tuple else list(container)


def _leaf(item: Any, other: Callable[[Any], Any] | None) -> Any:
    """A value that is neither a string nor a container: itself, or ``other(item)`` when it is not
    exactly a JSON scalar."""
    if other is None or item is None or type(item) in _SCALARS:
        return item
    return other(item)


def _add_steps(hit: Hit, stack: list[_Frame], entries: Any, is_dict: bool, pos: int) -> None:
    """Give a :class:`Hit` raised inside :func:`walk_strings` the path steps down to where it was raised.

    A :class:`TooDeep` gets none: it is named by the walked value's path, not by the steps down to
    where it went too deep.
    """
    if isinstance(hit, TooDeep):
        return
    hit.trail.append(f".{entries[pos][0]}" if is_dict else f"[{pos}]")
    for _, frame_entries, frame_is_dict, frame_pos, _, _ in reversed(stack):
        hit.trail.append(f".{frame_entries[frame_pos][0]}" if frame_is_dict else f"[{frame_pos}]")
