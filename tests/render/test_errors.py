"""Bad input: one error hierarchy, messages that name the message index and field, nothing half-rendered."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import prompt_formats as pf
from prompt_formats import FormatError, InvalidInputError, TemplateError, UnknownOptionError

CHATML = ["chatml-multi-system", "chatml-safety"]
USER = {"role": "user", "content": "hi"}


@pytest.mark.parametrize("name", CHATML)
@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ("hello", "messages: expected a list of messages, got str"),
        ([USER, "hello"], "messages[1]: expected a message object, got str"),
        ([USER, {"content": "x"}], "messages[1].role: expected a string, got null"),
        ([USER, {"role": 3}], "messages[1].role: expected a string, got int"),
        (
            [USER, {"role": "assistant", "tool_calls": [{"function": {"name": 7}}]}],
            "messages[1].tool_calls[0].function.name: expected a string, got int",
        ),
        (
            [USER, {"role": "assistant", "tool_calls": [{"name": "f", "arguments": {"a": {(1,): 2}}}]}],
            "messages[1].tool_calls[0].arguments.a: not serialisable as JSON"
            " (keys must be str, int, float, bool or None, not tuple)",
        ),
        (
            [USER, {"role": "assistant", "tool_calls": {"name": "f"}}],
            "messages[1].tool_calls: expected a list, got dict",
        ),
        (
            [USER, {"role": "assistant", "tool_calls": [{"name": "f", "arguments": {"a": 1, 5: "x"}}]}],
            "messages[1].tool_calls[0].arguments: expected string keys, got int key 5",
        ),
        (
            [{"role": "user", "content": [{"type": "text", "text": 5}]}],
            "messages[0].content[0].text: expected a string, got int",
        ),
        (
            [{"role": "user", "content": [5]}],  # `'image' in 5`: the engine fails
            "messages[0].content[0]: expected a content part object, got int",
        ),
        (
            [USER, {"role": "assistant", "content": "a", "reasoning_content": 1}],
            "messages[1].reasoning_content: expected a string, got int",
        ),
    ],
)
def test_invalid_input_names_index_and_field(name: str, messages: Any, message: str) -> None:
    # Input outside the OpenAI request shape, or that the template cannot render. (Arguments that
    # are neither an object nor a string render as the template writes them: tests/render/test_chatml_drops.py.)
    with pytest.raises(InvalidInputError) as info:
        pf.get_format(name).render(messages)
    assert str(info.value) == message
    assert isinstance(info.value, FormatError) and isinstance(info.value, ValueError)


# Beyond the first few, dict and list arguments are encoded after the turns, many at once: an error
# found later in the conversation must not hide an earlier argument's, and the first of those is the
# one named. `padding` puts enough good containers first (lists and dicts, beyond the ones encoded
# where they are met) for the bad ones to be among those encoded at once.
PADDING = (
    {f"i{n}": [n] for n in range(8)} | {f"p{n}": ["ok", n] for n in range(12)} | {f"q{n}": {"k": n} for n in range(12)}
)
# (A set is handed to the template as the text "<set>"; a tuple key is what JSON cannot encode.)
NOT_ENCODABLE = "not serialisable as JSON (keys must be str, int, float, bool or None, not tuple)"


def arguments_case(padding: dict[str, Any], first: dict[Any, Any], *later: dict[str, Any]) -> list[dict[str, Any]]:
    calls = [{"role": "assistant", "tool_calls": [{"name": "f", "arguments": padding | first}]}]
    calls += [{"role": "assistant", "tool_calls": [{"name": "f", "arguments": arguments}]} for arguments in later]
    return [USER, *calls]


@pytest.mark.parametrize("name", CHATML)
@pytest.mark.parametrize("padding", [{}, PADDING], ids=["few containers", "many containers"])
def test_the_first_argument_json_cannot_encode_is_the_error(name: str, padding: dict[str, Any]) -> None:
    fmt = pf.get_format(name)
    cases: list[tuple[list[dict[str, Any]], str]] = [
        # an error later in the conversation (an unknown role) comes after
        ([*arguments_case(padding, {"a": {"k": {(1,): 1}}}), {"role": "robot", "content": "x"}], "a"),
        # a list argument before a dict argument, in the same call and in a later one
        (arguments_case(padding, {"a": ["ok"], "b": [{(2,): 2}], "c": {"k": {(3,): 3}}}), "b"),
        (arguments_case(padding, {"a": ["ok"], "b": [{(2,): 2}]}, {"c": {"k": {(3,): 3}}}), "b"),
        (arguments_case(padding, {"a": {"k": {(1,): 1}}, "b": [{(2,): 2}]}), "a"),
        # an error in the same call, after the argument
        (arguments_case(padding, {"a": [{(1,): 1}], 5: "x"}), "a"),
    ]
    for messages, argument in cases:
        with pytest.raises(InvalidInputError) as info:
            fmt.render(messages)
        assert str(info.value) == f"messages[1].tool_calls[0].arguments.{argument}: {NOT_ENCODABLE}"
    with pytest.raises(InvalidInputError, match=r"^messages\[1\]\.tool_calls\[0\]\.arguments: expected string keys"):
        fmt.render(arguments_case(padding, {"a": 1, 5: "x"}))


@pytest.mark.parametrize("name", CHATML)
def test_invalid_tools(name: str) -> None:
    fmt = pf.get_format(name)
    with pytest.raises(InvalidInputError, match=r"^tools\[1\]: expected a tool object, got str$"):
        fmt.render([USER], tools=[{"name": "a"}, "b"])
    with pytest.raises(InvalidInputError, match=r"^tools: expected a list of tool objects, got dict$"):
        fmt.render([USER], tools={"name": "a"})
    with pytest.raises(InvalidInputError, match=r"^tools\[0\]\.function\.name: expected a string, got null$"):
        pf.prepare_tools([{"type": "function", "function": {}}])


@pytest.mark.parametrize("name", CHATML)
def test_unknown_option_is_an_error(name: str) -> None:
    with pytest.raises(UnknownOptionError, match="enable_thinkin"):
        pf.get_format(name).render([USER], enable_thinkin=False)


def test_template_errors_carry_the_template_message() -> None:
    fmt = pf.get_format("chatml-multi-system")
    with pytest.raises(TemplateError) as info:
        fmt.render([{"role": "assistant", "content": "x"}])
    assert str(info.value) == "No user query found in messages."


def test_errors_pickle() -> None:
    for error in (InvalidInputError("messages[0].role", "expected a string, got int"), pf.InjectionError("p", "<t>")):
        clone = pickle.loads(pickle.dumps(error))
        assert type(clone) is type(error) and str(clone) == str(error)


def test_unknown_format() -> None:
    with pytest.raises(FormatError, match="unknown format 'chatml'"):
        pf.get_format("chatml")
