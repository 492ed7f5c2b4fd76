"""Generated input in the shapes the Llama 3.1 and 3.2 templates read: what their differential, spans
and guard tests draw from.

A system message first or not (a later one is a turn of its own); user turns; assistant turns with
text or one tool call (object or string arguments; now and then two calls, none, or a call the engine
refuses); tool and ipython results (strings, objects, lists, numbers, now and then left out); other
roles, and no role; contents that are lists or numbers (printed as Python prints them); reasoning
fields, which the templates drop. Options: ``tools_in_user_message``, ``custom_tools``,
``date_string``, and 3.1's ``builtin_tools`` (with calls to them).
"""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import strategies as st

from tests.support.strategies import text, weighted

__all__ = ["BOS", "BUILTIN", "DATE", "TEMPLATES", "conversation", "fixed_day", "options", "oracle_options"]

TEMPLATES = {"llama-3.1": "families/llama3_1.jinja", "llama-3.2": "families/llama3_2.jinja"}
BOS = "<|begin_of_text|>"
#: The date the tests give 3.2 (whose default is today's): fixed, so a test never depends on the day.
DATE = "05 Dec 2026"
BUILTIN = ["brave_search", "wolfram_alpha", "code_interpreter"]
FRAGMENTS = ["<|eot_id|>", "<|python_tag|>", "<|start_header_id|>", '{"name": "f"}', "<|", "\n", "  ", '"', "\\"]
ll_text = st.lists(st.one_of(text, st.sampled_from(FRAGMENTS)), max_size=4).map("".join)
text_part = st.fixed_dictionaries({"type": st.just("text"), "text": ll_text})
odd = st.one_of(st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False, width=32), st.booleans(),
                st.lists(st.one_of(ll_text, text_part), max_size=2),
                st.dictionaries(ll_text, st.integers(), max_size=2))
json_value = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-9, 99), ll_text),
                          lambda inner: st.one_of(st.lists(inner, max_size=2),
                                                  st.dictionaries(ll_text, inner, max_size=2)), max_leaves=4)


@st.composite
def _call(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(weighted((6, st.sampled_from(["get_weather", "search"])), (2, st.sampled_from(BUILTIN)), (1, ll_text),
                        (1, st.integers(0, 3))))
    arguments = draw(weighted((6, st.dictionaries(st.sampled_from(["city", "query", "n"]), ll_text, max_size=2)),
                              (2, st.sampled_from(['{"city": "Paris"}', "{}"])), (1, json_value)))
    function: dict[str, Any] = {"name": name, "arguments": arguments}
    if draw(st.integers(0, 15)) == 0:
        del function[draw(st.sampled_from(["name", "arguments"]))]
    call: dict[str, Any] = {"type": "function", "function": function}
    if draw(st.booleans()):
        call["id"] = "call_1"
    return call


@st.composite
def _message(draw: st.DrawFn, role: str | None) -> dict[str, Any]:
    message: dict[str, Any] = {} if role is None else {"role": role}
    if role in ("tool", "ipython"):
        if draw(st.integers(0, 12)):
            message["content"] = draw(weighted((8, ll_text), (3, json_value), (1, odd)))
        return message
    if draw(st.integers(0, 12)):
        message["content"] = draw(weighted((14, ll_text), (2, odd), (1, st.none())))
    if role == "assistant":
        for field in ("reasoning_content", "thinking", "reasoning"):
            if draw(st.integers(0, 5)) == 0:
                message[field] = draw(st.one_of(ll_text, st.none()))
        if draw(st.integers(0, 2)) == 0:
            message["tool_calls"] = draw(weighted((12, st.lists(_call(), min_size=1, max_size=1)),
                                                  (1, st.lists(_call(), min_size=2, max_size=2)), (1, st.just([]))))
    elif draw(st.integers(0, 20)) == 0:
        message["tool_calls"] = draw(st.lists(_call(), min_size=1, max_size=1))
    if draw(st.integers(0, 15)) == 0:  # (an OpenAI SDK message's: a key transformers leaves out)
        message["tool_calls"] = None
    return message


@st.composite
def conversation(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A conversation as the Llama 3 templates read it (see the module docstring)."""
    messages = [draw(_message("system"))] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(0, 4))):
        messages.append(draw(_message("user")))
        for _ in range(draw(st.integers(0, 2))):
            messages.append(draw(_message("assistant")))
            for _ in range(draw(st.integers(0, 2)) if messages[-1].get("tool_calls") else 0):
                messages.append(draw(_message(draw(st.sampled_from(["tool", "ipython"])))))
    for _ in range(draw(st.integers(0, 2))):
        role = draw(st.sampled_from(["system", "developer", "tool", "assistant", None]))
        messages.insert(draw(st.integers(0, len(messages))), draw(_message(role)))
    return messages


def options(name: str) -> st.SearchStrategy[dict[str, Any]]:
    """``render``'s options for format ``name``, each given or not (3.2's default date is today's:
    :func:`oracle_options` and :func:`fixed_day` make it :data:`DATE` on both sides)."""
    optional: dict[str, Any] = {
        "bos_token": st.sampled_from([BOS, "", "B"]),
        "tools_in_user_message": st.sampled_from([True, False, None]),
        "custom_tools": st.one_of(st.none(), st.lists(st.dictionaries(ll_text, json_value, max_size=2), max_size=2)),
        "date_string": st.sampled_from(["26 Jul 2024", "1 Jan 2025", DATE]),
    }
    if name == "llama-3.1":
        optional["builtin_tools"] = st.one_of(st.lists(st.sampled_from([*BUILTIN, "x"]), max_size=3, unique=True),
                                              st.just(None))
    return st.fixed_dictionaries({}, optional=optional)


def oracle_options(options: dict[str, Any]) -> dict[str, Any]:
    """What the oracle is given for ``options``: the tokenizer's ``bos_token`` unless given, and a
    ``strftime_now`` that tells the day :data:`DATE` (3.2 asks it when no ``date_string`` is given)."""
    return {"bos_token": BOS, **options, "instruments": {"strftime_now": _strftime_now}}


def _strftime_now(fmt: str) -> str:
    assert fmt == "%d %b %Y", fmt
    return DATE


def fixed_day() -> Any:
    """A context in which our 3.2 format's today is :data:`DATE` (as the oracle's is)."""
    from prompt_formats.formats.llama import options as llama_options

    return mock.patch.object(llama_options, "today", lambda: DATE)
