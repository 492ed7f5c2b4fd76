"""Values of other Python types than JSON's render as transformers hands them to the template.

transformers 5.24 rebuilds everything a template sees out of plain data (``_plain_template_data``):
a ``str`` subclass or an enum member becomes the plain string of its data, a mapping a dict, a
dataclass or pydantic message a dict, and any other object the text ``"<TypeName>"``. Every format
with a Jinja reference is fed generated conversations and tools with such values put in place of
their leaves and containers (``tests/support/odd_values.py``), and compared with the oracle fed as
transformers feeds it; and the oracle's reading is proved to be transformers' own.
"""

from __future__ import annotations

import contextlib
import datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.model.reading import plain_data
from tests.support import (
    deepseek_strategies,
    gemma4_strategies,
    gemma_strategies,
    gpt_oss_strategies,
    llama_strategies,
    nemotron_strategies,
)
from tests.support.gpt_oss_drops import outcome as gpt_oss_outcome
from tests.support.odd_values import Colour, Dumps, Opaque, Shouts, oddified
from tests.support.oracles import JINJA_TEMPLATES, plain_template_data, render_jinja_as_transformers, render_or_crash
from tests.support.settings import differential_settings, examples
from tests.support.strategies import conversation, tools

pytestmark = [pytest.mark.jinja]

CONFIG = {"chatml-safety": {"policy": "allow"}}
LLAMA_OPTIONS = {"bos_token": llama_strategies.BOS, "date_string": llama_strategies.DATE}
FORMATS = sorted(JINJA_TEMPLATES)


def inputs(name: str) -> st.SearchStrategy[tuple[Any, Any, dict[str, Any]]]:
    """The format's own generated conversations, tools and options, as plain data."""
    if name.startswith("nemotron"):
        return st.tuples(nemotron_strategies.nemotron_conversation(), nemotron_strategies.nemotron_tools,
                         nemotron_strategies.options(name))
    if name == "gpt-oss":
        return st.tuples(gpt_oss_strategies.conversation(), gpt_oss_strategies.tools, gpt_oss_strategies.options())
    if name == "gemma-3":  # (the tokenizer's bos_token, which transformers passes the template)
        return st.tuples(gemma_strategies.conversation(), tools, st.just({"bos_token": "<bos>"}))
    if name == "gemma-4":
        return st.tuples(gemma4_strategies.conversation(), gemma4_strategies.tool_list,
                         gemma4_strategies.options().map(gemma4_strategies.oracle_options))
    if name == "deepseek-v3":
        return st.tuples(deepseek_strategies.conversation(), tools, st.just({"bos_token": deepseek_strategies.BOS}))
    if name.startswith("llama-"):  # (and a date: 3.2's default is today's, which each side reads from the clock)
        return st.tuples(llama_strategies.conversation(), tools, st.just(LLAMA_OPTIONS))
    return st.tuples(conversation(extra_roles=("developer",)), tools, st.just({}))


def ours(name: str, messages: Any, tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    return render_or_crash(pf.get_format(name, **CONFIG.get(name, {})).render, messages, tool_list, gen, **options)


def oracle(name: str, messages: Any, tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    if name == "gpt-oss":
        return gpt_oss_outcome(messages, tool_list, gen, options)
    found = render_jinja_as_transformers(JINJA_TEMPLATES[name], messages, tool_list, gen, **options)
    return ("crash", "") if found is None else found


@pytest.mark.parametrize("name", FORMATS)
@differential_settings
@given(data=st.data(), gen=st.booleans())
def test_odd_python_values_render_as_transformers_hands_them_over(name: str, data: st.DataObject, gen: bool) -> None:
    messages, tool_list, options = data.draw(inputs(name), label="plain input")
    messages = data.draw(oddified(messages), label="messages")
    if tool_list:  # transformers refuses tools that are not dicts before any reading (not what this tests)
        tool_list = [{key: data.draw(oddified(value, 2)) for key, value in tool.items()} if type(tool) is dict
                     else tool for tool in tool_list]
        data.draw(st.just(tool_list), label="tools")
    expected = oracle(name, messages, tool_list, gen, options)
    assert ours(name, messages, tool_list, gen, options) == expected
    if expected[0] == "ok":  # the same reading in the format's other entries
        fmt = pf.get_format(name, **CONFIG.get(name, {}))
        assert fmt.render_spans(messages, tool_list, gen, **options).text == expected[1]
        session = fmt.session(tool_list, **options)
        with contextlib.suppress(pf.FormatError):
            session.render(messages[:-1], gen)  # an earlier request, which this one extends
        assert session.render(messages, gen) == expected[1]


any_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=4)),
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(st.text(max_size=3), children,
                                                                               max_size=3)),
    max_leaves=8,
)


