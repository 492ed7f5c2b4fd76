"""Incremental Gemma 3 rendering for sessions: a growing conversation writes only its new turns.

Built on the walk of :mod:`.render`: a turn's pieces depend on the message and its place alone, so
the session keeps the pieces and writes the new messages after them
(:func:`~.render.write_turns`). A conversation whose turns have not begun (no message, or a system
message alone, whose text opens the first turn) is written again whole, as is anything unexpected
(an error, input that is not a list, new messages that are not dicts: the session's full render, the
one checked path).
"""

from __future__ import annotations

from typing import Any

from ....format.chat_format import Conversation
from ....format.history import ExtendingRenderer, RenderAgain
from ..tokens import MODEL_TURN
from .render import message_dicts, walk, write_turns

__all__ = ["Gemma3Incremental"]


class Gemma3Incremental(ExtendingRenderer):
    """One session's pieces of the prompt. Not shared: the session holds it under a lock."""

    __slots__ = ("_bos", "_first_turn", "_out")
    _first_reads_any = True  # (the walk reads a message of any type as render first reads it)

    def __init__(self, bos: str) -> None:
        self._bos = bos
        self._reset()

    def _reset(self) -> None:
        self._rendered: list[Any] = []  # the caller's message objects, as last rendered
        self._out: list[str] = [self._bos]  # the bos_token, then four pieces a turn (five for the first)
        self._first_turn = 0  # the index of the first turn's message (1 after a system message)
        self._chunks: list[str] = []
        self._chunk_ends: list[int] = []

    def render(self, messages: Conversation, add_generation_prompt: bool | None) -> str | None:
        """The prompt ``render`` gives, or ``None`` to step aside to a full render."""
        stable = self._stable(messages)
        if stable is None:
            return None
        return self._prompt((), self._out, stable,
                             MODEL_TURN if add_generation_prompt else "")

    def _reuses_last_prompt(self) -> bool:
        return True  # (its turns are only appended to, and a reply's turn opens with the generation prompt)

    def _first(self, messages: list[Any]) -> int:
        self._reset()
        self._first_turn = 1 if walk(message_dicts(messages), self._out) else 0
        return 0

    def _extend(self, messages: list[Any]) -> int:
        old = len(self._rendered)
        if old <= self._first_turn:  # no turn yet: the system message's text opens the first one
            raise RenderAgain
        start = len(self._out)
        write_turns(messages, self._first_turn, self._out, start=old)
        return start
