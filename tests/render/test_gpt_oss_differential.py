"""gpt-oss against its template rendered by Jinja2 (as transformers feeds it), on generated conversations.

Every case is rendered by our formatter and by the Jinja2 oracle; the texts must be identical, or
both must raise with the same message. Expected values come only from the oracle.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.gpt_oss_oracle import render_gpt_oss_jinja
from tests.support.gpt_oss_strategies import conversation, options, tool, tools
from tests.support.oracles import render_ours
from tests.support.strategies import differential_settings

FMT = pf.get_format("gpt-oss")


def check(messages: list[Any], tool_list: Any, gen: bool, opts: dict[str, Any], prepared: bool) -> None:
    expected = render_gpt_oss_jinja(messages, tool_list, gen, **opts)
    our_tools = pf.prepare_tools(tool_list) if prepared and tool_list else tool_list
    assert render_ours(FMT.render, messages, our_tools, gen, **opts) == expected


@differential_settings
@given(conversation(), tools, st.booleans(), options(), st.booleans())
def test_conversations_match_jinja(messages, tool_list, gen, opts, prepared):
    check(messages, tool_list, gen, opts, prepared)


@differential_settings
@given(st.lists(tool(), min_size=1, max_size=6), options())
def test_tool_schemas_match_jinja(tool_list, opts):
    # The functions namespace alone, on more tools per case than the conversations carry.
    check([{"role": "user", "content": "hi"}], tool_list, True, opts, False)


@differential_settings
@given(conversation(), tools, st.booleans(), options())
def test_render_batch_matches_jinja(messages, tool_list, gen, opts):
    expected = render_gpt_oss_jinja(messages, tool_list, gen, **opts)
    [result] = FMT.render_batch([messages], tool_list, gen, errors="collect", **opts)
    if isinstance(result, pf.TemplateError):
        assert expected == ("error", str(result))
    else:
        assert expected == ("ok", result)
