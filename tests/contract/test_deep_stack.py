"""A caller deep in its own stack gets a FormatError from every public entry, never a RecursionError."""

from __future__ import annotations

import gc
import json
import weakref
from collections.abc import Callable
from typing import Any

import pytest

import prompt_formats as pf
from prompt_formats import errors
from prompt_formats.formats.harmony import ollama

USER = {"role": "user", "content": "hi"}


def _at_depth(headroom: int, call: Callable[[], Any]) -> Any:
    """``call()`` run with only about ``headroom`` frames left before the recursion limit."""

    def descend(left: int) -> Any:
        if left <= 0:
            return call()
        return descend(left - 1)

    def room(levels: int = 0) -> int:
        try:
            return room(levels + 1)
        except RecursionError:
            return levels

    return descend(room() - headroom)


ENTRIES: dict[str, Callable[[pf.ChatFormat], Any]] = {
    "render": lambda fmt: fmt.render([USER], None, True),
    "render_batch": lambda fmt: fmt.render_batch([[USER]]),
    "parse": lambda fmt: fmt.parse("hello"),
    "parse_batch": lambda fmt: fmt.parse_batch(["hello"]),
}


@pytest.mark.parametrize("name", pf.available_formats())
@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("headroom", [4, 8, 15, 30])
def test_a_deep_caller_gets_a_format_error(name: str, entry: str, headroom: int) -> None:
    fmt = pf.get_format(name)
    if entry.startswith("parse") and not fmt.parses:
        pytest.skip(f"{name} does not parse")
    field = "messages" if entry.startswith("render") else "completion"

    def call() -> Any:
        try:
            return ENTRIES[entry](fmt)
        except pf.InvalidInputError as error:
            return error

    outcome = _at_depth(headroom, call)
    if isinstance(outcome, pf.InvalidInputError):
        refusals = {f"{field}: the input or the call stack is too deep"}
        if entry.endswith("_batch"):  # refused inside the batch's first item: the item is named (in_batch)
            refusals.add(("conversations[0].messages" if field == "messages" else "completions[0]")
                         + ": the input or the call stack is too deep")
        assert str(outcome) in refusals
    else:  # enough room left after all: the ordinary result
        assert outcome == ENTRIES[entry](fmt)


@pytest.mark.parametrize("name", pf.available_formats())
@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_a_caller_at_the_limit_is_refused_not_crashed(name: str, entry: str) -> None:
    fmt = pf.get_format(name)
    field = "messages" if entry.startswith("render") else "completion"
    with pytest.raises(pf.InvalidInputError, match=f"^{field}: the input or the call stack is too deep$"):
        _at_depth(4, lambda: ENTRIES[entry](fmt))


@pytest.mark.parametrize("name", pf.available_formats())
@pytest.mark.parametrize("headroom", [4, 8, 15, 30])
def test_a_stream_parser_fed_from_a_deep_caller_gives_a_format_error(name: str, headroom: int) -> None:
    fmt = pf.get_format(name)
    parser = fmt.stream_parser()

    def call() -> Any:
        try:
            return parser.feed("<") + parser.feed("x> hello") + parser.close()
        except pf.InvalidInputError as error:
            return error

    outcome = _at_depth(headroom, call)
    if isinstance(outcome, pf.InvalidInputError):
        assert str(outcome) in ("delta: the input or the call stack is too deep",
                                "completion: the input or the call stack is too deep")
    else:  # enough room left after all: the ordinary events
        fresh = fmt.stream_parser()
        assert outcome == fresh.feed("<") + fresh.feed("x> hello") + fresh.close()


# Issue 26: a valid value within the documented nesting limit (prompt_formats.guard.MAX_NESTING)
# renders whatever the caller's depth: the JSON encoders' recursion is not the caller's to pay.


def _nested(levels: int) -> Any:
    value: Any = "leaf"
    for level in range(levels):
        value = {"k": value} if level % 2 else [value, level]
    return value


