"""Hypothesis strategies for OpenAI-style conversations, shared by the differential tests.

They span the documented input space of the ChatML formats: several and interleaved system
messages, text/image/video parts, tool calls in both shapes with mapping or string arguments, runs
of tool results, reasoning under every alias, empty and ``None`` content, unicode and whitespace
edges, markup the template reacts to (``<think>``, ``<tool_response>``), JSON edge values.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

# The differential tests' size and seed, re-exported where the tests have always imported them.
from tests.support.settings import EXAMPLES as EXAMPLES
from tests.support.settings import differential_settings as differential_settings

FRAGMENTS = [
    "<think>",
    "</think>",
    "<tool_response>",
    "</tool_response>",
    "<tool_call>",
    "</tool_call>",
    "\n",
    "\n\n",
    " ",
    "\t",
    "\u3000",
    "\u2028",
    "\x00",
    "\x1f",
    "\ud800",
    "é",
    "日本",
    "🙂",
    "hello",
    "Picture 1: ",
    "<|im_start|>",
    "<|im_end|>",
    "{",
    "}",
    '"',
    "\\",
    "</",
    "<",
]

text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), max_size=6).map("".join)

plain_text = st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="<>"), max_size=12)

# JSON values including those where fast encoders differ from json.dumps.
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63, max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e16, -0.0, 1e-7, 1.5e300, math.nan, math.inf, -math.inf, 0.1, 100.0]),
    text,
)
json_keys = st.one_of(text, st.sampled_from(["type", "description", "properties", "\u2028", "\ud83d", "x\x07"]))
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(json_keys, children, max_size=3),
        st.dictionaries(st.integers(-5, 5), children, max_size=2),
        st.dictionaries(st.floats(allow_nan=False, width=32), children, max_size=2),
    ),
    max_leaves=8,
)

text_part = st.builds(lambda t: {"type": "text", "text": t}, text)
image_part = st.sampled_from(
    [
        {"type": "image", "image": "file:///a.png"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"image": "b.jpg"},
        {"type": "image"},
    ]
)
video_part = st.sampled_from([{"type": "video", "video": "v.mp4"}, {"video": ["f1.jpg", "f2.jpg"]}, {"type": "video"}])
odd_part = st.sampled_from([{"type": "audio", "audio": "x.wav"}, {"type": "input_text", "content": "x"}])


def weighted(*options: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """Pick one of the strategies with the given integer weights."""
    table = [strategy for weight, strategy in options for _ in range(weight)]
    return st.integers(0, len(table) - 1).flatmap(lambda i: table[i])


content = weighted(
    (6, text),
    (1, st.none()),
    (4, st.lists(st.one_of(text_part, text_part, image_part, video_part), max_size=4)),
    (1, st.lists(st.one_of(text_part, odd_part), min_size=1, max_size=2)),
)
text_content = st.one_of(text, st.none(), st.lists(text_part, max_size=3))
wrapped_tool_response = st.builds(
    lambda pre, body, post: pre + "<tool_response>" + body + "</tool_response>" + post,
    st.sampled_from(["", " ", "\n"]),
    text,
    st.sampled_from(["", " ", "\n"]),
)

# Flat lists and dicts of strings, integers, booleans and None: the arguments agents send most (paths,
# options), which the ChatML renderer encodes all at once; with separators and brackets in the strings.
flat_text = st.lists(
    st.sampled_from([",", ":", ", ", ": ", "},{", "],[", "{", "]", '"', "\\", "a", "é", "🙂", "\x00", "\ud800"]),
    max_size=4,
).map("".join)
flat_item = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(2**63 - 2, 2**64 + 1), flat_text)
flat_container = st.one_of(
    st.lists(flat_item, max_size=3), st.dictionaries(st.one_of(flat_text, plain_text), flat_item, max_size=3)
)

tool_name = st.one_of(st.sampled_from(["get_weather", "python", "search", "read_file"]), plain_text)
# Arguments that are neither an object nor a string: the ChatML templates write no parameter for them.
odd_arguments = st.one_of(
    st.lists(st.one_of(json_scalars, st.just("")), max_size=2), st.integers(), st.booleans(), st.floats(allow_nan=False)
)
arguments = st.one_of(
    st.dictionaries(st.one_of(st.sampled_from(["city", "path", "n", "query"]), plain_text), json_values, max_size=4),
    st.dictionaries(st.sampled_from(["paths", "options", "n"]), st.one_of(flat_container, flat_item), max_size=3),
    st.builds(lambda d: __import__("json").dumps(d), st.dictionaries(plain_text, json_scalars, max_size=3)),
    text,
    st.none(),
    odd_arguments,
)
# An assistant content with a <think> block written inline, text around and between the markers (the
# template splits it at "</think>" and keeps only parts of it), sometimes an empty block.
think_content = st.builds(
    lambda pre, reasoning, more, post: f"{pre}<think>{reasoning}</think>{more}{post}",
    st.sampled_from(["", "\n", "pre", "<think>", "a<think>"]),
    st.one_of(st.sampled_from(["", "\n", "\nplan\n", " "]), text),
    st.sampled_from(["", "\n\n", "mid</think>", "</think>", "\n</think>\n"]),
    st.one_of(st.sampled_from(["", "\n\nAnswer", "Answer "]), text),
)


@st.composite
def tool_calls(draw: st.DrawFn) -> list[dict[str, Any]]:
    calls = []
    for _ in range(draw(st.integers(0, 3))):
        body: dict[str, Any] = {"name": draw(tool_name)}
        if draw(st.booleans()):
            body["arguments"] = draw(arguments)
        if draw(st.booleans()):
            calls.append({"id": "call_" + str(draw(st.integers(0, 99))), "type": "function", "function": body})
        else:
            calls.append(body)
    return calls


@st.composite
def message(draw: st.DrawFn, roles: tuple[str, ...] = ("system", "user", "assistant", "tool")) -> dict[str, Any]:
    role = draw(st.sampled_from(roles))
    msg: dict[str, Any] = {"role": role}
    if role == "user":
        msg["content"] = draw(weighted((5, content), (1, wrapped_tool_response)))
    elif role == "system":
        msg["content"] = draw(weighted((12, text_content), (1, content)))
    elif role == "assistant":
        if draw(st.integers(0, 4)):
            msg["content"] = draw(st.one_of(text, text_content, content, think_content))
        for field in ("reasoning_content", "reasoning", "thinking"):
            if draw(st.integers(0, 3)) == 0:
                msg[field] = draw(st.one_of(text, st.none()))
        if draw(st.booleans()):
            msg["tool_calls"] = draw(tool_calls())
    elif role == "tool":
        msg["content"] = draw(st.one_of(text, text_content, content))
        if draw(st.booleans()):
            msg["tool_call_id"] = "call_1"
    else:
        msg["content"] = draw(text)
    if role != "assistant" and draw(st.integers(0, 7)) == 0:  # what no template writes of such a turn
        field = draw(st.sampled_from(["reasoning_content", "reasoning", "thinking", "tool_calls"]))
        msg[field] = draw(tool_calls()) if field == "tool_calls" else draw(st.one_of(text, st.none()))
    return msg


@st.composite
def conversation(draw: st.DrawFn, extra_roles: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """A conversation: mostly agent-shaped (user, assistant with calls, tool runs), sometimes random."""
    if draw(st.integers(0, 5)) == 3:
        msgs = draw(st.lists(message(), max_size=8))
        return msgs
    msgs = []
    if draw(st.booleans()):
        msgs.append(draw(message(("system",))))
    for _ in range(draw(st.integers(1, 4))):
        msgs.append(draw(message(("user",))))
        for _ in range(draw(st.integers(0, 3))):
            msgs.append(draw(message(("assistant",))))
            for _ in range(draw(st.integers(0, 2))):
                msgs.append(draw(message(("tool",))))
            if draw(st.integers(0, 5)) == 0:
                msgs.append(draw(message(("system",))))
    if extra_roles and draw(st.integers(0, 15)) == 7:
        msgs.insert(draw(st.integers(0, len(msgs))), draw(message(extra_roles)))
    if draw(st.integers(0, 4)) == 2:
        msgs.insert(draw(st.integers(0, len(msgs))), draw(message(("system", "tool", "user"))))
    return msgs


tool_definition = st.one_of(
    st.builds(
        lambda name, desc, props: {
            "type": "function",
            "function": {
                "name": name,
                "description": desc,
                "parameters": {"type": "object", "properties": props, "required": sorted(props)[:1]},
            },
        },
        tool_name,
        text,
        st.dictionaries(plain_text, st.dictionaries(json_keys, json_values, max_size=3), max_size=3),
    ),
    st.builds(lambda name, extra: {"name": name, "extra": extra}, tool_name, json_values),
)
tools = st.one_of(st.none(), st.just([]), st.lists(tool_definition, min_size=1, max_size=3))
# Tool objects prepare_tools refuses (no name, a name that is not a string, parameters that are not an
# object) and any JSON object: the ChatML templates write each tool as JSON, whatever its fields.
lax_tool = st.one_of(
    st.builds(lambda desc: {"type": "function", "function": {"description": desc}}, text),
    st.builds(lambda name: {"type": "function", "function": {"name": name}}, json_scalars),
    st.builds(lambda name, params: {"type": "function", "function": {"name": name, "parameters": params}},
              tool_name, json_scalars),
    st.dictionaries(json_keys, json_values, max_size=3),
)
lax_tools = st.lists(st.one_of(tool_definition, lax_tool), min_size=1, max_size=3)

ABSENT = object()
chatml_options = st.fixed_dictionaries(
    {},
    optional={
        "enable_thinking": st.sampled_from([True, False, None, 0, 1, "false"]),
        "preserve_thinking": st.sampled_from([True, False, None, 1, "true"]),
        "add_vision_id": st.sampled_from([True, False, None, 1, 0, "yes"]),
    },
)
#: The ChatML family's options, Nemotron's too (a test keeps those its format declares).
family_options = st.tuples(chatml_options, st.fixed_dictionaries({}, optional={
    "truncate_history_thinking": st.sampled_from([True, False, None, 0, 1, ""]),
    "low_effort": st.sampled_from([True, False, None, 1]),
    "medium_effort": st.sampled_from([True, False, None, 1]),
})).map(lambda both: {**both[0], **both[1]})
