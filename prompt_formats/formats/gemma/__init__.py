"""The Gemma family: Google's Gemma templates, each a walk of its own over one vocabulary (``tokens.py``).

- ``gemma3/``: ``gemma-3``, Gemma 3's template (alternating turns, no tools).
"""

from __future__ import annotations

from .gemma3 import Gemma3Format, Gemma3ReplyParser
from .tokens import GEMMA3_CONTROL_TOKENS
from .untrusted import GEMMA3_READING

__all__ = ["GEMMA3_CONTROL_TOKENS", "GEMMA3_READING", "Gemma3Format", "Gemma3ReplyParser"]
