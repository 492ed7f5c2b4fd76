"""``render_spans`` for Llama 3.1 and 3.2: where each input message landed, and what the model generated.

Made after the walk, from its pieces and notes (:class:`~.render.Walk`). What a range covers
(docs/llama.md): a message's text as written (trimmed; a tool result's JSON); an assistant's turn
after its header up to and including its ``<|eot_id|>`` — a turn of a tool call, its call and the
end marker, whatever the role — which for an assistant message is also what it generated. A message
whose text the template puts in the first user turn (with the tools) generated nothing.
"""

from __future__ import annotations

from typing import Any

from ...format.chat_format import Tools
from ...format.spans import GeneratedPolicy, RenderedPrompt, noted_ranges, select_generated
from .drops import dropped
from .render import FOLDED, Setup, walk

__all__ = ["rendered_prompt"]


def rendered_prompt(msgs: list[dict[str, Any]], tools: Tools, setup: Setup, generation: Any,
                    policy: GeneratedPolicy) -> RenderedPrompt:
    """The :class:`RenderedPrompt` of the prompt the walk writes for ``msgs`` (the messages as dicts).
    Raises what the walk raises."""
    written = walk(msgs, setup, generation, noted=True)
    out = written.out
    ranges = noted_ranges(out, written.notes or (), len(msgs))
    how = written.how or []
    roles = [role if type(role := message.get("role")) is str and how[i] != FOLDED else ""
             for i, message in enumerate(msgs)]
    generated = select_generated(roles, ranges, policy)  # an assistant's range is what it generated
    return RenderedPrompt.unchecked("".join(out), tuple(ranges), generated, dropped(msgs, tools, setup, how))
