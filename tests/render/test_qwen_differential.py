"""The Qwen templates as their models ship them (``qwen3.5``, ``qwen3.5-nothink``, ``qwen3.6``) against
Jinja2, on generated conversations.

Every case is rendered by our format and by the Jinja2 oracle: the texts must be identical, or both
must raise the template's error with the same message, or, where the engine itself fails (the
templates iterate a call's ``arguments`` as an object, which Jinja refuses for anything else), ours
must raise :class:`~prompt_formats.errors.InvalidInputError` naming that call's arguments. Expected
values come only from the oracle.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.oracles import render_jinja_or_crash, templates_of
from tests.support.strategies import chatml_options, conversation, differential_settings, tools
from tests.support.usual import usual_conversation, usual_text, value

pytestmark = [pytest.mark.jinja]

TEMPLATES = templates_of("qwen3.5", "qwen3.5-nothink", "qwen3.6", "qwen3.8")
efforts = st.sampled_from(["xhigh", "medium", "low", "high", "", None, 5])
#: What each format's template reads of the ChatML options (Qwen3.5 has no preserve_thinking).
OPTIONS = {
    "qwen3.5": chatml_options.map(lambda o: {k: v for k, v in o.items() if k != "preserve_thinking"}),
    "qwen3.5-nothink": chatml_options.map(lambda o: {k: v for k, v in o.items() if k != "preserve_thinking"}),
    "qwen3.6": chatml_options,
    "qwen3.8": st.tuples(chatml_options, st.fixed_dictionaries({}, optional={"reasoning_effort": efforts})).map(
        lambda pair: {**pair[0], **pair[1]}),
}


def oracle(template: str, messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    """The template's outcome: ``("ok", text)``, ``("error", message)`` for its ``raise_exception``,
    ``("crash", "")`` where Jinja itself refuses the input (a mapping filter over a non-mapping)."""
    found = render_jinja_or_crash(template, messages, tool_list, gen, **options)
    return ("crash", "") if found is None else found


def ours(name: str, messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    try:
        return "ok", pf.get_format(name).render(messages, tool_list, gen, **options)
    except pf.TemplateError as exc:
        return "error", str(exc)
    except pf.InvalidInputError as exc:
        assert exc.path.endswith(".arguments") and ".tool_calls[" in exc.path, exc
        return "crash", ""


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_the_template_is_the_formats_reference(name: str) -> None:
    # The format names its own template (the fixture is the one the differential test reads).
    assert f"tests/fixtures/{TEMPLATES[name]}" in (type(pf.get_format(name)).__doc__ or "")


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@differential_settings
@given(data=st.data(), messages=conversation(extra_roles=("developer",)), tool_list=tools, gen=st.booleans())
def test_renders_as_the_models_template(name: str, data: st.DataObject, messages: list[Any], tool_list: Any,
                                        gen: bool) -> None:
    options = data.draw(OPTIONS[name], label="options")
    assert ours(name, messages, tool_list, gen, options) == oracle(TEMPLATES[name], messages, tool_list, gen, options)


# A top-level argument value of every kind: what the templates print otherwise than as JSON.
top_level = st.one_of(st.booleans(), st.none(), st.floats(), st.integers(-(2**70), 2**70), usual_text, value)


@st.composite
def calling_conversation(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A usual conversation that ends in an assistant turn calling tools with object arguments."""
    messages = draw(usual_conversation(strict=True, objects_only=True))
    call = st.fixed_dictionaries({"name": st.sampled_from(["f", "get_weather"]),
                                  "arguments": st.dictionaries(usual_text, top_level, min_size=1, max_size=4)})
    calls = draw(st.lists(st.one_of(call, call.map(lambda body: {"type": "function", "function": body})),
                          min_size=1, max_size=2))
    return [*messages, {"role": "assistant", "content": draw(usual_text), "tool_calls": calls}]


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@differential_settings
@given(data=st.data(), messages=st.one_of(calling_conversation(), usual_conversation(strict=True)), tool_list=tools,
       gen=st.booleans())
def test_the_usual_input_renders_as_the_models_template(name: str, data: st.DataObject, messages: list[Any],
                                                        tool_list: Any, gen: bool) -> None:
    # Most of these render (the generated conversations above mostly meet the template's refusals).
    options = data.draw(OPTIONS[name], label="options")
    assert ours(name, messages, tool_list, gen, options) == oracle(TEMPLATES[name], messages, tool_list, gen, options)


