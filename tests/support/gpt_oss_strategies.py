"""Hypothesis strategies for the gpt-oss differential tests: tools and conversations the template reads.

They span the documented input space of the gpt-oss format: tool schemas of every shape the
template's TypeScript writer tells apart (each JSON type, enums, arrays of each item kind and of
nested objects, type lists, ``oneOf`` with described and defaulted variants, ``anyOf`` and unknown
shapes it writes as ``any``, nullable, defaults of every JSON kind, ``required`` lists), a leading
system or developer message, multi-turn tool loops with calls in both shapes and arguments of any
JSON kind (strings too), results of any JSON kind, reasoning under every alias (several at once,
``None`` ones), the texts the template refuses, the options (any effort text, built-in tool names
it ignores), and what it drops: messages of other roles after the first (mid-conversation system
and developer messages), every call of a message but the first, content parts it never writes.
"""

from __future__ import annotations

import datetime
from typing import Any

from hypothesis import strategies as st

FRAGMENTS = [
    "<|channel|>analysis<|message|>", "<|channel|>final<|message|>", "<|start|>", "<|end|>", "<|message|>",
    "<|channel|>", "<|call|>", "<|return|>", "\n", "\n\n", " ", "\t", "\x00", "\ud800", "é", "日本", "🙂",
    "hello", "{", "}", '"', "\\", "// ", "*/", "<", "|", "null", "any",
]

text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=5)), max_size=5).map("".join)
#: Text without the two tags the template refuses in assistant content and thinking.
safe_text = text.filter(lambda t: "<|channel|>analysis<|message|>" not in t and "<|channel|>final<|message|>" not in t)
names = st.one_of(st.sampled_from(["get_weather", "f", "lookup_2", "x.y", "a-b", ""]), st.text(max_size=6))

json_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**20), 10**20), st.floats(allow_nan=True), text,
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
    max_leaves=8,
)

SIMPLE_TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"]


def _with_common(draw: st.DrawFn, spec: dict[str, Any]) -> dict[str, Any]:
    """Add what any schema may carry: a description, a default, nullable."""
    if draw(st.booleans()):
        spec["description"] = draw(st.one_of(text, st.just("")))
    if draw(st.integers(0, 3)) == 0:
        spec["nullable"] = draw(st.booleans())
    return spec


@st.composite
def _leaf_schema(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["string", "enum", "number", "integer", "boolean", "object", "null", "typelist",
                                 "untyped", "unknown", "anyOf", "bare"]))
    if kind == "enum":
        spec: Any = {"type": "string", "enum": draw(st.lists(st.one_of(text, st.integers(), st.none()), max_size=3))}
    elif kind == "typelist":
        spec = {"type": draw(st.lists(st.sampled_from(SIMPLE_TYPES), min_size=0, max_size=3))}
    elif kind == "untyped":
        spec = {}
    elif kind == "unknown":
        spec = {"type": draw(st.one_of(text, st.integers()))}
    elif kind == "anyOf":
        spec = {"anyOf": [{"type": "string"}, {"type": "number"}]}
    elif kind == "bare":
        return draw(st.sampled_from([True, "string", None, []]))
    else:
        spec = {"type": kind}
    return _with_common(draw, spec)


