"""Incremental Llama 3.1 and 3.2 rendering for sessions: a growing conversation writes only its new messages.

Built on the walk of :mod:`.render`: after the system turn and the first user turn (which may hold
the tools), every message is a turn of its own that depends on nothing before it, so the session
keeps the walk and writes the new messages with it. When today's date is written (3.2, no
``date_string``) and the day has changed, the conversation is written again, as is anything
unexpected (an error, input that is not a list of dicts: the session's full render, the one checked path).
"""

from __future__ import annotations

from typing import Any

from ...format.chat_format import Conversation
from ...format.history import ExtendingRenderer, RenderAgain
from ...model.arguments import decode_every_call
from . import options
from .render import Setup, Walk, message_dicts, turns
from .tokens import ASSISTANT_HEADER

__all__ = ["LlamaIncremental"]


class LlamaIncremental(ExtendingRenderer):
    """One session's walk of the prompt. Not shared: the session holds it under a lock.

    ``setup`` is the session's reading of its options; ``dated``: the date written is today's, read
    at each request (:func:`.options.today`)."""

    __slots__ = ("_dated", "_decoded", "_setup", "_walk")

    def __init__(self, setup: Setup, dated: bool, decoded: bool = False) -> None:
        self._setup = setup
        self._dated = dated
        self._decoded = decoded  # decode_tool_arguments: each message's calls decoded before the walk
        self._reset()

    def _reset(self) -> None:
        self._rendered: list[Any] = []  # the caller's message objects, as last rendered
        self._walk = Walk([], self._setup)
        self._chunks: list[str] = []
        self._chunk_ends: list[int] = []

    def render(self, messages: Conversation, add_generation_prompt: bool | None) -> str | None:
        """The prompt ``render`` gives, or ``None`` to step aside to a full render."""
        stable = self._stable(messages)
        if stable is None:
            return None
        tail = ASSISTANT_HEADER if add_generation_prompt else ""
        return self._prompt((), self._walk.out, stable, tail)

    def _reuses_last_prompt(self) -> bool:
        return True  # (its turns are only appended to, and a reply's turn opens with the generation prompt)

    def _first(self, messages: list[Any]) -> int:
        self._reset()
        if self._dated:
            self._setup = self._setup._replace(date=options.today())
        self._walk = turns(message_dicts(decode_every_call(messages) if self._decoded else messages), self._setup)
        return 0

    def _extend(self, messages: list[Any]) -> int:
        if self._dated and options.today() != self._setup.date:
            raise RenderAgain  # the system turn's date has changed
        walk = self._walk
        start = len(walk.out)
        old = len(self._rendered)
        new = decode_every_call(messages[old:]) if self._decoded else messages[old:]
        for i, message in enumerate(new, old):
            walk.message(message, i)
        return start
