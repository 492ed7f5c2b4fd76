"""The ChatML walk on the usual input against Jinja2: text holding the template's own markers and
the whitespace it trims, images, reasoning in a field or inline, calls with every kind of argument
value, the templates' options with values of any truth. Under the guard (``chatml-safety``,
``reject``) untrusted text without the tokens' lead renders exactly as the upstream template, and the
guard finds nothing in it. Expected values come only from the oracle.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.formats.chatml.render import render_chatml
from prompt_formats.formats.chatml.template import MULTI_SYSTEM, UPSTREAM
from prompt_formats.formats.chatml.untrusted import CHATML_READING
from tests.support.oracles import render_jinja
from tests.support.strategies import differential_settings, tools
from tests.support.usual import REJECT, untrusted_without_lead, usual_conversation, without_lead

TEMPLATE = "chatml_multi_system.jinja"
UPSTREAM_TEMPLATE = "chatml_upstream.jinja"
SAFETY = pf.get_format("chatml-safety", policy="reject")

template_options = st.fixed_dictionaries({}, optional={
    "enable_thinking": st.sampled_from([True, False, None, 0]),
    "preserve_thinking": st.sampled_from([True, False, None, 1]),
    "add_vision_id": st.sampled_from([True, False, None, 1, ""]),
})
# The formats take booleans and null for these (the template's own variables take any value).
format_options = st.fixed_dictionaries({}, optional={
    name: st.sampled_from([True, False, None]) for name in ("enable_thinking", "preserve_thinking", "add_vision_id")})


@pytest.mark.jinja
@differential_settings
@given(usual_conversation(), tools, st.booleans(), template_options)
def test_the_usual_input_renders_as_the_template(messages, tool_list, gen, options):
    got = render_chatml(messages, tool_list, gen, MULTI_SYSTEM, **options)
    assert ("ok", got) == render_jinja(TEMPLATE, messages, tool_list, gen, **options)


@pytest.mark.jinja
@differential_settings
@given(usual_conversation(strict=True), tools, st.booleans(), template_options)
def test_the_usual_input_renders_as_the_upstream_template(messages, tool_list, gen, options):
    got = render_chatml(messages, tool_list, gen, UPSTREAM, **options)
    assert ("ok", got) == render_jinja(UPSTREAM_TEMPLATE, messages, tool_list, gen, **options)


@pytest.mark.jinja
@differential_settings
@given(usual_conversation(strict=True).map(untrusted_without_lead), tools.map(without_lead), st.booleans(),
       format_options)
def test_the_usual_input_under_the_guard_renders_as_the_upstream_template(messages, tool_list, gen, options):
    # Assistant text keeps its markers (<think> included): it is trusted.
    got = SAFETY.render(messages, tool_list, gen, **options)
    assert ("ok", got) == render_jinja(UPSTREAM_TEMPLATE, messages, tool_list, gen, **options)
    assert REJECT.guard_messages(messages, CHATML_READING) is messages
