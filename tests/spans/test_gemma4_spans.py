"""Gemma 4's ``render_spans``: the text, the generated ranges, each message's ranges, the losses.

- the text is ``render``'s and the template's;
- ``generated`` (policy ``"all"``) is what transformers' generation indices say on the tagged copy
  of the template (``tests/fixtures/families/gemma4_generation.jinja``: each assistant message's
  reasoning and calls up to the first ``<|tool_response>`` after them, and its content with what
  ends it, ``<turn|>`` without its newline); the other policies select among those, each
  assistant's within its own ranges; the tagged copy renders the template's text;
- each message's ranges hold exactly the text the template writes of it, where that is plain to
  compute from the input (a string content);
- ``dropped`` is exactly what the template leaves out, by the Jinja2 oracle alone
  (``tests/support/drops.py``), and ``strict=True`` refuses it.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.format.spans import normalize_ranges
from prompt_formats.model.reading import REASONING_FIELDS
from tests.support import gemma4_strategies as gs
from tests.support.drops import assert_dropped_exactly
from tests.support.oracles import render_jinja_as_transformers
from tests.support.settings import budget
from tests.support.spans_oracle import TAGGED, outcome
from tests.support.strategies import differential_settings

pytestmark = [pytest.mark.jinja]

FMT = pf.get_format("gemma-4")
TEMPLATE = gs.TEMPLATE
POLICIES = ["all", "last", "after_last_user"]


@differential_settings
@given(messages=gs.conversation(), gen=st.booleans(), options=gs.options(), policy=st.sampled_from(POLICIES))
@example(messages=[{"role": "system"}, {"role": "system", "content": "", "reasoning_content": "<think>"}],
         gen=False, options={}, policy="all")
@example(messages=[{"role": "user", "content": "q"}, {"role": "system", "content": " hi ", "reasoning_content": "r"}],
         gen=False, options={}, policy="all")
@example(messages=[{"role": "system", "reasoning_content": ""},
                   {"role": "system", "content": "", "thinking": "", "reasoning": "<channel|>"}],
         gen=False, options={}, policy="all")
@example(messages=[{"role": "user", "content": "<|channel>thought\n<|channel>", "reasoning": "<think>"}],
         gen=False, options={}, policy="all")
@example(messages=[{"role": "system", "content": "<|channel>", "reasoning": "<|channel>"}],
         gen=False, options={}, policy="all")
def test_render_spans_equals_transformers(messages: list[Any], gen: bool, options: dict[str, Any], policy: str) -> None:
    expected = outcome(TAGGED[TEMPLATE], messages, None, gen, **gs.oracle_options(options))
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
    every = FMT.render_spans(messages, None, gen, **options).generated
    assert every == normalize_ranges(indices)
    assert set(rendered.generated) <= set(every) or policy != "all"
    covered = {i for start, end in rendered.generated for i in range(start, end)}
    assert covered <= {i for start, end in every for i in range(start, end)}
    for i, message in enumerate(messages):
        found = [rendered.text[a:b] for a, b in rendered.messages[i]]
        role, content = message.get("role"), message.get("content")
        if role in ("user", "system", "developer") and isinstance(content, str) and not message.get("tool_calls"):
            # (a leading system or developer message is the system turn: no reasoning of it is written)
            after_last_user = i > 0 and all(m.get("role") != "user" for m in messages[i:])
            if after_last_user and any(message.get(key) for key in ("reasoning", *REASONING_FIELDS)):
                # (found by the deep tier) the template writes any role's reasoning after the last user
                # message, before its content: the message's one range holds both
                assert len(found) <= 1, (i, found)
                assert not found or found[0].startswith("<|channel>thought\n"), (i, found)
                assert found or not content.strip(), (i, found)
                assert not found or found[0].endswith(content.strip()), (i, found)
            else:
                assert found == ([content.strip()] if content.strip() else []), (i, found)
        if role == "assistant":
            mine = {k for start, end in rendered.messages[i] for k in range(start, end)}
            assert all(k in mine for start, end in every for k in range(start, end) if any(
                a <= k < b for a, b in rendered.messages[i])) or not mine


def _one_key_each(value: Any) -> bool:
    """Whether every object in ``value`` has at most one key (so that the drop oracle's sentinels,
    which change how keys sort, cannot reorder what the template writes)."""
    if isinstance(value, dict):
        return len(value) <= 1 and all(_one_key_each(item) for item in value.values())
    if isinstance(value, list):
        return all(_one_key_each(item) for item in value)
    return True


@budget(0.3, floor=25)  # (each quote of '<|"|>' in the input is a render of its own)
@given(messages=gs.conversation(), gen=st.booleans(), options=gs.options())
def test_dropped_is_exactly_what_the_template_leaves_out(messages: list[Any], gen: bool,
                                                         options: dict[str, Any]) -> None:
    def oracle(msgs: list[Any], tls: Any) -> str | None:
        found = render_jinja_as_transformers(TEMPLATE, msgs, tls, gen, **gs.oracle_options(options))
        return found[1] if found is not None and found[0] == "ok" else None

    assume(_one_key_each(messages) and oracle(messages, None) is not None)
    rendered = FMT.render_spans(messages, None, gen, **options)
    assert_dropped_exactly(oracle, messages, None, rendered.dropped, content_markers=("<|channel>", "<channel|>"),
                           string_items=True, check_tools=False)
    if rendered.dropped:
        with pytest.raises(pf.InvalidInputError) as raised:
            FMT.render(messages, None, gen, strict=True, **options)
        assert raised.value.path == rendered.dropped[0]
    else:
        assert FMT.render(messages, None, gen, strict=True, **options) == rendered.text


@differential_settings
@given(messages=gs.conversation(), gen=st.booleans(), options=gs.options())
def test_the_tagged_template_renders_the_reference_text(messages: list[Any], gen: bool,
                                                       options: dict[str, Any]) -> None:
    tagged = outcome(TAGGED[TEMPLATE], messages, None, gen, **gs.oracle_options(options))
    untagged = outcome(TEMPLATE, messages, None, gen, **gs.oracle_options(options))
    # (an engine failure's message names the operands in the order the copy joins them)
    assert (("error", tagged[1].split(":")[0]) if tagged[0] == "error" else ("ok", tagged[1][0])) == \
        (("error", untagged[1].split(":")[0]) if untagged[0] == "error" else ("ok", untagged[1][0]))


def test_a_tool_loop_by_hand() -> None:
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "reasoning_content": "Ask.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "assistant", "content": "It is sunny."},
    ]
    spans = FMT.render_spans(messages, None, True)
    texts = [[spans.text[a:b] for a, b in ranges] for ranges in spans.messages]
    assert texts == [
        ["Weather?"],
        ['<|channel>thought\nAsk.\n<channel|><|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>'
         "<|tool_response>"],
        ['response:get_weather{value:<|"|>sunny<|"|>}<tool_response|>'],
        ["It is sunny.<turn|>"],
    ]
    assert [spans.text[a:b] for a, b in spans.generated] == [texts[1][0], texts[3][0]]


USER = {"role": "user", "content": "hi"}
# tool_responses (not among the drop oracle's fields: its entries' own keys are structure, not text),
# and a leading system message's list items that are no object: by hand, the oracle's output compared.
LOSSES = [
    ([{"role": "system", "content": "s", "tool_responses": [{"name": "n", "response": "SECRET"}]}, USER],
     ("messages[0].tool_responses",)),
    ([USER, {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": {}}}]},
      {"role": "tool", "tool_call_id": "a", "content": "r", "tool_responses": [{"name": "n", "response": "x"}]}],
     ("messages[2].tool_responses",)),
    ([USER, {"role": "assistant", "tool_responses": {"name": "SECRET"}}], ("messages[1].tool_responses",)),
    ([USER, {"role": "assistant", "tool_responses": "SECRET"}], ("messages[1].tool_responses",)),
    ([USER, {"role": "assistant", "tool_responses": ["SECRET", {"name": "n", "response": {"k": "v"}}]}],
     ("messages[1].tool_responses[0]",)),
    ([USER, {"role": "assistant", "tool_responses": [{"name": "n", "response": "r", "content": "SECRET"}]}],
     ("messages[1].tool_responses[0]",)),
    ([USER, {"role": "assistant", "tool_responses": [{"name": 0, "response": "r"}]}],
     ("messages[1].tool_responses[0]",)),
    ([{"role": "system", "content": [["SECRET"], 5, {"SECRET": 1}, {"type": "text", "text": "kept"}]}, USER],
     ("messages[0].content[0]", "messages[0].content[1]", "messages[0].content[2]")),
]


@pytest.mark.parametrize(("messages", "expected"), LOSSES)
def test_losses_by_hand(messages: list[Any], expected: tuple[str, ...]) -> None:
    rendered = FMT.render_spans(messages, None, True)
    assert rendered.dropped == expected
    found = render_jinja_as_transformers(TEMPLATE, messages, None, True, bos_token="<bos>")
    assert found == ("ok", rendered.text) and "SECRET" not in rendered.text
