"""Generated input in the shapes Gemma 4's template reads: what its differential, spans and guard
tests draw from.

A leading system or developer message or none (its content a string, a list of parts or strings,
an object); user, assistant, ``model``, system and other roles, sometimes none; contents that are
strings (with thought channels and the template's markers in them), lists of text, image, audio and
video parts (and items that are no part), objects, numbers; assistants with reasoning under every
alias (strings, empty, other values), tool calls (arguments an object, ``None``, a string, missing),
legacy ``tool_responses``, and runs of tool results after them (strings, lists of parts, ``None``,
objects, numbers; their ids matching a call's or not, a ``name`` or none); consecutive assistants;
tools whose schemas use every field the template writes (descriptions, types in any case, enums,
``items``, ``nullable``, nested objects, ``required``, extra keys, ``response``); the options
``enable_thinking``, ``preserve_thinking`` and ``bos_token``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.support.strategies import json_scalars, json_values, text, weighted

__all__ = ["TEMPLATE", "conversation", "options", "oracle_options", "tool_list"]

TEMPLATE = "families/gemma4.jinja"
FRAGMENTS = ["<|channel>", "<channel|>", "thought\n", '<|"|>', "<|turn>", "<turn|>", "<|tool_call>", "\n", "  ", "<|"]
g4_text = st.lists(st.one_of(text, st.sampled_from(FRAGMENTS)), max_size=4).map("".join)
_KINDS = ["text", "text", "image", "image_url", "audio", "input_audio", "video", "input_text"]
part = weighted(
    (20, st.builds(lambda t: {"type": "text", "text": t}, g4_text)),
    (8, st.builds(lambda k: {"type": k}, st.sampled_from(_KINDS[2:]))),
    (1, st.builds(lambda t: {"type": "text", "text": t}, st.one_of(st.none(), st.integers()))),
    (1, st.just({"type": "text"})),
    (2, st.builds(lambda t: {"text": t}, g4_text)),
    (1, g4_text),
)
content = weighted((10, g4_text), (1, st.none()), (4, st.lists(part, max_size=3)),
                   (1, st.dictionaries(g4_text, g4_text, max_size=1)), (1, st.integers()))
tool_content = weighted((8, g4_text), (3, st.lists(part, max_size=3)), (1, st.none()), (1, st.integers()),
                        (1, st.just({})), (1, st.dictionaries(g4_text, g4_text, min_size=1, max_size=1)))
_odd_arguments = st.one_of(st.none(), g4_text, st.lists(json_scalars, max_size=1), st.just({1: "a", 2: "b"}))


def rarely(n: int) -> st.SearchStrategy[bool]:
    """True about once in ``n + 1`` draws (not at a bound of the range: hypothesis favours those)."""
    return st.integers(0, n).map(lambda x: x == n // 2)


call_name = st.one_of(st.sampled_from(["get_weather", "search"]), g4_text)


@st.composite
def _call(draw: st.DrawFn) -> Any:
    body: dict[str, Any] = {"name": draw(json_scalars) if draw(rarely(40)) else draw(call_name)}
    if not draw(rarely(40)):
        odd = draw(rarely(12))
        body["arguments"] = draw(_odd_arguments if odd else st.dictionaries(g4_text, json_values, max_size=3))
    call: dict[str, Any] = {"type": "function", "function": body}
    if draw(st.integers(0, 3)):
        call["id"] = draw(st.sampled_from(["c1", "c2", "c3"]))
    return draw(st.sampled_from([body, "call"])) if draw(rarely(60)) else call


@st.composite
def _legacy(draw: st.DrawFn) -> Any:
    result: dict[str, Any] = {}
    if draw(st.booleans()):
        result["name"] = draw(st.one_of(call_name, st.just(""), st.none()))
    if draw(st.integers(0, 5)):
        result["response"] = draw(st.one_of(json_values, st.dictionaries(g4_text, json_values, max_size=2)))
    return draw(g4_text) if draw(rarely(10)) else result


@st.composite
def _message(draw: st.DrawFn, role: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role}
    if draw(st.integers(0, 12)):
        message["content"] = draw(tool_content if role == "tool" else content)
    for field in ("reasoning_content", "thinking", "reasoning"):
        if draw(st.integers(0, 3 if role == "assistant" else 30)) == 0:
            message[field] = draw(weighted((6, g4_text), (1, st.sampled_from(["", "  "])), (1, st.none()),
                                           (1, st.lists(g4_text, max_size=1)), (1, st.integers(0, 2))))
    if role == "assistant" and draw(st.integers(0, 2)) == 0:
        message["tool_calls"] = draw(st.lists(_call(), min_size=1, max_size=2))
        if draw(st.integers(0, 8)) == 0:
            message["tool_responses"] = draw(st.lists(_legacy(), max_size=2))
    if role == "tool":
        if draw(st.integers(0, 3)):
            message["tool_call_id"] = draw(st.sampled_from(["c1", "c2", "c9"]))
        if draw(st.integers(0, 3)) == 0:
            message["name"] = draw(st.one_of(call_name, st.just("")))
    return message


@st.composite
def conversation(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A conversation as Gemma 4 reads it (see the module docstring)."""
    messages = []
    if draw(st.booleans()):
        first = draw(_message(draw(st.sampled_from(["system", "system", "developer"]))))
        if draw(st.integers(0, 4)) == 0:
            first["content"] = draw(st.lists(st.one_of(part, st.none()), max_size=3))
        messages.append(first)
    for _ in range(draw(st.integers(0, 3))):
        messages.append(draw(_message("user")))
        for _ in range(draw(st.integers(0, 3))):
            messages.append(draw(_message("assistant")))
            for _ in range(draw(st.integers(0, 2))):
                messages.append(draw(_message("tool")))
    for _ in range(draw(st.integers(0, 1))):
        role = draw(st.sampled_from(["system", "developer", "tool", "user", "model", "assistant", "other"]))
        message = draw(_message(role))
        if draw(rarely(20)):
            message["role"] = draw(st.sampled_from([None, 3]))
        messages.insert(draw(st.integers(0, len(messages))), message)
    return messages


