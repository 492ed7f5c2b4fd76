"""The NVIDIA Nemotron templates (``nemotron-3-nano``, ``nemotron-3-super``, ``nemotron-3-ultra``,
``nemotron-3.5``) against Jinja2, on generated conversations.

Every case is rendered by our format and by the Jinja2 oracle, fed as transformers feeds it (each
message's ``None``-valued keys dropped, the reasoning aliased): the texts must be identical, or,
where the engine itself fails (text concatenated with a value that is no string, a call's
``arguments|items`` of a value that is no object, an undefined value used, no messages at all), ours
must raise :class:`~prompt_formats.errors.InvalidInputError` naming a field of the input. (These
templates never call ``raise_exception``.) Expected values come only from the oracle.

Besides the shared ChatML conversations, the cases reach what is Nemotron's own
(``tests/support/nemotron_strategies.py``): tools written as XML with every extra key of a parameter,
of the parameters and of the function, with and without the ``function`` wrapper; ``<think>`` and
``</think>`` anywhere in an assistant's content, with or without reasoning; the truncation of the
reasoning before the last user message; tool results right after the system prompt; later system
messages and other roles; each template's options at every truthiness.
"""

from __future__ import annotations

import copy
import types
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support import nemotron_strategies as ns
from tests.support.oracles import fixture_text, render_jinja_as_transformers, render_or_crash, templates_of
from tests.support.settings import budget
from tests.support.strategies import conversation, differential_settings, lax_tools, text, tools
from tests.support.usual import usual_conversation, usual_text, value, with_string_contents

pytestmark = [pytest.mark.jinja]

TEMPLATES = templates_of("nemotron-3-nano", "nemotron-3-super", "nemotron-3-ultra", "nemotron-3.5")
OPTIONS = {name: ns.options(name) for name in TEMPLATES}