def test_string_arguments_are_refused_naming_them_and_decoded_on_request() -> None:
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}]}]
    assert oracle(TEMPLATES["qwen3.6"], messages, None, False, {})[0] == "crash"
    with pytest.raises(pf.InvalidInputError, match=r"^messages\[1\]\.tool_calls\[0\]\.function\.arguments: "):
        pf.get_format("qwen3.6").render(messages)
    decoded = [messages[0], {**messages[1], "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]}]
    expected = oracle(TEMPLATES["qwen3.6"], decoded, None, False, {})
    assert ("ok", pf.get_format("qwen3.6").render(messages, decode_tool_arguments=True)) == expected


def test_qwen3_5_prints_values_as_python_does() -> None:
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": "", "tool_calls": [{"name": "f", "arguments": {
                    "a": True, "b": None, "c": 1.5, "d": [True, None], "e": {"k": False}, "f": 7}}]}]
    expected = oracle(TEMPLATES["qwen3.5"], messages, None, False, {})
    assert expected[0] == "ok" and "<parameter=a>\nTrue\n" in expected[1]  # the case tests what it means to
    assert ("ok", pf.get_format("qwen3.5").render(messages)) == expected


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@pytest.mark.parametrize("arguments", ["", None, [], "{}", 0])
def test_arguments_that_are_no_object(name: str, arguments: Any) -> None:
    # Qwen3.8 writes nothing for an empty string; every other template refuses what is no object.
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": "", "tool_calls": [{"name": "f", "arguments": arguments}]}]
    expected = oracle(TEMPLATES[name], messages, None, True, {})
    assert expected[0] == ("ok" if name == "qwen3.8" and arguments == "" else "crash")
    assert ours(name, messages, None, True, {}) == expected


@pytest.mark.parametrize("effort", ["xhigh", "medium", "low", "high", None, 5, ""])
@pytest.mark.parametrize("thinking", [{}, {"enable_thinking": True}, {"enable_thinking": False},
                                      {"enable_thinking": None}])
@pytest.mark.parametrize("system", [None, "", "  S  "])
def test_qwen3_8_reasoning_effort(effort: Any, thinking: dict[str, Any], system: str | None) -> None:
    messages = [*([] if system is None else [{"role": "system", "content": system}]), {"role": "user", "content": "q"}]
    for tool_list in (None, [{"type": "function", "function": {"name": "f"}}]):
        options = {**thinking, "reasoning_effort": effort}
        assert ours("qwen3.8", messages, tool_list, True, options) == oracle(
            TEMPLATES["qwen3.8"], messages, tool_list, True, options)
    expected = oracle(TEMPLATES["qwen3.8"], messages, None, True, thinking)
    assert ours("qwen3.8", messages, None, True, thinking) == expected


class _Unprintable:
    def __str__(self) -> Any:
        return 5


def test_an_effort_the_engine_cannot_print_is_refused_naming_the_option() -> None:
    # Jinja itself fails printing it into the template's error message; ours names the option.
    with pytest.raises(pf.InvalidInputError, match=r"^reasoning_effort: expected xhigh, medium or low, got a "):
        pf.get_format("qwen3.8").render([{"role": "user", "content": "q"}], reasoning_effort=10**5000)


def test_an_effort_of_no_known_type_is_the_template_error_about_its_placeholder() -> None:
    # transformers hands the template an object of no kind it knows as "<TypeName>", which it prints.
    messages = [{"role": "user", "content": "q"}]
    options = {"reasoning_effort": _Unprintable()}
    expected = oracle(TEMPLATES["qwen3.8"], messages, None, True, options)
    assert expected[0] == "error" and "<_Unprintable>" in expected[1]
    assert ours("qwen3.8", messages, None, True, options) == expected


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_an_argument_key_whose_repr_fails_is_refused_naming_the_arguments(name: str) -> None:
    messages = [{"role": "user", "content": "q"},
                {"role": "assistant", "content": "", "tool_calls": [{"name": "f", "arguments": {10**5000: 1}}]}]
    with pytest.raises(pf.InvalidInputError, match=r"^messages\[1\]\.tool_calls\[0\]\.arguments: expected string keys"):
        pf.get_format(name).render(messages)