_TYPES = st.one_of(st.sampled_from(["string", "integer", "number", "boolean", "array", "object", "String", "OBJECT",
                                    "Array"]), st.lists(st.sampled_from(["string", "null", "integer"]), max_size=2),
                   st.none())


@st.composite
def schema(draw: st.DrawFn, depth: int = 0) -> Any:
    """A property's schema, with every field the template writes, sometimes odd."""
    found: dict[str, Any] = {}
    if draw(st.integers(0, 5)):
        found["type"] = draw(_TYPES)
    if draw(st.booleans()):
        found["description"] = draw(st.one_of(g4_text, st.just("")))
    if draw(st.integers(0, 3)) == 0:
        found["enum"] = draw(st.one_of(st.lists(st.one_of(g4_text, json_scalars), max_size=3), st.just([])))
    if draw(st.integers(0, 4)) == 0:
        found["nullable"] = draw(st.booleans())
    if depth < 2 and draw(st.integers(0, 3)) == 0:
        found["items"] = draw(st.one_of(st.dictionaries(
            st.sampled_from(["type", "properties", "required", "description", "enum", "format"]),
            st.one_of(_TYPES, st.dictionaries(st.sampled_from(["a", "B", "b"]), schema(depth + 1), max_size=2),
                      st.lists(g4_text, max_size=2), g4_text, json_scalars), max_size=4), json_scalars))
    if depth < 2 and draw(st.integers(0, 3)) == 0:
        found["properties"] = draw(st.one_of(
            st.dictionaries(st.sampled_from(["a", "B", "b", "type"]), schema(depth + 1), max_size=2), json_scalars))
    if draw(st.integers(0, 4)) == 0:
        found["required"] = draw(st.one_of(st.lists(g4_text, max_size=2), g4_text))
    if depth < 2 and draw(st.integers(0, 5)) == 0:
        found[draw(st.sampled_from(["extra", "Zed", "nested"]))] = draw(schema(depth + 1))
    return draw(json_scalars) if draw(rarely(20)) else found


@st.composite
def _tool(draw: st.DrawFn) -> dict[str, Any]:
    function: dict[str, Any] = {"name": draw(call_name)}
    if draw(st.integers(0, 5)):
        function["description"] = draw(g4_text)
    if draw(st.integers(0, 5)):
        parameters: dict[str, Any] = {"type": draw(st.sampled_from(["object", "OBJECT", ""]))}
        if draw(st.integers(0, 4)):
            parameters["properties"] = draw(st.dictionaries(st.one_of(st.sampled_from(["city", "days", "B", "a"]),
                                                                      g4_text), schema(), max_size=3))
        if draw(st.booleans()):
            parameters["required"] = draw(st.lists(g4_text, max_size=2))
        function["parameters"] = draw(json_scalars) if draw(rarely(10)) else parameters
    if draw(st.integers(0, 5)) == 0:
        function["response"] = draw(st.dictionaries(st.sampled_from(["description", "type"]),
                                                    st.one_of(g4_text, st.sampled_from(["object", "string"])),
                                                    max_size=2))
    return {"type": "function", "function": function}


tool_list = st.one_of(st.none(), st.just([]), st.lists(_tool(), min_size=1, max_size=3))


def options() -> st.SearchStrategy[dict[str, Any]]:
    """``render``'s options: the two thinking flags of any of their kinds, ``bos_token`` given or not."""
    flag = st.sampled_from([True, False, None])
    return st.fixed_dictionaries({}, optional={"enable_thinking": flag, "preserve_thinking": flag,
                                               "bos_token": st.sampled_from(["<bos>", "", "B"])})


def oracle_options(given: dict[str, Any]) -> dict[str, Any]:
    """The options transformers passes the template: the tokenizer's ``bos_token`` unless given."""
    return {"bos_token": "<bos>", **given}
