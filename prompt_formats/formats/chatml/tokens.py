"""The markers and fixed texts of the Qwen3.6 ChatML family, and its control-token set: spelt here once.

A leaf module: it imports nothing of the package, so the guard may import it.
"""

from __future__ import annotations

__all__ = ["CONTROL_TOKENS"]

#: The special and added tokens of the Qwen3 ChatML vocabulary.
CONTROL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>", "<|im_start|>", "<|im_end|>",
    "<|object_ref_start|>", "<|object_ref_end|>", "<|box_start|>", "<|box_end|>",
    "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>",
    "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>",
    "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>",
    "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>",
)
