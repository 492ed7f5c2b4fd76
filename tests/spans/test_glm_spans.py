"""GLM-4.5's ``render_spans``: the text, the generated ranges, each message's ranges, the losses.

- the text is ``render``'s and the template's;
- ``generated`` is what transformers' generation indices say on the tagged copy of the template
  (``tests/fixtures/families/glm4moe_generation.jinja``: each assistant turn after ``<|assistant|>``,
  its think block, content and calls), under every policy, and the tagged copy renders the
  template's text;
- each message's ranges hold exactly the text the template writes of it;
- ``dropped`` is exactly what the template leaves out, by the Jinja2 oracle alone
  (``tests/support/drops.py``), and ``strict=True`` refuses it.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support import glm_strategies as gs
from tests.support.drops import assert_dropped_exactly
from tests.support.oracles import render_jinja_as_transformers
from tests.support.spans_oracle import TAGGED, expected_generated, outcome
from tests.support.strategies import differential_settings, lax_tools, tools

pytestmark = [pytest.mark.jinja]

FMT = pf.get_format("glm-4.5")
TEMPLATE = gs.TEMPLATE
POLICIES = ["all", "last", "after_last_user"]


@differential_settings
@given(messages=gs.conversation(), gen=st.booleans(), options=gs.options(), policy=st.sampled_from(POLICIES))
def test_render_spans_equals_transformers(messages: list[Any], gen: bool, options: dict[str, Any], policy: str) -> None:
    expected = outcome(TAGGED[TEMPLATE], messages, None, gen, **options)
    try:
        rendered = FMT.render_spans(messages, None, gen, generated=policy, **options)
    except pf.TemplateError as exc:
        assert expected == ("error", f"TemplateError: {exc}")
        return
    except pf.InvalidInputError as exc:
        assert expected[0] == "error" and expected[1].startswith(("TypeError: ", "UndefinedError: ")), expected
        assert exc.path.startswith("messages")
        return
    assert expected[0] == "ok", expected
    text, indices = expected[1]
    assert rendered.text == text == FMT.render(messages, None, gen, **options)
    roles = [message.get("role") for message in messages]
    assert rendered.generated == expected_generated(roles, indices, policy)
    for i, message in enumerate(messages):
        found = [rendered.text[a:b] for a, b in rendered.messages[i]]
        if message.get("role") in ("user", "tool", "system") and isinstance(message.get("content"), str):
            assert found == written(message, i, len(messages)), (i, found)
        elif message.get("role") == "assistant":
            assert len(found) == 1 and found[0].startswith("\n<think>")
        elif message.get("role") not in ("user", "tool", "system"):
            assert found == []


def written(message: dict[str, Any], index: int, count: int) -> list[str]:
    """What the template writes of a user's, a tool's or a system message (computed from the input)."""
    content = message["content"]
    return [content] if content else []


def printed_as_python(messages: list[Any]) -> bool:
    """Whether the template prints a value of the input as Python's ``repr`` does (an object, or a
    tool result's item without its ``output``), which spells the oracle's private-use sentinels as
    escapes: such inputs are left to the differential tests."""
    for message in messages:
        content = message.get("content")
        if isinstance(content, dict):
            return True
        if message.get("role") == "tool" and isinstance(content, list) and any(
                isinstance(item, dict) and ("output" not in item or not isinstance(item["output"], (str, type(None))))
                for item in content):
            return True
    return False


@differential_settings
@given(messages=gs.conversation(), tool_list=st.one_of(tools, lax_tools), gen=st.booleans(), options=gs.options())
# (found by the deep tier: a text part's text that holds none, printed "None" before </think>, is no loss)
@example(messages=[{"role": "user"}, {"role": "assistant", "content": [{"type": "text", "text": None},
                   {"type": "text", "text": "</think>"}], "tool_calls": [{"name": "f", "arguments": {}}]},
                   {"role": "user"}], tool_list=None, gen=False, options={})
@example(messages=[{"role": "user"}, {"role": "assistant", "content": [{"type": "text", "text": []},
                   {"type": "text", "text": "</think><tool_response>"}]}, {"role": "user"}],
         tool_list=None, gen=False, options={})
def test_dropped_is_exactly_what_the_template_leaves_out(messages: list[Any], tool_list: Any, gen: bool,
                                                         options: dict[str, Any]) -> None:
    def oracle(msgs: list[Any], tls: Any) -> str | None:
        found = render_jinja_as_transformers(TEMPLATE, msgs, tls, gen, **options)
        return found[1] if found is not None and found[0] == "ok" else None

    assume(oracle(messages, tool_list) is not None and not printed_as_python(messages))
    rendered = FMT.render_spans(messages, tool_list, gen, **options)
    assert_dropped_exactly(oracle, messages, tool_list, rendered.dropped,
                           content_markers=("<think>", "</think>", "/nothink"), string_items=True)
    if rendered.dropped:
        with pytest.raises(pf.InvalidInputError) as raised:
            FMT.render(messages, tool_list, gen, strict=True, **options)
        assert raised.value.path == rendered.dropped[0]
    else:
        assert FMT.render(messages, tool_list, gen, strict=True, **options) == rendered.text


@differential_settings
@given(messages=gs.conversation(), gen=st.booleans())
def test_the_tagged_template_renders_the_reference_text(messages: list[Any], gen: bool) -> None:
    tagged = outcome(TAGGED[TEMPLATE], messages, None, gen)
    untagged = outcome(TEMPLATE, messages, None, gen)
    # (an engine failure's message names the operands in the order the copy joins them)
    assert (("error", tagged[1].split(":")[0]) if tagged[0] == "error" else ("ok", tagged[1][0])) == \
        (("error", untagged[1].split(":")[0]) if untagged[0] == "error" else ("ok", untagged[1][0]))
    if tagged[0] == "ok":  # the tags where the definition says: right after each "<|assistant|>"
        text, indices = tagged[1]
        assert all(text[:a].endswith("<|assistant|>") and text[a:].startswith("\n<think>") for a, _ in indices)
