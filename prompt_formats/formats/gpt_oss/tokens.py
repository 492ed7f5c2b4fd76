"""The fixed text of the gpt-oss template's messages, built from Harmony's control tokens.

Harmony spells the atomic control tokens (``<|start|>``, ``<|message|>`` ...) privately today; the
headers below are the gpt-oss template's own combinations of them. The atomic tokens are checked at
import against :data:`~prompt_formats.guard.HARMONY_CONTROL_TOKENS`, so the two cannot drift apart
silently.
"""

from __future__ import annotations

from ...guard import HARMONY_CONTROL_TOKENS

START = "<|start|>"
END = "<|end|>"
MESSAGE = "<|message|>"
CHANNEL = "<|channel|>"
CALL = "<|call|>"
RETURN = "<|return|>"

SYSTEM = START + "system" + MESSAGE
DEVELOPER = START + "developer" + MESSAGE
USER = START + "user" + MESSAGE
ANALYSIS = START + "assistant" + CHANNEL + "analysis" + MESSAGE
FINAL = START + "assistant" + CHANNEL + "final" + MESSAGE
#: An assistant tool call: ``CALL_HEAD + name + CALL_CHANNEL + content_type + MESSAGE + arguments + CALL``.
CALL_HEAD = START + "assistant to=functions."
CALL_CHANNEL = CHANNEL + "commentary "
#: A tool result: ``RESULT_HEAD + name + RESULT_CHANNEL + json + END``.
RESULT_HEAD = START + "functions."
RESULT_CHANNEL = " to=assistant" + CHANNEL + "commentary" + MESSAGE
GENERATION = START + "assistant"

#: The texts whose presence in an assistant message's content or thinking the template refuses.
CHANNEL_TAGS = (CHANNEL + "analysis" + MESSAGE, CHANNEL + "final" + MESSAGE)


def _check_tokens() -> None:
    for marker in (START, END, MESSAGE, CHANNEL, CALL, RETURN):
        if marker not in HARMONY_CONTROL_TOKENS:
            raise ImportError(f"gpt-oss marker {marker!r} is not a Harmony control token")


_check_tokens()
