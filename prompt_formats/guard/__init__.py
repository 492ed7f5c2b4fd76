"""The control-token guard: untrusted text must not be able to forge a prompt's structure.

The guard split by job: :mod:`.scheme` (the reversible escape scheme and the patterns that find
tokens), :mod:`.policy` (which fields of messages and tool calls are checked), :mod:`.prefilter`
(cheap "certainly clean" tests), :mod:`.toolset` (tool definitions and the verdicts kept about
them), :mod:`.reading` (what a format tells the guard about how it renders untrusted text). See
docs/safety.md.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from .._walk import MAX_NESTING
from ..control_tokens import ESCAPE_MARKER, TokenFamily, UntrustedReading
from ..formats.chatml.tokens import CONTROL_TOKENS as CHATML_CONTROL_TOKENS
from ..formats.harmony.tokens import CONTROL_TOKENS as HARMONY_CONTROL_TOKENS
from ..formats.harmony.tokens import TOKEN_FAMILIES as HARMONY_TOKEN_FAMILIES
from .core import ControlTokenGuard, Policy, as_token_tuple

__all__ = [
    "CHATML_CONTROL_TOKENS",
    "ESCAPE_MARKER",
    "HARMONY_CONTROL_TOKENS",
    "HARMONY_TOKEN_FAMILIES",
    "MAX_NESTING",
    "ControlTokenGuard",
    "Policy",
    "TokenFamily",
    "UntrustedReading",
    "unescape",
]


@functools.lru_cache(maxsize=16)
def _escaping_guard(tokens: tuple[str, ...]) -> ControlTokenGuard:
    return ControlTokenGuard(tokens)


def unescape(text: str, tokens: Sequence[str] = CHATML_CONTROL_TOKENS, *, followed_by: str = "") -> str:
    """Undo :meth:`ControlTokenGuard.escape` for ``tokens`` (default: the ChatML set).

    Pass ``followed_by=">"`` for the text of a ChatML tool-call name or argument name, which the
    guard escapes as it reads in the prompt, followed by ``>``. The token families are those a
    guard over ``tokens`` has by default (Harmony's reserved range for the Harmony set); for other
    families, use the guard's own :meth:`ControlTokenGuard.unescape`.
    """
    return _escaping_guard(as_token_tuple(tokens)).unescape(text, followed_by)
