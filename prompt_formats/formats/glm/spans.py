"""``render_spans`` for GLM-4.5: where each input message landed, and what the model generated.

Made after the walk, from its pieces and notes (:class:`~.render.Walk`). What a range covers
(docs/glm.md): a user's or a system message's visible text; a tool result's text (each item's, for
a list); an assistant's turn after ``<|assistant|>`` up to the next turn's marker — its think block,
content and calls — which is also what it generated (the model ends it with the marker it emits next,
``<|user|>`` or ``<|observation|>``, which the template writes as the next turn's).
"""

from __future__ import annotations

from typing import Any

from ...format.chat_format import Tools
from ...format.spans import GeneratedPolicy, RenderedPrompt, noted_ranges, select_generated
from .drops import dropped
from .render import walk

__all__ = ["rendered_prompt"]


def rendered_prompt(msgs: list[dict[str, Any]], tools: Tools, tools_text: str, generation: Any, no_thinking: bool,
                    policy: GeneratedPolicy) -> RenderedPrompt:
    """The :class:`RenderedPrompt` of the prompt the walk writes for ``msgs`` (the messages as dicts).
    Raises what the walk raises."""
    written = walk(msgs, tools_text, generation, no_thinking, noted=True)
    out = written.out
    ranges = noted_ranges(out, written.notes or (), len(msgs))
    roles = [role if type(role) is str else "" for role in written.roles]
    generated = select_generated(roles, ranges, policy)  # an assistant's range is what it generated
    return RenderedPrompt.unchecked("".join(out), tuple(ranges), generated, dropped(msgs, written.how or []))
