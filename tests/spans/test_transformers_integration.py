"""prompt_formats.integrations.transformers against transformers' own apply_chat_template.

Tokenizers are real fast tokenizers trained in the test (tests/support/hf_tokenizers.py). ``encode`` is
checked on prompts built from the oracle's own text and generation indices (the tagged templates,
tests/support/spans_oracle.py), so these tests do not depend on our renderers; ``apply_chat_template`` is
checked with the real formats where no masks are asked for, and with a stand-in format whose
``render_spans`` is the oracle where they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.format.spans import normalize_ranges
from prompt_formats.integrations.transformers import apply_chat_template, assistant_token_mask, encode
from tests.support import token_cases
from tests.support.hf_tokenizers import CHATML_ADDED, CHATML_SPECIAL, HARMONY_SPECIAL, build_tokenizer
from tests.support.oracles import fixture_text
from tests.support.spans_oracle import TAGGED, fixed_today, gpt_kwargs, gpt_oss_conversation, gpt_tools, outcome
from tests.support.strategies import chatml_options, conversation, lax_tools, tools
from tests.support.token_cases import (
    CHATML_TEMPLATES,
    KINDS,
    TRAINING_CONVERSATION,
    both,
    check_masked_batches,
    corpus,
    token_settings,
)

CHATML = CHATML_TEMPLATES
integration_settings = token_settings


@pytest.fixture(scope="module")
def chatml_tokenizers() -> dict[str, Any]:
    return token_cases.chatml_tokenizers()


@pytest.fixture(scope="module")
def harmony_tokenizers() -> dict[str, Any]:
    return {kind: build_tokenizer(corpus(["gpt_oss.jinja"]), HARMONY_SPECIAL, (), kind) for kind in KINDS}


def without_none(messages: list[Any]) -> list[Any]:
    """What apply_chat_template renders: message dicts without their None values."""
    return [{k: v for k, v in m.items() if v is not None} if isinstance(m, dict) else m for m in messages]


def check_encode(tokenizer: Any, template: str, messages: list[Any], tool_list: Any, gen: bool, **kwargs: Any) -> None:
    result = outcome(TAGGED[template], without_none(messages), tool_list, gen, **kwargs)
    assume(result[0] == "ok")
    text, indices = result[1]
    rendered = pf.RenderedPrompt(text, tuple(() for _ in messages), normalize_ranges(indices))
    try:
        expected = tokenizer.apply_chat_template(
            messages,
            tools=tool_list,
            chat_template=fixture_text(TAGGED[template]),
            add_generation_prompt=gen,
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
            **kwargs,
        )
    except TypeError:  # a lone surrogate, which the tokenizer refuses
        assert any("\ud800" <= ch <= "\udfff" for ch in text)
        with pytest.raises(pf.InvalidInputError, match=r"^text: a lone surrogate at character"):
            encode(rendered, tokenizer)
        return
    got = encode(rendered, tokenizer)
    assert got == dict(expected)
    assert (1 in got["assistant_masks"]) == bool(rendered.generated)


@pytest.mark.transformers
@pytest.mark.jinja
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("template", CHATML)
def test_encode_chatml_equals_transformers(chatml_tokenizers: dict[str, Any], template: str, kind: str) -> None:
    @integration_settings
    @given(conversation(), st.one_of(tools, lax_tools), st.booleans(), chatml_options)
    def check(messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> None:
        check_encode(chatml_tokenizers[kind], template, messages, tool_list, gen, **options)

    check()


@pytest.mark.transformers
@pytest.mark.jinja
@pytest.mark.parametrize("kind", KINDS)
def test_encode_gpt_oss_equals_transformers(harmony_tokenizers: dict[str, Any], kind: str) -> None:
    @integration_settings
    @given(gpt_oss_conversation(), st.one_of(st.none(), gpt_tools), st.booleans(), gpt_kwargs)
    def check(messages: list[Any], tool_list: Any, gen: bool, kwargs: dict[str, Any]) -> None:
        with fixed_today():
            check_encode(harmony_tokenizers[kind], "gpt_oss.jinja", messages, tool_list, gen, **kwargs)

    check()


def test_assistant_token_mask_by_hand() -> None:
    # Offsets in order, as a tokenizer gives them. A token counts when it shares a character with a
    # range; a token with empty offsets only when strictly inside one.
    generated = ((3, 6), (8, 9))
    offsets = [(0, 2), (2, 4), (4, 4), (5, 7), (6, 6), (6, 8), (8, 8), (8, 9), (9, 12)]
    assert assistant_token_mask(offsets, generated) == [0, 1, 1, 1, 0, 0, 0, 1, 0]
    assert [assistant_token_mask([pair], ((3, 6),)) for pair in [(3, 3), (4, 4), (6, 6)]] == [[0], [1], [0]]
    assert assistant_token_mask([(0, 1)], ()) == [0]


@pytest.mark.transformers
@pytest.mark.jinja
def test_encode_refuses_what_is_not_a_rendered_prompt(chatml_tokenizers: dict[str, Any]) -> None:
    with pytest.raises(pf.InvalidInputError, match=r"^rendered: expected a RenderedPrompt, got str"):
        encode("text", chatml_tokenizers["words"])  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------
# apply_chat_template


@pytest.mark.transformers
@pytest.mark.jinja
@pytest.mark.parametrize("template", CHATML)
def test_apply_chat_template_equals_transformers(chatml_tokenizers: dict[str, Any], template: str) -> None:
    tokenizer = chatml_tokenizers["merged"]
    reference = fixture_text(template)

    @integration_settings
    @given(
        conversation(),
        tools,
        st.booleans(),
        chatml_options,
        st.sampled_from([(False, False), (True, True), (True, False)]),
    )
    def check(messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any], mode: tuple[bool, bool]) -> None:
        tokenize, return_dict = mode
        kwargs = dict(
            tools=tool_list,
            chat_template=reference,
            add_generation_prompt=gen,
            tokenize=tokenize,
            return_dict=return_dict,
            **options,
        )
        ours, theirs = both(
            lambda: apply_chat_template(tokenizer, messages, **kwargs),
            lambda: tokenizer.apply_chat_template(messages, **kwargs),
        )
        if isinstance(theirs, tuple) and isinstance(ours, tuple):
            if not theirs[1].startswith("TextEncodeInput"):  # a lone surrogate: ours names it instead
                assert ours == theirs
            return
        assert (dict(ours) if return_dict else ours) == (dict(theirs) if return_dict else theirs)

    check()


class TaggedOracleFormat(pf.ChatFormat):
    """A stand-in format whose render and render_spans are the oracle (transformers on the reference
    and the tagged template): it tests apply_chat_template's plumbing apart from our renderers."""

    name = "oracle"
    options: ClassVar[Mapping[str, str]] = dict.fromkeys(
        [
            "enable_thinking",
            "preserve_thinking",
            "add_vision_id",
            "reasoning_effort",
            "model_identity",
            "builtin_tools",
        ],
        "",
    )

    def __init__(self, template: str) -> None:
        self.template = template

    def render(self, messages: Any, tools: Any = None, add_generation_prompt: bool = False, **options: Any) -> str:
        return self.render_spans(messages, tools, add_generation_prompt, **options).text

    def render_spans(
        self, messages: Any, tools: Any = None, add_generation_prompt: bool = False, **options: Any
    ) -> pf.RenderedPrompt:
        self.check_options(options)
        result = outcome(TAGGED[self.template], messages, tools, add_generation_prompt, **options)
        if result[0] == "error":
            raise pf.TemplateError(result[1].partition(": ")[2])
        text, indices = result[1]
        return pf.RenderedPrompt(text, tuple(() for _ in messages), normalize_ranges(indices))


