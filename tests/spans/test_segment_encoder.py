"""SegmentEncoder (prompt_formats.integrations.segments) against transformers' apply_chat_template.

On the generated conversations of the differential tests, the cached path's ``input_ids``,
``attention_mask`` and ``assistant_masks`` equal transformers' on the tagged templates
(tests/support/spans_oracle.py) and the whole-text ``encode``'s, with the cache cold, warm (one
encoder for all examples) and evicting (bounds far below one prompt). Tokenizers whose
configuration couples stretches make the encoder step aside, still giving transformers' result.
Expected values are transformers' own.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.integrations import segments
from prompt_formats.integrations.segments import SegmentEncoder
from prompt_formats.integrations.transformers import encode, encode_with_tokenizer
from tests.support import gpt_oss_strategies, token_cases
from tests.support.hf_tokenizers import CHATML_ADDED, CHATML_SPECIAL, HARMONY_SPECIAL, build_tokenizer
from tests.support.oracles import fixture_text
from tests.support.spans_oracle import TAGGED, fixed_today
from tests.support.strategies import EXAMPLES, chatml_options, conversation, tools
from tests.support.token_cases import (
    CHATML_TEMPLATES,
    chatml_case,
    check_chatml_spans,
    corpus,
    has_surrogate,
    tokenizable_spans,
    transformers_result,
)

pytestmark = [pytest.mark.transformers]

CHATML = [("chatml-multi-system", {}, "chatml_multi_system.jinja"),
          ("chatml-safety", {"policy": "allow"}, "chatml_upstream.jinja")]
segment_settings = settings(max_examples=max(50, EXAMPLES // 4), deadline=None)
ADDED_IN_CONTENT = [
    {"role": "system", "content": "Write <|im_start|>user literally; <think>x</think> too."},
    {"role": "user", "content": "<tool_call>{\"name\": 1}</tool_call><|im_end|><|im_end|> <|im_start|>"},
    {"role": "assistant", "content": " <think> a</think>\n<|im_end|>x", "reasoning_content": "<tool_response>"},
    {"role": "user", "content": "<|start|>assistant<|message|>hi<|end|><|im_start|> a"},
]


def chatml_corpus() -> list[str]:
    return corpus(CHATML_TEMPLATES)


@pytest.fixture(scope="module")
def chatml_tokenizers() -> dict[str, Any]:
    return token_cases.chatml_tokenizers(offsets_prefix_space=False)


def encoders(tokenizer: Any, warm: SegmentEncoder) -> list[SegmentEncoder]:
    """Warm (shared), cold (new) and evicting (bounds far below a prompt) encoders."""
    return [warm, SegmentEncoder(tokenizer), SegmentEncoder(tokenizer, max_entries=2, max_chars=40)]


@pytest.mark.parametrize("kind", ["words", "merged"])
@pytest.mark.parametrize(("name", "config", "template"), CHATML)
def test_chatml_segments_equal_apply_chat_template(
    chatml_tokenizers: dict[str, Any], name: str, config: dict[str, Any], template: str, kind: str
) -> None:
    fmt, tokenizer, tagged = chatml_case(chatml_tokenizers, kind, name, config, template)
    warm = SegmentEncoder(tokenizer)
    assert warm.exact, warm.reason

    def check(rendered: pf.RenderedPrompt, messages: Any, tool_list: Any, gen: bool, options: Any) -> None:
        expected = transformers_result(tokenizer, tagged, messages, tool_list, gen, **options)
        assert encode(rendered, tokenizer) == expected
        for encoder in encoders(tokenizer, warm):
            assert encoder.encode(rendered) == expected
            assert encoder.encode(rendered) == expected  # the same prompt again, from the cache

    check_chatml_spans(fmt, check, segment_settings)
    bounded = SegmentEncoder(tokenizer, max_entries=2, max_chars=40)
    bounded.encode(fmt.render_spans(ADDED_IN_CONTENT + ADDED_IN_CONTENT[1:] * 3))
    assert bounded.cache_info()["entries"] <= 2 and bounded.cache_info()["chars"] <= 40


@pytest.fixture(scope="module")
def harmony_tokenizers() -> dict[str, Any]:
    return {kind: build_tokenizer(corpus(["gpt_oss.jinja"]), HARMONY_SPECIAL, (), kind, offsets_prefix_space=False)
            for kind in ("words", "merged")}


@pytest.mark.parametrize("kind", ["words", "merged"])
def test_gpt_oss_segments_equal_apply_chat_template(harmony_tokenizers: dict[str, Any], kind: str) -> None:
    from tests.spans.test_gpt_oss_spans import oracle_kwargs

    fmt = pf.get_format("gpt-oss")
    tokenizer = harmony_tokenizers[kind]
    tagged = fixture_text(TAGGED["gpt_oss.jinja"])
    warm = SegmentEncoder(tokenizer.backend_tokenizer)  # the tokenizers.Tokenizer, as the command uses it
    assert warm.exact, warm.reason

    @segment_settings
    @given(gpt_oss_strategies.conversation(), gpt_oss_strategies.tools, st.booleans(), gpt_oss_strategies.options())
    def check(messages: list[Any], tool_list: Any, gen: bool, opts: dict[str, Any]) -> None:
        opts = {**opts, "current_date": "2026-01-02"}
        rendered = tokenizable_spans(fmt, messages, tool_list, gen, opts)
        with fixed_today():
            expected = transformers_result(tokenizer, tagged, messages, tool_list, gen, **oracle_kwargs(opts))
        assert encode_with_tokenizer(rendered, tokenizer.backend_tokenizer) == expected
        for encoder in encoders(tokenizer.backend_tokenizer, warm):
            assert encoder.encode(rendered) == expected
            assert encoder.encode(rendered) == expected

    check()


@pytest.mark.parametrize(("name", "config", "template"), CHATML)
def test_added_token_strings_in_content(
    chatml_tokenizers: dict[str, Any], name: str, config: dict[str, Any], template: str
) -> None:
    """Control tokens and tags written in content are split there by the tokenizer, and by the encoder."""
    tokenizer = chatml_tokenizers["words"]
    fmt = pf.get_format(name, **config)
    expected = transformers_result(tokenizer, fixture_text(TAGGED[template]), ADDED_IN_CONTENT, None, False)
    encoder = SegmentEncoder(tokenizer)
    rendered = fmt.render_spans(ADDED_IN_CONTENT)
    assert [encoder.encode(rendered) for _ in range(2)] == [expected, expected]
    assert sum(added for _, _, added in encoder.split(rendered.text)) >= 20


# Each message's content after a control token, all of it generated: the smallest tagged template.
PLAIN = "{% for m in messages %}<|im_start|>{% generation %}{{ m.content }}{% endgeneration %}{% endfor %}"


def plain(tokenizer: Any, contents: list[str]) -> tuple[pf.RenderedPrompt, Any]:
    """The prompt PLAIN renders and transformers' ids and masks of it."""
    from transformers.utils.chat_template_utils import render_jinja_template

    from prompt_formats.format.spans import normalize_ranges

    messages = [{"role": "user", "content": content} for content in contents]
    texts, indices = render_jinja_template(conversations=[messages], chat_template=PLAIN,
                                           return_assistant_tokens_mask=True)
    rendered = pf.RenderedPrompt(texts[0], tuple(() for _ in messages), normalize_ranges(indices[0]))
    return rendered, transformers_result(tokenizer, PLAIN, messages, None, False)


