"""gpt-oss render_spans against transformers on the tagged template (issue 16).

The oracle is transformers' own ``render_jinja_template(..., return_assistant_tokens_mask=True)`` on
``tests/fixtures/gpt_oss_generation.jinja`` (tests/support/spans_oracle.py), fed as ``apply_chat_template``
feeds it (``None`` values dropped). For every generated conversation of the differential tests'
strategies, under each ``generated=`` policy:

- ``.text`` is the oracle's text (and ``render``'s); where the template raises, both ``render`` and
  ``render_spans`` raise its message; any other error of ours is ``render``'s own, raised alike;
- ``.generated`` is ``prompt_formats.format.spans.select_generated`` over transformers' generation indices,
  each assistant message taking as many of them, in order, as the template writes Harmony messages
  for it (:func:`template_blocks`, read off the template's branches);
- message spans, by construction: the text before the first loop message is the oracle's own system
  and developer messages (the leading message's range is its content there); after it, every gap
  between ranges is made of the template's literal strings (``<|start|>user<|message|>`` cut after
  its author) and the names of calls (a result's author); each message's text appears verbatim in
  its ranges; messages land in order.

Expected values come only from transformers, json.dumps and the inputs, never from our renderer.
"""

from __future__ import annotations

import itertools
import json
from functools import cache
from typing import Any

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.format.spans import GENERATED_POLICIES, select_generated
from tests.support.gpt_oss_drops import message_holds_text
from tests.support.gpt_oss_strategies import conversation, options, tools
from tests.support.oracles import fixture_text, without_nones
from tests.support.spans_oracle import TAGGED, fixed_today, outcome
from tests.support.strategies import EXAMPLES, differential_settings
from tests.support.token_cases import tokenizable_spans

FMT = pf.get_format("gpt-oss")
TEMPLATE = TAGGED["gpt_oss.jinja"]
REASONING = ("thinking", "reasoning_content", "reasoning")
HEADERS = {"user": "<|start|>user", "assistant": "<|start|>assistant", "tool": "<|start|>functions."}


@cache
def template_literals() -> frozenset[str]:
    """Every literal string of the tagged template (raw text between tags and string constants)."""
    import jinja2.nodes
    from transformers.utils.chat_template_utils import _compile_jinja_template

    source = fixture_text(TEMPLATE)
    ast = _compile_jinja_template(source).environment.parse(source)
    literals = {node.data for node in ast.find_all(jinja2.nodes.TemplateData)}
    literals |= {node.value for node in ast.find_all(jinja2.nodes.Const) if isinstance(node.value, str)}
    return frozenset(literal for literal in literals if literal) | {"<|start|>user"}


def made_of(text: str, words: frozenset[str]) -> bool:
    """Whether ``text`` is a concatenation of ``words`` (word break, by dynamic programming)."""
    reachable = [True] + [False] * len(text)
    for end in range(1, len(text) + 1):
        reachable[end] = any(reachable[end - len(w)] and text.endswith(w, 0, end) for w in words if len(w) <= end)
    return reachable[-1]


def thinking(message: dict[str, Any]) -> Any:
    """The template's ``message.thinking`` after transformers' aliasing."""
    return next((message[key] for key in REASONING if message.get(key) is not None), None)


def template_blocks(messages: list[dict[str, Any]], gen: bool) -> list[int]:
    """Per message, how many ``{% generation %}`` blocks the template writes for it (its branches)."""
    loop_from = 1 if messages[0].get("role") in ("system", "developer") else 0
    blocks = [0] * len(messages)
    for i in range(loop_from, len(messages)):
        message = messages[i]
        if message.get("role") != "assistant":
            continue
        if "tool_calls" in message:
            future_final = any(m.get("role") == "assistant" and "tool_calls" not in m for m in messages[i + 1 :])
            analysis = message.get("content") or thinking(message)
            blocks[i] = 2 if analysis and not future_final else 1
        elif i == len(messages) - 1 and not gen:
            blocks[i] = 2 if thinking(message) is not None else 1
        else:
            blocks[i] = 1
    return blocks


def oracle_kwargs(opts: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in opts.items() if v is not None and k not in ("current_date", "decode_tool_arguments")}


def first_call(message: dict[str, Any]) -> dict[str, Any]:
    call = message["tool_calls"][0]
    return call["function"] if call.get("function") else call


