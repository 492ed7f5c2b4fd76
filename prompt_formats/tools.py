"""Prepared toolsets, and the content-keyed cache of what formats render from plain tool lists.

Agent clients send the same 40-odd tools, with nested JSON schemas, on every request; serialising
them is a large share of rendering such a request. A :class:`PreparedTools` is immutable (the tool
dicts are deep-copied when it is made), so a format can cache its rendered form of the tools on it
and reuse that on every call. Keep one per session, or per distinct tool list, in a server.

A plain list of tool dicts gets the next best thing: :data:`PLAIN_TOOLS_CACHE`, a small bounded
cache keyed by the list's *content* (its ``marshal`` dump), so a server that passes the same tools
on every request serialises them once without doing anything. It never changes the output; a
prepared toolset still skips even the dump.
"""

from __future__ import annotations

import copy
import json
import marshal
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import orjson

from ._walk import MAX_NESTING, nesting_exceeds
from .errors import InvalidInputError, type_name
from .messages import ToolDefinition, tool_fields

__all__ = [
    "PLAIN_TOOLS_CACHE", "PlainToolsCache", "PreparedTools", "ToolsetCache", "prepare_tools", "rendered_tools",
]

T = TypeVar("T")


class PreparedTools:
    """An immutable, validated list of tool dicts with a per-format cache of their rendered forms.

    Anywhere a format accepts ``tools=[...]`` it accepts a ``PreparedTools`` and renders the same
    bytes. Safe to share between threads; picklable (the cache is rebuilt after unpickling).
    """

    __slots__ = ("_cache", "_definitions", "_lock", "_tools")

    def __init__(self, tools: Iterable[Mapping[str, Any]]) -> None:
        if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable):
            raise InvalidInputError("tools", f"expected a list of tool objects, got {type_name(tools)}")
        self._adopt([_own_copy(tool, i) for i, tool in enumerate(tools)])

    @classmethod
    def owning(cls, tools: list[Mapping[str, Any]]) -> PreparedTools:
        """A toolset over ``tools`` itself instead of a copy, validated as the constructor validates.

        Only for a caller that made the list and its dicts and never changes them afterwards (the
        record readers, which decode each record's tools from JSON): it saves the deep copy.
        """
        prepared = cls.__new__(cls)
        prepared._adopt(tools)
        return prepared

    def _adopt(self, tools: Iterable[Mapping[str, Any]]) -> None:
        tool_list = tuple(tools)
        for i, tool in enumerate(tool_list):
            tool_fields(tool, i)  # validation only: the definitions are built when first asked for
        self._definitions: tuple[ToolDefinition, ...] | None = None
        self._tools: tuple[Mapping[str, Any], ...] = tool_list
        self._cache: dict[str, Any] = {}
        self._lock = threading.Lock()

    @property
    def tools(self) -> tuple[Mapping[str, Any], ...]:
        """The tool dicts (private copies: do not mutate them)."""
        return self._tools

    @property
    def definitions(self) -> tuple[ToolDefinition, ...]:
        """The tools as validated :class:`ToolDefinition` objects."""
        definitions = self._definitions
        if definitions is None:
            # Two threads may both build them: the same values, and the assignment is atomic.
            definitions = self._definitions = tuple(
                ToolDefinition.from_openai(tool, i) for i, tool in enumerate(self._tools)
            )
        return definitions

    @property
    def names(self) -> tuple[str, ...]:
        """The tools' function names, in order."""
        return tuple(d.name for d in self.definitions)

    def cached(self, key: str, build: Callable[[tuple[Mapping[str, Any], ...]], T]) -> T:
        """``build(self.tools)``, computed once per ``key`` for the life of this object."""
        try:
            return self._cache[key]  # type: ignore[no-any-return]
        except KeyError:
            pass
        with self._lock:
            if key not in self._cache:
                self._cache[key] = build(self._tools)
            return self._cache[key]  # type: ignore[no-any-return]

    def __len__(self) -> int:
        return len(self._tools)

    def __bool__(self) -> bool:
        return bool(self._tools)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._tools)

    def __repr__(self) -> str:
        return f"PreparedTools({list(self.names)!r})"

    def __getstate__(self) -> tuple[Mapping[str, Any], ...]:
        return self._tools

    def __setstate__(self, state: tuple[Mapping[str, Any], ...]) -> None:
        self._adopt(state)


