"""How DeepSeek-V3's template puts untrusted text in the prompt: what the control-token guard reads.

Every content is a string written as it is; a tool call's name is followed by a newline and its
arguments (a string) are written as they are. A call's ``type`` is written too (before
``<｜tool▁sep｜>``): the format checks it itself (the guard's reading of calls has no such field).
See docs/safety.md.
"""

from __future__ import annotations

from ...guard.vocabulary import UntrustedReading
from .tokens import DEEPSEEK_V3_CONTROL_TOKENS

__all__ = ["DEEPSEEK_V3_READING"]

#: DeepSeek-V3's reading of untrusted fields.
DEEPSEEK_V3_READING = UntrustedReading(
    DEEPSEEK_V3_CONTROL_TOKENS, DEEPSEEK_V3_CONTROL_TOKENS.families, join_parts=True, tool_calls=True,
    name_follower="\n",
)