def forced(tokenizer: Any, monkeypatch: pytest.MonkeyPatch) -> SegmentEncoder:
    """An encoder that takes the cached path whatever the configuration (to show the refusal matters)."""
    with monkeypatch.context() as patch:
        patch.setattr(segments, "inexact_reason", lambda config, encode_special_tokens: None)
        return SegmentEncoder(tokenizer)


def coupled_tokenizers() -> dict[str, tuple[Any, list[str]]]:
    """Tokenizers whose configuration couples stretches, each with contents where that shows."""
    from tokenizers import AddedToken, normalizers

    words = chatml_corpus()
    trims_first = build_tokenizer(words, CHATML_SPECIAL, (), "words")  # ByteLevel offsets: first token spared
    lstrip = build_tokenizer(words, CHATML_SPECIAL, (), "words", offsets_prefix_space=False)
    lstrip.add_tokens([AddedToken("<mark>", lstrip=True, normalized=False)])
    lowercase = build_tokenizer(words, CHATML_SPECIAL, (), "words", offsets_prefix_space=False)
    # Lowercase alone would not show it: a stretch encoded alone still finds "<MARK>" as "<mark>".
    lowercase.backend_tokenizer.normalizer = normalizers.Sequence([normalizers.Lowercase(), normalizers.Prepend("_")])
    lowercase.add_tokens([AddedToken("<Mark>", normalized=True)])
    return {
        "post-processor": (trims_first, [" a", "b  c"]),
        "added token": (lstrip, ["x <mark> y", "<mark>"]),
        "normalized": (lowercase, ["X<MARK>Y", "<Mark> z", "a<mark>b"]),
    }