def _own_copy(tool: Any, index: int) -> Any:
    """A deep copy of one tool; a tool nested deeper than :data:`MAX_NESTING` is refused.

    (``copy.deepcopy`` recurses: checked first, the depth cannot depend on the caller's stack.)
    """
    if nesting_exceeds(tool):
        raise InvalidInputError(f"tools[{index}]", f"nested more than {MAX_NESTING} levels deep")
    try:
        return copy.deepcopy(tool)
    except RecursionError:  # called with the stack already nearly full, or an object's own deep state
        raise InvalidInputError(f"tools[{index}]", "nested too deeply to copy") from None


def prepare_tools(tools: Iterable[Mapping[str, Any]] | PreparedTools) -> PreparedTools:
    """Validate ``tools`` once and return a :class:`PreparedTools` (returned as is if it already is one).

    Raises :class:`~prompt_formats.errors.InvalidInputError` naming the tool for a malformed one, or
    one holding more than :data:`~prompt_formats.guard.MAX_NESTING` nested dicts and lists.
    """
    if isinstance(tools, PreparedTools):
        return tools
    return PreparedTools(tools)


# orjson encodes exact str, int, float, bool, None, dict, list and tuple; with these options it
# raises for every subclass of them (and for dataclasses and datetimes). See PlainToolsCache.
_EXACT_TYPES_ONLY = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
# What is known of the lists with an entry's key.
_UNCHECKED, _EXACT, _NOT_EXACT = 0, 1, 2


class PlainToolsCache:
    """What a format renders from a plain tool list, keyed by the list's content; bounded, thread-safe.

    ``get(key, tools, build)`` returns ``build(tools)``, from the cache when a tool list with the
    same content was built under the same ``key`` before. At most ``max_entries`` entries and
    ``max_bytes`` in all (the content key plus ``sys.getsizeof`` of the built value: meant for flat
    values such as the rendered text) are kept; the oldest entry goes first (first in, first out:
    a hit costs one dictionary look-up, without a lock). A list that is mutated afterwards simply
    has another key; nothing refers to the caller's objects.

    Why the output never changes. The content key is ``marshal.dumps(tools)``; a value is cached
    only if its build succeeded, and served only once a list with that key has been found to hold
    exact JSON types only (by orjson, which rejects every subclass; checked on the first hit, so
    a list seen once never pays for it):

    - marshal writes every object by its *exact* type (a distinct code for ``int``, ``float``,
      ``bool``, ``None``, ``str``, ``tuple``, ``list``, ``dict``), floats as their 8 bytes
      (``0.0`` and ``-0.0`` differ), strings as their code points, dicts in their key order. It
      raises ``ValueError`` for every other type, with one exception: an object of another type
      that exposes the buffer protocol (numpy's ``float64`` and ``str_`` do, and ``json.dumps``
      writes them as a float and a string) is written as if it were ``bytes``.
    - A list of exact JSON types has no ``bytes`` code in its dump. Any list with the same dump
      therefore has no buffer-protocol object either (each would have put a ``bytes`` code there),
      so it is made of exact types too, and ``marshal.loads`` gives both lists back identical in
      types, values, order and float bits. ``json.dumps`` of exact types depends on nothing else:
      every list with that dump, the one the value was built from included, has the same JSON text.

    A list that is not made of exact JSON types only is built on every call: marshal rejects most
    (a subclass, too much nesting); the others (a lone surrogate, an integer beyond 64 bits, a
    non-string key, a buffer-protocol object) fail orjson's check and their entry is never served.
    Some lists with equal content dump differently (marshal marks objects referenced more than once
    and interned strings); they are merely separate entries.
    """

    def __init__(self, max_entries: int = 64, max_bytes: int = 32 * 1024 * 1024) -> None:
        # key -> (value, size, state): state _EXACT once a list with this key held exact JSON types
        # only, _NOT_EXACT once one did not (then no list with this key does: the value is never
        # served), _UNCHECKED before. Insertion order is eviction order. Readers use dict.get
        # alone (atomic); writers hold the lock.
        self._entries: dict[tuple[str, bytes], tuple[Any, int, int]] = {}
        self._lock = threading.Lock()
        self._bytes = 0
        self.max_entries = max_entries
        self.max_bytes = max_bytes

    def get(self, key: str, tools: Any, build: Callable[[Any], T]) -> T:
        """``build(tools)``, from the cache when ``tools`` has the content of a list built under ``key`` before."""
        try:
            entry_key = (key, marshal.dumps(tools))
        except ValueError:  # another type, or nested too deeply: not keyable
            return build(tools)
        entry = self._entries.get(entry_key)
        if entry is None:
            value = build(tools)  # outside the lock: builds may be slow, and two threads may build alike
            self._add(entry_key, value, len(entry_key[1]) + sys.getsizeof(value))
            return value
        state = entry[2]
        if state == _UNCHECKED:
            try:
                orjson.dumps(tools, option=_EXACT_TYPES_ONLY)
                state = _EXACT
            except (TypeError, ValueError, RecursionError):
                state = _NOT_EXACT
            with self._lock:
                if entry_key in self._entries:
                    self._entries[entry_key] = (entry[0], entry[1], state)
        if state == _NOT_EXACT:
            return build(tools)
        return entry[0]  # type: ignore[no-any-return]

    def _add(self, entry_key: tuple[str, bytes], value: Any, size: int) -> None:
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(entry_key, None)
            if old is not None:
                self._bytes -= old[1]
            self._entries[entry_key] = (value, size, _UNCHECKED)
            self._bytes += size
            self._evict()

    def _evict(self) -> None:
        entries = self._entries
        while entries and (len(entries) > self.max_entries or self._bytes > self.max_bytes):
            self._bytes -= entries.pop(next(iter(entries)))[1]

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def resize(self, max_entries: int, max_bytes: int) -> None:
        """Set the bounds (``max_entries=0`` disables caching), dropping the oldest entries beyond them."""
        with self._lock:
            self.max_entries = max_entries
            self.max_bytes = max_bytes
            self._evict()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        """The bytes counted against ``max_bytes``."""
        return self._bytes


