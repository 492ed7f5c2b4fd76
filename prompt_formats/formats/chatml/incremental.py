"""Incremental ChatML rendering for sessions: a growing conversation re-renders only what changed.

Built on :func:`~.render.chatml_pieces` (called read-only): a message's turn text depends on the
message, on its neighbours' roles (a run of tool results is one user turn: the first opens it, the
last closes it), on whether it comes after the last real user query (an assistant turn there keeps
its ``<think>`` block) and, for the first turn, on whether a system turn comes before it (a tool
result first in the conversation opens no user turn). The prologue (the tools and every system
message, merged by ``chatml-multi-system``) is kept apart from the turns. So when messages are
appended, what can change is:

- the last earlier turn that is not a system message (a tool run it ended may go on), re-rendered
  with the turn before it as context;
- when a new real user query arrives, the assistant turns after the previous query (their
  reasoning is dropped; an assistant turn's text depends on nothing but the message and that);
- when a new system message arrives (``chatml-multi-system``), the prologue alone: the turns after
  it are kept, unless the conversation gains its first system turn (then everything is rendered
  again, since the first turn's opening can change).

The new messages are rendered in a *window*: the last query, the context turns and the new
messages, through the same renderer (so the same checks). Anything unexpected — an error, input
that is not a list or new messages that are not dicts, images numbered by ``add_vision_id``,
``continue_final_message``, ``decode_tool_arguments``, ``strict``, a value of an option that ``render``
refuses (read by :mod:`.options`, as ``render`` reads it) — steps aside to a full render (the
session's fallback), which is the one checked path. Why: an agent loop renders the whole
conversation again each turn; this writes only the new turn.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from ...format.history import ExtendingRenderer, RenderAgain
from .options import session_tools
from .render import chatml_pieces, guarded_noted
from .template import ABSENT, Template
from .tokens import (
    TOOL_RESPONSE_CLOSE,
    TOOL_RESPONSE_OPEN,
    TURN_END,
    USER_TURN,
)
from .untrusted import CHATML_READING

if TYPE_CHECKING:
    from ...format.chat_format import Conversation, Tools
    from ...guard import ControlTokenGuard

__all__ = ["ChatMLIncremental", "incremental_renderer"]

_TEMPLATE_OPTIONS = ("enable_thinking", "preserve_thinking", "reasoning_effort", "add_vision_id")
_PLACEHOLDER_QUERY = {"role": "user", "content": "q"}


def incremental_renderer(
    guard: ControlTokenGuard | None, tools: Tools, template: Template, options: Mapping[str, Any]
) -> ChatMLIncremental | None:
    """The per-session state for these tools and options, or ``None`` where only full renders are exact:
    a turn's text is then not a function of the message and its neighbours (images numbered across
    the conversation), or the prompt is not the turns joined, or a full render refuses the options
    or what the template leaves out (:func:`.options.renders_in_full`, ``render``'s reading of them)."""
    reuses, tools = session_tools(guard, tools, options)
    if not reuses:
        return None
    template_options = {name: options[name] for name in _TEMPLATE_OPTIONS if name in options}
    return ChatMLIncremental(guard, tools, template, template_options)


def _is_real_query(text: str) -> bool:
    """Whether a user's turn is a query the template's last-query scan stops at (not a wrapped tool response)."""
    start, end = len(USER_TURN), len(text) - len(TURN_END)  # (the query, tested where it is in its turn)
    return not (text.startswith(TOOL_RESPONSE_OPEN, start, end) and text.endswith(TOOL_RESPONSE_CLOSE, start, end))


def _by_message(roles: list[str], origins: Sequence[int | None], starts: list[int],
                count: int) -> tuple[list[str], list[int]]:
    """Each input message's role as rendered (``"system"``: a system message the prologue holds) and
    where its turn's pieces start, then where the last turn ends: a message without a turn of its
    own starts and ends where the next turn starts. ``roles``, ``origins``, ``starts``: by position."""
    if type(origins) is range:  # every message in place, after the leading ones left out
        return ["system"] * origins.start + roles, [starts[0]] * origins.start + starts
    if not len(roles) == len(origins) == len(starts) - 1:
        raise LookupError("the walk's notes do not match its turns")  # (a full render)
    turns = cast("list[int]", origins)  # each turn's input index, by position (after the merged system message)
    kinds, bounds = ["system"] * count, starts[-1:] * (count + 1)
    # The turns come in runs of consecutive messages between the system ones (merged into the
    # prologue: no turn); within a run, a turn's input index less its position is the same, and it
    # grows from run to run, so each run's end is found by bisection and copied whole (a loop over
    # every message cost a twentieth of a first render).
    position = 1 if origins[0] is None else 0  # (the merged system message: the prologue's)
    index = 0  # the next input index to be given its start
    while position < len(turns):
        run = turns[position]
        end = bisect_right(range(len(turns)), run - position, position, key=lambda at: turns[at] - at)
        # System messages before the run start (and end) where its first turn starts.
        bounds[index:run] = [starts[position]] * (run - index)
        index = run + end - position
        kinds[run:index] = roles[position:end]
        bounds[run:index] = starts[position:end]
        position = end
    return kinds, bounds


class ChatMLIncremental(ExtendingRenderer):
    """One session's rendered turns (see the module docstring). Not shared: the session holds it under a lock."""

    __slots__ = (
        "_guard",
        "_has_system",
        "_kinds",
        "_last_query",
        "_options",
        "_prologue",
        "_template",
        "_texts",
        "_tools",
    )
    _first_reads_any = True  # (every message, old ones in a window too, is read by the walk, as render reads it)

    def __init__(self, guard: ControlTokenGuard | None, tools: Tools, template: Template,
                 template_options: dict[str, Any]) -> None:
        self._guard, self._tools, self._template, self._options = guard, tools, template, template_options
        self._reset()

    def _reset(self) -> None:
        self._rendered: list[Any] = []  # the caller's message objects, as last rendered
        self._texts: list[str] = []  # each message's turn text ("" for a system message: it is in the prologue)
        self._kinds: list[str] = []  # each message's role as rendered ("system" for a merged one)
        # The tools block and the (merged) system turn, as pieces: the tools block is the toolset's one
        # string, not copied when a system message joins.
        self._prologue: tuple[str, ...] = ()
        self._has_system = False  # whether a system turn leads the messages (the first turn's opening)
        self._last_query = -1
        self._chunks: list[str] = []  # texts[previous end:end] joined, for each end in chunk_ends
        self._chunk_ends: list[int] = []

    def render(self, messages: Conversation, add_generation_prompt: bool | None) -> str | None:
        """The prompt ``render`` gives, or ``None`` (state dropped) to step aside to a full render."""
        thinking = self._options.get("enable_thinking", ABSENT)
        tail = self._template.generation_prompt(thinking) if add_generation_prompt else ""
        stable = self._stable(messages)
        return None if stable is None else self._prompt(self._prologue, self._texts, stable, tail)

    def _pieces(self, window: list[Any], tools: Tools) -> tuple[list[str], list[str], Sequence[int | None], list[int]]:
        """The window's pieces, roles, origins and where each message's pieces start (``TurnSpans``);
        under a guard, through its fast path where ``render`` takes it (else its checked path)."""
        guard = self._guard
        if guard is not None:
            fast = guard.fast_path(CHATML_READING) if not self._template.merge_system else None
            done = None if fast is None else guarded_noted(fast, window, tools, False, self._template, self._options,
                                                          turns_only=True)
            if done is not None:
                noted = done[1]
                return noted.pieces, noted.roles, noted.origins, noted.spans[2]
            window = guard.guard_messages(window, CHATML_READING)
        pieces, roles, origins, _, (_, _, starts) = chatml_pieces(window, tools, False, self._template, self._options)
        return pieces, roles, origins, starts

    def _first(self, messages: list[Any]) -> int:
        """Render every message; the index before which the turns are taken as stable."""
        pieces, roles, origins, starts = self._pieces(messages, self._tools)
        count = len(messages)
        self._kinds, bounds = _by_message(roles, origins, starts, count)
        self._texts = self._unsplit(pieces, bounds)
        self._prologue = tuple(pieces[:starts[0]])
        self._has_system = roles[0] == "system"
        self._chunks, self._chunk_ends = [], []
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
            if self._kinds[index] == "user" and _is_real_query(self._text(self._texts, index)):
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
            self._render_window(messages, [query, *range(before, count)], last)
            keep_from = last
        else:
            self._render_window(messages, range(query, count), query + 1)
            keep_from = query + 1
        new_query = self._find_query(old, count)
        if new_query >= 0:
            self._last_query = new_query
            keep_from = min(keep_from, self._drop_reasoning(messages, query + 1, keep_from))
        if self._template.merge_system and "system" in kinds[old:]:
            self._new_prologue(messages)
        return keep_from

    def _render_window(self, messages: list[Any], indexes: Sequence[int], keep_from: int) -> None:
        pieces, roles, origins, starts = self._pieces([messages[index] for index in indexes], None)
        self._take(pieces, roles, origins, starts, indexes, keep_from)

    def _drop_reasoning(self, messages: list[Any], start: int, stop: int) -> int:
        """Re-render the assistant turns ``start`` to ``stop - 1`` as turns before the last query
        (without reasoning); the first index re-rendered (``stop`` if none)."""
        if self._template.keeps_every_think_block(self._options.get("preserve_thinking", ABSENT)):
            return stop  # every assistant turn keeps its reasoning
        indexes = [index for index in range(start, stop) if self._kinds[index] == "assistant"]
        if not indexes:
            return stop
        window = [messages[index] for index in indexes]
        pieces, roles, origins, starts = self._pieces([*window, _PLACEHOLDER_QUERY], None)
        self._take(pieces, roles, origins[:len(window)], starts, indexes, start)
        return indexes[0]

    def _new_prologue(self, messages: list[Any]) -> None:
        """Re-render the leading system turn, which a new system message joined (multi-system)."""
        kinds = self._kinds
        systems = [messages[index] for index, kind in enumerate(kinds) if kind == "system"]
        pieces, roles, _, starts = self._pieces([*systems, _PLACEHOLDER_QUERY], self._tools)
        if (roles[0] == "system") is not self._has_system:
            raise RenderAgain  # the conversation gained its first system turn: every turn is rendered again
        self._prologue = tuple(pieces[:starts[0]])
