"""gpt-oss against its template rendered by Jinja2 (as transformers feeds it), on generated conversations.

Every case is rendered by our formatter and by the Jinja2 oracle; the texts must be identical, or
both must raise with the same message (where Jinja2 itself fails, ours raises InvalidInputError).
What the template drops is checked by the oracle too (tests/support/gpt_oss_drops.py). Expected
values come only from the oracle.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.gpt_oss_drops import check_dropped, ours_outcome, outcome
from tests.support.gpt_oss_strategies import conversation, options, tool, tools
from tests.support.strategies import differential_settings

pytestmark = [pytest.mark.jinja]

FMT = pf.get_format("gpt-oss")


def check(messages: list[Any], tool_list: Any, gen: bool, opts: dict[str, Any], prepared: bool) -> None:
    """Ours equals the oracle: the same text, or the template's error message; where Jinja2 itself
    fails (a type error, an undefined value), an InvalidInputError naming a field."""
    our_tools = pf.prepare_tools(tool_list) if prepared and tool_list else tool_list
    assert ours_outcome(FMT.render, messages, our_tools, gen, **opts) == outcome(messages, tool_list, gen, opts)


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
    expected = outcome(messages, tool_list, gen, opts)
    [result] = FMT.render_batch([messages], tool_list, gen, errors="collect", **opts)
    if expected[0] == "crash":
        assert isinstance(result, pf.InvalidInputError)
    elif isinstance(result, pf.TemplateError):
        assert expected == ("error", str(result))
    else:
        assert expected == ("ok", result)


@differential_settings
@given(conversation(), tools, st.booleans(), options())
# Found by the deep tier: two identical first messages (taking out the first leaves the same prompt).
@example(
    [{"role": "system", "content": [{"type": "text", "text": ""}, {"type": "text", "text": ""}]} for _ in range(2)],
    None, False, {"current_date": "2000-01-01"},
)
# A call that holds nothing (an empty one, here a user's and an assistant's second) loses nothing.
@example(
    [{"role": "user", "content": "q", "tool_calls": [{}, {"function": {"name": "", "content_type": "json"}}]},
     {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}, {}]}],
    None, True, {"current_date": "2000-01-01"},
)
# ...but 0 and false are text the template writes (a loss where it leaves them out).
@example(
    [{"role": "user", "content": "q"}, {"role": "system", "content": 0},
     {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}},
                                                         {"function": {"name": "", "arguments": False}}]}],
    None, True, {"current_date": "2000-01-01"},
)
def test_dropped_is_exactly_what_the_prompt_lacks(messages, tool_list, gen, opts):
    # Where the template renders: the spans' text is the oracle's, `dropped` names exactly the inputs
    # whose text the oracle's prompt does not hold (told by perturbing each and rendering again),
    # and strict=True refuses exactly when it names any.
    case = (messages, tool_list, gen, opts)
    if outcome(*case)[0] != "ok":
        return
    rendered = FMT.render_spans(messages, tool_list, gen, **opts)
    assert ("ok", rendered.text) == outcome(*case)
    check_dropped(case, rendered.dropped)
    if rendered.dropped:
        with pytest.raises(pf.InvalidInputError) as info:
            FMT.render(messages, tool_list, gen, strict=True, **opts)
        assert info.value.path == rendered.dropped[0]
    else:
        assert FMT.render(messages, tool_list, gen, strict=True, **opts) == rendered.text