@pytest.mark.parametrize("case", ["post-processor", "added token", "normalized"])
def test_a_coupling_configuration_steps_aside(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    tokenizer, contents = coupled_tokenizers()[case]
    rendered, expected = plain(tokenizer, contents)
    encoder = SegmentEncoder(tokenizer)
    assert not encoder.exact and case in (encoder.reason or "")
    assert encoder.encode(rendered) == expected == encode(rendered, tokenizer)
    assert SegmentEncoder(tokenizer.backend_tokenizer).encode(rendered) == expected
    assert forced(tokenizer, monkeypatch).encode(rendered) != expected  # the refusal is needed


def test_a_tokenizer_changed_after_construction_steps_aside(chatml_tokenizers: dict[str, Any]) -> None:
    tokenizer = build_tokenizer(chatml_corpus(), CHATML_SPECIAL, tuple(CHATML_ADDED), offsets_prefix_space=False)
    backend = tokenizer.backend_tokenizer
    hf_encoder, backend_encoder = SegmentEncoder(tokenizer), SegmentEncoder(backend)
    tokenizer.add_tokens(["<mark>"])
    rendered, expected = plain(tokenizer, ["x<mark>y", " <think> "])
    assert hf_encoder.encode(rendered) == expected == backend_encoder.encode(rendered)
    backend.enable_truncation(3)
    with pytest.raises(pf.InvalidInputError, match="truncates or pads"):
        backend_encoder.encode(rendered)
    assert hf_encoder.encode(rendered) == expected  # transformers turns truncation off for its call


def test_pickled_and_errors(chatml_tokenizers: dict[str, Any]) -> None:
    backend = chatml_tokenizers["words"].backend_tokenizer
    encoder = SegmentEncoder(backend, max_entries=3)
    rendered, expected = plain(chatml_tokenizers["words"], ["one", "two <think> three"])
    assert encoder.encode(rendered) == expected
    copy = pickle.loads(pickle.dumps(encoder))
    assert copy.exact and copy.cache_info()["entries"] == 0
    assert copy.encode(rendered) == expected
    with pytest.raises(pf.InvalidInputError, match="lone surrogate"):
        encoder.encode(pf.RenderedPrompt("a\ud800", ((),), ()))
    with pytest.raises(pf.InvalidInputError, match="RenderedPrompt"):
        encoder.encode("text")  # type: ignore[arg-type]
    with pytest.raises(pf.InvalidInputError):
        SegmentEncoder(backend, max_entries=-1)


def test_split_as_the_tokenizer_splits() -> None:
    """Overlapping added tokens: leftmost-longest, the non-normalized ones first, then the others."""
    from tokenizers import AddedToken

    tokenizer = build_tokenizer(chatml_corpus(), CHATML_SPECIAL, (), "words", offsets_prefix_space=False)
    tokenizer.add_tokens([AddedToken("<a", normalized=False), AddedToken("<ab>", normalized=False),
                          AddedToken("b>c", normalized=False), AddedToken("<ab>cd", normalized=True),
                          AddedToken("cd", normalized=True)])
    contents = ["<ab>cd", "<a b>cd<ab", "x<ab>c", "<a<ab>b>cd", "<ab>cd<ab>c", "zb>cd<ab>"]
    rendered, expected = plain(tokenizer, contents)
    encoder = SegmentEncoder(tokenizer)
    assert encoder.exact, encoder.reason
    assert encoder.encode(rendered) == expected
    assert encoder.split("<ab>cd") == [(0, 4, True), (4, 6, True)]


def test_a_template_post_processor_is_exact() -> None:
    """TemplateProcessing (as transformers installs it, or with a BOS as Llama's) in a Sequence."""
    from tokenizers import processors

    tokenizer = build_tokenizer(chatml_corpus(), CHATML_SPECIAL, tuple(CHATML_ADDED), offsets_prefix_space=False)
    tokenizer.backend_tokenizer.post_processor = processors.Sequence([
        processors.ByteLevel(add_prefix_space=False, trim_offsets=True),
        processors.TemplateProcessing(single="<|im_start|> $A <|im_end|>", pair="$A $B:1",
                                      special_tokens=[("<|im_start|>", 0), ("<|im_end|>", 1)]),
    ])
    encoder = SegmentEncoder(tokenizer)
    assert encoder.exact, encoder.reason
    fmt = pf.get_format("chatml-multi-system")
    expected = transformers_result(tokenizer, fixture_text(TAGGED["chatml_multi_system.jinja"]), ADDED_IN_CONTENT,
                                   None, False)
    assert encoder.encode(fmt.render_spans(ADDED_IN_CONTENT)) == expected
    # Generated ranges ending on a stretch's trailing space (its token's trimmed offsets are empty, at the end).
    rendered, expected = plain(tokenizer, [" a", "b <think> c", "  ", "<think>  ", "a<think> b "])
    assert encoder.encode(rendered) == expected


@pytest.mark.parametrize("kind", ["words", "merged"])
@pytest.mark.parametrize(("name", "config", "template"), CHATML)
def test_follow_up_requests_equal_apply_chat_template(
    chatml_tokenizers: dict[str, Any], name: str, config: dict[str, Any], template: str, kind: str
) -> None:
    """One encoder for a conversation's growing prefixes, as an agent session sends them (each
    request starting with the one before, up to where the template renders it differently), and
    the same prompts with other generated ranges: transformers' result (``encode``'s for the
    policies the tagged template does not have)."""
    fmt, tokenizer, tagged = chatml_case(chatml_tokenizers, kind, name, config, template)

    @segment_settings
    @given(conversation(), tools, chatml_options)
    def check(messages: list[Any], tool_list: Any, options: dict[str, Any]) -> None:
        encoder = SegmentEncoder(tokenizer)
        for end in range(1, len(messages) + 1):
            try:
                rendered = fmt.render_spans(messages[:end], tool_list, False, **options)
            except pf.FormatError:
                continue
            if has_surrogate(rendered.text):
                continue
            expected = transformers_result(tokenizer, tagged, messages[:end], tool_list, False, **options)
            assert encoder.encode(rendered) == expected
            for policy in ("last", "after_last_user"):
                other = fmt.render_spans(messages[:end], tool_list, False, generated=policy, **options)
                assert encoder.encode(other) == encode(other, tokenizer)

    check()


def test_a_longer_added_token_past_the_shared_text() -> None:
    """A prompt that shares an earlier one's text up to just past an added token the earlier one
    ended there, where the new one continues into a longer added token: not taken from it."""
    from tokenizers import AddedToken

    tokenizer = build_tokenizer(chatml_corpus(), CHATML_SPECIAL, (), "words", offsets_prefix_space=False)
    tokenizer.add_tokens([AddedToken("<x>", normalized=False), AddedToken("<x>yz", normalized=False)])
    encoder = SegmentEncoder(tokenizer)
    assert encoder.exact, encoder.reason
    for contents in (["hello <x>y!"], ["hello <x>yz more"], ["hello <x>y!", "<x>"], ["hello <x>y!", "<x>yz"]):
        rendered, expected = plain(tokenizer, contents)
        assert encoder.encode(rendered) == expected, contents


def test_the_same_text_with_other_generated_ranges() -> None:
    """The same prompt again with different generated ranges: the ids again, the mask its own."""
    tokenizer = build_tokenizer(chatml_corpus(), CHATML_SPECIAL, (), "words", offsets_prefix_space=False)
    encoder = SegmentEncoder(tokenizer)
    rendered, expected = plain(tokenizer, ["one two", "three four", "five"])
    text, messages = rendered.text, rendered.messages
    variants = [rendered, pf.RenderedPrompt(text, messages, ()), pf.RenderedPrompt(text, messages, ((0, 3),)),
                pf.RenderedPrompt(text, messages, rendered.generated[:1]), rendered]
    assert encoder.encode(rendered) == expected
    for variant in variants:
        assert encoder.encode(variant) == encode(variant, tokenizer)