@pytest.mark.transformers
@settings(max_examples=examples(0.5, floor=200), deadline=None)
@given(data=st.data(), value=any_value)
def test_the_reading_is_transformers_own(data: st.DataObject, value: Any) -> None:
    from transformers.utils.chat_template_utils import _plain_template_data

    odd = data.draw(oddified(value))
    expected = repr(_plain_template_data(odd))
    assert repr(plain_template_data(odd)) == expected  # the oracle's
    assert repr(plain_data(odd)) == expected  # the package's


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("arguments", [Dumps({"city": "Paris"}), datetime.date(2026, 1, 2), Colour.RED, b"x"],
                         ids=["model_dump", "date", "enum", "bytes"])
def test_arguments_of_another_type_render_as_transformers_hands_them_over(name: str, arguments: Any) -> None:
    # Pinned by hand: a call's arguments are an object in every template, written one way or another.
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}]}]
    options = {"gpt-oss": {"current_date": "2026-01-02"}, "gemma-3": {"bos_token": "<bos>"},
               "gemma-4": {"bos_token": "<bos>"}, "deepseek-v3": {"bos_token": deepseek_strategies.BOS},
               "llama-3.1": LLAMA_OPTIONS, "llama-3.2": LLAMA_OPTIONS}.get(name, {})
    assert ours(name, messages, None, True, options) == oracle(name, messages, None, True, options)


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("field", ["reasoning_content", "content"])
def test_an_object_where_a_string_is_tested_for_renders_as_its_placeholder(name: str, field: str) -> None:
    # Pinned by hand (found by the deep tier in glm-4.5): a template that tests `is string` sees the
    # placeholder text "<Opaque>", a string, where the format reads an object of no JSON type.
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a", field: Opaque()}]
    options = {"gpt-oss": {"current_date": "2026-01-02"}, "gemma-3": {"bos_token": "<bos>"},
               "gemma-4": {"bos_token": "<bos>"}, "deepseek-v3": {"bos_token": deepseek_strategies.BOS},
               "llama-3.1": LLAMA_OPTIONS, "llama-3.2": LLAMA_OPTIONS}.get(name, {})
    for gen in (False, True):
        assert ours(name, messages, None, gen, options) == oracle(name, messages, None, gen, options)


class _Off:
    """An object whose truth value is False: transformers hands it to a template as ``"<_Off>"`` (true)."""

    def __bool__(self) -> bool:
        return False


#: The options that are no template variable (the library's own, or apply_chat_template's parameters).
_NOT_TEMPLATE_OPTIONS = {"strict", "decode_tool_arguments", "continue_final_message", "current_date", "custom_tools",
                         "builtin_tools"}


def _odd_option_values() -> list[Any]:
    import numpy

    return [numpy.bool_(True), numpy.bool_(False), numpy.str_("low"), Shouts("high"), Colour.RED, _Off(), Opaque()]


@pytest.mark.parametrize("name", FORMATS)
def test_options_of_other_types_render_as_transformers_hands_them_over(name: str) -> None:
    # transformers hands a template its keyword arguments as plain data: a numpy boolean as a bool, a
    # str subclass as its text, any other object as "<TypeName>" (whose truth value is true).
    fmt = pf.get_format(name, **CONFIG.get(name, {}))
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"},
                {"role": "assistant", "content": "a", "reasoning_content": "r"}, {"role": "user", "content": "q2"}]
    base = {"bos_token": "<bos>"} if "bos_token" in fmt.options else {}
    base.update(LLAMA_OPTIONS if name.startswith("llama-") else {})
    checked = 0
    kinds = {spec.name: spec.kinds for spec in fmt.option_specs}
    for option in sorted(fmt.options.keys() - _NOT_TEMPLATE_OPTIONS):
        for value in _odd_option_values():
            if "boolean" not in kinds[option] and not isinstance(plain_template_data(value), str):
                continue  # (an option that takes a string, and no boolean, refuses a boolean)
            options = {**base, option: value}
            expected = oracle(name, messages, None, True, options)
            assert ours(name, messages, None, True, options) == expected, (option, value)
            if expected[0] == "ok":  # (the same reading in the format's other entries)
                assert fmt.render_spans(messages, None, True, **options).text == expected[1]
                assert fmt.session(None, **options).render(messages, True) == expected[1]
                checked += 1
    assert checked or not fmt.options.keys() - _NOT_TEMPLATE_OPTIONS


class _Parts(list):  # type: ignore[type-arg]
    """A content given as another class of list (nothing of its own: transformers hands over its items)."""


_FIXED_OPTIONS: dict[str, dict[str, Any]] = {
    "gemma-3": {"bos_token": "<bos>"}, "deepseek-v3": {"bos_token": deepseek_strategies.BOS},
    "llama-3.1": LLAMA_OPTIONS, "llama-3.2": LLAMA_OPTIONS,
}


