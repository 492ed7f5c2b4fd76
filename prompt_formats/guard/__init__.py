"""The control-token guard: untrusted text must not be able to forge a prompt's structure.

The guard split by job: :mod:`.scheme` (the reversible escape scheme and the patterns that find
tokens), :mod:`.policy` (which fields of messages and tool calls are checked), :mod:`.prefilter`
(cheap "certainly clean" tests), :mod:`.toolset` (tool definitions and the verdicts kept about
them), and, from :mod:`prompt_formats.guard.vocabulary`, what a format tells the guard: its tokens and how it
renders untrusted text. The guard knows no format: it imports nothing from ``formats/``. See
docs/safety.md.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from .._text.walk import MAX_NESTING
from .core import ControlTokenGuard, Policy, as_token_tuple
from .vocabulary import ESCAPE_MARKER, ControlTokens, TokenFamily, UntrustedReading

__all__ = [
    "ESCAPE_MARKER",
    "MAX_NESTING",
    "ControlTokenGuard",
    "ControlTokens",
    "Policy",
    "TokenFamily",
    "UntrustedReading",
    "unescape",
]


@functools.lru_cache(maxsize=16)
def _escaping_guard(tokens: tuple[str, ...]) -> ControlTokenGuard:
    # Keyed by the tokens alone: a ControlTokens set equals the plain tuple of its tokens, and both
    # get the same families (declared_families), so either may stand for the other.
    return ControlTokenGuard(tokens)


def unescape(text: str, tokens: Sequence[str], *, followed_by: str = "") -> str:
    """Undo :meth:`ControlTokenGuard.escape` for ``tokens`` (``pf.CHATML_CONTROL_TOKENS``, ...).

    Pass ``followed_by=">"`` for the text of a ChatML tool-call name or argument name, which the
    guard escapes as it reads in the prompt, followed by ``>``. The token families are those a
    guard over ``tokens`` has by default (those the set declares: Harmony's reserved range for the
    Harmony set); for other families, use the guard's own :meth:`ControlTokenGuard.unescape`.
    """
    return _escaping_guard(as_token_tuple(tokens)).unescape(text, followed_by)