#: The process-wide cache the formats use for plain tool lists (ChatML: the tools block).
PLAIN_TOOLS_CACHE = PlainToolsCache()


def rendered_tools(tools: Sequence[Mapping[str, Any]] | PreparedTools, key: str, build: Callable[[Any], T]) -> T:
    """What a format renders from ``tools`` under ``key``: ``build(tools)``, computed once per toolset.

    The one way a format asks for a toolset's rendered form: a :class:`PreparedTools` caches it on
    itself, a plain list through the process-wide content-keyed cache. ``build`` must depend on the
    tools' content only.
    """
    if isinstance(tools, PreparedTools):
        return tools.cached(key, build)
    return PLAIN_TOOLS_CACHE.get(key, tools, build)


class ToolsetCache:
    """A bounded LRU of prepared toolsets keyed by their JSON bytes: the record jobs prepare a toolset once per worker.

    Records of one corpus often repeat a few toolsets; each is validated and rendered once, when it
    is first seen, and its rendered form (the largest part of an agent prompt) is reused by every
    later record with the same bytes. The lists come from the record's JSON, decoded by the caller
    and never shared, so the toolset keeps them as they are (:meth:`PreparedTools.owning`).

    A list that :class:`PreparedTools` refuses is kept and returned as it is: some templates render
    what it refuses (ChatML writes each tool as JSON, so a tool without a name renders), and a
    record must get what ``render`` gives with its tools, its prompt or its error.
    """

    __slots__ = ("_entries", "_size")

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[bytes, PreparedTools | list[Any]] = OrderedDict()

    def __len__(self) -> int:
        """How many toolsets the cache holds (never more than its ``size``)."""
        return len(self._entries)

    def get(self, tools: list[Any]) -> PreparedTools | list[Any]:
        """The toolset of a decoded tool list: a :class:`PreparedTools` of it, or the list if refused."""
        try:
            key = orjson.dumps(tools)
        except TypeError:
            # Beyond orjson (an integer over 64 bits): the standard library's text, marked so that it
            # can never equal an orjson key.
            key = b"\0" + json.dumps(tools, ensure_ascii=False).encode("utf-8", "surrogatepass")
        return self.lookup(key, tools)[0]

    def lookup(self, key: bytes, tools: list[Any]) -> tuple[PreparedTools | list[Any], bool]:
        """``(toolset, seen)`` for ``tools`` whose key (its ``orjson.dumps``) is ``key``; ``seen``:
        whether a toolset of that key was held already."""
        entries = self._entries
        prepared = entries.get(key)
        if prepared is None:
            try:
                prepared = PreparedTools.owning(tools)
            except InvalidInputError:
                prepared = tools
            entries[key] = prepared
            if len(entries) > self._size:
                entries.popitem(last=False)
            return prepared, False
        entries.move_to_end(key)
        return prepared, True