def _as_the_oracle_reads_it(name: str, messages: list[Any], gen: bool, lie: str | None = None) -> None:
    """Ours on ``messages`` equals the oracle fed as transformers feeds it (which reads no ``lie``)."""
    options = gemma4_strategies.oracle_options({}) if name == "gemma-4" else _FIXED_OPTIONS.get(name, {})
    expected = oracle(name, messages, None, gen, options)
    if lie is not None:
        assert lie not in expected[1]  # (the oracle reads the items: what the case is about)
    assert ours(name, messages, None, gen, options) == expected


@pytest.mark.parametrize("name", FORMATS)
def test_a_content_given_as_another_class_of_list_renders_as_its_items(name: str) -> None:
    messages = [{"role": "user", "content": _Parts([{"type": "text", "text": "hi"}])},
                {"role": "assistant", "content": _Parts([{"type": "text", "text": "yo"}])},
                {"role": "user", "content": "and?"}]
    _as_the_oracle_reads_it(name, messages, True)  # (templates that print no list content fail on it either way)


class _Lies(str):
    """A string whose own methods say what its text does not (transformers hands over its text)."""

    __slots__ = ()

    def strip(self, chars: Any = None) -> str:
        return "lies"

    def __contains__(self, item: object) -> bool:
        return False


@pytest.mark.parametrize("name", FORMATS)
def test_a_reasoning_whose_own_methods_lie_renders_as_its_text(name: str) -> None:
    messages = [{"role": "user", "content": "q"},
                {"role": "assistant", "content": "a", "reasoning_content": _Lies(" plan </think> ")}]
    _as_the_oracle_reads_it(name, messages, False, "lies")


class _CallLies(dict):  # type: ignore[type-arg]
    """A tool call (or its function) whose own accessors say what its items do not."""

    def get(self, key: Any, default: Any = None) -> Any:
        return {"name": "lie", "arguments": {}} if key == "function" else ("lie" if key == "name" else
                                                                          dict.get(self, key, default))

    def __getitem__(self, key: Any) -> Any:
        return "lie" if key == "name" else dict.__getitem__(self, key)

    def __contains__(self, key: object) -> bool:
        return key != "arguments" and dict.__contains__(self, key)


@pytest.mark.parametrize("where", ["call", "function"])
@pytest.mark.parametrize("name", FORMATS)
def test_a_tool_call_whose_own_accessors_lie_renders_as_its_items(name: str, where: str) -> None:
    function = {"name": "lookup", "arguments": {"q": "paris"}}
    call: dict[str, Any] = {"id": "c1", "type": "function", "function": function}
    call = _CallLies(call) if where == "call" else {**call, "function": _CallLies(function)}
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "sunny"}, {"role": "user", "content": "and?"}]
    _as_the_oracle_reads_it(name, messages, True, "lie")


class _PartLies(dict):  # type: ignore[type-arg]
    """A content part whose own ``[]``, ``get`` and ``in`` say what its items do not."""

    def __getitem__(self, key: Any) -> Any:
        return "lie" if key == "text" else dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        return "lie" if key == "text" else dict.get(self, key, default)

    def __contains__(self, key: object) -> bool:
        return key == "image" or dict.__contains__(self, key)


@pytest.mark.parametrize("name", FORMATS)
def test_a_content_part_whose_own_accessors_lie_renders_as_its_items(name: str) -> None:
    messages = [{"role": "user", "content": [_PartLies(type="text", text="paris")]}]
    _as_the_oracle_reads_it(name, messages, True, "lie")


class _IndexingLies(list):  # type: ignore[type-arg]
    """Messages whose indexing says what iterating them does not."""

    def __getitem__(self, index: Any) -> Any:
        items = list(iter(self))
        return items[::-1][index]  # (reversed: a reader that indexes sees another conversation)


@pytest.mark.parametrize("name", pf.available_formats())
def test_messages_whose_indexing_lies_render_as_their_items(name: str) -> None:
    # As transformers hands them over: iterated once (the same input as an exact list is compared
    # with the reference engines elsewhere); with continue_final_message where the format takes it.
    options: dict[str, Any] = ({"current_date": "2025-08-05"} if name in ("harmony", "gpt-oss") else
                               {"date_string": "26 Jul 2024"} if name.startswith("llama") else {})
    fmt = pf.get_format(name)
    plain = [{"role": "user", "content": "first"}, {"role": "assistant", "content": "second"},
             {"role": "user", "content": "third"}, {"role": "assistant", "content": "fourth"}]
    cases = [({}, None)]
    if "continue_final_message" in fmt.options:
        cases.append(({"continue_final_message": True}, False))
    for extra, gen in cases:
        expected = render_or_crash(fmt.render, plain, None, gen, **options, **extra)
        assert render_or_crash(fmt.render, _IndexingLies(plain), None, gen, **options, **extra) == expected