def ours(name: str, messages: Any, tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    return render_or_crash(pf.get_format(name).render, messages, tool_list, gen, **options)


def oracle(name: str, messages: Any, tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    found = render_jinja_as_transformers(TEMPLATES[name], messages, tool_list, gen, **options)
    return ("crash", "") if found is None else found


def test_the_fixtures_are_the_templates_the_models_ship() -> None:
    # Nemotron 3 Ultra's template is Nemotron 3.5's, byte for byte: two fixtures, one text.
    assert fixture_text(TEMPLATES["nemotron-3-ultra"]) == fixture_text(TEMPLATES["nemotron-3.5"])
    assert len({fixture_text(TEMPLATES[name]) for name in TEMPLATES}) == 3


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_the_template_is_the_formats_reference(name: str) -> None:
    assert f"tests/fixtures/{TEMPLATES[name]}" in (type(pf.get_format(name)).__doc__ or "")


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@differential_settings
@given(data=st.data(), messages=conversation(extra_roles=("developer",)), tool_list=tools, gen=st.booleans())
def test_renders_as_the_models_template(name: str, data: st.DataObject, messages: list[Any], tool_list: Any,
                                        gen: bool) -> None:
    options = data.draw(OPTIONS[name], label="options")
    assert ours(name, messages, tool_list, gen, options) == oracle(name, messages, tool_list, gen, options)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@differential_settings
@given(data=st.data(), messages=ns.nemotron_conversation(), tool_list=st.one_of(ns.nemotron_tools, lax_tools),
       gen=st.booleans())
def test_nemotron_shaped_input_renders_as_the_models_template(name: str, data: st.DataObject, messages: list[Any],
                                                              tool_list: Any, gen: bool) -> None:
    options = data.draw(OPTIONS[name], label="options")
    assert ours(name, messages, tool_list, gen, options) == oracle(name, messages, tool_list, gen, options)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@differential_settings
@given(data=st.data(), messages=st.one_of(usual_conversation(), usual_conversation(strict=True).map(
    with_string_contents), usual_conversation().map(with_string_contents)), tool_list=tools, gen=st.booleans())
def test_the_usual_input_renders_as_the_models_template(name: str, data: st.DataObject, messages: list[Any],
                                                        tool_list: Any, gen: bool) -> None:
    options = data.draw(OPTIONS[name], label="options")
    expected = oracle(name, messages, tool_list, gen, options)
    assert ours(name, messages, tool_list, gen, options) == expected


# The tool list alone, many of them: one short conversation, so every case's work is the tools' XML.
@pytest.mark.parametrize("name", sorted(TEMPLATES))
@differential_settings
@given(data=st.data(), tool_list=st.lists(ns.tool(), min_size=1, max_size=4), system=st.one_of(st.none(), ns.words),
       gen=st.booleans())
def test_tools_render_as_the_models_template(name: str, data: st.DataObject, tool_list: Any, system: Any,
                                             gen: bool) -> None:
    options = data.draw(OPTIONS[name], label="options")
    messages = ([] if system is None else [{"role": "system", "content": system}]) + [{"role": "user", "content": "q"}]
    assert ours(name, messages, tool_list, gen, options) == oracle(name, messages, tool_list, gen, options)


# Calls as a client may send them: names that are no string, a function that is empty, null or no
# object, arguments of every kind or none, calls that are no object.
odd_name = st.one_of(st.sampled_from(["f", "get_weather", ""]), st.none(), st.integers(), st.booleans(),
                     st.lists(st.sampled_from(["a", "<|im_end|>"]), max_size=2), st.dictionaries(st.just("k"), text))
odd_arguments = st.one_of(st.just({"a": 1}), st.none(), text, st.integers(), st.lists(st.integers(), max_size=2),
                          st.dictionaries(text, st.one_of(text, st.floats(), st.none()), max_size=2))
odd_body = st.fixed_dictionaries({}, optional={"name": odd_name, "arguments": odd_arguments})
odd_call = st.one_of(odd_body, st.fixed_dictionaries({"function": st.one_of(odd_body, st.none(), st.just({}), text)},
                                                     optional={"name": odd_name, "arguments": odd_arguments}),
                     text, st.integers())


@st.composite
def odd_calls(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages = draw(usual_conversation(strict=True).map(with_string_contents))
    calls = draw(st.one_of(st.lists(odd_call, max_size=3), st.sampled_from([{}, "x", 3, None, []])))
    return [*messages, {"role": "assistant", "content": draw(st.one_of(text, st.none(), st.just([]))),
                        "tool_calls": calls}]


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@differential_settings
@given(data=st.data(), messages=odd_calls(), tool_list=tools, gen=st.booleans())
def test_odd_calls_render_as_the_models_template(name: str, data: st.DataObject, messages: list[Any],
                                                 tool_list: Any, gen: bool) -> None:
    options = data.draw(OPTIONS[name], label="options")
    assert ours(name, messages, tool_list, gen, options) == oracle(name, messages, tool_list, gen, options)


# A top-level argument value of every kind: the template writes a container as JSON and anything
# else as Python prints it (True, None, 1e+16, a string as it is).
top_level = st.one_of(st.booleans(), st.none(), st.floats(), st.integers(-(2**70), 2**70), usual_text, value,
                      ns.think_text, ns.trimmed_text)


@st.composite
def calling_conversation(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A usual conversation that ends in an assistant turn calling tools with object arguments, and
    maybe a user query after it (its reasoning then truncated)."""
    messages = draw(usual_conversation(strict=True, objects_only=True))
    call = st.fixed_dictionaries({"name": st.sampled_from(["f", "get_weather"]),
                                  "arguments": st.dictionaries(usual_text, top_level, min_size=1, max_size=4)})
    calls = draw(st.lists(st.one_of(call, call.map(lambda body: {"type": "function", "function": body})),
                          min_size=1, max_size=3))
    turn = {"role": "assistant", "content": draw(st.one_of(ns.think_text, st.none())), "tool_calls": calls}
    if draw(st.booleans()):
        turn["reasoning_content"] = draw(ns.words)
    messages.append(turn)
    if draw(st.booleans()):
        messages += [{"role": "tool", "content": draw(usual_text)}, {"role": "user", "content": draw(usual_text)}]
    return messages


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@differential_settings
@given(data=st.data(), messages=calling_conversation(), tool_list=tools, gen=st.booleans())
def test_argument_values_render_as_the_models_template(name: str, data: st.DataObject, messages: list[Any],
                                                       tool_list: Any, gen: bool) -> None:
    options = data.draw(OPTIONS[name], label="options")
    assert ours(name, messages, tool_list, gen, options) == oracle(name, messages, tool_list, gen, options)


# An assistant turn's content and reasoning, before and after the last user query, with and without
# calls: the <think> split, the reasoning put before the content, the truncation.
@st.composite
def thinking_turns(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": draw(ns.words)}] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(1, 3))):
        messages.append({"role": "user", "content": draw(ns.words)})
        for _ in range(draw(st.integers(1, 2))):
            turn: dict[str, Any] = {"role": "assistant"}
            if draw(st.integers(0, 5)):
                turn["content"] = draw(ns.think_text)
            if draw(st.booleans()):
                turn[draw(st.sampled_from(["reasoning_content", "reasoning", "thinking"]))] = draw(ns.reasoning)
            if draw(st.booleans()):
                turn["tool_calls"] = [{"name": "f", "arguments": draw(st.dictionaries(usual_text, top_level,
                                                                                      max_size=2))}]
                messages += [turn, {"role": "tool", "content": draw(ns.words)}]
            else:
                messages.append(turn)
    return messages


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@differential_settings
@given(data=st.data(), messages=thinking_turns(), gen=st.booleans())
def test_thinking_renders_as_the_models_template(name: str, data: st.DataObject, messages: list[Any],
                                                 gen: bool) -> None:
    options = data.draw(OPTIONS[name], label="options")
    assert ours(name, messages, None, gen, options) == oracle(name, messages, None, gen, options)


# Each option alone at every truthiness, on one conversation that shows all of them (a truncated
# turn, the last user query, the generation prompt).
OPTION_CASE = [
    {"role": "system", "content": "S"},
    {"role": "user", "content": "one"},
    {"role": "assistant", "content": "<think>\nr\n</think>\na", "tool_calls": [{"name": "f", "arguments": {"x": 1}}]},
    {"role": "tool", "content": "t"},
    {"role": "assistant", "content": "b", "reasoning_content": "r2"},
    {"role": "user", "content": "two"},
    {"role": "assistant", "content": "c", "reasoning_content": "r3"},
    {"role": "user", "content": "three"},
]


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@pytest.mark.parametrize("value", [True, False, None, 0, 1, "false", "", "0"])
@pytest.mark.parametrize("gen", [False, True])
def test_each_option_reads_as_the_models_template(name: str, value: Any, gen: bool) -> None:
    for option in ns.OPTION_NAMES[name]:
        assert ours(name, OPTION_CASE, None, gen, {option: value}) == oracle(name, OPTION_CASE, None, gen,
                                                                             {option: value}), option


# Cases written out: the edges of the system prompt, of tool results and of the roles.
EDGES: dict[str, list[Any]] = {
    "no messages": [],
    "only a system prompt": [{"role": "system", "content": "S"}],
    "an empty system prompt": [{"role": "system", "content": ""}, {"role": "user", "content": "q"}],
    "a null system prompt": [{"role": "system", "content": None}, {"role": "user", "content": "q"}],
    "a system prompt of parts": [{"role": "system", "content": [{"type": "text", "text": "S"}]},
                                 {"role": "user", "content": "q"}],
    "a system prompt without content": [{"role": "system"}, {"role": "user", "content": "q"}],
    "tool results right after the system prompt": [
        {"role": "system", "content": "S"}, {"role": "tool", "content": "r1"}, {"role": "tool", "content": "r2"},
        {"role": "user", "content": "q"}],
    "a tool result first": [{"role": "tool", "content": "r"}, {"role": "user", "content": "q"}],
    "a tool result last": [{"role": "user", "content": "q"}, {"role": "tool", "content": "r"}],
    "a tool result after a user": [{"role": "user", "content": "q"}, {"role": "tool", "content": "r"},
                                   {"role": "assistant", "content": "a"}],
    "a null tool result": [{"role": "user", "content": "q"}, {"role": "tool", "content": None}],
    "a tool result of parts": [{"role": "user", "content": "q"},
                               {"role": "tool", "content": [{"type": "text", "text": "r"}]}],
    "a later system message": [{"role": "user", "content": "q"}, {"role": "system", "content": "late"},
                               {"role": "assistant", "content": "a"}],
    "a later null system message": [{"role": "user", "content": "q"}, {"role": "system", "content": None}],
    "a developer message": [{"role": "developer", "content": "d"}, {"role": "user", "content": "q"}],
    "a developer message of parts": [{"role": "user", "content": "q"},
                                     {"role": "developer", "content": [{"type": "text", "text": "d"}]}],
    "a null developer message": [{"role": "user", "content": "q"}, {"role": "developer", "content": None}],
    "an assistant first": [{"role": "assistant", "content": "a"}, {"role": "user", "content": "q"}],
    "no user": [{"role": "system", "content": "S"}, {"role": "assistant", "content": "<think>x</think>a"}],
    "a user of parts": [{"role": "user", "content": [{"type": "text", "text": "q"}, {"type": "image"}]}],
    "a null user": [{"role": "user", "content": None}],
    "an empty assistant": [{"role": "user", "content": "q"}, {"role": "assistant", "content": ""},
                           {"role": "user", "content": "q"}],
    "an assistant of parts": [{"role": "user", "content": "q"},
                              {"role": "assistant", "content": [{"type": "text", "text": "a"}]},
                              {"role": "user", "content": "q"}],
    "an unclosed think before the last query": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a <think> b", "tool_calls": [{"name": "f", "arguments": {}}]},
        {"role": "user", "content": "q"}],
    "blank reasoning": [{"role": "user", "content": "q"},
                        {"role": "assistant", "content": "a", "reasoning_content": " \n"}],
    "reasoning that is no string": [{"role": "user", "content": "q"},
                                    {"role": "assistant", "content": "a", "reasoning_content": ["x"]}],
    "an empty list of calls": [{"role": "user", "content": "q"},
                               {"role": "assistant", "content": "a", "tool_calls": []}],
}
EDGE_TOOLS = [None, [], [{"name": "f"}], [{"type": "function", "function": {"name": "f", "parameters": "p"}}]]


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@pytest.mark.parametrize("case", sorted(EDGES))
@pytest.mark.parametrize("tool_list", EDGE_TOOLS, ids=["no tools", "empty", "unwrapped", "string parameters"])
def test_edges_render_as_the_models_template(name: str, case: str, tool_list: Any) -> None:
    for gen in (False, True):
        messages = EDGES[case]
        assert ours(name, messages, tool_list, gen, {}) == oracle(name, messages, tool_list, gen, {}), gen


class Shouts(str):
    """A string that prints otherwise than its characters (the engine prints ``str()`` of it)."""

    def __str__(self) -> str:
        return "SHOUT"


def _printed_fields(text: Any) -> list[tuple[list[dict[str, Any]], Any]]:
    """Conversations (and tools) holding ``text`` where the template prints it (``{{ x }}``, ``~``)
    and where it concatenates it with ``+``, trims it or encodes it as JSON."""
    return [
        ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": text, "arguments": {text: text, "b": [text]}}}]}], None),
        ([{"role": "user", "content": text}, {"role": "tool", "content": text}], None),
        ([{"role": "system", "content": text}, {"role": "user", "content": "q"},
          {"role": "assistant", "content": text, "reasoning_content": text}], None),
        ([{"role": "user", "content": "q"}, {"role": "assistant", "content": text},
          {"role": "system", "content": text}, {"role": "developer", "content": text}, {"role": "user", "content": "q"},
          {"role": "assistant", "content": text, "tool_calls": [{"name": "f", "arguments": {"a": text}}]}], None),
        ([{"role": "user", "content": "q"}], [{"type": "function", "function": {
            "name": text, "description": text, "parameters": {"type": "object", "properties": {text: {
                "type": text, "description": text, "enum": [text], "title": text, "items": {"t": text}}},
                "required": [text], "title": text}, "strict": text}}]),
    ]


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@pytest.mark.parametrize("case", range(5))
@pytest.mark.parametrize("effort", [False, True])
def test_a_string_subclass_is_written_as_the_engine_writes_it(name: str, case: int, effort: bool) -> None:
    # Printed (`{{ x }}`, `~`): by its __str__; concatenated with `+`, trimmed or encoded as JSON: by its
    # characters.
    messages, tool_list = _printed_fields(Shouts("chars"))[case]
    options = {option: True for option in ns.OPTION_NAMES[name] if option.endswith("_effort")} if effort else {}
    expected = oracle(name, messages, tool_list, True, options)
    assert ours(name, messages, tool_list, True, options) == expected


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@budget(0.25, floor=25)
@given(data=st.data(), messages=ns.nemotron_conversation(), tool_list=ns.nemotron_tools, gen=st.booleans())
def test_a_render_leaves_its_input_as_it_was(name: str, data: st.DataObject, messages: list[Any], tool_list: Any,
                                             gen: bool) -> None:
    options = data.draw(OPTIONS[name], label="options")
    before = copy.deepcopy((messages, tool_list))
    ours(name, messages, tool_list, gen, options)
    assert (messages, tool_list) == before  # (a NaN in it is the same object in both: equal)


class Failing:
    """A value whose printing, truth, length or iteration fails: transformers hands the template
    the text ``"<Failing>"`` instead, and never reads it."""

    def __str__(self) -> str:
        raise RuntimeError("no")

    def __len__(self) -> int:
        raise RuntimeError("no")

    def __iter__(self) -> Any:
        raise RuntimeError("no")


def _call(**function: Any) -> list[dict[str, Any]]:
    return [{"role": "user", "content": "q"},
            {"role": "assistant", "content": "a", "tool_calls": [{"type": "function", "function": function}]}]


HOSTILE = {
    "tool name": ([{"role": "user", "content": "q"}], [{"type": "function", "function": {"name": Failing()}}]),
    "tool extra key": ([{"role": "user", "content": "q"}], [{"type": "function", "function": {Failing(): 1}}]),
    "parameter type": ([{"role": "user", "content": "q"}], [{"type": "function", "function": {
        "name": "f", "parameters": {"properties": {"a": {"type": Failing()}}}}}]),
    "argument value": (_call(name="f", arguments={"a": Failing()}), None),
    "tool_calls": ([{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": Failing()}], None),
    # transformers hands the template "<SimpleNamespace>", whose .name and .arguments are undefined
    "call's function object": ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [
        {"function": types.SimpleNamespace(name="f", arguments={"a": 1})}]}], None),
    "tool's function object": ([{"role": "user", "content": "q"}], [{"function": types.SimpleNamespace(name="f")}]),
}


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_value_that_cannot_be_read_renders_as_transformers_hands_it_over(name: str, case: str) -> None:
    messages, tool_list = HOSTILE[case]
    expected = oracle(name, messages, tool_list, True, {})
    assert ours(name, messages, tool_list, True, {}) == expected
    if expected[0] == "ok":
        assert pf.get_format(name).render_spans(messages, tool_list, True).text == expected[1]


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@pytest.mark.parametrize("content", [["<think>secret</think>b"], {"k": "x</think>b"}])
def test_a_cut_content_that_is_no_string_reports_what_the_cut_takes(name: str, content: Any) -> None:
    # Printed as Python prints it, then cut after its last </think>: what precedes it is not written.
    messages = [{"role": "assistant", "content": content, "reasoning_content": "r"}, {"role": "user", "content": "u"}]
    rendered = pf.get_format(name).render_spans(messages)
    assert ("ok", rendered.text) == oracle(name, messages, None, False, {})
    assert "secret" not in rendered.text and "x" not in rendered.text.split("<|im_start|>assistant")[1]
    assert rendered.dropped == ("messages[0].reasoning_content", "messages[0].content")
