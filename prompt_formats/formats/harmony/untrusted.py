"""How Ollama's Harmony template (the ``harmony`` format) puts untrusted text in the prompt: what the
control-token guard reads.

Text parts are rendered as separate texts (a token cannot be split across them); tool calls in
history are not checked (the template renders none). gpt-oss's guard reads its own template's
fields (``openai/guarding.py``). See docs/safety.md.
"""

from __future__ import annotations

from ...guard.vocabulary import UntrustedReading
from .tokens import CONTROL_TOKENS as HARMONY_CONTROL_TOKENS
from .tokens import TOKEN_FAMILIES as HARMONY_TOKEN_FAMILIES

__all__ = ["HARMONY_READING"]

#: The Harmony family's reading of untrusted fields (its named tokens and the reserved range).
HARMONY_READING = UntrustedReading(
    HARMONY_CONTROL_TOKENS, HARMONY_TOKEN_FAMILIES, join_parts=False, tool_calls=False, name_follower=""
)
