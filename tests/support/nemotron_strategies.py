"""Hypothesis strategies for the NVIDIA Nemotron templates (``nemotron-3-nano``, ``nemotron-3-super``,
``nemotron-3-ultra``, ``nemotron-3.5``), shared by their differential test and the check of their
tagged copies.

What these templates do that the other ChatML ones do not, and what the strategies therefore reach:

- tools are written as XML, not JSON: each tool's name, its trimmed description, each parameter's
  name, type, trimmed description and ``enum`` (JSON), then every other key of a parameter, of the
  parameters object and of the function, in order, a container as JSON and anything else as Python
  prints it (``True``, ``None``, ``1e+16``), then ``required`` (JSON); a tool with or without its
  ``function`` wrapper;
- a call's arguments are written one ``<parameter=...>`` per key (a container as JSON, anything else
  as Python prints it), a string or ``null`` for the arguments being an error of the engine;
- an assistant turn's content is read for ``<think>`` and ``</think>`` wherever they are, the
  reasoning (``reasoning_content`` and its aliases) put before it when it is a string that is not
  blank, and ``truncate_history_thinking`` drops the reasoning of the turns before the last user
  message (so several user messages matter);
- the first message only is the system prompt; a later system message, a message of another role
  (``developer``) and tool results right after the system prompt (no user turn opened for them) are
  written as they come.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.support.strategies import json_keys, json_values, text, text_part, tool_name, weighted

#: Values the templates test by truthiness, as a client may pass them.
TRUTHY = st.sampled_from([True, False, None, 0, "false", 1])
#: Each template's options, by format name.
OPTION_NAMES = {
    "nemotron-3-nano": ("enable_thinking", "truncate_history_thinking"),
    "nemotron-3-super": ("enable_thinking", "truncate_history_thinking", "low_effort"),
    "nemotron-3-ultra": ("enable_thinking", "truncate_history_thinking", "medium_effort"),
    "nemotron-3.5": ("enable_thinking", "truncate_history_thinking", "medium_effort"),
}
#: Each format's reference template (a fixture) and its tagged copy (``tests/support/spans_oracle.py``).
FIXTURES = {
    "nemotron-3-nano": "families/nemotron_3_nano.jinja",
    "nemotron-3-super": "families/nemotron_3_super.jinja",
    "nemotron-3-ultra": "families/nemotron_3_ultra.jinja",
    "nemotron-3.5": "families/nemotron_3_5.jinja",
}


def options(name: str) -> st.SearchStrategy[dict[str, Any]]:
    """Some of the options the format's template reads, each absent or of any truthiness."""
    return st.fixed_dictionaries({}, optional={key: TRUTHY for key in OPTION_NAMES[name]})


#: Every option any of the templates reads (a template ignores the others): for the tagged copies.
any_options = st.fixed_dictionaries({}, optional={key: TRUTHY for key in sorted(
    {key for names in OPTION_NAMES.values() for key in names})})

# ---------------------------------------------------------------------------------------------------
# Text

# What Python's str.strip() (Jinja's trim) takes away at either end, and what it does not.
STRIPPED = [" ", "\n", "\t", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u2028", "\u3000"]
KEPT = ["\u200b", "\ufeff", "x", "é", "🙂"]
trimmed_text = st.builds(
    lambda pre, body, post: pre + body + post,
    st.lists(st.sampled_from(STRIPPED), max_size=3).map("".join),
    st.one_of(st.lists(st.sampled_from([*KEPT, " ", "\n", "a b"]), max_size=3).map("".join), text),
    st.lists(st.sampled_from(STRIPPED), max_size=3).map("".join),
)
# Content with <think> and </think> anywhere: none, one of them, both in either order, several, unclosed.
THINK_PIECES = ["<think>", "</think>", "<think>", "</think>", "\n", "\n\n", " ", "plan", "answer", "<think></think>",
                "<|im_end|>", "<tool_call>", "é"]
think_text = st.one_of(
    st.lists(st.one_of(st.sampled_from(THINK_PIECES), trimmed_text), max_size=6).map("".join),
    st.builds(lambda pre, r, post: f"{pre}<think>{r}</think>{post}", trimmed_text, trimmed_text, trimmed_text),
)
words = st.one_of(text, trimmed_text, think_text)

# ---------------------------------------------------------------------------------------------------
# Tools

scalar = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), trimmed_text)
nested = st.one_of(json_values, st.lists(scalar, max_size=3), st.dictionaries(trimmed_text, scalar, max_size=3))
extra_value = st.one_of(scalar, nested)
extra_key = st.one_of(st.sampled_from(["default", "minimum", "items", "format", "title", "nullable", "examples",
                                       "additionalProperties", "$defs", "strict", "x-extra", "a b", "<b>"]),
                      json_keys)
type_value = st.one_of(
    st.sampled_from(["string", "integer", "number", "boolean", "array", "object", "null"]),
    st.lists(st.sampled_from(["string", "null", "integer"]), max_size=2),
    scalar,
)
description = weighted((6, trimmed_text), (1, scalar))
enum = st.one_of(st.lists(scalar, max_size=3), scalar, nested)


@st.composite
def ordered(draw: st.DrawFn, fields: dict[str, st.SearchStrategy[Any]], extra: int = 3) -> dict[Any, Any]:
    """An object with some of ``fields`` and up to ``extra`` other keys, in any order (the templates
    write the keys they do not handle in order)."""
    items = [(key, draw(strategy)) for key, strategy in fields.items() if draw(st.integers(0, 2))]
    items += draw(st.lists(st.tuples(extra_key, extra_value), max_size=extra))
    return dict(draw(st.permutations(items)))


