"""Generated input in the shapes Gemma 3's template reads: what its differential, spans and guard
tests draw from.

A leading system message or not (a string, or parts whose first has a ``text`` of any type); then
turns that mostly alternate user / another role (``assistant`` most often, ``tool``, ``system``,
unknown roles), now and then out of order; contents that are strings with whitespace around them,
left out, lists of text, image, video and other parts, strings and numbers among them, a text of
another type than a string, an object, a number; reasoning fields and tool calls, which it drops.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.support.strategies import content, image_part, text, text_part, tool_calls, video_part, weighted

__all__ = ["GEMMA3_TEMPLATE", "conversation", "options"]

GEMMA3_TEMPLATE = "families/gemma3.jinja"
GEMMA_FRAGMENTS = ["<start_of_turn>", "<end_of_turn>", "<start_of", "_turn>", "<bos>", "<unused7>", "  ", "\n"]
gemma_text = st.lists(st.one_of(text, st.sampled_from(GEMMA_FRAGMENTS)), max_size=3).map("".join)

odd_text_part = st.builds(lambda t: {"type": "text", "text": t},
                          st.one_of(st.none(), st.integers(), st.lists(gemma_text, max_size=2)))
other_part = st.one_of(
    st.builds(lambda t: {"type": "input_text", "text": t}, gemma_text),
    st.builds(lambda t: {"text": t}, gemma_text),
    st.just({"type": "text"}),
    gemma_text,
    st.integers(),
)
gemma_part = weighted((5, st.builds(lambda t: {"type": "text", "text": t}, gemma_text)), (2, image_part),
                      (1, video_part), (1, odd_text_part), (2, other_part), (1, text_part))
gemma_content = weighted(
    (8, gemma_text), (1, st.none()), (5, st.lists(gemma_part, max_size=4)), (1, content),
    (1, st.dictionaries(gemma_text, gemma_text, max_size=2)), (1, st.sampled_from([3, 2.5, True])),
)
system_content = weighted(
    (6, gemma_text),
    (3, st.lists(gemma_part, min_size=1, max_size=3).map(
        lambda parts: [{"type": "text", "text": ""} if not isinstance(parts[0], dict) else parts[0], *parts[1:]])),
    (1, st.builds(lambda t, rest: [{"type": "image", "text": t}, *rest], gemma_text, st.lists(gemma_part, max_size=2))),
    (1, st.one_of(st.none(), st.just([]), st.just([{"type": "image"}]))),
)


@st.composite
def _message(draw: st.DrawFn, role: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role}
    if draw(st.integers(0, 6)):
        message["content"] = draw(system_content if role == "system" else gemma_content)
    if role == "assistant":
        for field in ("reasoning_content", "thinking", "reasoning"):
            if draw(st.integers(0, 4)) == 0:
                message[field] = draw(st.one_of(gemma_text, st.none()))
        if draw(st.integers(0, 2)) == 0:
            message["tool_calls"] = draw(tool_calls())
    if role == "tool" and draw(st.booleans()):
        message["tool_call_id"] = "call_1"
    return message


@st.composite
def conversation(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A conversation as Gemma 3 reads it (see the module docstring)."""
    messages = [draw(_message("system"))] if draw(st.integers(0, 2)) == 0 else []
    other = st.sampled_from(["assistant", "assistant", "assistant", "tool", "system", "model", "tool<end_of_turn>"])
    for k in range(draw(st.integers(0 if messages else 1, 6))):
        role = "user" if k % 2 == 0 else draw(other)
        if draw(st.integers(0, 14)) == 0:  # out of order, or no role
            role = draw(st.sampled_from(["assistant", "user", "tool", None]))
        message = draw(_message(role or "user"))
        if role is None:
            del message["role"]
        messages.append(message)
    return messages


def options() -> st.SearchStrategy[dict[str, Any]]:
    """``render``'s options: ``bos_token`` given or not (the oracle gets the tokenizer's then)."""
    return st.fixed_dictionaries({}, optional={"bos_token": st.sampled_from(["<bos>", "", "B"])})


def oracle_options(given: dict[str, Any]) -> dict[str, Any]:
    """The options transformers passes the template: the tokenizer's ``bos_token`` unless given."""
    return {"bos_token": "<bos>", **given}
