"""How GLM-4.5's template puts untrusted text in the prompt: what the control-token guard reads.

A content is written as it is (an assistant's stripped): a string, or a list whose text parts
(``type`` ``"text"``) are written back to back, parts of other types writing nothing between them;
a tool call's name is followed by a newline, its arguments' keys and values written as they are (a
value that is no string as JSON). What the template prints as Python prints it (a content that is
an object, a string in a list, a tool result that is no string) the format refuses under a guard
(:mod:`.guarding`). See docs/safety.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...guard.vocabulary import UntrustedReading
from .tokens import GLM4_CONTROL_TOKENS

__all__ = ["GLM4_READING", "is_text"]


def is_text(part: Any) -> bool:
    """A part the template writes as its text: a mapping whose ``type`` is ``"text"``."""
    return isinstance(part, Mapping) and part.get("type") == "text"


def _silent(part: Any) -> bool:
    return not isinstance(part, str)  # (a string item is written: refused under a guard)


#: GLM-4.5's reading of untrusted fields.
GLM4_READING = UntrustedReading(
    GLM4_CONTROL_TOKENS, join_parts=True, tool_calls=True, name_follower="\n", text_part=is_text, silent_part=_silent,
)
