"""``render_spans`` for Harmony: where each input message landed in Ollama's template, and what was generated.

The pass that writes the prompt makes the ranges: :func:`~.render.write_messages` calls the writers
of a :class:`SpanRecorder`, twins of ``render.py``'s that write the same pieces and add up their
lengths, so each range is made where its piece is written. Unlike render's, they know the last user
message's index before writing (:func:`last_user`), so no analysis message is written and taken
out again; a system message after the first turn lengthens the header, and the ranges written
before it move (read ahead instead in long conversations); a prefill, known at the end only, makes
the pass run again knowing it (a prompt that continues an assistant message). The tests compare
the text with the Go oracle's and ``render``'s, and the generated ranges with those the Go oracle
records on a tagged copy of the template, on every generated case: a writer of ``render.py`` whose
layout changes without its twin here fails them.

What a range covers (docs/harmony.md, docs/training-data.md):

- a message's ranges: its content as the template prints it (inside the merged Harmony message of
  its run, or, for a system or developer message, inside the header's system text); for the first
  message of an assistant run also its reasoning, where the analysis message is written. Empty text,
  no range; a role the template does not write (a non-python tool result, an unknown role), none.
- generated: each assistant Harmony message (analysis or final) from right after
  ``<|start|>assistant`` up to and including its ``<|end|>``; where the template leaves ``<|end|>``
  off, up to the end of the message's text. The message a prefill leaves open is not generated, nor
  is the generation prompt. Every input message of an assistant run owns the run's generated ranges,
  so the ``generated=`` policies select a run through any of its messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice, repeat
from operator import indexOf
from typing import Any

from ....format.chat_format import Conversation, Tools
from ....format.spans import GeneratedPolicy, Range, RenderedPrompt
from ..tokens import ANALYSIS, END, FINAL, GENERATION, PYTHON_RESULT, SYSTEM_START, USER
from . import render
from .drops import dropped
from .render import CLOSED, PROLOGUE, Ends, finish, open_marker, prologue, role_of, write_messages

__all__ = ["SpanRecorder", "harmony_rendered_prompt"]

_JOIN = len("\n\n")
_AUTHOR = len(GENERATION)  # "<|start|>assistant": where a generated range starts, after it
_END, _USER, _ANALYSIS, _FINAL, _PYTHON = len(END), len(USER), len(ANALYSIS), len(FINAL), len(PYTHON_RESULT)
_SYSTEM = len(SYSTEM_START)  # where the header's system text starts
#: Above this many messages the system texts' lengths are read before the first is written: a system
#: message after the first turn would move more ranges than reading the roles costs
#: (long agent sessions; below it, short conversations are cheaper without the read).
_LONG = 24

Ranges = tuple[Range, ...]


def _roles(messages: Sequence[Any], start: int = 0) -> list[Any] | None:
    """The roles of ``messages[start:]`` when all are dicts (one C loop), else ``None``. The messages
    are not checked yet: one the writers cannot read makes them raise, so what is made of it does not matter."""
    try:
        return list(map(dict.get, islice(messages, start, None), repeat("role")))
    except TypeError:
        return None


def _system_size(messages: Sequence[Any], start: int, roles: list[Any] | None) -> int | None:
    """The length of the system texts of ``messages[start:]`` (whose ``roles``) joined, each after a
    blank line; ``None`` when a role is not known or a system message's content not a string."""
    if roles is None:
        return None
    size = 0
    for role in ("system", "developer"):
        at = -1
        for _ in range(roles.count(role)):  # count and index, not a raised ValueError: they cost less
            at = roles.index(role, at + 1)
            content = messages[start + at].get("content")
            if type(content) is not str:
                return None
            size += _JOIN + len(content)
    return size


def last_user(messages: Sequence[Any]) -> int:
    """The index of the last user message, or -1: the template's ``$lastUserIdx``, read from the end
    (in one C loop while the messages are dicts). The messages are not checked yet: one the writers
    cannot read makes them raise, so what is made of it does not matter."""
    try:
        return len(messages) - 1 - indexOf(map(dict.get, reversed(messages), repeat("role")), "user")
    except TypeError:  # a message that is not a dict
        pass
    except ValueError:  # no user message
        return -1
    index = len(messages) - 1
    while index >= 0 and role_of(messages[index]) != "user":
        index -= 1
    return index


def _generated_message(
    out: list[str], generated: list[Range], pos: int, head: str, head_size: int, text: str, end: str
) -> tuple[Range, int]:
    """Write one assistant Harmony message at ``pos`` (``head``, ``text``, ``end``) and note it as
    generated: ``(text's range, the position after it)``."""
    out += (head, text, end)
    start = pos + head_size
    after = start + len(text) + len(end)
    generated.append((pos + _AUTHOR, after))
    return (start, start + len(text)), after


