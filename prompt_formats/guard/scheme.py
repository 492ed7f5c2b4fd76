"""The escape scheme: the patterns that find control tokens, their escapes, and their inverses.

Let a *lead* be the first character of a token (``<`` for every token of both families' sets) and a *tail* the
rest of it (``|im_end|>``). Escaping inserts one :data:`ESCAPE_MARKER` after every lead that is
followed by zero or more markers and then a tail; unescaping removes one marker after every lead
followed by one or more markers and then a tail. So ``unescape(escape(t)) == t`` for every ``t``,
escaping changes only a text holding a token or an escaped one, and its result holds no token (no
token contains the marker, and every occurrence lost its lead's neighbour). :func:`check_tokens`
refuses the token sets for which this would not hold exactly. See docs/safety.md.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from .._text.walk import Hit
from ..errors import FormatError
from .vocabulary import ESCAPE_MARKER, TokenFamily

__all__ = ["EscapeScheme", "Scanner", "check_tokens", "insert_after", "insert_marker"]


@attrs.frozen
class Scanner:
    """The compiled patterns for one token set (built once per guard)."""

    leads: str
    needs_escape: re.Pattern[str]
    escaped_once: re.Pattern[str]
    raw_token: re.Pattern[str]
    tokens: tuple[str, ...]
    families: tuple[TokenFamily, ...]

    @classmethod
    def build(cls, tokens: tuple[str, ...], families: tuple[TokenFamily, ...] = ()) -> Scanner:
        """The patterns for ``tokens`` and ``families`` (checked by :func:`check_tokens` first)."""
        leads = "".join(sorted({token[0] for token in tokens} | {family.prefix[0] for family in families}))
        marker = re.escape(ESCAPE_MARKER)
        needs = []
        once = []
        for lead in leads:
            tail = _either(_tails(tokens, lead), [family.tail_regex() for family in _own(families, lead)])
            # A lead, then any run of markers, then a tail: a token, raw or escaped some number of times.
            needs.append(f"{re.escape(lead)}(?={marker}*{tail})")
            # The first marker of such a run (there must be one): the one escape() added.
            once.append(f"(?<={re.escape(lead)}){marker}(?={marker}*{tail})")
        raw = _either(set(tokens), [family.regex() for family in families])
        return cls(
            leads, re.compile("|".join(needs)), re.compile("|".join(once)), re.compile(raw), tokens, families
        )

    def blob_suspect(self, follower: str) -> re.Pattern[bytes] | None:
        """On orjson's output: where a string may hold a token, an escaped one, or a token cut short
        by the end of a name that ``follower`` (the fixed text written after names) completes.

        ``None`` when a token holds a character JSON escapes (the shortcut is then not used).
        """
        spelt = "".join(self.tokens) + "".join(family.prefix + family.suffix for family in self.families)
        # JSON writes a string verbatim but for '"', '\\' and control characters: none may be in a token.
        if any(c == '"' or c < " " for c in spelt):
            return None
        marker = re.escape(ESCAPE_MARKER)
        ends = [follower[:k] for k in range(1, len(follower) + 1)]
        in_blob = []
        for lead in self.leads:
            tails = _tails(self.tokens, lead)
            own = _own(self.families, lead)
            # A name may end in a token the follower completes; a token cut that way counts
            # anywhere (a superset: the shortcut only has to miss nothing).
            cut = {t[: -len(end)] for t in tails for end in ends if t.endswith(end)}
            family_cuts = [f.tail_regex(len(end)) for f in own for end in ends if f.suffix.endswith(end)]
            suspect = _either(tails | cut, [f.tail_regex() for f in own] + family_cuts)
            in_blob.append(f"{re.escape(lead)}(?={marker}*{suspect})")
        return re.compile("|".join(in_blob).encode())


def _tails(tokens: tuple[str, ...], lead: str) -> set[str]:
    return {token[1:] for token in tokens if token[0] == lead}


def _own(families: tuple[TokenFamily, ...], lead: str) -> list[TokenFamily]:
    return [family for family in families if family.prefix[0] == lead]


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


def insert_after(text: str, positions: list[int]) -> str:
    """``text`` with :data:`ESCAPE_MARKER` inserted after each of the (ascending) ``positions``."""
    pieces = []
    start = 0
    for pos in positions:
        pieces.append(text[start : pos + 1])
        pieces.append(ESCAPE_MARKER)
        start = pos + 1
    pieces.append(text[start:])
    return "".join(pieces)


def insert_marker(match: re.Match[str]) -> str:
    """The replacement that escapes one lead matched by ``Scanner.needs_escape``."""
    return match.group() + ESCAPE_MARKER


class EscapeScheme:
    """The policy applied to single strings, by the scheme above (a mixin of ``ControlTokenGuard``)."""

    policy: str
    _scanner: Scanner
    _lead: str | None

    def _marked(self, text: str, pattern: re.Pattern[str], followed_by: str) -> list[int]:
        """Start positions in ``text`` of ``pattern``'s matches in ``text + followed_by``."""
        end = len(text)
        return [m.start() for m in pattern.finditer(text + followed_by) if m.start() < end]

    def _contains_lead(self, text: str) -> bool:
        leads = self._scanner.leads
        if len(leads) == 1:
            return leads in text
        return any(lead in text for lead in leads)

    def find(self, text: str, followed_by: str = "") -> tuple[int, str] | None:
        """The first control token that ``text`` puts in the prompt, as ``(start, token)``, or ``None``.

        ``followed_by`` is the fixed text the template writes right after ``text``; a token that
        starts in ``text`` and ends in it counts.
        """
        if not self._contains_lead(text):
            return None
        end = len(text)
        for m in self._scanner.raw_token.finditer(text + followed_by):
            if m.start() >= end:
                break
            return m.start(), m.group()
        return None

    def escape(self, text: str, followed_by: str = "") -> str:
        """``text`` with every control token it puts in the prompt neutralised (see the module docstring).

        Returns ``text`` itself when it holds neither a token nor an escaped one.
        """
        if not self._contains_lead(text):
            return text
        if not followed_by:
            return self._scanner.needs_escape.sub(insert_marker, text)
        positions = self._marked(text, self._scanner.needs_escape, followed_by)
        return insert_after(text, positions) if positions else text

    def unescape(self, text: str, followed_by: str = "") -> str:
        """The inverse of :meth:`escape`: ``unescape(escape(t, f), f) == t`` for every ``t`` and ``f``."""
        if not self._contains_lead(text):
            return text
        if not followed_by:
            return self._scanner.escaped_once.sub("", text)
        positions = set(self._marked(text, self._scanner.escaped_once, followed_by))
        return "".join(ch for i, ch in enumerate(text) if i not in positions)

    def guard_text(self, text: str, path: str, followed_by: str = "") -> str:
        """Apply the policy to one untrusted string rendered at ``path``.

        ``escape``: the escaped text; ``reject``: ``text`` unchanged or :class:`InjectionError`;
        ``allow``: ``text``.
        """
        try:
            return self._text(text, followed_by)
        except Hit as hit:
            raise hit.error(path) from None

    def _text(self, text: str, followed_by: str = "") -> str:
        """The policy applied to one string; a token under ``reject`` raises :class:`_Hit`.

        A subclass of ``str`` comes back as the plain string of its data, checked: its ``__str__``
        could print other text than the data the search reads, and transformers hands templates
        the plain string too. (``allow`` reads nothing, so it changes nothing.)
        """
        if type(text) is not str and self.policy != "allow":
            text = str.__str__(text)
        lead = self._lead
        if lead is not None and lead not in text:
            return text
        if self.policy == "escape":
            return self.escape(text, followed_by)
        if self.policy == "reject":
            found = self.find(text, followed_by)
            if found is not None:
                raise Hit(found[1])
        return text

    # -- structures -------------------------------------------------------------------------------------
    #
    # The walkers below build no paths while they look: a token found under ``reject`` raises _Hit,
