"""``render_spans`` for Harmony: where each input message landed in Ollama's template, and what was generated.

Made after the walk, from its pieces and notes (:func:`~.render.write_messages`): a piece's place in
the prompt is the lengths of the pieces before it added up, so a system message after the first
turn (which lengthens the header), an analysis message taken out again and a prefill's ends taken
off need no ranges moved. The tests compare the text with the Go oracle's and ``render``'s, and the
generated ranges with those the Go oracle records on a tagged copy of the template, on every
generated case.

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

from itertools import accumulate

from ....format.chat_format import Conversation, Tools
from ....format.spans import GeneratedPolicy, Range, RenderedPrompt
from ..tokens import ANALYSIS, FINAL, GENERATION, USER
from .drops import dropped
from .render import PROLOGUE, SYSTEM, UNWRITTEN, Note, finish, open_marker, prologue, write_messages

__all__ = ["harmony_rendered_prompt"]

_JOIN = len("\n\n")
_AUTHOR = len(GENERATION)  # "<|start|>assistant": where a generated range starts, after it

Ranges = tuple[Range, ...]


def _message_ranges(out: list[str], system: list[str], notes: list[Note], starts: list[int], count: int
                    ) -> list[Ranges]:
    """Each message's ranges, from the walk's notes (``starts``: where each piece of ``out`` starts)."""
    ranges: list[Ranges] = [()] * count
    system_starts: list[int] = []
    for index, piece, offset, size in notes:
        if piece == SYSTEM:
            if not system_starts:
                system_starts = list(accumulate((len(text) + _JOIN for text in system), initial=starts[SYSTEM]))
            start = system_starts[offset]
        elif piece == UNWRITTEN or not out[piece]:  # not written, or an analysis message taken out
            continue
        else:
            start = starts[piece] + offset
        ranges[index] += ((start, start + size),)
    return ranges


def _generated(out: list[str], starts: list[int], run: int, policy: GeneratedPolicy, prefill: bool) -> Ranges:
    """The generated ranges of the assistant Harmony messages ``policy`` selects (the one a
    ``prefill`` leaves open left out): ``"last"``, those of the latest assistant run (from its piece
    ``run``); ``"after_last_user"``, those after the last user message. Already canonical: in text
    order, any two apart by at least ``<|start|>assistant``."""
    generated: list[Range] = []
    before_run = after_user = 0  # how many generated ranges come before the latest run, the last user message
    for at in range(PROLOGUE, len(out), 3):
        head = out[at]
        if head is ANALYSIS or head is FINAL:
            generated.append((starts[at] + _AUTHOR, starts[at + 3]))
            if at < run:
                before_run = len(generated)
        elif head is USER:
            after_user = len(generated)
    if prefill:
        generated.pop()
    if policy == "all":
        return tuple(generated)
    return tuple(generated[before_run if policy == "last" else after_user :])


def harmony_rendered_prompt(
    messages: Conversation, tools: Tools, date: str, reasoning_line: str, policy: GeneratedPolicy
) -> RenderedPrompt:
    """The :class:`RenderedPrompt` of ``render_harmony(messages, tools, date, reasoning_line)``: the
    same walk, noting where each message's text goes.

    Raises what ``render_harmony`` raises, before any range is made; its ``dropped`` are
    :func:`~.drops.dropped`'s."""
    out = prologue(messages, tools, date, reasoning_line)
    system: list[str] = []
    notes: list[Note] = []
    last_role, run, _ = write_messages(messages, out, system, notes)
    marker = open_marker(out, last_role, run)
    text = finish(out, system, marker)
    starts = list(accumulate(map(len, out), initial=0))
    ranges = _message_ranges(out, system, notes, starts, len(messages))
    generated = _generated(out, starts, run, policy, marker is not None)
    return RenderedPrompt.unchecked(text, tuple(ranges), generated, dropped(messages, tools, out, notes))