def own_texts(message: dict[str, Any], blocks: int) -> list[str]:
    """Text of the message that must appear in its ranges."""
    role = message["role"]
    if role == "user":
        return [message["content"]]
    if role == "tool":
        return [json.dumps(message["content"], ensure_ascii=False)]
    if role != "assistant":
        return [message["content"]] if message.get("content") else []
    if "tool_calls" in message:
        call = first_call(message)
        texts = [" to=functions." + call["name"], json.dumps(call["arguments"], ensure_ascii=False)]
        if blocks == 2:
            texts.append(message.get("content") or thinking(message))
        return texts
    texts = [message["content"]]
    if blocks == 2:
        texts.append(thinking(message))
    return texts


def check_message_spans(rendered: pf.RenderedPrompt, fed: list[dict[str, Any]], blocks: list[int], gen: bool,
                        tool_list: Any, kwargs: dict[str, Any]) -> None:
    text = rendered.text
    assert len(rendered.messages) == len(fed)
    lead = fed[0].get("role") in ("system", "developer")
    # The system and developer messages, as the oracle writes them before a user message "Q".
    question = {"role": "user", "content": "Q"}
    probe = outcome(TEMPLATE, [*fed[:1], question] if lead else [question], tool_list, False, **kwargs)
    assert probe[0] == "ok", probe
    tail = "<|start|>user<|message|>Q<|end|>"
    assert probe[1][0].endswith(tail)
    prefix = probe[1][0][: -len(tail)]
    assert text.startswith(prefix)
    if lead:
        content = fed[0].get("content") or ""
        shown = content if isinstance(content, str) else str(content)  # the template prints what it is given
        assert [text[a:b] for a, b in rendered.messages[0]] == ([shown] if shown else [])
        assert all(b <= len(prefix) for _, b in rendered.messages[0])
    loop = [(i, ranges) for i, ranges in enumerate(rendered.messages)
            if not (lead and i == 0) and fed[i].get("role") in HEADERS]
    for i, ranges in enumerate(rendered.messages):  # a message of another role after the first: unwritten
        if not (lead and i == 0) and fed[i].get("role") not in HEADERS:
            assert ranges == ()
            assert (f"messages[{i}]" in rendered.dropped) == message_holds_text(fed[i])  # a loss if it held text
    for i, ranges in loop:
        assert ranges, i  # every loop message renders something
        header = HEADERS[fed[i]["role"]]
        assert text[: ranges[0][0]].endswith(header) or fed[i]["role"] == "tool"
        own = "".join(text[a:b] for a, b in ranges)
        for fragment in own_texts(fed[i], blocks[i]):
            assert fragment in own, (i, fragment)
    for (_, before), (_, after) in itertools.pairwise(loop):
        assert before[-1][1] <= after[0][0]
    calls = [m for m in fed if m.get("role") == "assistant" and "tool_calls" in m]
    words = template_literals() | {first_call(m)["name"] for m in calls}
    covered = sorted(pair for _, ranges in loop for pair in ranges)
    at = len(prefix)
    gaps = []
    for start, end in covered:
        gaps.append(text[at:start])
        at = end
    gaps.append(text[at:])
    for piece in gaps:
        assert made_of(piece, words), piece
    if gen:
        assert text.endswith("<|start|>assistant") and not any(b > len(text) - 18 for _, b in rendered.generated)


def ours(call: Any) -> Any:
    try:
        return ("ok", call())
    except pf.FormatError as exc:
        return ("error", type(exc).__name__, str(exc))


def check(messages: list[Any], tool_list: Any, gen: bool, opts: dict[str, Any]) -> None:
    opts = {**opts, "current_date": "2026-01-02"}
    kwargs = oracle_kwargs(opts)
    fed = without_nones(messages)
    text = ours(lambda: FMT.render(messages, tool_list, gen, **opts))
    try:
        with fixed_today():
            expected = outcome(TEMPLATE, fed, tool_list, gen, **kwargs)
    except (TypeError, jinja2.exceptions.UndefinedError):  # Jinja2 itself fails: ours names a field
        assert text[:2] == ("error", "InvalidInputError"), text
        return
    results = {p: ours(lambda p=p: FMT.render_spans(messages, tool_list, gen, generated=p, **opts))
               for p in GENERATED_POLICIES}
    for result in results.values():
        if text[0] == "error":
            assert result == text
        else:
            assert result[0] == "ok" and result[1].text == text[1]
    if text[0] == "error":
        if text[1] == "TemplateError":
            assert expected == ("error", f"TemplateError: {text[2]}")
        return  # our own refusals of input the template cannot take (tests/render/test_gpt_oss_examples.py)
    assert expected[0] == "ok", expected
    oracle_text, indices = expected[1]
    assert text[1] == oracle_text
    blocks = template_blocks(fed, gen)
    assert sum(blocks) == len(indices)
    per_message, taken = [], 0
    for count in blocks:
        per_message.append(indices[taken : taken + count])
        taken += count
    roles = [m["role"] for m in fed]
    for policy, (_, rendered) in results.items():
        assert rendered == pf.RenderedPrompt(rendered.text, rendered.messages, rendered.generated,
                                             rendered.dropped)  # its guarantees
        assert rendered.generated == select_generated(roles, per_message, policy)
    with fixed_today():
        check_message_spans(results["all"][1], fed, blocks, gen, tool_list, kwargs)


