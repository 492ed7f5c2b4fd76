"""What the gpt-oss template leaves out, told by the oracle alone: perturb an input, re-render with Jinja2.

A format reports its losses in ``RenderedPrompt.dropped``. That report is checked here against the
template itself: an input the report names must not change the oracle's output when its value is
replaced by other text (it is not in the prompt); every other input that holds text must change it
(it is). Nothing here reads our renderer's output.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from typing import Any

import jinja2

from tests.support.gpt_oss_oracle import render_gpt_oss_jinja

PROBE = "PROBE\u2063text"
PROBE_CALL = {"function": {"name": "probe_tool", "arguments": {"probe": 1}}}
REASONING = ("thinking", "reasoning_content", "reasoning")
_PATH = re.compile(r"messages\[(\d+)\](?:\.(\w+)(?:\[(\d+)\])?)?|builtin_tools(?:\[(\d+)\])?")

Case = tuple[list[Any], Any, bool, dict[str, Any]]


#: The outcome where the engine itself fails (Jinja2's type error, an undefined value) and where
#: ours raises InvalidInputError: the two must meet.
CRASH = ("crash", "")


def outcome(messages: list[Any], tools: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    """The oracle's outcome, a crash of the engine included (:data:`CRASH`)."""
    return crashing_as_outcome(render_gpt_oss_jinja, messages, tools, gen, **options)


def crashing_as_outcome(render: Callable[..., tuple[str, str]], *args: Any, **kwargs: Any) -> tuple[str, str]:
    """``render(...)``, or :data:`CRASH` where the engine fails with a type error or an undefined value."""
    try:
        return render(*args, **kwargs)
    except (TypeError, jinja2.exceptions.UndefinedError):
        return CRASH


def ours_outcome(render: Callable[..., str], *args: Any, **kwargs: Any) -> tuple[str, str]:
    """One of our renders as an outcome: the text, the TemplateError's message, or :data:`CRASH` for
    an InvalidInputError (which names a field where the engine fails)."""
    from prompt_formats import InvalidInputError, TemplateError

    try:
        return ("ok", render(*args, **kwargs))
    except TemplateError as exc:
        return ("error", str(exc))
    except InvalidInputError:
        return CRASH


def perturbed(case: Case, path: str) -> Case:
    """``case`` with the input at ``path`` given other text: its content (a whole message),
    a field's value, a tool call replaced by another, a built-in tool's name."""
    messages, tools, gen, options = copy.deepcopy(case)
    match = _PATH.fullmatch(path)
    assert match, path
    index, field, position, builtin = match.groups()
    if index is None:
        value = options["builtin_tools"]
        if builtin is None:
            options["builtin_tools"] = "probe"
        elif isinstance(value, tuple):
            options["builtin_tools"] = (*value[: int(builtin)], "probe", *value[int(builtin) + 1:])
        elif isinstance(value, dict):
            options["builtin_tools"] = {("probe" if i == int(builtin) else key): item
                                        for i, (key, item) in enumerate(value.items())}
        else:
            value[int(builtin)] = "probe"
        return messages, tools, gen, options
    message = messages[int(index)]
    if field is None:
        message["content"] = PROBE
    elif field == "tool_calls":
        message["tool_calls"][int(position)] = PROBE_CALL
    else:
        read = message[field]
        for key in (field, *REASONING):  # an alias holding the same text goes with it: the text is one
            if key == field or (key in REASONING and field in REASONING and message.get(key) == read):
                message[key] = PROBE
    return messages, tools, gen, options


def candidates(case: Case) -> Iterator[str]:
    """Every input of ``case`` that holds text: each message that holds any or has a role the
    template writes a turn for, its non-empty content and reasoning fields, each of its tool calls that holds text;
    each built-in tool name that occurs once."""
    messages, _, _, options = case
    for index, message in enumerate(messages):
        calls = message.get("tool_calls")
        if message_holds_text(message) or message.get("role") in ("user", "assistant", "tool"):  # else nothing to lose
            yield f"messages[{index}]"
        for key in ("content", *REASONING):
            if message.get(key):
                yield f"messages[{index}].{key}"
        if isinstance(calls, list):
            yield from (f"messages[{index}].tool_calls[{k}]" for k, call in enumerate(calls) if _call_holds(call))
    names = options.get("builtin_tools")
    if isinstance(names, (list, tuple, dict)):  # (a dict's keys: what the template iterates)
        listed = list(names)
        yield from (f"builtin_tools[{i}]" for i, name in enumerate(listed) if listed.count(name) == 1)
    elif names:
        yield "builtin_tools"


def _holds(value: Any) -> bool:
    """Whether a value holds text, as docs/gpt-oss.md counts losses: not ``None``, ``""`` or an
    empty list or object."""
    return value is not None and value != "" and not (isinstance(value, (dict, list, tuple)) and len(value) == 0)


def _call_holds(call: Any) -> bool:
    """Whether a tool call holds text where the template reads a call: the name, arguments or
    content type of its ``function`` (when set), else of itself."""
    body = (call.get("function") or call) if isinstance(call, dict) else call
    return any(_holds(body.get(key)) for key in ("name", "arguments", "content_type")) if isinstance(body, dict) \
        else _holds(body)


def message_holds_text(message: dict[str, Any]) -> bool:
    """Whether a message holds text: its content, a reasoning field, a tool call."""
    calls = message.get("tool_calls")
    return any(_holds(message.get(key)) for key in ("content", *REASONING)) or (
        any(map(_call_holds, calls)) if isinstance(calls, list) else _holds(calls))


def check_dropped(case: Case, dropped: tuple[str, ...], render: Callable[[Case], tuple[str, str]] = lambda c:
                  outcome(*c)) -> None:
    """Assert that ``dropped`` names exactly the inputs of ``case`` the oracle's prompt does not hold."""
    expected = render(case)
    assert expected[0] == "ok", expected
    inputs = set(candidates(case))
    for path in dropped:
        # (a message's input: a built-in tool's name repeated is no candidate, yet it is lost)
        assert path in inputs or path.startswith("builtin_tools"), f"{path} is reported dropped but holds no text"
        assert render(perturbed(case, path)) == expected, f"{path} is reported dropped but is in the prompt"
    whole = {path for path in dropped if "." not in path}
    for path in candidates(case):
        if path in dropped or path.split(".")[0] in whole or _alias_of_dropped(case, path, dropped):
            continue
        # A whole message is in the prompt when taking it out or giving it other text changes the
        # prompt: taken out alone, a message identical to the next leaves the same prompt behind.
        whole_message = "." not in path and path.startswith("messages")
        changed = render(removed(case, path) if whole_message else perturbed(case, path)) != expected
        if whole_message and not changed:
            changed = render(perturbed(case, path)) != expected
        assert changed, f"{path} is not in the prompt but not reported"


def _alias_of_dropped(case: Case, path: str, dropped: tuple[str, ...]) -> bool:
    """Whether ``path`` is a reasoning field holding the same text as a reported one of its message."""
    head, _, key = path.partition(".")
    if key not in REASONING:
        return False
    message = case[0][int(head[len("messages["):-1])]
    return any(f"{head}.{other}" in dropped and message.get(other) == message[key] for other in REASONING)


def removed(case: Case, path: str) -> Case:
    """``case`` without the message at ``path``: a message the prompt holds cannot go unnoticed.

    (Not the test of a dropped one: without it, the message before may become the loop's last.)"""
    messages, tools, gen, options = copy.deepcopy(case)
    del messages[int(path[len("messages["):-1])]
    return messages, tools, gen, options
