"""The guard over tool definitions, and what it keeps about toolsets it has checked.

Tool definitions are rendered as JSON: every string, keys included, is untrusted. A
:class:`~prompt_formats.model.tools.PreparedTools` is checked once (the verdict is cached on it); a large
plain list becomes one through :data:`~prompt_formats.model.tools.PLAIN_TOOLS_CACHE`, the cache the
formats render plain lists through, so it is checked once per content too.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import FormatError
from ..model.tools import PLAIN_TOOLS_CACHE, PreparedTools
from .policy import FieldPolicy

__all__ = ["ToolsetPolicy"]


class ToolsetPolicy(FieldPolicy):
    """The tool-definition policy of :class:`~prompt_formats.guard.ControlTokenGuard` (a mixin)."""

    _cache_key: str

    def guard_tools(self, tools: Any) -> Any:
        """Apply the policy to every string of the tool definitions (rendered as JSON), keys included.

        A :class:`~prompt_formats.model.tools.PreparedTools` is checked once: the verdict (itself, a new
        ``PreparedTools`` of the escaped tools, or the error) is cached on it; it is returned itself
        when unchanged. A large plain list is replaced by the ``PreparedTools`` of its content from
        :data:`~prompt_formats.model.tools.PLAIN_TOOLS_CACHE` (which renders the same bytes) and checked
        as one; a small one, or one not cacheable, is checked on every call (one orjson encoding,
        one search) and returned itself when unchanged, else as a new list.
        """
        if self.policy == "allow":
            return tools
        if type(tools) is not list and type(tools) is not tuple and isinstance(tools, (list, tuple)):
            # Another class of list: read once by iteration, as a renderer reads it, and that list
            # checked and passed on (its own length or truth value could hide what it holds).
            tools = list(tools)
        if not tools:
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
            toolset = PLAIN_TOOLS_CACHE.get(tools)
            if isinstance(toolset, PreparedTools):
                return self.guard_tools(toolset)
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


#: From this many tools on, a plain list is checked as the PreparedTools of its content: one check
#: per content, where a small list costs little to check on every call.
_LARGE_TOOLSET = 16
