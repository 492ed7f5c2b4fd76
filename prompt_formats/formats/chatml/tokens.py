"""The markers and fixed texts of the Qwen3.6 ChatML family, and its control-token set: spelt here once.

A leaf module: it imports nothing of the package but what a family tells the guard
(:mod:`prompt_formats.guard.vocabulary`).
"""

from __future__ import annotations

from ...guard.vocabulary import ControlTokens

__all__ = ["CONTROL_TOKENS"]  # and the fixed texts below, imported by name

#: The special and added tokens of the Qwen3 ChatML vocabulary.
CONTROL_TOKENS = ControlTokens((
    "<|endoftext|>", "<|im_start|>", "<|im_end|>",
    "<|object_ref_start|>", "<|object_ref_end|>", "<|box_start|>", "<|box_end|>",
    "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>",
    "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>",
    "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>",
    "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>",
))

# --- What the renderer writes. --------------------------------------------------------------------

IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
END_OF_TEXT = "<|endoftext|>"
THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
TOOL_CALL_OPEN = "<tool_call>"
TOOL_CALL_CLOSE = "</tool_call>"
TOOL_RESPONSE_OPEN = "<tool_response>"
TOOL_RESPONSE_CLOSE = "</tool_response>"
FUNCTION_OPEN = "<function="
FUNCTION_CLOSE = "</function>"
PARAMETER_OPEN = "<parameter="
PARAMETER_CLOSE = "</parameter>"

IMAGE = "<|vision_start|><|image_pad|><|vision_end|>"
VIDEO = "<|vision_start|><|video_pad|><|vision_end|>"

SYSTEM_TURN = IM_START + "system\n"
USER_TURN = IM_START + "user\n"
ASSISTANT_TURN = IM_START + "assistant\n"
TURN_END = IM_END + "\n"
#: An assistant turn that keeps its reasoning: this, the reasoning, THINK_BLOCK_END, the content.
ASSISTANT_THINKING = ASSISTANT_TURN + THINK_OPEN + "\n"
THINK_BLOCK_END = "\n" + THINK_CLOSE + "\n\n"
#: A run of tool results is one user turn: the first opens it, the last closes it.
TOOL_RESPONSE_FIRST = USER_TURN + TOOL_RESPONSE_OPEN + "\n"
TOOL_RESPONSE_NEXT = "\n" + TOOL_RESPONSE_OPEN + "\n"
TOOL_RESPONSE_LAST = "\n" + TOOL_RESPONSE_CLOSE + TURN_END
TOOL_RESPONSE_MORE = "\n" + TOOL_RESPONSE_CLOSE
#: Before a tool call's name: after content (a blank line), at the turn's start, after another call.
CALL_AFTER_CONTENT = "\n\n" + TOOL_CALL_OPEN + "\n" + FUNCTION_OPEN
CALL_FIRST = TOOL_CALL_OPEN + "\n" + FUNCTION_OPEN
CALL_NEXT = FUNCTION_CLOSE + "\n" + TOOL_CALL_CLOSE + "\n" + TOOL_CALL_OPEN + "\n" + FUNCTION_OPEN
CALLS_END = FUNCTION_CLOSE + "\n" + TOOL_CALL_CLOSE + TURN_END
#: The generation prompt, with thinking on (the model writes its reasoning) and off (an empty block).
GENERATION_PROMPT = ASSISTANT_THINKING
GENERATION_PROMPT_NO_THINKING = ASSISTANT_THINKING + "\n" + THINK_CLOSE + "\n\n"

TOOLS_HEADER = SYSTEM_TURN + "# Tools\n\nYou have access to the following functions:\n\n<tools>"
TOOLS_FOOTER = (
    "\n</tools>"
    "\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n"
    "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n"
    "</parameter>\n<parameter=example_parameter_2>\nThis is the value for the second parameter\n"
    "that can span\nmultiple lines\n</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n"
    "- Function calls MUST follow the specified format: an inner <function=...></function> block must be "
    "nested within <tool_call></tool_call> XML tags\n- Required parameters MUST be specified\n"
    "- You may provide optional reasoning for your function call in natural language BEFORE the function "
    "call, but NOT after\n- If there is no function call available, answer the question like normal with "
    "your current knowledge and do not tell the user about function calls\n</IMPORTANT>"
)