def _deep_call_request(levels: int, name: str) -> tuple[list[Any], list[Any]]:
    """A call whose argument, and a tool whose parameter's default, are nested ``levels`` deep (and for
    gpt-oss, which writes a result as JSON, the result too)."""
    call = {"type": "function", "function": {"name": "f", "arguments": {"a": _nested(levels)}}}
    tools = [{"type": "function", "function": {"name": "f", "description": "d",
              "parameters": {"type": "object", "properties": {"a": {"type": "object", "default": _nested(levels)}}}}}]
    result = _nested(levels) if name == "gpt-oss" else "done"
    turns = [USER, {"role": "assistant", "content": "", "tool_calls": [call]}, {"role": "tool", "content": result},
             {"role": "user", "content": "again"}]
    if name == "gemma-3":  # its roles alternate user / other: the result is the user's next turn
        del turns[2]
    if name == "deepseek-v3":  # its template joins the arguments to text: a string (JSON text) is all it takes
        call["function"]["arguments"] = json.dumps(call["function"]["arguments"])
    return turns, tools


@pytest.mark.parametrize("name", pf.available_formats())
@pytest.mark.parametrize("headroom", [60, 100, 200])
def test_a_value_nested_within_the_limit_renders_from_a_deep_stack(name: str, headroom: int) -> None:
    from prompt_formats.guard import MAX_NESTING

    fmt = pf.get_format(name)
    messages, tools = _deep_call_request(MAX_NESTING - 56, name)  # 200 levels, as the issue found
    options = {"current_date": "2025-08-05"} if name in ("harmony", "gpt-oss") else {}
    fresh = fmt.render(messages, tools, True, **options)  # the expected text, on this test's own stack
    assert _at_depth(headroom, lambda: fmt.render(messages, tools, True, **options)) == fresh


def _frames(error: BaseException) -> int:
    count, trace = 0, error.__traceback__
    while trace is not None:
        count, trace = count + 1, trace.tb_next
    return count


class _Messages(list):  # type: ignore[type-arg]
    """A conversation a weak reference can watch."""


def _assert_refused_alike_holding_nothing(refuse: Callable[[Callable[[], _Messages]], Any]) -> None:
    """``refuse(make)``, which passes ``make()`` to the call refused, raises the shared refusal three
    times: each time it holds neither the overflow nor the call's input, nor a traceback grown from the
    raises before. (Made in the call, the input is no local of a caller's frame the traceback keeps.)"""
    sizes = []
    watched: list[weakref.ref[_Messages]] = []

    def make() -> _Messages:
        messages = _Messages([USER])
        watched.append(weakref.ref(messages))
        return messages

    for _ in range(3):
        with pytest.raises(pf.InvalidInputError) as raised:
            refuse(make)
        gc.collect()
        assert watched[-1]() is None
        assert raised.value.__context__ is None
        assert str(raised.value) == "messages: the input or the call stack is too deep"
        sizes.append(_frames(raised.value))
    assert sizes[0] == sizes[1] == sizes[2]


def _no_room(*args: Any) -> Any:
    raise RecursionError


def test_the_shared_refusal_does_not_grow_when_raised_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # Where even building the refusal overflows, one error made in advance is raised again and again.
    @errors.refusing_deep_stacks("messages")
    def overflowing(messages: _Messages) -> None:
        raise RecursionError

    monkeypatch.setattr(errors, "too_deep", _no_room)
    _assert_refused_alike_holding_nothing(lambda make: overflowing(make()))


def test_the_interfaces_shared_refusal_keeps_neither_overflow_nor_input(monkeypatch: pytest.MonkeyPatch) -> None:
    # The entries' own refusal made in advance (raised where not even an error can be built).
    fmt = pf.get_format("harmony")
    monkeypatch.setattr(ollama, "render_harmony", _no_room)

    def refuse(make: Callable[[], _Messages]) -> None:
        with monkeypatch.context() as patch:
            patch.setattr(pf.InvalidInputError, "__new__", _no_room)
            fmt.render(make(), current_date="2025-08-05")

    _assert_refused_alike_holding_nothing(refuse)
