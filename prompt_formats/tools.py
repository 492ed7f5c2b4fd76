"""Prepared toolsets, and the content-keyed cache of what formats render from plain tool lists.

Agent clients send the same 40-odd tools, with nested JSON schemas, on every request; serialising
them is a large share of rendering such a request. A :class:`PreparedTools` is immutable (the tool
dicts are deep-copied when it is made), so a format can cache its rendered form of the tools on it
and reuse that on every call. Keep one per session, or per distinct tool list, in a server.

A plain list of tool dicts gets the next best thing: :data:`PLAIN_TOOLS_CACHE`, a small bounded
cache keyed by the list's *content*, which makes it a ``PreparedTools`` once, so a server that
passes the same tools on every request serialises them once without doing anything. It never
changes the output; a prepared toolset still skips even the look-up.
"""

from __future__ import annotations

import copy
import threading
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
L = TypeVar("L")


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


# With these options orjson raises for every subclass of str, int, float, dict and list, for
# dataclasses and datetimes (and, always, for lone surrogates, integers beyond 64 bits, non-string
# keys and nesting beyond its limit). It still writes tuples, enums and UUIDs as JSON, and NaN and
# infinities as null: the content check of PlainToolsCache tells those apart.
_EXACT_TYPES_ONLY = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
#: An entry for a list that PreparedTools refuses: such a list is rendered from itself every time.
_REFUSED: Any = None


class PlainToolsCache:
    """The one content-keyed cache from a plain tool list to its :class:`PreparedTools`; bounded, thread-safe.

    :meth:`get` returns the toolset a format renders a plain list as: a ``PreparedTools`` with the
    list's content, made once per content (a copy of it, as orjson reads it back), or the list
    itself when it is not made of exact JSON types only or ``PreparedTools`` refuses it. Every
    rendered form (:func:`rendered_tools`) is then cached on that one toolset.

    Look-up: the list last served from an entry is recognised by identity first, which spares
    hashing its key; either way the content is verified. The key is the list's orjson text (with
    subclasses refused), and a served toolset's tool dicts compare equal (``==``) to the list's.
    Together they are exact: equal texts fix the structure, key order, strings, and the type and
    bits of every number and bool; equality then rules out what orjson writes alike (a tuple is not
    equal to a list, an enum member or a UUID not to its value, NaN and infinities not to None).
    A list mutated since it was served therefore fails one or the other and never gets a stale toolset.

    At most ``max_entries`` entries and about ``max_bytes`` (twice the key's length per entry: the
    key and the toolset's copy) are kept; the oldest goes first. Readers take no lock.
    """

    #: Whether the toolset adopts the list itself instead of a copy (see :class:`ToolsetCache`).
    owning = False

    def __init__(self, max_entries: int = 64, max_bytes: int = 32 * 1024 * 1024) -> None:
        # key -> (key, toolset or _REFUSED, the list last served); insertion order is eviction order.
        self._entries: dict[bytes, tuple[bytes, PreparedTools | None, Any]] = {}
        self._by_identity: dict[int, tuple[bytes, PreparedTools | None, Any]] = {}
        self._lock = threading.Lock()
        self._bytes = 0
        self.max_entries = max_entries
        self.max_bytes = max_bytes

    def get(self, tools: L) -> L | PreparedTools:
        """The toolset to render ``tools`` with: its ``PreparedTools`` when the content is cacheable, else ``tools``."""
        prepared = self.lookup(tools)[0]
        return tools if prepared is None else prepared

    def lookup(self, tools: Any) -> tuple[PreparedTools | None, bool]:
        """``(toolset, seen)``: the ``PreparedTools`` of ``tools`` (``None`` when not cacheable), and
        whether an entry with its content was held already."""
        if type(tools) is not list:
            return None, False
        entry = self._by_identity.get(id(tools))
        try:
            key = orjson.dumps(tools, option=_EXACT_TYPES_ONLY)
        except (TypeError, ValueError):  # not exact JSON types only, or nested too deeply
            return None, False
        if entry is None or entry[2] is not tools or entry[0] != key:
            entry = self._entries.get(key)
        if entry is None:
            return self._add(key, tools), False
        prepared = entry[1]
        if prepared is None or tuple(tools) != prepared.tools:
            return None, True
        if entry[2] is not tools:
            self._remember_identity((key, prepared, tools))
        return prepared, True

    def _remember_identity(self, entry: tuple[bytes, PreparedTools | None, Any]) -> None:
        """``entry``'s list is the one its identity check will look for; at most about two per entry are kept."""
        by_identity = self._by_identity
        if len(by_identity) >= 2 * self.max_entries:
            by_identity = self._by_identity = {}  # a new dict: a reader of the old one is not disturbed
        by_identity[id(entry[2])] = entry

    def _add(self, key: bytes, tools: list[Any]) -> PreparedTools | None:
        try:
            prepared: PreparedTools | None = PreparedTools.owning(tools if self.owning else orjson.loads(key))
        except InvalidInputError:
            prepared = _REFUSED
        if prepared is not None and tuple(tools) != prepared.tools:
            return None  # read back otherwise (NaN, a tuple, an enum): never cached
        size = 2 * len(key)
        if size <= self.max_bytes:
            with self._lock:
                entry = (key, prepared, tools)
                old = self._entries.pop(key, None)
                if old is not None:
                    self._bytes -= 2 * len(old[0])
                self._entries[key] = entry
                self._remember_identity(entry)
                self._bytes += size
                self._evict()
        return prepared

    def _evict(self) -> None:
        entries = self._entries
        while entries and (len(entries) > self.max_entries or self._bytes > self.max_bytes):
            key, _, _ = entries.pop(next(iter(entries)))
            self._bytes -= 2 * len(key)
        if not entries:
            self._by_identity = {}

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()
            self._by_identity = {}
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


class ToolsetCache(PlainToolsCache):
    """The record readers' cache (one per job): :class:`PlainToolsCache` over lists decoded from
    JSON, which the caller made and never changes, so the toolset adopts the list itself (no copy,
    :meth:`PreparedTools.owning`). ``size`` bounds the entries."""

    owning = True

    def __init__(self, size: int) -> None:
        super().__init__(max_entries=size)


#: The process-wide cache the formats use for plain tool lists (ChatML: the tools block).
PLAIN_TOOLS_CACHE = PlainToolsCache()


def rendered_tools(tools: Sequence[Mapping[str, Any]] | PreparedTools, key: str, build: Callable[[Any], T]) -> T:
    """What a format renders from ``tools`` under ``key``: ``build(tools)``, computed once per toolset.

    The one way a format asks for a toolset's rendered form: a :class:`PreparedTools` caches it on
    itself; a plain list becomes one through :data:`PLAIN_TOOLS_CACHE` (or, not cacheable, is built
    from every time). ``build`` must depend on the tools' content only.
    """
    if not isinstance(tools, PreparedTools):
        tools = PLAIN_TOOLS_CACHE.get(tools)
        if not isinstance(tools, PreparedTools):
            return build(tools)
    return tools.cached(key, build)