@pytest.mark.jinja
@differential_settings
@given(conversation(), tools, st.booleans(), options())
def test_render_spans_equals_transformers(messages: list[Any], tool_list: Any, gen: bool, opts: dict[str, Any]) -> None:
    check(messages, tool_list, gen, opts)


def test_render_spans_by_hand() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "thinking": "Need a tool.",
         "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
        {"role": "tool", "content": "sunny"},
        {"role": "assistant", "content": "Sunny.", "thinking": "Done."},
    ]
    rendered = FMT.render_spans(messages, current_date="2026-01-02")
    assert [[rendered.text[a:b] for a, b in ranges] for ranges in rendered.messages] == [
        ["Be brief."],
        ["<|message|>Weather?<|end|>"],
        [' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Oslo"}<|call|>'],
        [' to=assistant<|channel|>commentary<|message|>"sunny"<|end|>'],
        ["<|channel|>analysis<|message|>Done.<|end|>", "<|channel|>final<|message|>Sunny.<|return|>"],
    ]
    assert rendered.generated == rendered.messages[2] + rendered.messages[4]
    last = FMT.render_spans(messages[:3], add_generation_prompt=True, generated="last", current_date="2026-01-02")
    assert [last.text[a:b] for a, b in last.generated] == [
        "<|channel|>analysis<|message|>Need a tool.<|end|>",
        ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Oslo"}<|call|>',
    ]
    assert last.text.endswith("<|call|><|start|>assistant")
    empty = FMT.render_spans([{"role": "developer"}, {"role": "user", "content": "x"}], current_date="2026-01-02")
    assert empty.messages[0] == () and empty.generated == ()


@pytest.mark.parametrize("policy", ["first", None, 1, "ALL"])
def test_render_spans_refuses_an_unknown_policy(policy: Any) -> None:
    with pytest.raises(pf.InvalidInputError, match=r"^generated: expected one of"):
        FMT.render_spans([{"role": "user", "content": "hi"}], generated=policy, current_date="2026-01-02")


# ---------------------------------------------------------------------------------------------------
# Token ids and masks: encode(render_spans(...)) is transformers' apply_chat_template on the tagged template.

encode_settings = settings(max_examples=max(50, EXAMPLES // 4), deadline=None)


@pytest.fixture(scope="module")
def harmony_tokenizers() -> dict[str, Any]:
    from tests.support.hf_tokenizers import HARMONY_SPECIAL, build_tokenizer
    from tests.support.strategies import FRAGMENTS

    sample = [
        {"role": "user", "content": "What is the weather in Oslo today?"},
        {"role": "assistant", "thinking": "Need the tool.",
         "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
        {"role": "tool", "content": "sunny, 21 degrees"},
        {"role": "assistant", "content": "It is sunny.", "thinking": "The tool said sunny."},
    ]
    with fixed_today():
        text = outcome(TEMPLATE, sample, None, False)[1][0]
    corpus = ["".join(f for f in FRAGMENTS if f != "\ud800") * 3, *[text] * 10]
    return {kind: build_tokenizer(corpus, HARMONY_SPECIAL, (), kind) for kind in ("words", "merged")}


@pytest.mark.transformers
@pytest.mark.jinja
@pytest.mark.parametrize("kind", ["words", "merged"])
def test_encode_render_spans_equals_apply_chat_template(harmony_tokenizers: dict[str, Any], kind: str) -> None:
    from prompt_formats.integrations.transformers import encode

    tokenizer = harmony_tokenizers[kind]
    tagged = fixture_text(TEMPLATE)

    @encode_settings
    @given(conversation(), tools, st.booleans(), options())
    def check_tokens(messages: list[Any], tool_list: Any, gen: bool, opts: dict[str, Any]) -> None:
        opts = {**opts, "current_date": "2026-01-02"}
        rendered = tokenizable_spans(FMT, messages, tool_list, gen, opts)
        with fixed_today():
            expected = tokenizer.apply_chat_template(
                messages, tools=tool_list, chat_template=tagged, add_generation_prompt=gen, tokenize=True,
                return_dict=True, return_assistant_tokens_mask=True, **oracle_kwargs(opts),
            )
        got = encode(rendered, tokenizer)
        assert got == dict(expected)
        assert (1 in got["assistant_masks"]) == bool(rendered.generated)

    check_tokens()
