"""Incremental ChatML rendering for sessions: a growing conversation re-renders only what changed.

Built on :func:`~.render.chatml_pieces` (called read-only): a message's turn text depends on the
message, on its neighbours' roles (a run of tool results is one user turn: the first opens it, the
last closes it), on whether it comes after the last real user query (an assistant turn there keeps
its ``<think>`` block) and, for the first turn, on the tools and every system message (merged into
it by ``chatml-multi-system``). So when messages are appended, what can change is:

- the last earlier turn that is not a system message (a tool run it ended may go on), re-rendered
  with the turn before it as context;
- when a new real user query arrives, every turn after the previous query (their reasoning is
  dropped): the conversation from that query on is re-rendered;
- when a new system message arrives (``chatml-multi-system``), the leading system turn.

The new messages are rendered in a *window*: the last query, the context turns and the new
messages, through the same renderer (so the same checks). Anything unexpected — an error, input
that is not a list of dicts, images numbered by ``add_vision_id``, ``continue_final_message``,
``decode_tool_arguments`` — steps aside to a full render (the session's fallback), which is the
one checked path. This is the fast path of the ``session follow-up`` rows of
``benchmarks/bench_session.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import is_
from typing import TYPE_CHECKING, Any

from .render import chatml_pieces
from .tokens import (
    GENERATION_PROMPT,
    GENERATION_PROMPT_NO_THINKING,
    TOOL_RESPONSE_CLOSE,
    TOOL_RESPONSE_OPEN,
    TURN_END,
    USER_TURN,
)
from .untrusted import CHATML_READING

if TYPE_CHECKING:
    from ...format import Conversation, Tools
    from ...guard import ControlTokenGuard

__all__ = ["ChatMLIncremental", "incremental_renderer"]

# Options under which a turn's text is not a function of the message and its neighbours (images
# numbered across the conversation), or the prompt is not the turns joined: full renders only.
_FULL_RENDER_OPTIONS = ("add_vision_id", "continue_final_message", "decode_tool_arguments")
_TEMPLATE_OPTIONS = ("enable_thinking", "preserve_thinking", "add_vision_id")
# How far the joined head of the prompt may lag behind the stable turns before it is extended:
# extending copies the head, so it is done now and then, not on every request.
_HEAD_LAG = 16
_PLACEHOLDER_QUERY = {"role": "user", "content": "q"}
_DICT_ONLY = frozenset({dict})


def incremental_renderer(
    guard: ControlTokenGuard | None, tools: Tools, merge_system: bool, options: Mapping[str, Any]
) -> ChatMLIncremental | None:
    """The per-session state for these tools and options, or ``None`` where only full renders are exact."""
    if any(options.get(name) not in (None, False) for name in _FULL_RENDER_OPTIONS):
        return None
    if guard is not None:
        try:
            tools = guard.guard_tools(tools)
        except Exception:  # every render raises it: full renders do
            return None
    template_options = {name: options[name] for name in _TEMPLATE_OPTIONS if name in options}
    return ChatMLIncremental(guard, tools, merge_system, template_options)


def _all_dicts(messages: list[Any]) -> bool:
    return set(map(type, messages)) <= _DICT_ONLY


def _is_real_query(kind: str, text: str) -> bool:
    """Whether a turn is a user query the template's last-query scan stops at (not a wrapped tool response)."""
    if kind != "user":
        return False
    query = text[len(USER_TURN):-len(TURN_END)]
    return not (query.startswith(TOOL_RESPONSE_OPEN) and query.endswith(TOOL_RESPONSE_CLOSE))


