"""Generated input in the shapes GLM-4.5's template reads: what its differential, spans and guard
tests draw from.

System and user messages with contents that are strings, lists of text parts, strings and other
parts, objects; assistant turns with think blocks in their content or not, reasoning fields (strings,
empty or blank ones, other values), tool calls (arguments an object, sometimes a string, which the
engine refuses; the ``function`` wrapper or the flat shape; several per turn); runs of tool results
(strings, lists of outputs and strings, objects, none); other roles; ``enable_thinking`` absent, true,
false or null.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.support.strategies import image_part, json_values, text, weighted

__all__ = ["TEMPLATE", "conversation", "options"]

TEMPLATE = "families/glm4moe.jinja"
FRAGMENTS = ["<think>", "</think>", "\n", "  ", "/nothink", "<|user|>", "<tool_call>", "<arg_value>", "<|"]
glm_text = st.lists(st.one_of(text, st.sampled_from(FRAGMENTS)), max_size=4).map("".join)
part = weighted((5, st.builds(lambda t: {"type": "text", "text": t}, glm_text)), (2, glm_text), (1, image_part),
                (1, st.builds(lambda t: {"type": "input_text", "text": t}, glm_text)),
                (1, st.builds(lambda t: {"type": "text", "text": t}, st.one_of(st.none(), st.integers()))))
content = weighted((10, glm_text), (1, st.none()), (4, st.lists(part, max_size=3)),
                   (1, st.dictionaries(glm_text, glm_text, max_size=2)), (1, st.integers()))
result_item = weighted((3, st.builds(lambda o: {"output": o}, st.one_of(glm_text, st.none()))), (2, glm_text),
                       (1, st.builds(lambda t, o: {"type": "text", "text": t, "output": o}, glm_text, glm_text)),
                       (1, st.builds(lambda t: {"type": "text", "text": t}, glm_text)))
tool_content = weighted((8, glm_text), (3, st.lists(result_item, max_size=3)), (1, st.none()),
                        (1, st.dictionaries(glm_text, glm_text, max_size=2)))


@st.composite
def _call(draw: st.DrawFn) -> dict[str, Any]:
    arguments = draw(weighted((10, st.dictionaries(glm_text, json_values, max_size=3)), (1, glm_text)))
    name = draw(st.sampled_from(["get_weather", "search"]) | glm_text)
    if draw(st.integers(0, 5)) == 0:
        return {"name": name, "arguments": arguments, **draw(st.sampled_from([{}, {"function": {}}]))}
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


@st.composite
def _message(draw: st.DrawFn, role: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role}
    if draw(st.integers(0, 12)):
        message["content"] = draw(tool_content if role == "tool" else content)
    if role == "assistant":
        for field in ("reasoning_content", "thinking", "reasoning"):
            if draw(st.integers(0, 3)) == 0:
                message[field] = draw(weighted((6, glm_text), (1, st.sampled_from(["", "  \n"])), (1, st.none()),
                                               (1, st.lists(glm_text, max_size=1))))
        if draw(st.integers(0, 2)) == 0:
            message["tool_calls"] = draw(st.lists(_call(), min_size=1, max_size=2))
    return message


@st.composite
def conversation(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A conversation as GLM-4.5 reads it (see the module docstring)."""
    messages = [draw(_message("system"))] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(0, 3))):
        messages.append(draw(_message("user")))
        for _ in range(draw(st.integers(0, 3))):
            messages.append(draw(_message("assistant")))
            for _ in range(draw(st.integers(0, 2))):
                messages.append(draw(_message("tool")))
    for _ in range(draw(st.integers(0, 1))):
        role = draw(st.sampled_from(["system", "developer", "tool", "user"]))
        messages.insert(draw(st.integers(0, len(messages))), draw(_message(role)))
    return messages


def options() -> st.SearchStrategy[dict[str, Any]]:
    """``render``'s options: ``enable_thinking`` absent, or any value of its kinds."""
    return st.fixed_dictionaries({}, optional={"enable_thinking": st.sampled_from([True, False, None])})
