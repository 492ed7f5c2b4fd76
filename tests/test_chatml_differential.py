"""ChatML-multi-system against its template rendered by Jinja2, on generated conversations.

Every case is rendered by our formatter and by the Jinja2 oracle; the texts must be identical, or
both must raise with the same message. Expected values come only from the oracle.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from oracles import render_jinja, render_ours
from strategies import chatml_options, conversation, differential_settings, tools

import prompt_formats as pf

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