@pytest.mark.transformers
@pytest.mark.jinja
@pytest.mark.parametrize("template", CHATML)
def test_apply_chat_template_masks_equal_transformers(chatml_tokenizers: dict[str, Any], template: str) -> None:
    tokenizer = chatml_tokenizers["words"]
    stand_in = TaggedOracleFormat(template)
    tagged = fixture_text(TAGGED[template])
    check_masked_batches(lambda conversations, **kwargs: apply_chat_template(
        tokenizer, conversations, format=stand_in, **kwargs), tokenizer, tagged)


@pytest.mark.transformers
@pytest.mark.jinja
def test_apply_chat_template_masks_as_arrays(chatml_tokenizers: dict[str, Any]) -> None:
    tokenizer = chatml_tokenizers["merged"]
    template = CHATML[0]
    kwargs: dict[str, Any] = dict(return_assistant_tokens_mask=True, return_tensors="np", padding=True)
    batch = [TRAINING_CONVERSATION, TRAINING_CONVERSATION[:2]]
    ours = apply_chat_template(tokenizer, batch, format=TaggedOracleFormat(template), **kwargs)
    theirs = tokenizer.apply_chat_template(batch, chat_template=fixture_text(TAGGED[template]), **kwargs)
    assert ours.keys() == theirs.keys() == {"input_ids", "attention_mask", "assistant_masks"}
    for key in theirs:
        assert ours[key].tolist() == theirs[key].tolist()
    assert ours["assistant_masks"].sum() > 0


