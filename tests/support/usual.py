"""Conversations of the usual shape for the ChatML templates: text holding the template's own markers
and the whitespace it trims, images, reasoning in a field or inline, calls with every kind of argument
value. Most of them render (a real user query comes first), so a differential test spends its
examples on the turns rather than on the template's refusals."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.formats.chatml.tokens import CONTROL_TOKENS
from prompt_formats.formats.chatml.untrusted import CHATML_READING

# Text with the template's own markers and the whitespace it trims: the merge, the last-query test
# and the <think> split must all read it as the template does.
words = st.one_of(
    st.sampled_from([" ", "\n", "<think>", "</think>", "<tool_response>", "</tool_response>", "x", "é", "😀"]),
    st.sampled_from(CONTROL_TOKENS), st.text(max_size=5))
usual_text = st.lists(words, max_size=5).map("".join)
scalar = st.one_of(usual_text, st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
                   st.booleans(), st.none())
value = st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(usual_text, inner, max_size=3)), max_leaves=6)
text_part = st.builds(lambda t: {"type": "text", "text": t}, usual_text)
image_part = st.sampled_from([{"type": "image", "image": "a.png"}, {"type": "image_url", "image_url": {"url": "u"}},
                              {"image": "b.png"}])
user_content = st.one_of(usual_text, st.lists(st.one_of(text_part, image_part), max_size=3))
system_content = st.one_of(usual_text, st.none(), st.lists(text_part, max_size=2))
# Flat ones first: a top-level value is what a template may print otherwise than as JSON.
objects = st.one_of(st.dictionaries(usual_text, scalar, min_size=1, max_size=4),
                    st.dictionaries(usual_text, value, max_size=4))
arguments = st.one_of(objects, usual_text.map(lambda t: f'{{"q": "{t}"}}'), st.none())


@st.composite
def usual_call(draw: st.DrawFn, objects_only: bool = False) -> dict[str, Any]:
    """A tool call (in either shape); ``objects_only``: its arguments absent or an object."""
    body: dict[str, Any] = {"name": draw(st.sampled_from(["get_weather", "search", "x y"]))}
    if draw(st.integers(0, 5)):
        body["arguments"] = draw(objects if objects_only else arguments)
    if draw(st.booleans()):
        return {"id": "call_1", "type": "function", "function": body}
    return body


@st.composite
def usual_assistant(draw: st.DrawFn, objects_only: bool = False) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": draw(st.one_of(usual_text, st.none()))}
    if draw(st.booleans()):
        message["reasoning_content"] = draw(usual_text)
    if draw(st.booleans()):
        message["tool_calls"] = draw(st.lists(usual_call(objects_only), max_size=3))
    return message


@st.composite
def usual_conversation(draw: st.DrawFn, strict: bool = False, objects_only: bool = False) -> list[dict[str, Any]]:
    """A conversation of the usual shape, with at least one real user query (a plain text one first);
    ``strict``: one system message at most, the first (the upstream template's); ``objects_only``:
    every call's arguments absent or an object (the models' own templates refuse anything else)."""
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(system_content)})
    messages.append({"role": "user", "content": "hello"})
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["user", "assistant", "tool", *(() if strict else ("system",))]))
        if kind == "assistant":
            messages.append(draw(usual_assistant(objects_only)))
        elif kind == "tool":
            messages.append({"role": "tool", "content": draw(st.one_of(usual_text, st.lists(text_part, max_size=2)))})
        else:
            messages.append({"role": kind, "content": draw(user_content if kind == "user" else system_content)})
    return messages


#: ``chatml-safety``'s guard under ``reject``, and the lead its fast path tests strings for.
REJECT = pf.get_format("chatml-safety", policy="reject").guard
LEAD = REJECT.fast_path(CHATML_READING).lead


def without_lead(value: Any) -> Any:
    """``value`` with the guard's lead taken out of every string in it (keys too)."""
    if isinstance(value, str):
        return value.replace(LEAD, "")
    if isinstance(value, dict):
        return {without_lead(k): without_lead(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_lead(item) for item in value]
    return value


def untrusted_without_lead(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The guard's lead taken out of what it reads: every message but the assistant's, and tool calls."""
    return [({**m, "tool_calls": without_lead(m["tool_calls"])} if "tool_calls" in m else m)
            if m["role"] == "assistant" else without_lead(m) for m in messages]


def with_string_contents(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with every content a string (a list of text parts joined; none: empty), which
    the templates that concatenate content write as it is."""
    def text(content: Any) -> str:
        return content if isinstance(content, str) else "".join(part.get("text", "") for part in content or ())
    return [{**message, "content": text(message.get("content"))} for message in messages]
