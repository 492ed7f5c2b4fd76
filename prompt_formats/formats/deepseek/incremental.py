"""Incremental DeepSeek-V3 rendering for sessions: a growing conversation writes only its new messages.

Built on the walk of :mod:`.render`: the template's state (whether the conversation's turns of tool
calls have opened, whether the last message was a tool result, whether a tool result was written)
only moves forward, and what ends the prompt is made from it at each request; so the session keeps
the walk and writes the new messages with it. A new system message changes the text at the top:
the conversation is written again, as is anything unexpected (an error, input that is not a list of
dicts: the session's full render, the one checked path).
"""

from __future__ import annotations

from typing import Any

from ...format.chat_format import Conversation
from ...format.history import ExtendingRenderer, RenderAgain
from .render import Walk, message_dicts, role_of, turns

__all__ = ["DeepSeekIncremental"]


class DeepSeekIncremental(ExtendingRenderer):
    """One session's walk of the prompt. Not shared: the session holds it under a lock."""

    __slots__ = ("_bos", "_walk")

    def __init__(self, bos: str) -> None:
        self._bos = bos
        self._reset()

    def _reset(self) -> None:
        self._rendered: list[Any] = []  # the caller's message objects, as last rendered
        self._walk = Walk([self._bos])
        self._chunks: list[str] = []
        self._chunk_ends: list[int] = []

    def render(self, messages: Conversation, add_generation_prompt: bool | None) -> str | None:
        """The prompt ``render`` gives, or ``None`` to step aside to a full render."""
        stable = self._stable(messages)
        if stable is None:
            return None
        walk = self._walk
        return self._prompt((), walk.out, stable, walk.tail(add_generation_prompt))

    def _reuses_last_prompt(self) -> bool:
        return True  # (only appended to; after a tool result, a reply's turn opens with the generation prompt)

    def _first(self, messages: list[Any]) -> int:
        self._reset()
        self._walk = turns(message_dicts(messages), self._bos)
        return 0

    def _extend(self, messages: list[Any]) -> int:
        walk = self._walk
        start = len(walk.out)
        roles = [role_of(message, i) for i, message in enumerate(messages)]
        old = len(self._rendered)
        if "system" in roles[old:]:  # its text joins the others at the top
            raise RenderAgain
        for i in range(old, len(messages)):
            walk.message(messages[i], roles[i], i)
        return start
