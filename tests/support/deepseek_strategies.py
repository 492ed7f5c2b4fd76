"""Generated input in the shapes DeepSeek-V3's template reads: what its differential, spans and
guard tests draw from.

System messages anywhere (the template gathers them at the top); user turns; assistant turns with
``</think>`` in their content or not, reasoning fields (which it drops), tool calls (string
arguments, sometimes an object's, which the engine refuses; several per turn; none; a ``type`` of
any text), with their content or without; runs of tool results; other roles and no role; now and
then a content that is no string (the engine refuses it).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.support.strategies import text, weighted

__all__ = ["BOS", "TEMPLATE", "conversation", "options", "oracle_options"]

TEMPLATE = "families/deepseekv3.jinja"
BOS = "<｜begin▁of▁sentence｜>"
FRAGMENTS = ["</think>", "<think>", "<｜User｜>", "<｜tool▁call▁end｜>", "<｜end▁of▁sentence｜>", "<｜", "▁", "\n",
             "  "]
ds_text = st.lists(st.one_of(text, st.sampled_from(FRAGMENTS)), max_size=4).map("".join)
text_part = st.just({"type": "text", "text": "x"})
odd = st.one_of(st.none(), st.integers(), st.lists(st.one_of(ds_text, text_part), max_size=2), text_part)


@st.composite
def _call(draw: st.DrawFn) -> dict[str, Any]:
    arguments = draw(weighted((8, st.sampled_from(['{"city": "Paris"}', "{}", '{"a": [1, 2]}'])), (3, ds_text),
                              (1, st.just({"city": "Paris"}))))
    call: dict[str, Any] = {"type": draw(weighted((10, st.just("function")), (1, ds_text))),
                            "function": {"name": draw(st.sampled_from(["get_weather", "search"]) | ds_text),
                                         "arguments": arguments}}
    if draw(st.booleans()):
        call["id"] = "call_1"
    return call


@st.composite
def _message(draw: st.DrawFn, role: str | None) -> dict[str, Any]:
    message: dict[str, Any] = {} if role is None else {"role": role}
    if draw(st.integers(0, 12)):
        message["content"] = draw(weighted((14, ds_text), (1, odd)))
    if role == "assistant":
        for field in ("reasoning_content", "thinking", "reasoning"):
            if draw(st.integers(0, 4)) == 0:
                message[field] = draw(st.one_of(ds_text, st.none()))
        if draw(st.integers(0, 2)) == 0:
            message["tool_calls"] = draw(weighted((10, st.lists(_call(), min_size=1, max_size=3)), (1, st.just([]))))
    elif draw(st.integers(0, 20)) == 0:
        message["tool_calls"] = draw(st.lists(_call(), min_size=1, max_size=1))
    if draw(st.integers(0, 15)) == 0:  # (an OpenAI SDK message's: a key transformers leaves out)
        message["tool_calls"] = None
    return message


@st.composite
def conversation(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A conversation as DeepSeek-V3 reads it (see the module docstring)."""
    messages = [draw(_message("system"))] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(0, 4))):
        messages.append(draw(_message("user")))
        for _ in range(draw(st.integers(0, 3))):
            messages.append(draw(_message("assistant")))
            for _ in range(draw(st.integers(0, 2)) if messages[-1].get("tool_calls") else 0):
                messages.append(draw(_message("tool")))
    for _ in range(draw(st.integers(0, 2))):
        role = draw(st.sampled_from(["system", "developer", "tool", "assistant", None]))
        messages.insert(draw(st.integers(0, len(messages))), draw(_message(role)))
    return messages


def options() -> st.SearchStrategy[dict[str, Any]]:
    """``render``'s options: ``bos_token`` given or not (the oracle gets the tokenizer's then)."""
    return st.fixed_dictionaries({}, optional={"bos_token": st.sampled_from([BOS, "", "B"])})


def oracle_options(given: dict[str, Any]) -> dict[str, Any]:
    """The options transformers passes the template: the tokenizer's ``bos_token`` unless given."""
    return {"bos_token": BOS, **given}
