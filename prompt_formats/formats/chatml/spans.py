"""``render_spans`` for the ChatML formats: where each message landed, and what the model generated.

:func:`~.render.chatml_pieces` runs the renderer's own builder and notes, per message, the index
of its turn's first piece (and the merge notes each merged system text's length); the writers of
``render.py`` lay each turn out as a fixed sequence:

- a user message: ``USER_TURN, content, TURN_END``;
- a tool result: ``TOOL_RESPONSE_FIRST or TOOL_RESPONSE_NEXT, content, TOOL_RESPONSE_LAST or
  TOOL_RESPONSE_MORE`` (a run of them shares one user turn);
- an assistant message: its header (``ASSISTANT_TURN`` or ``ASSISTANT_THINKING``), then its
  reasoning, content and calls, ending in ``TURN_END`` (``CALLS_END`` ends in it too);
- the system message: the prologue, before the first turn: ``SYSTEM_TURN + text + TURN_END``, or
  ``tools block, "\\n\\n" + text, TURN_END``, or ``tools block, TURN_END`` (no text).

So the ranges come from one pass of accumulated piece lengths. What a range covers
(docs/training-data.md): a user, tool or system message's printed content (empty when it is
empty); an assistant message's whole turn after ``<|im_start|>assistant\\n`` up to and including
its ``<|im_end|>``, which is also what the model generated. Under ``chatml-multi-system`` every
system message merged into the leading system turn gets its own part of that turn's text (the
blank lines joining them are the template's). The differential tests compare every range with
transformers' generation indices and rebuild the prompt from the ranges and the template's
literals, so a writer whose layout changes fails them.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ...spans import GeneratedPolicy, Range, RenderedPrompt
from .render import ChatMLPieces
from .tokens import ASSISTANT_TURN, SYSTEM_TURN, TURN_END

__all__ = ["rendered_prompt"]

_HEADER = len(ASSISTANT_TURN)
_BLANK_LINE = len("\n\n")


def rendered_prompt(prompt: ChatMLPieces, message_count: int, policy: GeneratedPolicy) -> RenderedPrompt:
    """The :class:`RenderedPrompt` of one conversation's pieces (``message_count``: input messages)."""
    pieces, roles, origins, starts, merged = prompt
    offsets = list(itertools.accumulate(map(len, pieces), initial=0))
    # Each turn's ranges by position, in one comprehension (a loop with statements costs a large part
    # of the budget on the "everyday" rows of benchmarks/bench_spans.py). A system role here is
    # position 0's (a later one raised), whose text is in the prologue.
    turns: list[tuple[Range, ...]] = [
        ((offsets[first] + _HEADER, offsets[after] - 1),) if role == "assistant"
        else () if role == "system" or not pieces[first + 1]
        else ((offsets[first + 1], offsets[first + 2]),)
        for role, first, after in zip(roles, starts, starts[1:], strict=False)  # starts: one more
    ]
    if roles[0] == "system":
        turns[0] = _system_range(pieces, offsets, starts[0])
    if type(origins) is range:  # every input message kept, or all but a leading blank system one
        ranges = [()] * origins.start + turns if origins.start else turns
    else:
        ranges = [()] * message_count
        for pos, origin in enumerate(origins):
            if origin is not None:
                ranges[origin] = turns[pos]
        if origins[0] is None:
            _split_merged(turns[0], merged, ranges)
    return RenderedPrompt.unchecked("".join(pieces), tuple(ranges), _generated(turns, roles, policy))


def _generated(turns: list[tuple[Range, ...]], roles: list[str], policy: GeneratedPolicy) -> tuple[Range, ...]:
    """The ranges of the assistant turns ``policy`` selects, as ``prompt_formats.spans.select_generated``
    selects them by input message (positions keep the input order; a message without a turn is a
    system one, never a user's), already in canonical form: one range per assistant turn, in order,
    any two apart by at least the next turn's header. (So not ``select_generated`` itself, whose
    sorting and merging would cost a large part of the budget; tests/spans/test_chatml_spans.py checks the
    selection against the policies' definition on every case.)"""
    if policy == "all":
        return tuple([own[0] for own, role in zip(turns, roles, strict=True) if role == "assistant"])
    assistants = [pos for pos, role in enumerate(roles) if role == "assistant"]
    if policy == "last":
        assistants = assistants[-1:]
    else:  # after_last_user
        last_user = max((pos for pos, role in enumerate(roles) if role == "user"), default=-1)
        assistants = [pos for pos in assistants if pos > last_user]
    return tuple([turns[pos][0] for pos in assistants])


def _system_range(pieces: list[str], offsets: list[int], prologue: int) -> tuple[Range, ...]:
    """The system text's range in the prologue (``prologue``: how many pieces it has)."""
    if prologue == 3:  # tools block, "\n\n" + text, TURN_END
        return ((offsets[1] + _BLANK_LINE, offsets[2]),)
    if prologue == 1 and len(pieces[0]) > len(SYSTEM_TURN) + len(TURN_END):  # SYSTEM_TURN + text + TURN_END
        return ((len(SYSTEM_TURN), offsets[1] - len(TURN_END)),)
    return ()


def _split_merged(merged_range: tuple[Range, ...], merged: Sequence[tuple[int, int]],
                  ranges: list[tuple[Range, ...]]) -> None:
    """Give each system message merged into ``merged_range`` its part: the merged text is every
    non-empty system text, in input order, joined with blank lines (``render._merge_system``, which
    noted each one's input index and length in ``merged``)."""
    (at, _), = merged_range
    for index, size in merged:
        ranges[index] = ((at, at + size),)
        at += size + _BLANK_LINE
