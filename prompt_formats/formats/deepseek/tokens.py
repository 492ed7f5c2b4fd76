"""The markers and fixed texts of the DeepSeek family, and its control-token set: spelt here once.

DeepSeek's markers are written with a full-width vertical bar ``｜`` (U+FF5C) and the lower one-eighth
block ``▁`` (U+2581) for a space, not ASCII ``|`` and ``_``. A leaf module: it imports nothing of the
package but what a family tells the guard (:mod:`prompt_formats.guard.vocabulary`).
"""

from __future__ import annotations

from ...guard.vocabulary import ControlTokens, TokenFamily

__all__ = ["DEEPSEEK_V3_CONTROL_TOKENS"]  # and the fixed texts below, imported by name

BOS = "<｜begin▁of▁sentence｜>"
EOS = "<｜end▁of▁sentence｜>"
USER = "<｜User｜>"
ASSISTANT = "<｜Assistant｜>"
THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"
OUTPUTS_BEGIN = "<｜tool▁outputs▁begin｜>"
OUTPUTS_END = "<｜tool▁outputs▁end｜>"
OUTPUT_BEGIN = "<｜tool▁output▁begin｜>"
OUTPUT_END = "<｜tool▁output▁end｜>"

#: The special tokens of DeepSeek-V3's vocabulary, and its range of place holders.
DEEPSEEK_V3_CONTROL_TOKENS = ControlTokens(
    (
        BOS, EOS, USER, ASSISTANT, THINK_OPEN, THINK_CLOSE, CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, SEP,
        OUTPUTS_BEGIN, OUTPUTS_END, OUTPUT_BEGIN, OUTPUT_END,
        "<｜▁pad▁｜>", "<｜fim▁hole｜>", "<｜fim▁begin｜>", "<｜fim▁end｜>", "<｜search▁begin｜>", "<｜search▁end｜>",
        "<|EOT|>",  # (spelt with ASCII bars)
    ),
    (TokenFamily("<｜place▁holder▁no▁", "｜>"),),
)

# --- What DeepSeek-V3's template writes. ------------------------------------------------------------

#: Between a call's name and its arguments, and after them.
ARGUMENTS_OPEN = "\n```json\n"
ARGUMENTS_CLOSE = "\n```" + CALL_END
#: The end of a turn of tool calls.
CALLS_TURN_END = CALLS_END + EOS
#: The generation prompt (the template opens the reasoning).
GENERATION = ASSISTANT + THINK_OPEN + "\n"
#: Between the texts of the system messages, gathered at the top.
SYSTEM_JOIN = "\n\n"
