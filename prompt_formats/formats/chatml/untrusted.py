"""How the ChatML templates put untrusted text in the prompt: what the control-token guard reads.

Text parts of a message are concatenated with nothing between them; tool calls in history are
rendered as ``<function=NAME>`` and ``<parameter=NAME>``, so a name is followed by ``>``. See
docs/safety.md.
"""

from __future__ import annotations

from ...control_tokens import UntrustedReading
from .tokens import CONTROL_TOKENS as CHATML_CONTROL_TOKENS

__all__ = ["CHATML_READING"]

#: The ChatML family's reading of untrusted fields (the Qwen3 control tokens).
CHATML_READING = UntrustedReading(CHATML_CONTROL_TOKENS, join_parts=True, tool_calls=True, name_follower=">")
