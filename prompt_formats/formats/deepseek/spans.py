"""``render_spans`` for DeepSeek-V3: where each input message landed, and what the model generated.

Made after the walk, from its pieces and notes (:class:`~.render.Walk`). What a range covers
(docs/deepseek.md): a user's, a tool's or a system message's text as written; an assistant's turn
after ``<｜Assistant｜>`` (or after ``<｜tool▁outputs▁end｜>``) up to and including its
``<｜end▁of▁sentence｜>`` — for a later turn of tool calls, all it writes — which is also what it
generated.
"""

from __future__ import annotations

from typing import Any

from ...format.chat_format import Tools
from ...format.spans import GeneratedPolicy, RenderedPrompt, noted_ranges, select_generated
from .drops import dropped
from .render import walk

__all__ = ["rendered_prompt"]


def rendered_prompt(msgs: list[dict[str, Any]], tools: Tools, bos: str, generation: Any,
                    policy: GeneratedPolicy) -> RenderedPrompt:
    """The :class:`RenderedPrompt` of the prompt the walk writes for ``msgs`` (the messages as dicts).
    Raises what the walk raises."""
    written = walk(msgs, bos, generation, noted=True)
    out = written.out
    ranges = noted_ranges(out, written.notes or (), len(msgs))
    roles = [role if type(role := message.get("role")) is str else "" for message in msgs]
    generated = select_generated(roles, ranges, policy)  # an assistant's range is what it generated
    return RenderedPrompt.unchecked("".join(out), tuple(ranges), generated,
                                    dropped(msgs, tools, written.how or []))
