"""What the token-id tests share: the tokenizers' training corpus, the ChatML tokenizers, and the
hypothesis harnesses that compare ours with transformers' ``apply_chat_template``.

The corpus is the tagged templates' own text (rendered by transformers, tests/support/spans_oracle.py)
of one tool-using conversation, with the strategies' fragments, so the trained BPE has merges for the
markers and the generated text alike. Expected values are always transformers' own.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import jinja2
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.hf_tokenizers import CHATML_ADDED, CHATML_SPECIAL, build_tokenizer
from tests.support.oracles import fixture_text
from tests.support.spans_oracle import TAGGED, fixed_today, outcome
from tests.support.strategies import EXAMPLES, FRAGMENTS, chatml_options, conversation, tools

CHATML_TEMPLATES = ["chatml_multi_system.jinja", "chatml_upstream.jinja"]
KINDS = ["words", "merged"]
token_settings = settings(max_examples=max(50, EXAMPLES // 4), deadline=None)

# The tokenizers' training conversation: a tool call, its result, reasoning, a follow-up question.
TRAINING_CONVERSATION = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "What is the weather in Oslo today?"},
    {"role": "assistant", "content": "Let me check.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"role": "tool", "content": "sunny, 21 degrees"},
    {"role": "assistant", "content": "It is sunny.", "reasoning_content": "The tool said sunny."},
    {"role": "user", "content": "Thanks! And tomorrow?"},
]


def corpus(templates: list[str]) -> list[str]:
    """Training texts: the fragments, and the training conversation as each tagged template renders it."""
    texts = ["".join(f for f in FRAGMENTS if f != "\ud800") * 3]
    for template, messages in itertools.product(templates, [TRAINING_CONVERSATION]):
        with fixed_today():
            result = outcome(TAGGED[template], messages, None, True)
        texts.extend([result[1][0]] * 10)
    return texts


def chatml_tokenizers(**options: Any) -> dict[str, Any]:
    """The ChatML ``PreTrainedTokenizerFast`` of each kind (``build_tokenizer``'s options passed on)."""
    return {kind: build_tokenizer(corpus(CHATML_TEMPLATES), CHATML_SPECIAL, tuple(CHATML_ADDED), kind, **options)
            for kind in KINDS}


def chatml_case(tokenizers: dict[str, Any], kind: str, name: str, config: dict[str, Any], template: str) -> Any:
    """``(format, tokenizer, tagged template text)`` of one parametrized ChatML case."""
    return pf.get_format(name, **config), tokenizers[kind], fixture_text(TAGGED[template])


def has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def tokenizable_spans(fmt: Any, messages: Any, tool_list: Any, gen: bool, opts: dict[str, Any]) -> pf.RenderedPrompt:
    """``fmt.render_spans`` of a generated case; hypothesis rejects the case where the template raises
    or the text holds a lone surrogate (the tokenizer refuses it)."""
    try:
        rendered: pf.RenderedPrompt = fmt.render_spans(messages, tool_list, gen, **opts)
    except pf.FormatError:
        assume(False)
    assume(not has_surrogate(rendered.text))
    return rendered


def transformers_result(tokenizer: Any, tagged: str, messages: Any, tool_list: Any, gen: bool, **options: Any) -> Any:
    """transformers' ids and masks of a conversation on the tagged template, as a dict."""
    return dict(tokenizer.apply_chat_template(
        messages, tools=tool_list, chat_template=tagged, add_generation_prompt=gen, tokenize=True,
        return_dict=True, return_assistant_tokens_mask=True, **options,
    ))


def check_chatml_spans(fmt: pf.ChatFormat, check: Callable[..., None], run: settings = token_settings) -> None:
    """Run ``check(rendered, messages, tools, gen, options)`` on generated conversations the format
    renders (``fmt.render_spans``), without lone surrogates (the tokenizer refuses them)."""

    @run
    @given(conversation(), tools, st.booleans(), chatml_options)
    def each(messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> None:
        try:
            rendered = fmt.render_spans(messages, tool_list, gen, **options)
        except pf.FormatError:
            assume(False)
        assume(not has_surrogate(rendered.text))
        check(rendered, messages, tool_list, gen, options)

    each()


def both(ours: Any, theirs: Any) -> tuple[Any, Any]:
    """Each call's result, or its error as ("error", message); the template's raise_exception is
    our TemplateError with the same message."""

    def run(call: Any, errors: tuple[type[BaseException], ...]) -> Any:
        try:
            return call()
        except errors as exc:
            return ("error", str(exc))

    return run(ours, (pf.FormatError,)), run(theirs, (jinja2.TemplateError, TypeError, ValueError))


def check_masked_batches(ours: Callable[..., Any], tokenizer: Any, tagged: str, run: settings = token_settings) -> None:
    """Generated conversations (one, or a batch of up to three) through ``ours(conversations,
    **kwargs)`` and transformers' ``tokenizer.apply_chat_template`` on the tagged template, masks
    asked for: equal dicts, or the same error (a lone surrogate excepted: transformers' message is the
    tokenizer's, ours names the place)."""

    def theirs(conversations: Any, **kwargs: Any) -> Any:
        return tokenizer.apply_chat_template(conversations, chat_template=tagged, **kwargs)

    @run
    @given(st.lists(conversation(), min_size=1, max_size=3), tools, st.booleans(), chatml_options, st.booleans())
    def each(batch: list[Any], tool_list: Any, gen: bool, options: dict[str, Any], batched: bool) -> None:
        conversations = batch if batched else batch[0]
        kwargs = dict(tools=tool_list, add_generation_prompt=gen, return_assistant_tokens_mask=True, **options)
        mine, reference = both(lambda: ours(conversations, **kwargs), lambda: theirs(conversations, **kwargs))
        if isinstance(reference, tuple) and isinstance(mine, tuple):
            if not reference[1].startswith("TextEncodeInput"):
                assert mine == reference
            return
        assert not isinstance(mine, tuple) and not isinstance(reference, tuple), (mine, reference)
        assert dict(mine) == dict(reference)

    each()