CONTINUE_CASES = [
    ([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello, I am"}], True),
    ([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello "}], True),  # the template trims
    ([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": [{"type": "text", "text": "Part"}]}], True),
    (
        [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "", "reasoning_content": "Let me"}],
        "reasoning_content",
    ),
    ([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "x", "reasoning": "Let me"}], "reasoning"),
    ([{"role": "user", "content": "Hi"}, {"role": "assistant"}], True),  # nothing to continue
    ([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": [{"type": "image"}]}], True),
    ([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "x"}], "name"),  # not a field it reads
]


@pytest.mark.transformers
@pytest.mark.jinja
@pytest.mark.parametrize("template", CHATML)
@pytest.mark.parametrize(("messages", "field"), CONTINUE_CASES)
def test_continue_final_message_equals_transformers(
    chatml_tokenizers: dict[str, Any], template: str, messages: list[Any], field: Any
) -> None:
    tokenizer = chatml_tokenizers["words"]
    kwargs = dict(chat_template=fixture_text(template), continue_final_message=field, tokenize=False)
    ours, theirs = both(
        lambda: apply_chat_template(tokenizer, messages, **kwargs),
        lambda: tokenizer.apply_chat_template(messages, **kwargs),
    )
    assert ours == theirs


ARGUMENT_ERRORS = [
    dict(return_assistant_tokens_mask=True, tokenize=False),
    dict(return_assistant_tokens_mask=True, return_dict=False),
    dict(continue_final_message=True, add_generation_prompt=True),
    dict(continue_final_message=True, return_assistant_tokens_mask=True),
]


@pytest.mark.transformers
@pytest.mark.jinja
@pytest.mark.parametrize("kwargs", ARGUMENT_ERRORS)
def test_argument_errors_are_transformers_own(chatml_tokenizers: dict[str, Any], kwargs: dict[str, Any]) -> None:
    tokenizer = chatml_tokenizers["words"]
    messages = TRAINING_CONVERSATION[:2]
    template = fixture_text(TAGGED[CHATML[0]])
    with pytest.raises(ValueError) as theirs:
        tokenizer.apply_chat_template(messages, chat_template=template, **kwargs)
    with pytest.raises(pf.FormatError) as ours:
        apply_chat_template(tokenizer, messages, format=TaggedOracleFormat(CHATML[0]), **kwargs)
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(pf.FormatError, match=r"^Cannot apply chat template to an empty conversation"):
        apply_chat_template(tokenizer, [], format="chatml-multi-system")


@pytest.mark.transformers
@pytest.mark.jinja
def test_format_is_detected_from_the_tokenizers_own_template() -> None:
    tokenizer = build_tokenizer(corpus(CHATML), CHATML_SPECIAL, tuple(CHATML_ADDED))
    messages = [{"role": "user", "content": "Hi <|im_end|> there"}]
    for template in CHATML:
        tokenizer.chat_template = fixture_text(template)
        # chatml-safety is used as the template renders (policy "allow"): the token is kept as it is.
        assert apply_chat_template(tokenizer, messages, tokenize=False) == tokenizer.apply_chat_template(
            messages, tokenize=False
        )
    tokenizer.chat_template = {"default": fixture_text(CHATML[0]), "tool_use": "{{ 'tools!' }}"}
    assert apply_chat_template(tokenizer, messages, tokenize=False) == tokenizer.apply_chat_template(
        messages, tokenize=False
    )
    with pytest.raises(
        pf.FormatError, match=r"^the chat template is not one a format of prompt_formats renders: not the"
    ):
        apply_chat_template(tokenizer, messages, tools=[], tokenize=False)  # picks "tool_use"
    tokenizer.chat_template = None
    with pytest.raises(pf.FormatError, match=r"chat template"):
        apply_chat_template(tokenizer, messages)
    assert apply_chat_template(tokenizer, messages, format="chatml-multi-system", tokenize=False).startswith(
        "<|im_start|>user\nHi"
    )


@pytest.mark.transformers
@pytest.mark.jinja
def test_unsupported_arguments_are_refused(chatml_tokenizers: dict[str, Any]) -> None:
    tokenizer = chatml_tokenizers["words"]
    messages = TRAINING_CONVERSATION[:2]
    with pytest.raises(pf.FormatError, match=r"^sanitize_control_tokens is not supported"):
        apply_chat_template(tokenizer, messages, format="chatml-multi-system", sanitize_control_tokens=True)
    with pytest.raises(pf.UnknownOptionError):
        apply_chat_template(tokenizer, messages, format="chatml-multi-system", bos_token="<s>")
    with pytest.raises(pf.FormatError, match=r"has no render_spans"):
        apply_chat_template(tokenizer, messages, format=_NoSpans(), return_assistant_tokens_mask=True)
    with pytest.raises(pf.InvalidInputError, match=r"^tokenizer_kwargs: padding: given"):
        apply_chat_template(tokenizer, messages, format="chatml-multi-system", tokenizer_kwargs={"padding": True})


@pytest.mark.transformers
@pytest.mark.jinja
def test_none_values_are_dropped_as_transformers_drops_them(harmony_tokenizers: dict[str, Any]) -> None:
    # gpt-oss's template tests `"content" in message`: a present None content would fail inside it.
    tokenizer = harmony_tokenizers["words"]
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    ]
    kwargs: dict[str, Any] = dict(add_generation_prompt=True, return_assistant_tokens_mask=True)
    with fixed_today():
        theirs = tokenizer.apply_chat_template(messages, chat_template=fixture_text(TAGGED["gpt_oss.jinja"]), **kwargs)
        ours = apply_chat_template(tokenizer, messages, format=TaggedOracleFormat("gpt_oss.jinja"), **kwargs)
    assert dict(ours) == dict(theirs) and 1 in ours["assistant_masks"]


class _NoSpans(pf.ChatFormat):
    """A format without render_spans (every package format has one)."""

    name = "no-spans"

    def render(self, messages: Any, tools: Any = None, add_generation_prompt: bool = False, **options: Any) -> str:
        return "x"
