"""Incremental GLM-4.5 rendering for sessions: a growing conversation writes only its new messages.

Built on the walk of :mod:`.render`: a message's text depends on it, on the role of the one before it
(a run of tool results shares one ``<|observation|>``) and on where the last user message is (an
assistant's reasoning is shown only after it). So the session keeps the walk and writes the new
messages with it; a new user message after assistant turns that followed the previous one (their
reasoning now left out) writes the conversation again, as does anything unexpected (an error, input
that is not a list of dicts: the session's full render, the one checked path). An agent's tool loop
adds no user message: it is only ever extended.
"""

from __future__ import annotations

from typing import Any

from ...format.chat_format import Conversation
from ...format.history import ExtendingRenderer, RenderAgain
from .render import PREFIX, Walk, message_dicts, role_of, tail, turns

__all__ = ["GlmIncremental"]


class GlmIncremental(ExtendingRenderer):
    """One session's walk of the prompt. Not shared: the session holds it under a lock."""

    __slots__ = ("_no_thinking", "_tools_text", "_walk")

    def __init__(self, tools_text: str, no_thinking: bool) -> None:
        self._tools_text, self._no_thinking = tools_text, no_thinking
        self._reset()

    def _reset(self) -> None:
        self._rendered: list[Any] = []  # the caller's message objects, as last rendered
        self._walk = Walk([PREFIX, self._tools_text], [], self._no_thinking)
        self._chunks: list[str] = []
        self._chunk_ends: list[int] = []

    def render(self, messages: Conversation, add_generation_prompt: bool | None) -> str | None:
        """The prompt ``render`` gives, or ``None`` to step aside to a full render."""
        stable = self._stable(messages)
        if stable is None:
            return None
        return self._prompt((), self._walk.out, stable,
                             tail(add_generation_prompt, self._no_thinking))

    def _reuses_last_prompt(self) -> bool:
        return True  # (its turns are only appended to, and a reply's turn opens with the generation prompt)

    def _first(self, messages: list[Any]) -> int:
        self._reset()
        self._walk = turns(message_dicts(messages), self._tools_text, self._no_thinking)
        return 0

    def _extend(self, messages: list[Any]) -> int:
        walk = self._walk
        old = len(self._rendered)
        roles = [*walk.roles, *(role_of(message, i) for i, message in enumerate(messages) if i >= old)]
        last_user = max((i for i, role in enumerate(roles) if role == "user"), default=-1)
        if last_user != walk.last_user and "assistant" in walk.roles[walk.last_user + 1:]:
            raise RenderAgain  # their reasoning is now before the last user message: left out
        start = len(walk.out)
        walk.roles, walk.last_user = roles, last_user
        for i in range(old, len(messages)):
            walk.message(messages[i], i)
        return start
