"""The markers and fixed texts of the Gemma family, and its control-token sets: spelt here once.

A leaf module: it imports nothing of the package but what a family tells the guard
(:mod:`prompt_formats.guard.vocabulary`).
"""

from __future__ import annotations

from ...guard.vocabulary import ControlTokens, TokenFamily

__all__ = ["GEMMA3_CONTROL_TOKENS"]  # and the fixed texts below, imported by name

#: The special tokens of Gemma 3's vocabulary, and its range of unused ones (``<unused0>`` onwards).
GEMMA3_CONTROL_TOKENS = ControlTokens(
    (
        "<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "[multimodal]",
        "<start_of_turn>", "<end_of_turn>", "<start_of_image>", "<end_of_image>", "<image_soft_token>",
    ),
    (TokenFamily("<unused", ">"),),
)

# --- What Gemma 3's template writes. ---------------------------------------------------------------

#: The tokenizer's ``bos_token``, the ``bos_token`` option's default.
BOS = "<bos>"
#: The end of the reply besides END_OF_TURN (the tokenizer's ``eos_token``).
EOS = "<eos>"
START_OF_TURN = "<start_of_turn>"
END_OF_TURN = "<end_of_turn>"
#: What closes every turn.
TURN_END = END_OF_TURN + "\n"
#: An image part, where it stands among the texts.
IMAGE = "<start_of_image>"
#: The role the template writes for ``assistant``.
MODEL = "model"
#: The generation prompt.
MODEL_TURN = START_OF_TURN + MODEL + "\n"
#: What follows the system message's text, at the start of the first turn.
SYSTEM_END = "\n\n"
#: The template's error for roles out of order.
ALTERNATION = "Conversation roles must alternate user/assistant/user/assistant/..."
#: The template's error for a content that is neither a string nor iterable.
INVALID_CONTENT = "Invalid content type"
