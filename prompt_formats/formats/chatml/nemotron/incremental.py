"""Incremental rendering of the Nemotron 3 templates for sessions: a growing conversation re-renders only what changed.

Built on :func:`~.render.nemotron_noted` (read-only). A turn's text depends on the message, on
whether it comes first after the system turn, on its neighbours' roles (a run of tool results is
one user turn), on whether it is the last, and on where the last user message is (the assistant
turns before it are cut; under an effort flag, it carries the note). So when messages are
appended, what can change is the last earlier turn and, when a user message arrives, the turns
from the previous last user message on (from the first turn, when there was none: that one is a
full render). Those and the new messages are rendered in a *window*:
the messages from the first that can change, after a placeholder of the role before them (so the
first one's tool-run opening is as in the whole conversation). Anything unexpected steps aside
to a full render, the one checked path (as for :mod:`..incremental`, whose module docstring says
why sessions do this).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....format.chat_format import Tools
from ....format.history import ExtendingRenderer, RenderAgain, turn_texts
from ....guard import ControlTokenGuard
from ..json_calls.render import roles_of
from ..options import session_tools
from ..untrusted import NEMOTRON_READING
from .render import generation_prompt, last_user, nemotron_noted, walk_options
from .template import NemotronTemplate
from .tool_spec import check_written_keys

__all__ = ["NemotronIncremental", "nemotron_incremental_renderer"]

# The placeholders a window starts with: the role before its first message (a tool's, or another
# that is neither a user's nor a system's).
_AFTER_TOOL = {"role": "tool", "content": ""}
_AFTER_OTHER = {"role": "", "content": ""}


def nemotron_incremental_renderer(guard: ControlTokenGuard | None, tools: Tools, template: NemotronTemplate,
                                  options: Mapping[str, Any]) -> NemotronIncremental | None:
    """The per-session state for these tools and options, or ``None`` where only full renders are
    exact (:func:`..options.session_tools`, ``render``'s reading of the options)."""
    reuses, tools = session_tools(guard, tools, options)
    if not reuses:
        return None
    try:
        if guard is not None:
            check_written_keys(tools, guard)
        tail = generation_prompt(template, walk_options(template, options)["enable_thinking"])
    except Exception:  # every render raises it: full renders do
        return None
    return NemotronIncremental(guard, tools, template, options, tail)


class NemotronIncremental(ExtendingRenderer):
    """One session's rendered turns (the module docstring). Not shared: the session holds it under a lock."""

    __slots__ = ("_first_turn", "_guard", "_head", "_options", "_roles", "_tail", "_template", "_texts", "_tools",
                 "_user")

    def __init__(self, guard: ControlTokenGuard | None, tools: Tools, template: NemotronTemplate,
                 options: Mapping[str, Any], tail: str) -> None:
        self._guard, self._tools, self._template, self._options, self._tail = guard, tools, template, options, tail
        self._reset()

    def _reset(self) -> None:
        self._rendered: list[Any] = []  # the caller's message objects, as last rendered
        self._texts: list[str] = []  # each message's turn text ("" for the leading system message)
        self._roles: list[str] = []  # each message's role as the template compares it
        self._head: tuple[str, ...] = ()  # the system turn
        self._first_turn = 0  # the first message after the system turn
        self._user = -1  # the last user message (-1: none)
        self._chunks: list[str] = []
        self._chunk_ends: list[int] = []

    def render(self, messages: Any, add_generation_prompt: bool | None) -> str | None:
        """The prompt ``render`` gives, or ``None`` (state dropped) to step aside to a full render."""
        tail = self._tail if add_generation_prompt else ""  # (read first: what raises, raises before any change)
        stable = self._stable(messages)
        return None if stable is None else self._prompt(self._head, self._texts, stable, tail)

    def _turns(self, window: list[Any], tools: Tools) -> tuple[list[str], list[int], list[str]]:
        """The (guarded) window's pieces, where each message's start (then where the last ends; the
        pieces before the first: the system turn) and each message's role."""
        _, noted = nemotron_noted(window, tools, False, self._template, self._options, turns_only=True)
        return noted.pieces, noted.spans[2], noted.roles

    def _guarded(self, messages: list[Any]) -> list[Any]:
        """The messages as the renders read them, the guard's policy applied."""
        return messages if self._guard is None else list(self._guard.guard_messages(messages, NEMOTRON_READING))

    def _first(self, messages: list[Any]) -> int:
        """Render every message; the index before which the turns are taken as stable."""
        pieces, starts, self._roles = self._turns(self._guarded(messages), self._tools)
        self._texts = self._unsplit(pieces, starts)
        self._head = tuple(pieces[:starts[0]])
        self._chunks, self._chunk_ends = [], []
        self._first_turn = 1 if self._roles[0] == "system" else 0
        self._user = last_user(self._roles, self._first_turn)
        return max(0, len(messages) - 2)

    def _extend(self, messages: list[Any]) -> int:
        """Render the new messages and the earlier turns they can change; the index of the first changed turn."""
        old = len(self._rendered)
        if len(messages) == old:
            return old
        start, user = old - 1, self._user  # the last earlier turn: a run it ended may go on; it is no longer last
        new = self._guarded(messages[old:])
        found = last_user(roles_of(new), 0)
        if found >= 0:  # a new last user message: the turns from the previous one (none: the first) on change
            start, user = min(start, user) if user >= 0 else self._first_turn, old + found
        if start <= self._first_turn:
            raise RenderAgain  # the first turn: whether a tool run is opened depends on its being first
        lead = _AFTER_TOOL if self._roles[start - 1] == "tool" else _AFTER_OTHER
        pieces, starts, roles = self._turns([lead, *self._guarded(messages[start:old]), *new], None)
        self._texts[start:] = turn_texts(pieces, starts, 1)
        self._roles[start:] = roles[1:]
        self._user = user
        return start
