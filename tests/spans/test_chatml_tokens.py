"""ChatML token ids and masks: ``encode(fmt.render_spans(...))`` and ``apply_chat_template(...,
return_assistant_tokens_mask=True)`` against transformers' ``apply_chat_template`` on the tagged
templates (tests/spans_oracle.py), with real BPE tokenizers trained in the test (tests/hf_tokenizers.py).

Expected values are transformers' own, on the tagged copies of the reference templates.
"""

from __future__ import annotations

from typing import Any

import jinja2
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.oracles import fixture_text
from tests.support.spans_oracle import TAGGED
from tests.support.strategies import EXAMPLES, chatml_options, conversation, tools

CASES = [
    ("chatml-multi-system", {}, "chatml_multi_system.jinja"),
    ("chatml-safety", {"policy": "allow"}, "chatml_upstream.jinja"),
]
token_settings = settings(max_examples=max(50, EXAMPLES // 4), deadline=None)


@pytest.fixture(scope="module")
def chatml_tokenizers() -> dict[str, Any]:
    from tests.spans.test_transformers_integration import CHATML, KINDS, corpus
    from tests.support.hf_tokenizers import CHATML_ADDED, CHATML_SPECIAL, build_tokenizer

    return {kind: build_tokenizer(corpus(CHATML), CHATML_SPECIAL, tuple(CHATML_ADDED), kind) for kind in KINDS}


def has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


@pytest.mark.parametrize("kind", ["words", "merged"])
@pytest.mark.parametrize(("name", "config", "template"), CASES)
def test_encode_render_spans_equals_apply_chat_template(
    chatml_tokenizers: dict[str, Any], name: str, config: dict[str, Any], template: str, kind: str
) -> None:
    from prompt_formats.integrations.transformers import encode

    fmt = pf.get_format(name, **config)
    tokenizer = chatml_tokenizers[kind]
    tagged = fixture_text(TAGGED[template])

    @token_settings
    @given(conversation(), tools, st.booleans(), chatml_options)
    def check(messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> None:
        try:
            rendered = fmt.render_spans(messages, tool_list, gen, **options)
        except pf.FormatError:
            assume(False)
        assume(not has_surrogate(rendered.text))  # the tokenizer refuses lone surrogates
        expected = tokenizer.apply_chat_template(
            messages, tools=tool_list, chat_template=tagged, add_generation_prompt=gen, tokenize=True,
            return_dict=True, return_assistant_tokens_mask=True, **options,
        )
        got = encode(rendered, tokenizer)
        assert got == dict(expected)
        assert (1 in got["assistant_masks"]) == bool(rendered.generated)

    check()


@pytest.mark.parametrize("template", ["chatml_multi_system.jinja", "chatml_upstream.jinja"])
def test_apply_chat_template_masks_with_the_real_format(chatml_tokenizers: dict[str, Any], template: str) -> None:
    """The format is detected from the reference template; transformers renders the tagged one."""
    from prompt_formats.integrations.transformers import apply_chat_template

    tokenizer = chatml_tokenizers["words"]
    reference = fixture_text(template)
    tagged = fixture_text(TAGGED[template])

    @token_settings
    @given(st.lists(conversation(), min_size=1, max_size=3), tools, st.booleans(), chatml_options, st.booleans())
    def check(batch: list[Any], tool_list: Any, gen: bool, options: dict[str, Any], batched: bool) -> None:
        conversations = batch if batched else batch[0]
        kwargs = dict(tools=tool_list, add_generation_prompt=gen, return_assistant_tokens_mask=True, **options)
        try:
            theirs: Any = dict(tokenizer.apply_chat_template(conversations, chat_template=tagged, **kwargs))
        except (jinja2.TemplateError, TypeError, ValueError) as exc:
            theirs = ("error", str(exc))
        try:
            ours: Any = dict(apply_chat_template(tokenizer, conversations, chat_template=reference, **kwargs))
        except pf.FormatError as exc:
            ours = ("error", str(exc))
        if isinstance(theirs, tuple):
            assume(not theirs[1].startswith("TextEncodeInput"))  # a lone surrogate: ours names it instead
        assert ours == theirs
        if not isinstance(ours, tuple):
            masks = ours["assistant_masks"]
            assert isinstance(masks, list)

    check()
