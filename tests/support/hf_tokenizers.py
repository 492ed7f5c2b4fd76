"""Real fast tokenizers built offline for the tests: a small BPE trained on the test conversations.

Two pre-tokenizations, because the assistant mask depends on where tokens fall: ``"words"`` splits
like GPT-2 and Qwen (byte-level, the GPT-2 pattern), ``"merged"`` does not split at all, so tokens
cross the edges of generated ranges. Both trim whitespace from offsets (``trim_offsets=True``), which
gives some tokens empty offsets. The format's control tokens are special tokens; ChatML's tag-like
markers (``<think>``, ``<tool_call>``…) are added tokens, as in Qwen's tokenizer.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

CHATML_SPECIAL = ["<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
CHATML_ADDED = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
HARMONY_SPECIAL = ["<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|call|>", "<|return|>", "<|constrain|>"]


def build_tokenizer(
    corpus: Iterable[str],
    special: list[str],
    added: tuple[str, ...] = (),
    kind: str = "words",
    vocab_size: int = 400,
    offsets_prefix_space: bool = True,
) -> Any:
    """A ``PreTrainedTokenizerFast`` over a byte-level BPE trained on ``corpus``.

    ``offsets_prefix_space=False`` makes the post-processor trim every token's offsets alike, as
    GPT-2-style tokenizers without a prefix space do (with True it spares a text's first token).
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=kind == "words")
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(add_prefix_space=offsets_prefix_space, trim_offsets=True)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(list(corpus), trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer)
    fast.add_special_tokens({"additional_special_tokens": special})
    fast.add_tokens(list(added))
    fast.pad_token = special[1]  # padding a batch needs one; which one does not matter here
    return fast
