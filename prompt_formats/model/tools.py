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
import marshal
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import orjson

from .._text.plain import plain_data
from .._text.walk import MAX_NESTING, nesting_exceeds
from ..errors import FormatError, InvalidInputError, refusing_deep_stacks, type_name, unreadable
from .messages import ToolDefinition, tool_fields

__all__ = [
    "PLAIN_TOOLS_CACHE",
    "PlainToolsCache",
    "PreparedTools",
    "ToolsetCache",
    "offered_names",
    "prepare_tools",
    "rendered_tools",
    "require_tool_objects",
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
        try:
            copies = [_own_copy(tool, i) for i, tool in enumerate(tools)]
        except FormatError:
            raise
        except Exception as error:  # an iterable that fails when iterated
            raise unreadable("tools", error) from None
        self._adopt(copies)

    @classmethod
    def owning(cls, tools: list[Mapping[str, Any]]) -> PreparedTools:
        """A toolset over ``tools`` itself instead of a copy, validated as the constructor validates.

        Only for a caller that made the list and its dicts and never changes them afterwards (the
        record readers, which decode each record's tools from JSON): it saves the deep copy.
        """
        prepared = cls(())  # empty, then adopting: not cls.__new__(cls), which the compiled build lacks
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

    def __reduce__(self) -> tuple[Callable[[list[Mapping[str, Any]]], PreparedTools], tuple[Any, ...]]:
        # Rebuilt from the tools (unpickling made them fresh: adopted, not copied), the cache anew. A
        # reduction rather than __getstate__/__setstate__: the compiled build's classes have no bare __new__.
        return PreparedTools.owning, (list(self._tools),)


def offered_names(tools: Any) -> frozenset[str] | None:
    """The names of the tools a request offered (``None`` when it offered none), for a reply parser's
    note on a call to any other; raises :class:`InvalidInputError` for tools that are not tool objects."""
    if not tools:
        return None
    if isinstance(tools, PreparedTools):
        return frozenset(tools.names)
    if not isinstance(tools, (list, tuple)):
        raise InvalidInputError("tools", f"expected a list of tool objects, got {type_name(tools)}")
    return frozenset(ToolDefinition.from_openai(tool, i).name for i, tool in enumerate(tools))


def _own_copy(tool: Any, index: int) -> Any:
    """A deep copy of one tool's plain data; a tool nested deeper than :data:`MAX_NESTING` is refused.

    (``copy.deepcopy`` recurses: checked first, the depth cannot depend on the caller's stack.)
    """
    try:
        if nesting_exceeds(tool):
            raise InvalidInputError(f"tools[{index}]", f"nested more than {MAX_NESTING} levels deep")
        return copy.deepcopy(plain_data(tool))  # (values of other types: as transformers hands them over)
    except RecursionError:  # called with the stack already nearly full, or an object's own deep state
        raise InvalidInputError(f"tools[{index}]", "nested too deeply to copy") from None
    except FormatError:
        raise
    except Exception as error:  # a client's mapping that fails when read
        raise unreadable(f"tools[{index}]", error) from None


@refusing_deep_stacks("tools")  # (the stack nearly full; deep tools are refused earlier, by their index)
def prepare_tools(tools: Iterable[Mapping[str, Any]] | PreparedTools) -> PreparedTools:
    """Validate ``tools`` once and return a :class:`PreparedTools` (returned as is if it already is one).

    Raises :class:`~prompt_formats.errors.InvalidInputError` naming the tool for a malformed one, or
    one holding more than :data:`~prompt_formats.guard.MAX_NESTING` nested dicts and lists.
    """
    return tools if isinstance(tools, PreparedTools) else PreparedTools(tools)


# With these options orjson raises for every subclass of str, int, float, dict and list, for
# dataclasses and datetimes (and, always, for bytes, lone surrogates, integers beyond 64 bits,
# non-string keys and nesting beyond its limit). It still writes tuples, enums and UUIDs as JSON,
# and NaN and infinities as null (see PlainToolsCache).
_EXACT_TYPES_ONLY = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
#: An entry for a list that PreparedTools refuses: such a list is rendered from itself every time.
_REFUSED: Any = None
_UNKNOWN: Any = object()


def _containers_copied(value: Any) -> Any:
    """``value`` with its dicts, lists and tuples copied and everything else shared (nesting bounded by
    orjson's limit). A tuple too: it cannot change, but a list or dict inside it can."""
    if type(value) is dict:
        return {key: _containers_copied(item) for key, item in value.items()}
    if type(value) is list:
        return [_containers_copied(item) for item in value]
    if type(value) is tuple:
        return tuple([_containers_copied(item) for item in value])
    return value


class _SeenOnce:
    """The entry of a content seen once: at its next sighting it is prepared, its toolset starting
    with what was built from the content at the first (``built``: render key -> value)."""

    __slots__ = ("built",)

    def __init__(self, built: dict[str, Any]) -> None:
        self.built = built


def _content_key(tools: list[Any]) -> bytes:
    """``marshal``'s bytes of the items of ``tools``, in a fresh tuple: raises ``ValueError`` for a type
    marshal does not write, or nesting too deep for it.

    marshal flags an object referenced more than once at the time (so that a second occurrence is
    written as a back-reference): the list itself would be flagged or not by how many names its
    caller holds it by (a compiled caller holds its arguments without a reference of its own), and the
    same content would get two keys. The tuple is referenced once. The items are flagged the same way:
    a list of tool dicts also held elsewhere and a list of their copies get two keys (a miss, never
    another content's entry).
    """
    return marshal.dumps(tuple(tools))


class PlainToolsCache:
    """The one content-keyed cache from a plain tool list to its :class:`PreparedTools`; bounded, thread-safe.

    :meth:`get` returns the toolset a format renders a plain list as: from the second sighting of
    its content on, a ``PreparedTools`` of it (an exact copy, made once); the list itself when it is
    seen for the first time (it costs its key only), is not made of exact JSON types only, or is
    refused by ``PreparedTools``. Every rendered form (:func:`rendered_tools`) is cached on the toolset;
    one built from a content's first sighting is kept with its key and goes into that toolset.

    Why a list never gets another content's toolset. The key is :func:`_content_key`, ``marshal``'s
    bytes of the list's items, which write every object by its exact type (``int``, ``float`` by its 8
    bytes, ``bool``, ``None``, ``str``, ``tuple``, ``list``, ``dict`` in key order) and refuses other
    types, except those with the buffer protocol (numpy's ``float64``), written as ``bytes``. An entry
    is served only once a list with its key passed orjson with subclasses refused (no ``bytes`` either):
    then every list with that key is made of the same exact values, in the same order. The list served
    last is recognised by identity first: the next time by its key, from then on by its orjson text
    together with equality (``==``) to a copy of its own containers sharing its values, which is cheaper
    (equality mostly compares identities) and as exact: equal texts fix the structure, key order,
    strings and the type and bits of every number, and equality rules out what orjson writes alike (a
    tuple and a list, an enum member or a UUID and its value, NaN and ``None``). A list mutated in place
    therefore never hits a stale entry.

    At most ``max_entries`` entries and about ``max_bytes`` (twice the key's length per entry: the
    key and the toolset's copy) are kept; the oldest goes first. Readers take no lock.
    """

    #: Whether every list is decoded JSON, never changed afterwards (:class:`ToolsetCache`): its
    #: orjson text is then an exact key, and the toolset adopts the list itself.
    decoded = False

    def __init__(self, max_entries: int = 64, max_bytes: int = 32 * 1024 * 1024) -> None:
        # key -> (key, toolset, _REFUSED or a _SeenOnce), insertion order is eviction order; the list
        # served last: (list, key, toolset, its orjson text, a copy of its containers).
        self._entries: dict[bytes, tuple[bytes, Any]] = {}
        self._last: tuple[Any, bytes, PreparedTools, Any, Any] | None = None
        self._unseen: tuple[Any, bytes] | None = None  # (list, key) of a first sighting being built
        self._lock = threading.Lock()
        self._bytes = 0
        self.max_entries = max_entries
        self.max_bytes = max_bytes

    def get(self, tools: L) -> L | PreparedTools:
        """The toolset to render ``tools`` with: its ``PreparedTools`` when the content is cacheable, else ``tools``."""
        prepared = self.lookup(tools)[0]
        return tools if prepared is None else prepared

    def rendered(self, tools: Any, key: str, build: Callable[[Any], T]) -> T:
        """``build(tools)``, cached on the toolset of ``tools`` under ``key`` (see :func:`rendered_tools`):
        on itself if it is a ``PreparedTools``; tools of other types than JSON's, uncached, as their
        plain data (:func:`~prompt_formats._text.plain.plain_data`). A content seen for the first time
        counts as seen only once its build succeeded; what it built is the value of its toolset from
        the second sighting on."""
        if isinstance(tools, PreparedTools):
            return tools.cached(key, build)
        prepared, _ = self.lookup(tools, see=False)
        if prepared is None:
            unseen = self._unseen
            if unseen is None or unseen[0] is not tools:
                # Not keyable by orjson with other types than JSON's refused: built from what
                # transformers hands the template (too deep to read so: the build names the tool).
                try:
                    plain = plain_data(tools)
                except RecursionError:
                    plain = tools
                return build(plain)
            value = build(tools)
            self._unseen = None
            self._insert((unseen[1], _SeenOnce({key: value})))
            return value
        return prepared.cached(key, build)

    def lookup(self, tools: Any, see: bool = True) -> tuple[PreparedTools | None, bool]:
        """``(toolset, seen)``: the ``PreparedTools`` of ``tools`` (``None`` when not cacheable, or
        seen for the first time), and whether its content was seen already. ``see=False``: a content
        seen for the first time is not yet marked as seen."""
        if type(tools) is not list:
            return None, False
        if self.decoded:
            return self._decoded_list(tools)
        last = self._last
        if last is not None and last[0] is tools:
            prepared = self._known_list(last)
            if prepared is not _UNKNOWN:
                return prepared, True
        try:
            key = _content_key(tools)
        except ValueError:  # another type, or nested too deeply: not keyable
            return None, False
        entry = self._entries.get(key)
        if entry is None:  # a content seen once costs its key only
            if see:
                self._insert((key, _SeenOnce({})))
            else:
                self._unseen = (tools, key)
            return None, False
        if type(entry[1]) is _SeenOnce:
            entry = self._promoted(key, tools, entry[1])
            if entry is None:
                return None, True
        prepared = entry[1]
        if prepared is not None:
            self._last = (tools, key, prepared, None, None)
        return prepared, True

    def _decoded_list(self, tools: list[Any]) -> tuple[PreparedTools | None, bool]:
        """:meth:`lookup` of a list decoded from JSON (exact types: its orjson text is an exact key)."""
        try:
            key = orjson.dumps(tools)
        except TypeError:  # an integer beyond 64 bits, a lone surrogate
            return None, False
        entry = self._entries.get(key)
        if entry is not None:
            return entry[1], True
        try:
            prepared: PreparedTools | None = PreparedTools.owning(tools)
        except InvalidInputError:
            prepared = _REFUSED
        self._insert((key, prepared))
        return prepared, False

    def _promoted(self, key: bytes, tools: list[Any], seen: _SeenOnce) -> tuple[bytes, PreparedTools | None] | None:
        """The entry of a content seen once before, when its list is made of exact JSON types only
        (then every list with its key is): its toolset made from the key, an exact copy, holding what
        was built at the first sighting. That list had the same key, so the same exact content: only
        the buffer protocol's objects share marshal's bytes with another type, and their bytes are not
        JSON, so no list with such a key passes orjson."""
        try:
            orjson.dumps(tools, option=_EXACT_TYPES_ONLY)
        except (TypeError, ValueError, RecursionError):
            return None
        prepared: PreparedTools | None
        try:
            made = PreparedTools.owning(list(marshal.loads(key)))
        except InvalidInputError:
            prepared = _REFUSED
        else:
            made._cache.update(seen.built)
            prepared = made
        entry = (key, prepared)
        self._insert(entry)
        return entry

    def _known_list(self, last: tuple[Any, bytes, PreparedTools, Any, Any]) -> Any:
        """The toolset of the very list served last, its content verified; ``_UNKNOWN`` when it no
        longer has it. The second time by its key; from then on by its orjson text and equality
        with a copy of its containers sharing its values (equality mostly compares identities)."""
        tools, key, prepared, text, shadow = last
        try:
            if shadow is None:
                if _content_key(tools) != key:
                    return _UNKNOWN
                self._last = (tools, key, prepared, orjson.dumps(tools, option=_EXACT_TYPES_ONLY),
                              _containers_copied(tools))
                return prepared
            same = orjson.dumps(tools, option=_EXACT_TYPES_ONLY) == text and tools == shadow
        except (TypeError, ValueError, RecursionError):  # (the copy and the comparison recurse: a deep caller)
            return _UNKNOWN
        return prepared if same else _UNKNOWN

    def _insert(self, entry: tuple[bytes, Any]) -> None:
        key = entry[0]
        size = 2 * len(key)
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= 2 * len(old[0])
            self._entries[key] = entry
            self._bytes += size
            self._evict()

    def _evict(self) -> None:
        entries = self._entries
        while entries and (len(entries) > self.max_entries or self._bytes > self.max_bytes):
            key, _ = entries.pop(next(iter(entries)))
            self._bytes -= 2 * len(key)
        if not entries:
            self._last = None

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()
            self._last = None
            self._bytes = 0

    def resize(self, max_entries: int, max_bytes: int) -> None:
        """Set the bounds (``max_entries=0`` disables caching), dropping the oldest entries beyond them."""
        with self._lock:
            self.max_entries = max_entries
            self.max_bytes = max_bytes
            self._evict()

    def __len__(self) -> int:
        """How many contents the cache knows: prepared, or seen once."""
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        """The bytes counted against ``max_bytes``."""
        return self._bytes


class ToolsetCache(PlainToolsCache):
    """The record readers' cache (one per job): :class:`PlainToolsCache` over lists decoded from
    JSON, which the caller made and never changes, so the toolset adopts the list itself (no copy,
    :meth:`PreparedTools.owning`). ``size`` bounds the entries."""

    decoded = True

    def __init__(self, size: int) -> None:
        super().__init__(max_entries=size)


#: The process-wide cache the formats use for plain tool lists (ChatML: the tools block).
PLAIN_TOOLS_CACHE = PlainToolsCache()


#: ``rendered_tools(tools, key, build)``: what a format renders from ``tools`` under ``key``,
#: ``build(tools)``, computed once per toolset. The one way a format asks for a toolset's rendered
#: form: a :class:`PreparedTools` caches it on itself; a plain list becomes one through
#: :data:`PLAIN_TOOLS_CACHE` (or, not cacheable, is built from every time). ``build`` must depend on
#: the tools' content only. (The cache's bound method itself: a format's call is one call.)
rendered_tools = PLAIN_TOOLS_CACHE.rendered


def require_tool_objects(tools: Any) -> None:
    """Raise :class:`InvalidInputError` unless ``tools`` is ``None``, a :class:`PreparedTools` or a list
    of tool objects (mappings): what transformers takes, for a template that writes none of them."""
    if tools is None or isinstance(tools, PreparedTools):
        return
    if not isinstance(tools, (list, tuple)):
        raise InvalidInputError("tools", f"expected a list of tool objects, got {type_name(tools)}")
    for index, tool in enumerate(tools):
        if type(tool) is not dict and not isinstance(tool, Mapping):  # (the ABC's test is the slow one)
            raise InvalidInputError(f"tools[{index}]", f"expected a tool object, got {type_name(tool)}")
