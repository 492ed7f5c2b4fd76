"""How the Gemma templates put untrusted text in the prompt: what the control-token guard reads.

Gemma 3 (``GEMMA3_READING``): a text part is one whose ``type`` is ``"text"`` (its ``text`` printed
as the template prints it), each trimmed, and the texts of a content are written back to back: only
an image part writes something between them, so parts of other types do not separate them. Every role but
``assistant`` is written as it is given. Tool calls are not written. Gemma 4 (``GEMMA4_READING``):
below. See docs/safety.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...guard.vocabulary import UntrustedReading
from .tokens import GEMMA3_CONTROL_TOKENS, GEMMA4_CONTROL_TOKENS

__all__ = ["GEMMA3_READING", "GEMMA4_READING", "is_image", "is_text"]


def is_text(part: Any) -> bool:
    """A part the template writes as its text: a mapping whose ``type`` is ``"text"``."""
    return isinstance(part, Mapping) and part.get("type") == "text"


def is_image(part: Any) -> bool:
    """A part the template writes as the image marker: a mapping whose ``type`` is ``"image"``."""
    return isinstance(part, Mapping) and part.get("type") == "image"


def _silent(part: Any) -> bool:
    return not is_image(part)


#: Gemma 3's reading of untrusted fields.
GEMMA3_READING = UntrustedReading(
    GEMMA3_CONTROL_TOKENS, GEMMA3_CONTROL_TOKENS.families, join_parts=True, tool_calls=False,
    text_part=is_text, silent_part=_silent, trim_parts=True, roles=True,
)

def _every_part(part: Any) -> bool:
    return True


#: Gemma 4's reading of untrusted fields: text parts trimmed and joined as if nothing stood between
#: them (a tool result's are written untrimmed, back to back, its media after them; elsewhere a media
#: part writes a token between two texts: reading them joined and trimmed can only refuse more), roles
#: written as given, tool calls written. What the guard does not read (the reasoning and calls of
#: other roles than ``assistant``, a leading system message's list items, a tool result's ``name``,
#: ``tool_responses``) is the format's to check (gemma4/guarding.py).
GEMMA4_READING = UntrustedReading(
    GEMMA4_CONTROL_TOKENS, join_parts=True, tool_calls=True, text_part=is_text, silent_part=_every_part,
    trim_parts=True, roles=True,
)
