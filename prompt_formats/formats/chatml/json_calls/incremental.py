"""Incremental rendering of the JSON-call templates for sessions: a growing conversation re-renders only what changed.

Built on :func:`~.render.json_noted` (read-only). A turn's text depends on the message, on whether
it is the first, on its neighbours' roles (a run of tool results is one user turn), on whether it
is the last (Qwen3 keeps the last assistant turn's think block) and, for templates that read
reasoning, on whether it comes after the last real user query. So when messages are appended, what
can change is the last earlier turn and, when a new real user query arrives, the turns after the
previous one (their reasoning is dropped). Those and the new messages are rendered in a *window*:
the messages from the first that can change, after a placeholder of the role before them (so the
first one's tool-run opening is as in the whole conversation) and, when the conversation's last
query is before them, a placeholder query (so their think blocks are as in the whole
conversation). Anything unexpected steps aside to a full render, the one checked path (as for
:mod:`..incremental`, whose module docstring says why sessions do this).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....format.chat_format import Tools
from ....format.history import ExtendingRenderer, RenderAgain, turn_texts
from ....guard import ControlTokenGuard
from ..options import session_tools
from ..template import ABSENT
from ..untrusted import CHATML_JSON_READING
from .render import generation_prompt, json_noted, last_query, roles_of
from .template import JsonTemplate

__all__ = ["JsonIncremental", "json_incremental_renderer"]

# The placeholders a window starts with: the role before its first message (a tool's, or one the
# template writes nothing for), and a real user query.
_AFTER_TOOL = {"role": "tool", "content": ""}
_AFTER_OTHER = {"role": ""}
_QUERY = {"role": "user", "content": "q"}


def json_incremental_renderer(guard: ControlTokenGuard | None, tools: Tools, template: JsonTemplate,
                              options: Mapping[str, Any]) -> JsonIncremental | None:
    """The per-session state for these tools and options, or ``None`` where only full renders are
    exact (:func:`..options.session_tools`, ``render``'s reading of the options)."""
    reuses, tools = session_tools(guard, tools, options)
    return JsonIncremental(guard, tools, template, options.get("enable_thinking", ABSENT)) if reuses else None


class JsonIncremental(ExtendingRenderer):
    """One session's rendered turns (the module docstring). Not shared: the session holds it under a lock."""

    __slots__ = ("_guard", "_head", "_query", "_roles", "_template", "_texts", "_thinking", "_tools")

    def __init__(self, guard: ControlTokenGuard | None, tools: Tools, template: JsonTemplate, thinking: Any) -> None:
        self._guard, self._tools, self._template, self._thinking = guard, tools, template, thinking
        self._reset()

    def _reset(self) -> None:
        self._rendered: list[Any] = []  # the caller's message objects, as last rendered
        self._texts: list[str] = []  # each message's turn text ("" for one the template writes nothing for)
        self._roles: list[str] = []  # each message's role as the template compares it
        self._head: tuple[str, ...] = ()  # the prologue
        self._query = -1  # the last real user query (-1: none)
        self._chunks: list[str] = []
        self._chunk_ends: list[int] = []

    def render(self, messages: Any, add_generation_prompt: bool | None) -> str | None:
        """The prompt ``render`` gives, or ``None`` (state dropped) to step aside to a full render."""
        tail = generation_prompt(self._template, self._thinking) if add_generation_prompt else ""
        stable = self._stable(messages)
        if stable is None:
            return None
        return self._prompt(self._head, self._texts, stable, tail)

    def _turns(self, window: list[Any], tools: Tools) -> tuple[list[str], list[int], list[str]]:
        """The (guarded) window's pieces, where each message's start (then where the last ends; the
        pieces before the first: the prologue) and each message's role."""
        _, noted = json_noted(window, tools, False, self._template, {}, turns_only=True)
        return noted.pieces, noted.spans[2], noted.roles

    def _guarded(self, messages: list[Any]) -> list[Any]:
        """The messages as the renders read them: with the guard's policy applied, which may change
        what the last-query scan finds (an escaped ``<tool_response>``)."""
        return messages if self._guard is None else list(self._guard.guard_messages(messages, CHATML_JSON_READING))

    def _first(self, messages: list[Any]) -> int:
        """Render every message; the index before which the turns are taken as stable."""
        guarded = self._guarded(messages)
        pieces, starts, self._roles = self._turns(guarded, self._tools)
        self._texts = self._unsplit(pieces, starts)
        self._head = tuple(pieces[:starts[0]])
        self._chunks, self._chunk_ends = [], []
        self._query = last_query(guarded, self._roles) if self._template.reasoning else -1
        return max(0, len(messages) - 2)

    def _extend(self, messages: list[Any]) -> int:
        """Render the new messages and the earlier turns they can change; the index of the first changed turn."""
        old, count = len(self._rendered), len(messages)
        if count == old:
            return old
        start, query = old - 1, self._query  # the last earlier turn: a run it ended may go on; it is no longer last
        new = self._guarded(messages[old:])
        if self._template.reasoning:
            found = last_query(new, roles_of(new))
            if found >= 0:  # a new real query: the turns after the previous one lose their reasoning
                start, query = min(start, query + 1) if query >= 0 else start, old + found
        if not start:
            raise RenderAgain  # the first message: the prologue's, if a system message
        lead = [_QUERY] if 0 <= query < start else []
        lead.append(_AFTER_TOOL if self._roles[start - 1] == "tool" else _AFTER_OTHER)
        pieces, starts, roles = self._turns([*lead, *self._guarded(messages[start:old]), *new], None)
        self._texts[start:] = turn_texts(pieces, starts, len(lead))
        self._roles[start:] = roles[len(lead):]
        self._query = query
        return start
