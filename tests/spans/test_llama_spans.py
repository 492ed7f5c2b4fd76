"""Llama 3.1's and 3.2's ``render_spans``: the text, the generated ranges, each message's ranges, the losses.

- the text is ``render``'s and the template's;
- ``generated`` is what transformers' generation indices say on the tagged copies of the templates
  (``tests/fixtures/families/llama3_1_generation.jinja``, ``llama3_2_generation.jinja``: an
  assistant message's turn after its header up to and including its end marker — its text, or its
  one call), under every policy, and the tagged copies render the templates' text;
- each message's ranges hold exactly the text the template writes of it;
- ``dropped`` is exactly what the template leaves out, by the Jinja2 oracle alone
  (``tests/support/drops.py``), and ``strict=True`` refuses it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support import llama_strategies as ls
from tests.support.drops import assert_dropped_exactly
from tests.support.oracles import render_jinja_as_transformers
from tests.support.spans_oracle import TAGGED, expected_generated, outcome
from tests.support.strategies import differential_settings, lax_tools, tools

pytestmark = [pytest.mark.jinja]

NAMES = sorted(ls.TEMPLATES)
POLICIES = ["all", "last", "after_last_user"]


def dated(options: dict[str, Any]) -> dict[str, Any]:
    """The options with a date (3.2's default is today's, which the tagged oracle reads from the clock)."""
    return {"date_string": ls.DATE, **options}


@pytest.mark.parametrize("name", NAMES)
@differential_settings
@given(data=st.data(), messages=ls.conversation(), tool_list=st.one_of(st.none(), tools), gen=st.booleans(),
       policy=st.sampled_from(POLICIES))
def test_render_spans_equals_transformers(name: str, data: st.DataObject, messages: list[Any], tool_list: Any,
                                          gen: bool, policy: str) -> None:
    fmt = pf.get_format(name)
    options = dated(data.draw(ls.options(name), label="options"))
    expected = outcome(TAGGED[ls.TEMPLATES[name]], messages, tool_list, gen, **{"bos_token": ls.BOS, **options})
    try:
        rendered = fmt.render_spans(messages, tool_list, gen, generated=policy, **options)
    except pf.TemplateError as exc:
        assert expected == ("error", f"TemplateError: {exc}")
        return
    except pf.InvalidInputError as exc:
        assert expected[0] == "error" and expected[1].startswith(("TypeError: ", "UndefinedError: ")), expected
        assert exc.path.startswith(("messages", "tools", "builtin_tools"))
        return
    assert expected[0] == "ok", expected
    text, indices = expected[1]
    assert rendered.text == text == fmt.render(messages, tool_list, gen, **options)
    folded = 1 if messages and messages[0].get("role") == "system" else 0
    folds = options.get("tools_in_user_message", True) is not False and options.get("tools_in_user_message", True) \
        and options.get("custom_tools", tool_list) is not None
    roles = [message.get("role") if not (folds and i == folded) else "" for i, message in enumerate(messages)]
    assert rendered.generated == expected_generated(roles, indices, policy)
    for i, message in enumerate(messages):
        found = [rendered.text[a:b] for a, b in rendered.messages[i]]
        assert found == written(message, i, folded, bool(folds), options), (i, found)


def written(message: dict[str, Any], index: int, folded: int, folds: bool, options: dict[str, Any]) -> list[str]:
    """What the template writes of a message (computed from the input, as the template's text says)."""
    content = message.get("content")
    text = "" if content is None else content.strip() if isinstance(content, str) else str(content).strip()
    if index < folded or (folds and index == folded):
        return [text] if text else []
    if message.get("tool_calls") is not None:
        function = message["tool_calls"][0]["function"]
        end = "<|eom_id|>" if "builtin_tools" in options else "<|eot_id|>"
        if "builtin_tools" in options and function["name"] in options["builtin_tools"]:
            pairs = ", ".join(f'{key}="{value}"' for key, value in function.get("arguments", {}).items())
            return [f"<|python_tag|>{function['name']}.call({pairs}){end}"]
        arguments = json.dumps(function["arguments"], ensure_ascii=False)
        return [f'{{"name": "{function["name"]}", "parameters": {arguments}}}{end}']
    if message.get("role") in ("tool", "ipython"):
        text = json.dumps(content, ensure_ascii=False) if isinstance(content, (str, list, dict)) else str(content)
        return [text]
    if message.get("role") == "assistant":
        return [text + "<|eot_id|>"]
    return [text] if text else []


@pytest.mark.parametrize("name", NAMES)
@differential_settings
@given(data=st.data(), messages=ls.conversation(), tool_list=st.one_of(st.none(), tools, lax_tools), gen=st.booleans())
def test_dropped_is_exactly_what_the_template_leaves_out(name: str, data: st.DataObject, messages: list[Any],
                                                         tool_list: Any, gen: bool) -> None:
    fmt = pf.get_format(name)
    options = dated(data.draw(ls.options(name), label="options"))
    if options.get("builtin_tools"):  # (the template branches on a call's name being one: the units must not)
        options["builtin_tools"] = ["no_such_tool"]

    def oracle(msgs: list[Any], tls: Any) -> str | None:
        found = render_jinja_as_transformers(ls.TEMPLATES[name], msgs, tls, gen, **ls.oracle_options(options))
        return found[1] if found is not None and found[0] == "ok" else None

    assume(oracle(messages, tool_list) is not None)
    rendered = fmt.render_spans(messages, tool_list, gen, **options)
    assert_dropped_exactly(oracle, messages, tool_list, rendered.dropped, string_items=True)
    if rendered.dropped:
        with pytest.raises(pf.InvalidInputError) as raised:
            fmt.render(messages, tool_list, gen, strict=True, **options)
        assert raised.value.path == rendered.dropped[0]
    else:
        assert fmt.render(messages, tool_list, gen, strict=True, **options) == rendered.text


@pytest.mark.parametrize("name", NAMES)
@differential_settings
@given(data=st.data(), messages=ls.conversation(), tool_list=st.one_of(st.none(), tools), gen=st.booleans())
def test_the_tagged_template_renders_the_reference_text(name: str, data: st.DataObject, messages: list[Any],
                                                        tool_list: Any, gen: bool) -> None:
    options = {"bos_token": ls.BOS, **dated(data.draw(ls.options(name), label="options"))}
    tagged = outcome(TAGGED[ls.TEMPLATES[name]], messages, tool_list, gen, **options)
    untagged = outcome(ls.TEMPLATES[name], messages, tool_list, gen, **options)
    # (an engine failure's message names the operands in the order the copy joins them)
    assert (("error", tagged[1].split(":")[0]) if tagged[0] == "error" else ("ok", tagged[1][0])) == \
        (("error", untagged[1].split(":")[0]) if untagged[0] == "error" else ("ok", untagged[1][0]))
    if tagged[0] == "ok":  # the tags where the definition says: after an assistant header, to an end marker
        text, indices = tagged[1]
        assert all(text[:a].endswith("<|start_header_id|>assistant<|end_header_id|>\n\n")
                   and text[:b].endswith(("<|eot_id|>", "<|eom_id|>")) for a, b in indices)
