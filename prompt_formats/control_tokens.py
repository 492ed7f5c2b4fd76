"""The control-token sets the guard knows, and the patterns it finds them (and their escapes) with.

A set is literal tokens plus *token families*: a tokenizer vocabulary can hold a whole range of
special tokens (o200k_harmony reserves ``<|reserved_200000|>`` onwards), and a range is covered by
its pattern, not by a list that is only as good as the vocabulary it was copied from.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from .errors import FormatError
from .formats.chatml.tokens import CONTROL_TOKENS as CHATML_CONTROL_TOKENS

__all__ = [
    "CHATML_CONTROL_TOKENS",
    "ESCAPE_MARKER",
    "HARMONY_CONTROL_TOKENS",
    "HARMONY_TOKEN_FAMILIES",
    "TokenFamily",
    "default_families",
]

#: The character :meth:`ControlTokenGuard.escape` inserts after a token's first character.
ESCAPE_MARKER = "\\"

# What the ChatML template writes right after a tool-call name or an argument name.
NAME_FOLLOWER = ">"


@attrs.frozen
class TokenFamily:
    """Every token ``prefix + N + suffix`` where ``N`` is one or more ASCII digits (``<|reserved_7|>``)."""

    prefix: str
    suffix: str

    def tail_regex(self, cut: int = 0) -> str:
        """A regex of the family's tokens without their first character (and without ``cut`` final ones)."""
        return re.escape(self.prefix[1:]) + "[0-9]+" + re.escape(self.suffix[: len(self.suffix) - cut])

    def regex(self) -> str:
        return re.escape(self.prefix[0]) + self.tail_regex()


# Harmony's tokens are spelt by its family package (imported here, once TokenFamily exists).
from .formats.harmony.tokens import CONTROL_TOKENS as HARMONY_CONTROL_TOKENS  # noqa: E402
from .formats.harmony.tokens import TOKEN_FAMILIES as HARMONY_TOKEN_FAMILIES  # noqa: E402


def default_families(tokens: tuple[str, ...]) -> tuple[TokenFamily, ...]:
    """The families a guard over ``tokens`` covers unless told otherwise: Harmony's for a set that
    holds Harmony's ``<|channel|>`` token (the built-in set, or one extending it), none otherwise."""
    return HARMONY_TOKEN_FAMILIES if "<|channel|>" in tokens else ()


@attrs.frozen
class Scanner:
    """The compiled patterns for one token set (built once per guard)."""

    leads: str
    needs_escape: re.Pattern[str]
    escaped_once: re.Pattern[str]
    raw_token: re.Pattern[str]
    #: On orjson's output: where a string may hold a token, an escaped one, or a token cut short by
    #: the end of a name that the template completes (see ``ControlTokenGuard._blob_clean``);
    #: ``None`` when a token holds a character JSON escapes (the shortcut is then not used).
    blob_suspect: re.Pattern[bytes] | None

    @classmethod
    def build(cls, tokens: tuple[str, ...], families: tuple[TokenFamily, ...] = ()) -> Scanner:
        leads = "".join(sorted({token[0] for token in tokens} | {family.prefix[0] for family in families}))
        marker = re.escape(ESCAPE_MARKER)
        needs = []
        once = []
        in_blob = []
        for lead in leads:
            tails = {token[1:] for token in tokens if token[0] == lead}
            own = [family for family in families if family.prefix[0] == lead]
            tail = _either(tails, [family.tail_regex() for family in own])
            # A lead, then any run of markers, then a tail: a token, raw or escaped some number of times.
            needs.append(f"{re.escape(lead)}(?={marker}*{tail})")
            # The first marker of such a run (there must be one): the one escape() added.
            once.append(f"(?<={re.escape(lead)}){marker}(?={marker}*{tail})")
            # A name (rendered before NAME_FOLLOWER) may end in a token the follower completes; a
            # token cut that way counts anywhere (a superset: the shortcut only has to miss nothing).
            ends = [NAME_FOLLOWER[:k] for k in range(1, len(NAME_FOLLOWER) + 1)]
            cut = {t[: -len(end)] for t in tails for end in ends if t.endswith(end)}
            family_cuts = [f.tail_regex(len(end)) for f in own for end in ends if f.suffix.endswith(end)]
            suspect = _either(tails | cut, [f.tail_regex() for f in own] + family_cuts)
            in_blob.append(f"{re.escape(lead)}(?={marker}*{suspect})")
        raw = _either(set(tokens), [family.regex() for family in families])
        spelt = "".join(tokens) + "".join(family.prefix + family.suffix for family in families)
        return cls(
            leads,
            re.compile("|".join(needs)),
            re.compile("|".join(once)),
            re.compile(raw),
            # JSON writes a string verbatim but for '"', '\\' and control characters: none may be in a token.
            re.compile("|".join(in_blob).encode()) if not any(c == '"' or c < " " for c in spelt) else None,
        )


def _either(words: set[str], regexes: list[str]) -> str:
    """A regex matching any of ``words`` (see :func:`_alternation`) or of ``regexes``."""
    parts = ([_alternation(words)] if words else []) + regexes
    return "(?:" + "|".join(parts) + ")"


def _alternation(words: set[str]) -> str:
    """A regex matching any of ``words`` (the longest where one is a prefix of another), as a trie.

    ``re`` tries the branches of a plain alternation one by one at every position; grouping them by
    common prefix lets a mismatch (``<div``) fail at its first character instead of at each word.
    """
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        branches = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        if len(branches) == 1 and "" not in node:
            return branches[0]
        body = "(?:" + "|".join(branches) + ")"
        return body + "?" if "" in node else body

    return build(trie)


def check_tokens(tokens: tuple[str, ...], families: tuple[TokenFamily, ...] = ()) -> None:
    """Raise FormatError unless the escape scheme is exactly reversible for ``tokens`` and ``families``."""
    if not all(isinstance(family, TokenFamily) for family in families):
        raise FormatError("families: expected TokenFamily objects")
    # A family is checked as one of its tokens; its digits must not be a lead either.
    tokens = tokens + tuple(f"{family.prefix}0{family.suffix}" for family in families)
    if families and any(token[0].isdigit() for token in tokens):
        raise FormatError("a token starting with a digit cannot be combined with token families")
    if not tokens:
        raise FormatError("a control-token guard needs at least one token")
    for token in tokens:
        if not isinstance(token, str) or len(token) < 2:
            raise FormatError(f"control token {token!r}: expected a string of at least two characters")
        if ESCAPE_MARKER in token:
            raise FormatError(f"control token {token!r} contains the escape marker {ESCAPE_MARKER!r}")
    leads = {token[0] for token in tokens}
    for token in tokens:
        # A lead inside a token would let two occurrences overlap, and escaping one could hide the
        # other's tail from the unescape pattern: the scheme would no longer be exactly reversible.
        inner = leads.intersection(token[1:])
        if inner:
            raise FormatError(
                f"control token {token!r} contains {sorted(inner)[0]!r}, the first character of a token, "
                "after its start; the guard supports token sets where that never happens"
            )
