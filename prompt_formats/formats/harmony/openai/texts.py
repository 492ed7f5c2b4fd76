"""The fixed text of the gpt-oss template's messages, built from the Harmony family's tokens.

The atomic control tokens and the headers both templates write are Harmony's
(:mod:`prompt_formats.formats.harmony.tokens`, where they are spelt once); the combinations below
are the gpt-oss template's own.
"""

from __future__ import annotations

from ..tokens import ANALYSIS, CALL, CHANNEL, END, FINAL, GENERATION, MESSAGE, RETURN, START, USER

__all__ = [
    "ANALYSIS", "CALL", "CALL_CHANNEL", "CALL_HEAD", "CHANNEL", "CHANNEL_TAGS", "DEVELOPER", "END", "FINAL",
    "GENERATION", "MESSAGE", "RESULT_CHANNEL", "RESULT_HEAD", "RETURN", "START", "SYSTEM", "USER",
]

SYSTEM = START + "system" + MESSAGE
DEVELOPER = START + "developer" + MESSAGE
#: An assistant tool call: ``CALL_HEAD + name + CALL_CHANNEL + content_type + MESSAGE + arguments + CALL``.
CALL_HEAD = START + "assistant to=functions."
CALL_CHANNEL = CHANNEL + "commentary "
#: A tool result: ``RESULT_HEAD + name + RESULT_CHANNEL + json + END``.
RESULT_HEAD = START + "functions."
RESULT_CHANNEL = " to=assistant" + CHANNEL + "commentary" + MESSAGE

#: The texts whose presence in an assistant message's content or thinking the template refuses.
CHANNEL_TAGS = (CHANNEL + "analysis" + MESSAGE, CHANNEL + "final" + MESSAGE)
