"""``render_spans`` for Gemma 3: where each input message landed, and what the model generated.

Made after the walk, from its pieces and notes (:func:`~.render.walk`). What a range covers
(docs/gemma.md, docs/training-data.md): a turn's content as the template writes it (trimmed, its
images' markers among its texts; empty, no range); an assistant's turn from right after
``<start_of_turn>model\\n`` up to and including its ``<end_of_turn>``, which is also what it
generated; the leading system message's text where it opens the first turn.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

from ....format.chat_format import Tools
from ....format.spans import GeneratedPolicy, Range, RenderedPrompt, select_generated
from ..tokens import MODEL_TURN
from .drops import dropped
from .render import Note, walk

__all__ = ["rendered_prompt"]


def _ranges(out: list[str], notes: list[Note], count: int) -> list[tuple[Range, ...]]:
    starts = list(accumulate(map(len, out), initial=0))
    ranges: list[tuple[Range, ...]] = [()] * count
    for index, piece, offset, size in notes:
        start = starts[piece] + offset
        ranges[index] = ((start, start + size),)
    return ranges


def rendered_prompt(msgs: list[dict[str, Any]], tools: Tools, bos: str, generation: bool,
                    policy: GeneratedPolicy) -> RenderedPrompt:
    """The :class:`RenderedPrompt` of the prompt the walk writes for ``msgs`` (the messages as dicts),
    after ``bos``, with the generation prompt if ``generation``. Raises what the walk raises."""
    out = [bos]
    notes: list[Note] = []
    system = walk(msgs, out, notes)
    if generation:
        out.append(MODEL_TURN)
    ranges = _ranges(out, notes, len(msgs))
    roles: list[str] = [message["role"] for message in msgs]  # (each a string: the walk wrote it, or raised)
    generated = select_generated(roles, ranges, policy)  # an assistant's range is what it generated
    return RenderedPrompt.unchecked("".join(out), tuple(ranges), generated, dropped(msgs, tools, system))
