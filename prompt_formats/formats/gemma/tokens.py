"""The markers and fixed texts of the Gemma family, and its control-token sets: spelt here once.

A leaf module: it imports nothing of the package but what a family tells the guard
(:mod:`prompt_formats.guard.vocabulary`).
"""

from __future__ import annotations

from ...guard.vocabulary import ControlTokens, TokenFamily

__all__ = ["GEMMA3_CONTROL_TOKENS", "GEMMA4_CONTROL_TOKENS"]  # and the fixed texts below, imported by name

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

# --- What Gemma 4's template writes. ---------------------------------------------------------------

TURN_OPEN = "<|turn>"
TURN_CLOSE = "<turn|>"
#: The system turn's first line when thinking is on.
THINK = "<|think|>"
CHANNEL_OPEN = "<|channel>"
CHANNEL_CLOSE = "<channel|>"
#: A past reasoning: this, the text, THOUGHT_CLOSE (and the generation prompt after tool results, thinking on).
THOUGHT_OPEN = CHANNEL_OPEN + "thought\n"
THOUGHT_CLOSE = "\n" + CHANNEL_CLOSE
TOOL_OPEN = "<|tool>"
TOOL_CLOSE = "<tool|>"
TOOL_CALL_OPEN = "<|tool_call>"
TOOL_CALL_CLOSE = "<tool_call|>"
TOOL_RESPONSE_OPEN = "<|tool_response>"
TOOL_RESPONSE_CLOSE = "<tool_response|>"
#: The quote around every string the template writes in its value notation.
QUOTE = '<|"|>'
#: What an image, an audio and a video part are written as.
IMAGE_TOKEN = "<|image|>"
AUDIO_TOKEN = "<|audio|>"
VIDEO_TOKEN = "<|video|>"
#: A call: CALL_PREFIX, the name, its arguments in braces, TOOL_CALL_CLOSE.
CALL_PREFIX = TOOL_CALL_OPEN + "call:"
#: A tool result: TOOL_RESPONSE_OPEN, RESPONSE, the tool's name, the result in braces, TOOL_RESPONSE_CLOSE.
RESPONSE = "response:"
#: A turn's end.
TURN_CLOSED = TURN_CLOSE + "\n"
#: The generation prompt (and the opening of every model turn).
MODEL_PROMPT = TURN_OPEN + MODEL + "\n"
#: The template's error for a call's arguments that are a string (or anything but an object or null).
ARGUMENTS_NOT_OBJECT = (
    "chat_template: tool_calls[].function.arguments must be a JSON object (mapping), not a string. "
    "Deserialize arguments before passing to the template."
)

#: The special tokens Gemma 4's template writes or reads, and the tokenizer's own.
GEMMA4_CONTROL_TOKENS = ControlTokens(
    (
        "<pad>", "<eos>", "<bos>", "<unk>", "<mask>",
        TURN_OPEN, TURN_CLOSE, THINK, CHANNEL_OPEN, CHANNEL_CLOSE, TOOL_OPEN, TOOL_CLOSE, TOOL_CALL_OPEN,
        TOOL_CALL_CLOSE, TOOL_RESPONSE_OPEN, TOOL_RESPONSE_CLOSE, QUOTE, IMAGE_TOKEN, AUDIO_TOKEN, VIDEO_TOKEN,
    ),
)
