"""Generated input for the Harmony format (Ollama's gpt-oss template): conversations of OpenAI-style
dicts and :class:`~prompt_formats.model.messages.Message` objects, tools, and the format's options."""

from __future__ import annotations

import datetime
from typing import Any

from hypothesis import strategies as st

from prompt_formats.model.messages import Message, TextPart, ToolCall

FRAGMENTS = [
    "", " ", "\n", "\n\n", "\t", "python", "assistant", "user", "<|end|>", "<|start|>", "<|message|>",
    "<|channel|>final", "<|return|>", "Reasoning: high", "{{ .System }}", "é", "日本語", "🙂", "\u2028",
    "\x00", "\u200b", "\\", '"',
]
no_surrogates = st.characters(blacklist_categories=["Cs"])  # not representable in Ollama's JSON input
text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(no_surrogates, max_size=8)), max_size=4).map(
    "".join
)
ROLES = ["user", "assistant", "system", "developer", "tool"]
role = st.one_of(
    st.sampled_from(ROLES), st.sampled_from(["user", "assistant", "assistant", "tool"]), st.just("critic")
)
tool_names = st.sampled_from(["python", "python", "browser", "get_weather", "Python", ""])

text_parts = st.lists(
    st.one_of(
        st.builds(lambda t: {"type": "text", "text": t}, text),
        st.builds(lambda t: {"text": t}, text),
    ),
    max_size=3,
)
content = st.one_of(text, text, st.none(), text_parts)
reasoning = st.one_of(st.none(), text)


call_ids = st.sampled_from(["call_1", "call_2", "call_3", ""])
tool_call = st.builds(
    lambda call_id, name, wrapped: {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
    if wrapped
    else {"id": call_id, "name": name, "arguments": {}},
    st.one_of(call_ids, st.none()),
    tool_names,
    st.booleans(),
)


@st.composite
def message_dict(draw: st.DrawFn, role_strategy: st.SearchStrategy[str] = role) -> dict[str, Any]:
    message: dict[str, Any] = {"role": draw(role_strategy)}
    if draw(st.booleans()) or message["role"] != "assistant":
        message["content"] = draw(content)
    # reasoning under any alias, sometimes several (with None in front: the first non-None wins)
    for key in draw(st.lists(st.sampled_from(["reasoning_content", "thinking", "reasoning"]), unique=True, max_size=2)):
        message[key] = draw(reasoning)
    for key in draw(st.lists(st.sampled_from(["tool_name", "name"]), unique=True, max_size=2)):
        message[key] = draw(st.one_of(st.none(), tool_names))
    if message["role"] == "assistant" and draw(st.integers(0, 2)) == 0:
        message["tool_calls"] = draw(st.lists(tool_call, max_size=3))
    if message["role"] == "tool" and draw(st.booleans()):
        message["tool_call_id"] = draw(call_ids)
    return message


@st.composite
def message_object(draw: st.DrawFn) -> Message:
    raw = draw(st.one_of(text, st.none(), st.lists(st.builds(TextPart, text), max_size=2)))
    calls = draw(st.lists(tool_call, max_size=2))
    return Message(
        role=draw(role),
        content=tuple(raw) if isinstance(raw, list) else raw,
        reasoning=draw(reasoning),
        name=draw(st.one_of(st.none(), tool_names)),
        tool_calls=tuple(ToolCall.from_openai(call) for call in calls),
        tool_call_id=draw(st.one_of(st.none(), call_ids)),
    )


message = st.one_of(message_dict(), message_dict(), message_dict(), message_object())


@st.composite
def conversation(draw: st.DrawFn) -> list[Any]:
    messages = draw(st.lists(message, max_size=8))
    shape = draw(st.sampled_from(["plain", "plain", "prefill_content", "prefill_thinking", "run"]))
    if shape == "prefill_content":
        prefill = draw(text.map(lambda t: t or "x"))
        messages.append({"role": "assistant", "content": prefill, "thinking": draw(reasoning)})
    elif shape == "prefill_thinking":
        messages.append({"role": "assistant", "content": draw(st.sampled_from(["", None])), "reasoning": draw(text)})
    elif shape == "run":
        same = draw(st.sampled_from(ROLES))
        messages.extend(draw(st.lists(message_dict(st.just(same)), min_size=2, max_size=4)))
    return messages


tool_dict = st.builds(
    lambda name, wrapped: {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    if wrapped
    else {"name": name, "description": "d"},
    tool_names,
    st.booleans(),
)
tools = st.one_of(st.none(), st.just([]), st.lists(tool_dict, min_size=1, max_size=4))

THINK = [None, True, False, "low", "medium", "high", "max"]
EFFORT = [None, "none", "minimal", "low", "medium", "high", "xhigh"]
dates = st.one_of(
    st.none(), st.dates(), st.dates().map(datetime.date.isoformat), st.datetimes(), st.just("2025-08-05")
)


@st.composite
def options(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    which = draw(st.sampled_from(["none", "think", "effort"]))
    if which == "think":
        out["think"] = draw(st.sampled_from(THINK))
    elif which == "effort":
        out["reasoning_effort"] = draw(st.sampled_from(EFFORT))
    date = draw(dates)
    if date is not None or draw(st.booleans()):
        out["current_date"] = date
    return out
