"""ChatML-multi-system against its template rendered by Jinja2, on generated conversations.

Every case is rendered by our formatter and by the Jinja2 oracle; the texts must be identical, or
both must raise with the same message. Expected values come only from the oracle.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.oracles import alias_reasoning, render_jinja, render_ours
from tests.support.strategies import chatml_options, conversation, differential_settings, lax_tools, tools

pytestmark = [pytest.mark.jinja]

MULTI = pf.get_format("chatml-multi-system")


def check_against_jinja(
    fmt: pf.ChatFormat,
    template: str,
    messages: list[Any],
    tool_list: Any,
    gen: bool,
    options: dict[str, Any],
    prepared: bool,
) -> None:
    expected = render_jinja(template, messages, tool_list, gen, **options)
    our_tools = pf.prepare_tools(tool_list) if prepared and tool_list else tool_list
    got = render_ours(fmt.render, messages, our_tools, gen, **options)
    assert got == expected


@differential_settings
@given(conversation(extra_roles=("developer",)), tools, st.booleans(), chatml_options, st.booleans())
def test_multi_system_matches_jinja(messages, tool_list, gen, options, prepared):
    check_against_jinja(MULTI, "chatml_multi_system.jinja", messages, tool_list, gen, options, prepared)


def first_result(results: list[Any]) -> str:
    """render_batch's result for a one-conversation batch, raised when it is an error (as render raises)."""
    if isinstance(results[0], Exception):
        raise results[0]
    return results[0]  # type: ignore[no-any-return]


@differential_settings
@given(conversation(), lax_tools, st.booleans(), chatml_options)
def test_any_tool_object_renders_as_the_template_writes_it(messages, tool_list, gen, options):
    # prepare_tools refuses many of these; render, render_batch and the command still render them
    # as the template does, since their preparing is only a speed-up.
    expected = render_jinja("chatml_multi_system.jinja", messages, tool_list, gen, **options)
    assert render_ours(MULTI.render, messages, tool_list, gen, **options) == expected
    batch = render_ours(lambda *a, **o: first_result(MULTI.render_batch([a[0]], *a[1:], errors="collect", **o)),
                        messages, tool_list, gen, **options)
    assert batch == expected


# ---------------------------------------------------------------------------------------------------
# The renderer reads the usual input (a list of plain dicts with exact strings) through C-speed
# checks and plain-dict code, anything else message by message through its general checks. The
# same generated conversations are rendered again with some messages (their content parts and tool
# calls too) as read-only mappings and tuples, and with str subclasses that print themselves
# differently; the oracle renders the very same objects.

UPSTREAM_ALLOW = pf.get_format("chatml-safety", policy="allow")


class Loud(str):
    """A str subclass that prints and formats itself differently from its characters."""

    def __str__(self) -> str:
        return "LOUD"

    def __format__(self, spec: str) -> str:
        return "LOUD"


def _loud(value: Any, loud: bool) -> Any:
    return Loud(value) if loud and type(value) is str else value


def _shaped_call(call: Any, loud: bool) -> Any:
    if not isinstance(call, dict):
        return call
    body = dict(call["function"]) if isinstance(call.get("function"), dict) else None
    target = body if body is not None else dict(call)
    arguments = target.get("arguments")
    if isinstance(arguments, dict):
        target["arguments"] = MappingProxyType({_loud(k, loud): _loud(v, loud) for k, v in arguments.items()})
    elif isinstance(arguments, str):
        target["arguments"] = _loud(arguments, loud)
    if "name" in target:
        target["name"] = _loud(target["name"], loud)
    if body is not None:
        return MappingProxyType({**call, "function": MappingProxyType(target)})
    return MappingProxyType(target)


def shaped(messages: list[Any], every: int, loud: bool) -> tuple[Any, ...]:
    """Every ``every``-th message as a read-only mapping (parts, calls and arguments too), in a tuple."""
    out: list[Any] = []
    for i, message in enumerate(alias_reasoning(messages)):  # the oracle aliases reasoning of dicts only
        if i % every or not isinstance(message, dict):
            out.append(message)
            continue
        copy = dict(message)
        copy["role"] = _loud(copy.get("role"), loud)
        content = copy.get("content")
        if isinstance(content, list):
            copy["content"] = tuple(
                MappingProxyType({**p, "text": _loud(p["text"], loud)} if "text" in p else p) if isinstance(p, dict)
                else p
                for p in content
            )
        else:
            copy["content"] = _loud(content, loud)
        calls = copy.get("tool_calls")
        if isinstance(calls, list):
            copy["tool_calls"] = tuple(_shaped_call(call, loud) for call in calls)
        out.append(MappingProxyType(copy))
    return tuple(out)


# Generated conversations seldom hold string argument values; this turn always does (both call shapes).
CALLING_TURN = {"role": "assistant", "content": "Calling.", "tool_calls": [
    {"type": "function",
     "function": {"name": "get_weather", "arguments": {"city": "Paris", "n": 3, "deep": {"a": [1]}}}},
    {"name": "search", "arguments": "{\"q\": \"x\"}"},
]}


@differential_settings
@given(conversation(extra_roles=("developer",)), tools, st.booleans(), chatml_options, st.integers(1, 3),
       st.booleans(), st.booleans(), st.integers(0, 20))
def test_other_shapes_render_as_the_template_renders_them(messages, tool_list, gen, options, every, loud, upstream, at):
    fmt, template = (UPSTREAM_ALLOW, "chatml_upstream.jinja") if upstream else (MULTI, "chatml_multi_system.jinja")
    at = min(at, len(messages))
    conversation_shaped = shaped([*messages[:at], CALLING_TURN, *messages[at:]], every, loud)
    tools_shaped = tuple(tool_list) if tool_list else tool_list
    expected = render_jinja(template, conversation_shaped, tools_shaped, gen, **options)  # type: ignore[arg-type]
    assert render_ours(fmt.render, conversation_shaped, tools_shaped, gen, **options) == expected
