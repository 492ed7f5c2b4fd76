"""The markers and fixed texts of the GLM family, and its control-token set: spelt here once.

A leaf module: it imports nothing of the package but what a family tells the guard
(:mod:`prompt_formats.guard.vocabulary`).
"""

from __future__ import annotations

from ...guard.vocabulary import ControlTokens

__all__ = ["GLM4_CONTROL_TOKENS"]  # and the fixed texts below, imported by name

PREFIX = "[gMASK]<sop>"
SYSTEM = "<|system|>"
USER = "<|user|>"
ASSISTANT = "<|assistant|>"
OBSERVATION = "<|observation|>"
END_OF_TEXT = "<|endoftext|>"
THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
TOOL_CALL_OPEN = "<tool_call>"
TOOL_CALL_CLOSE = "</tool_call>"
ARG_KEY_OPEN = "<arg_key>"
ARG_KEY_CLOSE = "</arg_key>"
ARG_VALUE_OPEN = "<arg_value>"
ARG_VALUE_CLOSE = "</arg_value>"
TOOL_RESPONSE_OPEN = "<tool_response>"
TOOL_RESPONSE_CLOSE = "</tool_response>"
NOTHINK = "/nothink"

#: The special tokens of GLM-4.5's vocabulary. ``/nothink``, which the template writes after a user's
#: text with thinking off, is not among them: the guard's escapes cannot hold a token that has another
#: token's first character after its start (``/`` in ``</think>``); a user's text ending in it turns
#: thinking off for the next turn, as the template's own does (docs/glm.md).
GLM4_CONTROL_TOKENS = ControlTokens((
    "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", SYSTEM, USER, ASSISTANT, OBSERVATION, END_OF_TEXT,
    "<|begin_of_image|>", "<|end_of_image|>", "<|begin_of_video|>", "<|end_of_video|>", "<|begin_of_audio|>",
    "<|end_of_audio|>", "<|begin_of_transcription|>", "<|end_of_transcription|>", "<|code_prefix|>",
    "<|code_middle|>", "<|code_suffix|>", "<|begin_of_box|>", "<|end_of_box|>", "<|image|>", "<|video|>",
    THINK_OPEN, THINK_CLOSE, TOOL_CALL_OPEN, TOOL_CALL_CLOSE,
    TOOL_RESPONSE_OPEN, TOOL_RESPONSE_CLOSE, ARG_KEY_OPEN, ARG_KEY_CLOSE, ARG_VALUE_OPEN, ARG_VALUE_CLOSE,
))

# --- What GLM-4.5's template writes. -----------------------------------------------------------------

#: The tools block: this, each tool's JSON and a newline, TOOLS_FOOTER.
TOOLS_HEADER = (SYSTEM + "\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n")
TOOLS_FOOTER = (
    "</tools>\n\nFor each function call, output the function name and arguments within the following XML format:\n"
    "<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n<arg_value>{arg-value-1}</arg_value>\n"
    "<arg_key>{arg-key-2}</arg_key>\n<arg_value>{arg-value-2}</arg_value>\n...\n</tool_call>"
)
#: An assistant turn's think block when it shows no reasoning (and the generation prompt's, thinking off).
EMPTY_THINK = "\n" + THINK_OPEN + THINK_CLOSE
#: A tool result: this, its text, RESPONSE_CLOSE.
RESPONSE_OPEN = "\n" + TOOL_RESPONSE_OPEN + "\n"
RESPONSE_CLOSE = "\n" + TOOL_RESPONSE_CLOSE