#: Qwen3.8's reasoning-effort instructions, written first in the system turn (``medium`` writes none).
REASONING_EFFORTS = ("xhigh", "medium", "low")
REASONING_XHIGH = (
    "Reasoning effort is set to xhigh. Please think carefully through the task, validate key assumptions, "
    "consider plausible alternatives, and prioritize correctness, consistency, and clarity in the final answer."
)
REASONING_LOW = (
    "Reasoning effort is set to low. Keep your thinking brief and focused, moving directly to the conclusion "
    "without unnecessary elaboration."
)

# --- The templates that write JSON tool calls (Qwen2.5, Qwen3, Qwen3-Instruct-2507, Qwen3-VL). -------

#: Qwen2.5's system prompt when the conversation has none.
QWEN2_5_DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
JSON_TOOLS_HEADER = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
JSON_TOOLS_FOOTER = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
    "</tool_call>" + TURN_END
)
#: A call: this (JSON_CALL_NEXT after content or another call), its name, JSON_CALL_ARGUMENTS, its
#: arguments, JSON_CALL_END.
JSON_CALL_OPEN = TOOL_CALL_OPEN + '\n{"name": "'
JSON_CALL_NEXT = "\n" + JSON_CALL_OPEN
JSON_CALL_ARGUMENTS = '", "arguments": '
JSON_CALL_END = "}\n" + TOOL_CALL_CLOSE
#: A run of tool results is one user turn (the JSON templates put the newline before each result).
JSON_TOOL_RUN_OPEN = IM_START + "user"
JSON_TOOL_RESPONSE_OPEN = "\n" + TOOL_RESPONSE_OPEN + "\n"
JSON_TOOL_RESPONSE_CLOSE = "\n" + TOOL_RESPONSE_CLOSE
#: Qwen3's generation prompt with enable_thinking=False: an empty think block.
EMPTY_THINK_BLOCK = THINK_OPEN + "\n\n" + THINK_CLOSE + "\n\n"

# --- The Nemotron 3 templates (XML calls, the tools spelt as XML). ----------------------------------

#: The markers Nemotron 3's template and its replies react to (its tokenizer's ChatML added tokens).
NEMOTRON_CONTROL_TOKENS = ControlTokens((
    "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>",
    "<tool_response>", "</tool_response>",
))
#: The think block a turn without reasoning is written with (and the prompt with thinking off ends in).
EMPTY_THINK = THINK_OPEN + THINK_CLOSE
NEMOTRON_NO_THINKING_PROMPT = ASSISTANT_TURN + EMPTY_THINK
#: The tools, each a ``<function>`` element, between this and TOOLS_FOOTER.
NEMOTRON_TOOLS_HEADER = "# Tools\n\nYou have access to the following functions:\n\n<tools>"
#: A call: CALL_FIRST, its name, ">\n", its parameters (PARAMETER_OPEN, name, ">\n", value,
#: NEMOTRON_PARAMETER_END), this.
NEMOTRON_CALL_END = FUNCTION_CLOSE + "\n" + TOOL_CALL_CLOSE + "\n"
NEMOTRON_PARAMETER_END = "\n" + PARAMETER_CLOSE + "\n"
#: A tool result (a run of them is one user turn, opened unless the run comes first).
NEMOTRON_TOOL_RESPONSE_OPEN = TOOL_RESPONSE_OPEN + "\n"
NEMOTRON_TOOL_RESPONSE_CLOSE = "\n" + TOOL_RESPONSE_CLOSE + "\n"
#: What an effort flag appends to the last user message.
LOW_EFFORT_NOTE = "\n\n{reasoning effort: low}"
MEDIUM_EFFORT_NOTE = "\n\n{reasoning effort: efficient}"
