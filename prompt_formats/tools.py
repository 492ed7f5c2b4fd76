"""Prepared toolsets: validate a tool list once, and cache what each format renders from it.

Agent clients send the same 40-odd tools, with nested JSON schemas, on every request; serialising
them is a large share of rendering such a request. A :class:`PreparedTools` is immutable (the tool
dicts are deep-copied when it is made), so a format can cache its rendered form of the tools on it
and reuse that on every call. Keep one per session, or per distinct tool list, in a server.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from .errors import InvalidInputError, type_name
from .messages import ToolDefinition

__all__ = ["PreparedTools", "prepare_tools"]

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
        tool_list = [copy.deepcopy(tool) for tool in tools]
        self._definitions = tuple(ToolDefinition.from_openai(tool, i) for i, tool in enumerate(tool_list))
        self._tools: tuple[Mapping[str, Any], ...] = tuple(tool_list)
        self._cache: dict[str, Any] = {}
        self._lock = threading.Lock()

    @property
    def tools(self) -> tuple[Mapping[str, Any], ...]:
        """The tool dicts (private copies: do not mutate them)."""
        return self._tools

    @property
    def definitions(self) -> tuple[ToolDefinition, ...]:
        """The tools as validated :class:`ToolDefinition` objects."""
        return self._definitions

    @property
    def names(self) -> tuple[str, ...]:
        """The tools' function names, in order."""
        return tuple(d.name for d in self._definitions)

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
        self._tools = state
        self._definitions = tuple(ToolDefinition.from_openai(tool, i) for i, tool in enumerate(state))
        self._cache = {}
        self._lock = threading.Lock()


def prepare_tools(tools: Iterable[Mapping[str, Any]] | PreparedTools) -> PreparedTools:
    """Validate ``tools`` once and return a :class:`PreparedTools` (returned as is if it already is one)."""
    if isinstance(tools, PreparedTools):
        return tools
    return PreparedTools(tools)
