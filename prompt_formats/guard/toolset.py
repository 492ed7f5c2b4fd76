"""The guard over tool definitions, and what it keeps about toolsets it has checked.

Tool definitions are rendered as JSON: every string, keys included, is untrusted. A
:class:`~prompt_formats.tools.PreparedTools` is checked once (the verdict is cached on it); a large
plain list goes through :data:`~prompt_formats.tools.PLAIN_TOOLS_CACHE`.
"""

from __future__ import annotations

import copy
import marshal
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import FormatError
from ..tools import PLAIN_TOOLS_CACHE, PreparedTools
from .policy import FieldPolicy

__all__ = ["ToolsetPolicy"]


class ToolsetPolicy(FieldPolicy):
    """The tool-definition policy of :class:`~prompt_formats.guard.ControlTokenGuard` (a mixin)."""

    _cache_key: str

    def guard_tools(self, tools: Any) -> Any:
        """Apply the policy to every string of the tool definitions (rendered as JSON), keys included.

        A :class:`~prompt_formats.tools.PreparedTools` is checked once: the verdict (itself, a new
        ``PreparedTools`` of the escaped tools, or the error) is cached on it; it is returned itself
        when unchanged. A plain list is checked on every call (one orjson encoding, one search) and
        returned itself when unchanged, else as a new list.
        """
        if self.policy == "allow" or not tools:
            return tools
        if isinstance(tools, PreparedTools):
            verdict = tools.cached(self._cache_key, self._prepared_verdict)
            if verdict is None:
                return tools
            if isinstance(verdict, FormatError):
                raise copy.copy(verdict)  # a fresh exception each time: no traceback piles up on the cached one
            return verdict
        if type(tools) is not list and (
            isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence)
        ):
            return tools
        if len(tools) >= _LARGE_TOOLSET:
            return PLAIN_TOOLS_CACHE.get(self._cache_key, tools, _SeenToolset.first_sight(self)).tools_for(self, tools)
        return self._checked_tool_list(tools)

    def _checked_tool_list(self, tools: Sequence[Any]) -> Any:
        """A plain list checked on this call: one orjson encoding and one search when it is clean."""
        if self._blob_clean(tools):
            return tools
        return self._tool_list(tools)

    def _tool_list(self, tools: Sequence[Any]) -> Any:
        new_tools = []
        changed = False
        for i, tool in enumerate(tools):
            new_tool = self.guard_json(tool, f"tools[{i}]")
            changed = changed or new_tool is not tool
            new_tools.append(new_tool)
        return new_tools if changed else tools

    def _prepared_verdict(self, tools: tuple[Mapping[str, Any], ...]) -> PreparedTools | FormatError | None:
        if self._blob_clean(tools):
            return None
        try:
            new_tools = self._tool_list(tools)
        except FormatError as error:  # a token under reject, or a value too deep to check
            return error
        return None if new_tools is tools else PreparedTools(new_tools)


# From this many tools on, a plain list goes through the content-keyed cache (see _SeenToolset).


_LARGE_TOOLSET = 16


class _SeenToolset:
    """What the guard keeps, in :data:`~prompt_formats.tools.PLAIN_TOOLS_CACHE`, about a large plain
    tool list it has checked: that its content is clean (or needs escaping), and from its second
    sighting on a :class:`PreparedTools` of it.

    Agents resend the same large toolset on every request. Checking it costs an encoding of the
    whole list each time; handing the format a ``PreparedTools`` instead lets the guard's cache
    lookup replace the format's own (one ``marshal`` dump either way) and the tools block be
    rendered once. The deep copy a ``PreparedTools`` makes is paid on the second sighting, so a
    toolset seen only once never pays it. Entries are keyed by content, so every call builds from
    its own list: nothing of an earlier caller's list is handed out.
    """

    __slots__ = ("clean", "prepared")

    def __init__(self, clean: bool) -> None:
        self.clean = clean
        self.prepared: PreparedTools | None = None

    @staticmethod
    def first_sight(guard: ToolsetPolicy) -> Callable[[Sequence[Any]], _SeenToolset]:
        def build(tools: Sequence[Any]) -> _SeenToolset:
            seen = _SeenToolset(guard._blob_clean(tools))
            if not seen.clean:
                guard._tool_list(tools)  # under reject, raises (and nothing is cached)
            seen.prepared = _FIRST_SIGHT
            return seen

        return build

    def tools_for(self, guard: ToolsetPolicy, tools: Sequence[Any]) -> Any:
        prepared = self.prepared
        if prepared is _FIRST_SIGHT:  # the call that just built this entry: no copy yet
            self.prepared = None
            return tools if self.clean else guard._tool_list(tools)
        if prepared is None:
            try:
                # Built from a marshal copy, not from the caller's list: a deep copy shares the
                # list's strings, which would change its marshal dump (and so its cache keys).
                own = marshal.loads(marshal.dumps(list(tools)))
                prepared = PreparedTools(own if self.clean else guard._tool_list(own))
            except (FormatError, ValueError):  # not preparable (a tool without a name): a list every time
                prepared = _UNPREPARABLE
            self.prepared = prepared
        if prepared is _UNPREPARABLE:
            return tools if self.clean else guard._tool_list(tools)
        return prepared


_FIRST_SIGHT: Any = object()
_UNPREPARABLE: Any = object()
