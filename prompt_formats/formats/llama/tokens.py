"""The markers and fixed texts of the Llama 3 family, and its control-token set: spelt here once.

A leaf module: it imports nothing of the package but what a family tells the guard
(:mod:`prompt_formats.guard.vocabulary`).
"""

from __future__ import annotations

from ...guard.vocabulary import ControlTokens, TokenFamily

__all__ = ["LLAMA3_CONTROL_TOKENS"]  # and the fixed texts below, imported by name

BOS = "<|begin_of_text|>"
EOS = "<|end_of_text|>"
HEADER_OPEN = "<|start_header_id|>"
HEADER_CLOSE = "<|end_header_id|>"
EOT = "<|eot_id|>"
EOM = "<|eom_id|>"
PYTHON_TAG = "<|python_tag|>"

#: The special tokens of Llama 3.1's and 3.2's vocabulary, and its range of reserved ones.
LLAMA3_CONTROL_TOKENS = ControlTokens(
    (BOS, EOS, HEADER_OPEN, HEADER_CLOSE, EOT, EOM, PYTHON_TAG, "<|finetune_right_pad_id|>"),
    (TokenFamily("<|reserved_special_token_", "|>"),),
)

# --- What the Llama 3.1 and 3.2 templates write. ----------------------------------------------------


#: What follows a turn's role.
HEADERED = HEADER_CLOSE + "\n\n"


def header(role: str) -> str:
    """A turn's header: ``<|start_header_id|>ROLE<|end_header_id|>`` and a blank line."""
    return HEADER_OPEN + role + HEADERED


SYSTEM_HEADER = header("system")
USER_HEADER = header("user")
ASSISTANT_HEADER = header("assistant")
IPYTHON_HEADER = header("ipython")
#: The system turn's line when tools (or 3.1's built-in tools) are offered.
ENVIRONMENT = "Environment: ipython\n"
#: The system turn's dates (the template's fixed knowledge cut-off, then the date it is given).
KNOWLEDGE_DATE = "Cutting Knowledge Date: December 2023\n"
TODAY = "Today Date: "
#: The date the templates write when none is given (3.2 writes today's when the engine can tell it).
DEFAULT_DATE = "26 Jul 2024"
#: 3.2's format of today's date (transformers' ``strftime_now``).
DATE_FORMAT = "%d %b %Y"
#: The built-in tool that is not named on 3.1's ``Tools:`` line.
CODE_INTERPRETER = "code_interpreter"
#: What comes before the tools offered in the system turn, and in the first user turn.
SYSTEM_TOOLS_INTRO = (
    "You have access to the following functions. To call a function, please respond with JSON for a function call."
    'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.'
    "Do not use variables.\n\n"
)
USER_TOOLS_INTRO = (
    "Given the following functions, please respond with a JSON for a function call "
    "with its proper arguments that best answers the given prompt.\n\n"
    'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.'
    "Do not use variables.\n\n"
)
#: The template's errors (``raise_exception``).
NO_FIRST_USER = "Cannot put tools in the first user message when there's no first user message!"
SINGLE_CALL = "This model only supports single tool-calls at once!"