class SpanRecorder:
    """``render.py``'s writers, each writing the same pieces as its twin there and noting their ranges.

    ``pos``: the length of the prompt so far, its header's system text counted in full once read
    ahead (``system_known``), else as far as written; ``ranges[i]``: message
    ``i``'s; ``generated``: the assistant Harmony messages' in text order, of which ``run_at`` is the
    first of the latest assistant run's and ``user_at`` the first after the latest user message.
    ``last_user`` is :func:`last_user`'s: unlike render's writers, these write reasoning only where it
    stays, since moving every range after a reasoning taken out costs more than that scan.
    """

    __slots__ = (
        "generated", "last_user", "messages", "out", "pos", "ranges", "run_at", "system_known", "system_size",
        "systems", "user_at",
    )

    def __init__(self, messages: Sequence[Any], out: list[str]) -> None:
        self.messages, self.out = messages, out
        self.pos = sum(map(len, out))  # the header, its system text counted in as read
        self.ranges: list[Ranges] = [()] * len(messages)
        self.generated: list[Range] = []
        self.last_user = -2  # not read yet: read at the first reasoning
        self.run_at = self.user_at = self.systems = self.system_size = 0
        self.system_known = False
        if len(messages) > _LONG:  # every system text's length up front, so that no range moves
            total = _system_size(messages, 0, _roles(messages))
            self.system_known = total is not None
            self.pos += max((total or 0) - _JOIN, 0)

    def user(self, out: list[str], analyses: list[int], index: int, content: str) -> None:
        out += (USER, content, END)
        start = self.pos + _USER
        end = start + len(content)
        self.pos = end + _END
        self.user_at = len(self.generated)
        if content:
            self.ranges[index] = ((start, end),)

    def assistant(
        self, out: list[str], analyses: list[int], index: int, content: str, thinking: str | None, ends: Ends
    ) -> None:
        generated = self.generated
        self.run_at = len(generated)
        pos = self.pos
        reasoning = None
        if thinking and self.last_user == -2:
            self.last_user = last_user(self.messages)
        if thinking and index > self.last_user:  # known here, so no analysis message is taken out
            reasoning, pos = _generated_message(out, generated, pos, ANALYSIS, _ANALYSIS, thinking, ends[0])
        if content:
            own, pos = _generated_message(out, generated, pos, FINAL, _FINAL, content, ends[1])
            self.ranges[index] = (own,) if reasoning is None else (reasoning, own)
        elif reasoning is not None:
            self.ranges[index] = (reasoning,)
        self.pos = pos

    def python(self, out: list[str], index: int, content: str) -> None:
        out += (PYTHON_RESULT, content, END)
        start = self.pos + _PYTHON
        end = start + len(content)
        self.pos = end + _END
        if content:
            self.ranges[index] = ((start, end),)

    def system_text(self, system: list[str], index: int, content: str) -> None:
        """A system text, joined to the header's. The first after the first turn makes the ranges
        written so far move by the length of every system text still to come (read from the messages
        left; else each system text moves them by its own)."""
        system.append(content)
        at = _SYSTEM + self.system_size  # where the header's system text ends so far
        start = at + _JOIN if self.systems else at
        size = start - at + len(content)
        self.systems += 1
        self.system_size += size
        if not self.system_known and len(self.out) > PROLOGUE:
            later = _system_size(self.messages, index + 1, _roles(self.messages, index + 1))
            self.system_known = later is not None
            self._move(at, size + (later or 0))
        elif not self.system_known:
            self.pos += size
        if content:
            self.ranges[index] = ((start, start + len(content)),)

    def _move(self, at: int, by: int) -> None:
        """Every range from ``at`` on moved by ``by``."""
        self.ranges = [tuple([(a + by, b + by) if a >= at else (a, b) for a, b in own]) for own in self.ranges]
        self.generated = [(a + by, b + by) for a, b in self.generated]
        self.pos += by

    def merged(
        self, out: list[str], system: list[str], index: int, role: str, content: str, run: int, ends: Ends
    ) -> None:
        """A message joining its run: its range inside the run's content; the generated range of the
        run's final message, which holds it, made longer."""
        if role == "system":
            self.system_text(system, index, content)
            return
        if role == "user" or role == "assistant":
            end_size = _END if role == "user" else len(ends[1])
            pos = self.pos
            grows = role == "user" or (len(out) > run and out[-3] is FINAL)
            start = pos - end_size + _JOIN if grows else pos + _FINAL + _JOIN
            self.pos = start + len(content) + end_size
            if role == "assistant":
                if grows:
                    self.generated[-1] = (self.generated[-1][0], self.pos)
                else:
                    self.generated.append((pos + _AUTHOR, self.pos))
            if content:
                self.ranges[index] = ((start, start + len(content)),)
        render.merged(out, system, index, role, content, run, ends)

    def selected(self, policy: GeneratedPolicy, prefill: bool) -> Ranges:
        """The generated ranges of the assistant messages ``policy`` selects, as
        ``prompt_formats.format.spans.select_generated`` over every message owning its run's ranges makes
        them (the message a ``prefill`` leaves open left out). Already canonical: in text order, any
        two apart by at least ``<|start|>assistant``."""
        generated = self.generated
        if prefill:
            generated.pop()
        if policy == "all":
            return tuple(generated)
        return tuple(generated[self.run_at if policy == "last" else self.user_at :])


def harmony_rendered_prompt(
    messages: Conversation, tools: Tools, date: str, reasoning_line: str, policy: GeneratedPolicy
) -> RenderedPrompt:
    """The :class:`RenderedPrompt` of ``render_harmony(messages, tools, date, reasoning_line)``.

    Raises what ``render_harmony`` raises, before any range is made; its ``dropped`` are
    :func:`~.drops.dropped`'s."""
    out = prologue(messages, tools, date, reasoning_line)
    system: list[str] = []
    spans = SpanRecorder(messages, out)
    last_role, run = write_messages(messages, out, system, CLOSED, spans)
    marker = open_marker(out, last_role, run)
    if marker is not None:  # a prefill: written again, without the <|end|> it leaves off
        ends = ("", END) if marker is ANALYSIS else (END, "")
        out, system = prologue(messages, tools, date, reasoning_line), []
        spans = SpanRecorder(messages, out)
        write_messages(messages, out, system, ends, spans)
    text = finish(out, system, marker)
    selected = spans.selected(policy, marker is not None)
    return RenderedPrompt.unchecked(text, tuple(spans.ranges), selected, dropped(messages, tools))
