"""ChatML token ids and masks: ``encode(fmt.render_spans(...))`` and ``apply_chat_template(...,
return_assistant_tokens_mask=True)`` against transformers' ``apply_chat_template`` on the tagged
templates (tests/support/spans_oracle.py), with real BPE tokenizers trained in the test
(tests/support/token_cases.py, tests/support/hf_tokenizers.py).

Expected values are transformers' own, on the tagged copies of the reference templates.
"""

from __future__ import annotations

from typing import Any

import pytest

import prompt_formats as pf
from tests.support import token_cases
from tests.support.oracles import fixture_text
from tests.support.spans_oracle import TAGGED
from tests.support.token_cases import chatml_case, check_chatml_spans, check_masked_batches, transformers_result

pytestmark = [pytest.mark.transformers]

CASES = [
    ("chatml-multi-system", {}, "chatml_multi_system.jinja"),
    ("chatml-safety", {"policy": "allow"}, "chatml_upstream.jinja"),
]


@pytest.fixture(scope="module")
def chatml_tokenizers() -> dict[str, Any]:
    return token_cases.chatml_tokenizers()


@pytest.mark.parametrize("kind", ["words", "merged"])
@pytest.mark.parametrize(("name", "config", "template"), CASES)
def test_encode_render_spans_equals_apply_chat_template(
    chatml_tokenizers: dict[str, Any], name: str, config: dict[str, Any], template: str, kind: str
) -> None:
    from prompt_formats.integrations.transformers import encode

    fmt, tokenizer, tagged = chatml_case(chatml_tokenizers, kind, name, config, template)

    def check(rendered: pf.RenderedPrompt, messages: Any, tool_list: Any, gen: bool, options: Any) -> None:
        got = encode(rendered, tokenizer)
        assert got == transformers_result(tokenizer, tagged, messages, tool_list, gen, **options)
        assert (1 in got["assistant_masks"]) == bool(rendered.generated)

    check_chatml_spans(fmt, check)


@pytest.mark.parametrize("template", ["chatml_multi_system.jinja", "chatml_upstream.jinja"])
def test_apply_chat_template_masks_with_the_real_format(chatml_tokenizers: dict[str, Any], template: str) -> None:
    """The format is detected from the reference template; transformers renders the tagged one."""
    from prompt_formats.integrations.transformers import apply_chat_template

    tokenizer = chatml_tokenizers["words"]
    reference = fixture_text(template)
    tagged = fixture_text(TAGGED[template])
    check_masked_batches(lambda conversations, **kwargs: apply_chat_template(
        tokenizer, conversations, chat_template=reference, **kwargs), tokenizer, tagged)