parameter = weighted(
    (8, ordered({"type": type_value, "description": description, "enum": enum, "name": words,
                 "items": nested, "default": extra_value})),
    (1, extra_value),  # a parameter that is no object: only its name is written
)
properties = st.dictionaries(st.one_of(tool_name, trimmed_text, st.sampled_from(["type", "required", "enum"])),
                             parameter, max_size=3)


@st.composite
def parameters(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 7)) == 0:
        return draw(extra_value)  # no object (a string, a list, null): nothing but </parameters> written
    props = draw(weighted((8, properties), (1, extra_value)))
    required = draw(weighted((4, st.just(sorted(str(k) for k in props)[:2]) if isinstance(props, dict)
                              else st.just([])), (1, extra_value)))
    return draw(ordered({"type": st.sampled_from(["object", "OBJECT"]), "properties": st.just(props),
                         "required": st.just(required), "description": description}, extra=2))


@st.composite
def tool(draw: st.DrawFn) -> dict[str, Any]:
    """A tool: its function with or without the ``{"type": "function", "function": ...}`` wrapper."""
    function = draw(ordered({"name": weighted((8, tool_name), (1, scalar)), "description": description,
                             "parameters": parameters(), "type": st.just("function")}, extra=2))
    if draw(st.booleans()):
        return function
    wrapper = {"type": "function", "function": function}
    if draw(st.integers(0, 5)) == 0:
        wrapper.update(draw(st.dictionaries(extra_key, extra_value, max_size=2)))  # not written: the function is
    return wrapper


nemotron_tools = weighted((1, st.none()), (1, st.just([])), (6, st.lists(tool(), min_size=1, max_size=3)))

# ---------------------------------------------------------------------------------------------------
# Messages

#: A call's argument values: what the template writes as JSON (containers) and as Python prints it.
argument_value = st.one_of(scalar, nested, think_text)
arguments = weighted(
    (40, st.dictionaries(st.one_of(st.sampled_from(["city", "path", "n", "query"]), trimmed_text), argument_value,
                         max_size=4)),
    (1, st.one_of(text, st.none(), st.integers(), st.lists(st.integers(), max_size=2))),  # the engine fails
)


@st.composite
def call(draw: st.DrawFn) -> dict[str, Any]:
    body: dict[str, Any] = {"name": draw(weighted((12, tool_name), (1, scalar)))}
    if draw(st.integers(0, 5)):
        body["arguments"] = draw(arguments)
    if draw(st.booleans()):
        return {"id": "call_1", "type": "function", "function": body}
    return body


#: Assistant content: text with <think> anywhere mostly; empty, null, parts, a value of another kind.
assistant_content = weighted(
    (6, think_text),
    (3, text),
    (2, trimmed_text),
    (1, st.sampled_from(["", None])),
    (1, st.lists(text_part, max_size=2)),
    (1, st.sampled_from([0, 1, False, True, 2.5, {}, {"a": 1}, []])),
)
reasoning = weighted((6, words), (2, st.lists(st.sampled_from(STRIPPED), max_size=3).map("".join)),
                     (1, st.none()), (1, st.sampled_from([0, 1, ["x"]])))


@st.composite
def assistant(draw: st.DrawFn) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant"}
    if draw(st.integers(0, 6)):
        message["content"] = draw(assistant_content)
    for field in ("reasoning_content", "reasoning", "thinking"):
        if draw(st.integers(0, 3)) == 0:
            message[field] = draw(reasoning)
    if draw(st.booleans()):
        message["tool_calls"] = draw(weighted((8, st.lists(call(), min_size=1, max_size=3)),
                                              (1, st.sampled_from([[], None]))))
    return message


user_content = weighted((8, words), (1, st.none()), (1, st.lists(text_part, max_size=2)),
                        (1, st.sampled_from([0, 1.5, True])))
system_content = weighted((40, words), (1, st.none()), (1, st.lists(text_part, max_size=2)), (1, st.just(0)))
tool_content = weighted((8, words), (1, st.none()), (1, st.lists(text_part, max_size=2)), (1, st.just(7)))
other_content = weighted((30, words), (1, st.none()), (1, st.lists(text_part, max_size=2)))


def user() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda c: {"role": "user", "content": c}, user_content)


def system() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda c: {"role": "system", "content": c}, system_content)


def tool_result() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda c, i: {"role": "tool", "content": c, **i}, tool_content,
                     st.sampled_from([{}, {"tool_call_id": "call_1"}]))


def other() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda r, c: {"role": r, "content": c}, st.sampled_from(["developer", "ipython", "function"]),
                     other_content)


def any_message() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(user(), system(), assistant(), tool_result(), other())


@st.composite
def nemotron_conversation(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Mostly agent-shaped (a system prompt, several user queries, assistant turns calling tools, runs
    of results), with tool results first after the system prompt, later system messages and messages
    of other roles; sometimes any messages in any order (none at all included)."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.lists(any_message(), max_size=6))
    messages: list[dict[str, Any]] = []
    if draw(st.integers(0, 3)):
        messages.append(draw(system()))
    if draw(st.integers(0, 5)) == 0:
        messages.extend(draw(st.lists(tool_result(), min_size=1, max_size=2)))
    for _ in range(draw(st.integers(1, 4))):
        messages.append(draw(user()))
        for _ in range(draw(st.integers(0, 3))):
            turn = draw(assistant())
            messages.append(turn)
            if turn.get("tool_calls") or draw(st.integers(0, 5)) == 0:
                messages.extend(draw(st.lists(tool_result(), max_size=2)))
            if draw(st.integers(0, 7)) == 0:
                messages.append(draw(st.one_of(system(), other())))
    if draw(st.integers(0, 5)) == 0:
        messages.insert(draw(st.integers(0, len(messages))), draw(any_message()))
    return messages
