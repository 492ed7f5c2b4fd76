"""``render_spans`` for Gemma 4: where each input message landed, and what the model generated.

Made from the walk's pieces and marks (:class:`~.render.Walk`). What a range covers (docs/gemma-4.md):
the leading system message's text in the system turn; a message's turn after ``<|turn>ROLE\\n``
(or where it continues an assistant's turn) — its reasoning and calls up to and including the
first ``<|tool_response>`` after them, then its content and what ends it (``<|tool_response>``
after calls with no result; a model turn's ``<turn|>``, not the newline after it); its own ``tool_responses``; a
tool result's block after its ``<|tool_response>``. An assistant message generated its ranges but
its own ``tool_responses``: the model stops at ``<|tool_response>``, and goes on after the results.
"""

from __future__ import annotations

import itertools
from typing import Any

from ....format.spans import GeneratedPolicy, Range, RenderedPrompt, normalize_ranges, select_generated
from .drops import dropped
from .render import walk

__all__ = ["rendered_prompt"]


def rendered_prompt(msgs: list[dict[str, Any]], tools_text: str, generation: Any, thinking: bool, preserve: bool,
                    bos: str, policy: GeneratedPolicy) -> RenderedPrompt:
    """The :class:`RenderedPrompt` of the prompt the walk writes for ``msgs`` (the messages as dicts).
    Raises what the walk raises."""
    written = walk(msgs, tools_text, generation, thinking, preserve, bos, noted=True)
    starts = list(itertools.accumulate(map(len, written.out), initial=0))
    ranges: list[tuple[Range, ...]] = [()] * len(msgs)
    generated: list[list[Range]] = [[] for _ in msgs]
    for index, first, end, made in written.marks or ():
        pair = (starts[first], starts[end])
        ranges[index] += (pair,)
        if made:
            generated[index].append(pair)
    roles = [role if type(role) is str else "" for role in written.roles]
    chosen = select_generated(roles, generated, policy)
    lost = dropped(msgs, written)
    return RenderedPrompt.unchecked("".join(written.out), tuple(normalize_ranges(r) for r in ranges), chosen, lost)