def _nested(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    @st.composite
    def build(draw: st.DrawFn) -> Any:
        kind = draw(st.sampled_from(["array", "object", "oneOf"]))
        if kind == "array":
            spec: dict[str, Any] = {"type": "array"}
            choice = draw(st.integers(0, 3))
            if choice == 0:
                spec["items"] = {"type": draw(st.sampled_from(SIMPLE_TYPES))}
            elif choice == 1:
                spec["items"] = draw(children)
            elif choice == 2:
                spec["items"] = draw(st.sampled_from([{}, None, [{"type": "string"}]]))
        elif kind == "object":
            spec = {"type": "object"}
            if draw(st.booleans()):
                spec["properties"] = draw(st.dictionaries(names, children, max_size=3))
                keys = list(spec["properties"])
                spec["required"] = draw(st.lists(st.sampled_from([*keys, "absent"]), max_size=3))
        else:
            variants = draw(st.lists(children, min_size=0, max_size=3))
            for variant in variants:
                if isinstance(variant, dict) and draw(st.booleans()):
                    variant["default"] = draw(json_value)
            spec = {"oneOf": variants}
        return _with_common(draw, spec)

    return build()


schema = st.recursive(_leaf_schema(), _nested, max_leaves=6)


@st.composite
def parameter(draw: st.DrawFn) -> Any:
    """A top-level parameter schema; its default is a string where the template concatenates it raw."""
    spec = draw(schema)
    if isinstance(spec, dict) and draw(st.booleans()):
        raw = bool(spec.get("enum")) or bool(spec.get("oneOf"))
        spec["default"] = draw(text if raw else json_value)
    return spec


@st.composite
def tool(draw: st.DrawFn) -> dict[str, Any]:
    function: dict[str, Any] = {"name": draw(names), "description": draw(text)}
    shape = draw(st.integers(0, 4))
    if shape == 0:
        properties = draw(st.dictionaries(names, parameter(), max_size=4))
        parameters: Any = {"type": "object", "properties": properties}
        if draw(st.booleans()):
            parameters["required"] = draw(st.lists(st.sampled_from([*properties, "absent"]), max_size=3))
        function["parameters"] = parameters
    elif shape == 1:
        function["parameters"] = draw(st.sampled_from([{}, {"type": "object"}, {"type": "object", "properties": {}}]))
    elif shape == 2:
        function["parameters"] = {"type": "object", "properties": draw(st.dictionaries(names, schema, max_size=2)),
                                  "required": draw(st.sampled_from(["", "ab", []]))}
    return {"type": "function", "function": function}


tools = st.one_of(st.none(), st.just([]), st.lists(tool(), min_size=1, max_size=3))


def _reasoning(draw: st.DrawFn, message: dict[str, Any], refused: bool) -> None:
    for key in draw(st.lists(st.sampled_from(["thinking", "reasoning_content", "reasoning"]), unique=True,
                             max_size=3)):
        message[key] = draw(st.one_of(st.none(), text if refused else safe_text))


@st.composite
def tool_call(draw: st.DrawFn) -> dict[str, Any]:
    body: dict[str, Any] = {"name": draw(names), "arguments": draw(st.one_of(json_value, text.map(str)))}
    if draw(st.integers(0, 5)) == 0:
        body["content_type"] = draw(st.sampled_from(["json", "<|constrain|>json", "code", ""]))
    if draw(st.booleans()):
        return {"id": "call_" + draw(st.text("0123456789", max_size=3)), "type": "function", "function": body}
    return body


#: Content as OpenAI's text parts (the template prints or tests them, never reads their text).
parts = st.lists(st.builds(lambda t: {"type": "text", "text": t}, safe_text), min_size=1, max_size=2)


@st.composite
def assistant(draw: st.DrawFn, refused: bool) -> dict[str, Any]:
    """An assistant message: a final answer or a tool call (sometimes with a preamble and reasoning)."""
    message: dict[str, Any] = {"role": "assistant"}
    content_text = text if refused else safe_text
    if draw(st.booleans()):
        message["tool_calls"] = draw(st.lists(tool_call(), min_size=1, max_size=3))
        choice = draw(st.integers(0, 5))
        if choice == 1:
            message["content"] = draw(content_text)
        elif choice == 2:
            message["content"] = None
        elif choice == 3:
            message["content"] = draw(parts)  # written only when no final answer follows: else dropped
    else:
        message["content"] = draw(content_text)
        if draw(st.integers(0, 4)) == 0:
            message["tool_calls"] = None  # read as absent, as transformers drops it
    _reasoning(draw, message, refused)
    return message


@st.composite
def conversation(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A gpt-oss conversation: an optional leading system/developer message, then user, assistant and tool
    turns (tool loops more likely than not), now and then one the template refuses."""
    refused = draw(st.integers(0, 5)) == 0
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        first: dict[str, Any] = {"role": draw(st.sampled_from(["system", "developer"]))}
        if draw(st.integers(0, 4)):
            first["content"] = draw(st.one_of(text, st.none(), parts))  # parts: printed as Python's str
        messages.append(first)
    for _ in range(draw(st.integers(0 if messages else 1, 7))):
        kind = draw(st.sampled_from(["user"] * 3 + ["assistant"] * 2 + ["loop"] * 4 + ["tool", "other"]))
        if kind == "user":
            messages.append({"role": "user", "content": draw(text)})
        elif kind == "other":  # a role the template renders nothing of after the first message: dropped
            role = draw(st.sampled_from(["system", "system", "developer", "function", "ipython", "critic"]))
            messages.append({"role": role, "content": draw(st.one_of(text, st.none(), parts))})
        elif kind == "assistant":
            messages.append(draw(assistant(refused)))
        elif kind == "tool":
            content = draw(st.one_of(text, json_value.filter(lambda v: v is not None)))
            messages.append({"role": "tool", "content": content})
        else:
            call = draw(assistant(refused).filter(lambda m: m.get("tool_calls")))
            messages.append(call)
            for _ in range(draw(st.integers(1, 2))):
                result: dict[str, Any] = {"role": "tool", "content": draw(text)}
                if draw(st.booleans()):
                    result["tool_call_id"] = "call_1"
                    result["name"] = draw(names)
                messages.append(result)
    for message in messages:  # now and then what no template writes of a turn other than an assistant's
        if message["role"] != "assistant" and draw(st.integers(0, 7)) == 0:
            if draw(st.booleans()):
                _reasoning(draw, message, refused)
            else:
                message["tool_calls"] = draw(st.lists(tool_call(), min_size=1, max_size=2))
    return messages


dates = st.one_of(
    st.dates(min_value=datetime.date(1000, 1, 1)).map(lambda d: d.isoformat()),
    st.dates(min_value=datetime.date(1000, 1, 1)),
    st.datetimes(min_value=datetime.datetime(1000, 1, 1)),
)


@st.composite
def options(draw: st.DrawFn) -> dict[str, Any]:
    """The format's options; ``current_date`` always (the default is today's date: not reproducible)."""
    out: dict[str, Any] = {"current_date": draw(dates)}
    if draw(st.booleans()):
        out["reasoning_effort"] = draw(st.one_of(st.sampled_from(["low", "medium", "high", None, "", "max"]), text))
    if draw(st.booleans()):
        out["model_identity"] = draw(st.one_of(text, st.none()))
    if draw(st.booleans()):
        # Names the template knows and others it ignores; now and then a string (its characters) or a mapping.
        name = st.sampled_from(["browser", "python", "python", "search", "", "Python", 1, None])
        out["builtin_tools"] = draw(st.one_of(
            st.lists(name, max_size=3), st.lists(name, max_size=3).map(tuple), st.sampled_from(["python", ""]),
            st.dictionaries(st.sampled_from(["python", "browser", "x"]), st.integers(), max_size=2)))
    return out