class ChatMLIncremental:
    """One session's rendered turns (see the module docstring). Not shared: the session holds it under a lock."""

    __slots__ = ("_guard", "_head", "_head_upto", "_kinds", "_last_query", "_merge", "_options", "_prologue",
                 "_rendered", "_texts", "_tools")

    def __init__(self, guard: ControlTokenGuard | None, tools: Tools, merge_system: bool,
                 template_options: dict[str, Any]) -> None:
        self._guard, self._tools, self._merge, self._options = guard, tools, merge_system, template_options
        self._reset()

    def _reset(self) -> None:
        self._rendered: list[Any] = []  # the caller's message objects, as last rendered
        self._texts: list[str] = []  # each message's turn text ("" for a system message: it is in the prologue)
        self._kinds: list[str] = []  # each message's role as rendered ("system" for a merged one)
        self._prologue = ""
        self._last_query = -1
        self._head = ""  # the prologue and texts[:head_upto], joined
        self._head_upto = 0

    def render(self, messages: Conversation, add_generation_prompt: bool | None) -> str | None:
        """The prompt ``render`` gives, or ``None`` (state dropped) to step aside to a full render."""
        try:
            enable_thinking = self._options.get("enable_thinking")
            tail = (GENERATION_PROMPT_NO_THINKING if enable_thinking is False else GENERATION_PROMPT
                    ) if add_generation_prompt else ""
            rendered = self._rendered
            extends = (type(messages) is list and rendered and len(messages) >= len(rendered)
                       and all(map(is_, rendered, messages)))
            if type(messages) is not list or not _all_dicts(messages[len(rendered):] if extends else messages):
                self._reset()
                return None
            stable = self._extend(messages) if extends else self._first(messages)
        except Exception:  # the full render raises it, or renders what this could not
            self._reset()
            return None
        self._rendered = list(messages)
        return self._joined(stable, tail)

    def _pieces(self, window: list[Any], tools: Tools) -> tuple[list[str], list[str], Sequence[int | None], list[int]]:
        """The window's pieces, roles, origins and where each message's pieces start (``TurnSpans``)."""
        if self._guard is not None:
            window = self._guard.guard_messages(window, CHATML_READING)
        pieces, roles, origins, _, (_, _, starts) = chatml_pieces(window, tools, False, self._merge, self._options)
        return pieces, roles, origins, starts

    def _first(self, messages: list[Any]) -> int:
        """Render every message; the index before which the turns are taken as stable."""
        pieces, roles, origins, starts = self._pieces(messages, self._tools)
        count = len(messages)
        self._texts, self._kinds = [""] * count, ["system"] * count
        self._take(pieces, roles, origins, starts, range(count), 0)
        self._prologue = self._head = "".join(pieces[:starts[0]])
        self._head_upto = 0
        self._last_query = self._find_query(0, count)
        return max(0, count - 2)

    def _take(self, pieces: list[str], roles: list[str], origins: Sequence[int | None], starts: list[int],
              indexes: Sequence[int], keep_from: int) -> None:
        """Store the turn texts of the rendered window whose message index (``indexes[origin]``) is ≥ ``keep_from``."""
        texts, kinds = self._texts, self._kinds
        for pos, origin in enumerate(origins):
            if origin is not None and indexes[origin] >= keep_from:
                texts[indexes[origin]] = "".join(pieces[starts[pos]:starts[pos + 1]])
                kinds[indexes[origin]] = roles[pos]

    def _find_query(self, start: int, stop: int) -> int:
        """The last real user query among messages ``start`` to ``stop - 1`` (-1 if none)."""
        for index in range(stop - 1, start - 1, -1):
            if _is_real_query(self._kinds[index], self._texts[index]):
                return index
        return -1

    def _extend(self, messages: list[Any]) -> int:
        """Render the new messages and the earlier turns they can change; the index of the first changed turn."""
        old, count = len(self._rendered), len(messages)
        if count == old:
            return old
        kinds, query = self._kinds, self._last_query
        last = old - 1  # the last earlier turn that is not a system message: a tool run it ended may go on
        while kinds[last] == "system":
            last -= 1
        before = last - 1  # the turn before it, as context for its tool-run opening
        while before > query and kinds[before] == "system":
            before -= 1
        self._texts += [""] * (count - old)
        self._kinds += ["system"] * (count - old)
        if before > query:
            keep_from = self._render_window(messages, [query, *range(before, count)], last)
            new_query = self._find_query(old, count)
            if new_query < 0:
                return self._prologue_after_systems(messages, old, keep_from)
        keep_from = self._render_window(messages, range(query, count), query + 1)
        self._last_query = max(query, self._find_query(old, count))
        return self._prologue_after_systems(messages, old, keep_from)

    def _render_window(self, messages: list[Any], indexes: Sequence[int], keep_from: int) -> int:
        pieces, roles, origins, starts = self._pieces([messages[index] for index in indexes], None)
        self._take(pieces, roles, origins, starts, indexes, keep_from)
        return keep_from

    def _prologue_after_systems(self, messages: list[Any], old: int, keep_from: int) -> int:
        """Re-render the leading system turn when a new system message joined it (multi-system)."""
        kinds = self._kinds
        if self._merge and "system" in kinds[old:]:
            systems = [messages[index] for index, kind in enumerate(kinds) if kind == "system"]
            pieces, _, _, starts = self._pieces([*systems, _PLACEHOLDER_QUERY], self._tools)
            self._prologue = "".join(pieces[:starts[0]])
            self._head, self._head_upto = self._prologue, 0
        return keep_from

    def _joined(self, stable: int, tail: str) -> str:
        """The prompt: the joined head, extended now and then up to ``stable``, the other turns, ``tail``."""
        texts = self._texts
        if stable < self._head_upto:
            self._head, self._head_upto = "".join((self._prologue, *texts[:stable])), stable
        elif stable - self._head_upto >= _HEAD_LAG:
            self._head, self._head_upto = "".join((self._head, *texts[self._head_upto:stable])), stable
        return "".join((self._head, *texts[self._head_upto:], tail))
