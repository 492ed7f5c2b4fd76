"""Every marker of the Harmony family and the fixed text of Ollama's template, spelt once (rendering,
parsing and the guard); the gpt-oss template's own combinations are in ``openai/texts.py``.

A leaf module: it imports nothing of the package but what a family tells the guard
(:mod:`prompt_formats.guard.vocabulary`).
"""

from __future__ import annotations

from ...guard.vocabulary import ControlTokens, TokenFamily

__all__ = [
    "ANALYSIS",
    "CALL",
    "CHANNEL",
    "CONSTRAIN",
    "CONTROL_TOKENS",
    "DATE",
    "END",
    "ENDOFTEXT",
    "END_MARKERS",
    "FINAL",
    "FUNCTIONS",
    "GENERATION",
    "MESSAGE",
    "PYTHON_RESULT",
    "PYTHON_TOOL",
    "REASONING",
    "RETURN",
    "START",
    "STARTOFTEXT",
    "SYSTEM_END",
    "SYSTEM_START",
    "TOKEN_FAMILIES",
    "USER",
]

# The named special tokens of the o200k_harmony vocabulary.
START = "<|start|>"
END = "<|end|>"
MESSAGE = "<|message|>"
CHANNEL = "<|channel|>"
CONSTRAIN = "<|constrain|>"
CALL = "<|call|>"
RETURN = "<|return|>"
ENDOFTEXT = "<|endoftext|>"
STARTOFTEXT = "<|startoftext|>"

#: The o200k_harmony vocabulary's reserved special tokens, ``<|reserved_200000|>`` and on.
TOKEN_FAMILIES: tuple[TokenFamily, ...] = (TokenFamily("<|reserved_", "|>"),)

#: The named special tokens of OpenAI's Harmony format (gpt-oss, the o200k_harmony vocabulary), which
#: declare its reserved range, :data:`TOKEN_FAMILIES`.
CONTROL_TOKENS = ControlTokens(
    (START, END, MESSAGE, CHANNEL, CONSTRAIN, CALL, RETURN, ENDOFTEXT, STARTOFTEXT), TOKEN_FAMILIES
)

#: The ends of a message: ``<|end|>``, a tool call's ``<|call|>``, the final answer's ``<|return|>``.
END_MARKERS = (END, CALL, RETURN)

# Fixed text of Ollama's gpt-oss template.
SYSTEM_START = START + "system" + MESSAGE
DATE = "\nCurrent date: "
REASONING = "\nReasoning: "
PYTHON_TOOL = (
    "\n# Tools\n## python\n"
    "Use this tool to execute Python code in your chain of thought. The code will not be shown to the "
    "user. This tool should be used for internal reasoning, but not for code that is intended to be "
    "visible to the user (e.g. plots/tables/files).\n"
    "When you send a message containing Python code to python, it will be executed in a stateful "
    "Jupyter notebook environment and respond with its output. Internet access may be unavailable."
)
SYSTEM_END = "\n# Valid channels: analysis, commentary, final. Channel must be included for every message.\n" + END
USER = START + "user" + MESSAGE
ANALYSIS = START + "assistant" + CHANNEL + "analysis" + MESSAGE
FINAL = START + "assistant" + CHANNEL + "final" + MESSAGE
PYTHON_RESULT = START + "python to=assistant" + MESSAGE
GENERATION = START + "assistant"

#: The recipient prefix of a function tool call (``to=functions.NAME``).
FUNCTIONS = "functions."
