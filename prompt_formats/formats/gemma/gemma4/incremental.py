"""Incremental Gemma 4 rendering for sessions: a growing conversation writes only what changed.

Built on the walk of :mod:`.render`. A message's text depends on the messages after it: the tool
results that follow it are written in its turn, and the next message that is no tool result decides
how its turn ends. So a message's text is final once another such message follows it, and the session
keeps the walk up to the last one, walking it and the new messages again at each extension. A new
user message after messages whose reasoning was written (now before the last user message, and so
left out) writes the conversation again, as does anything unexpected (an error, input that is not a
list of dicts: the session's full render, the one checked path).
"""

from __future__ import annotations

from typing import Any

from ....format.chat_format import Conversation
from ....format.history import ExtendingRenderer, RenderAgain
from ....model.messages import message_dicts, role_of
from .render import Walk

__all__ = ["Gemma4Incremental"]


class Gemma4Incremental(ExtendingRenderer):
    """One session's walk of the prompt. Not shared: the session holds it under a lock."""

    __slots__ = ("_bos", "_preserve", "_resume", "_thinking", "_tools_text", "_walk")

    def __init__(self, tools_text: str, bos: str, thinking: bool, preserve: bool) -> None:
        self._tools_text, self._bos, self._thinking, self._preserve = tools_text, bos, thinking, preserve
        self._reset()

    def _reset(self) -> None:
        self._rendered: list[Any] = []  # the caller's message objects, as last rendered
        self._chunks: list[str] = []
        self._chunk_ends: list[int] = []
        self._walk = Walk([self._bos], [], self._thinking, self._preserve)
        # Where the last message that is no tool result starts: its index, the pieces before it, the
        # walk's state there (what the message before it ended on, and its role).
        self._resume: tuple[int, int, Any, Any] = (0, 1, None, None)

    def render(self, messages: Conversation, add_generation_prompt: bool | None) -> str | None:
        """The prompt ``render`` gives, or ``None`` to step aside to a full render."""
        stable = self._stable(messages)
        if stable is None:
            return None
        return self._prompt((), self._walk.out, stable,
                             self._walk.tail(add_generation_prompt))

    def _first(self, messages: list[Any]) -> int:
        self._reset()
        walk = self._walk = Walk([self._bos], message_dicts(messages), self._thinking, self._preserve)
        walk.system(self._tools_text)
        self._resume = (walk.start, len(walk.out), walk.previous, walk.previous_role)
        self._walk_from(walk.start)
        return 0

    def _walk_from(self, first: int) -> None:
        walk = self._walk
        for k in range(first, len(walk.msgs)):
            if walk.roles[k] != "tool":
                self._resume = (k, len(walk.out), walk.previous, walk.previous_role)
            walk.message(k)

    def _extend(self, messages: list[Any]) -> int:
        walk = self._walk
        old = len(self._rendered)
        added = message_dicts(messages[old:])
        roles = [*walk.roles, *(role_of(message, old + i) for i, message in enumerate(added))]
        last_user = max((k for k in range(walk.start, len(roles)) if roles[k] == "user"), default=-1)
        if last_user != walk.last_user and any(walk.last_user < k < last_user for k in walk.shown):
            raise RenderAgain  # their reasoning is now before the last user message: left out
        first, pieces, previous, previous_role = self._resume
        del walk.out[pieces:]
        walk.msgs += added
        walk.roles, walk.last_user = roles, last_user
        walk.previous, walk.previous_role = previous, previous_role
        walk.shown = {k for k in walk.shown if k < first}
        self._walk_from(first)
        return pieces
