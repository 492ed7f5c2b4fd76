"""The last few prompts a :class:`~prompt_formats.integrations.segments.SegmentEncoder` encoded, kept whole.

An agent session's follow-up request starts with the text of the request before it (up to where
the template renders an earlier turn differently). Its ids and masks up to such a shared place are
the earlier prompt's, so only the rest is split, looked up and assembled: in an agent session,
most of each prompt.

Where it is exact: the tokenizer splits a text at its first-pass added tokens scanning left to
right, leftmost-longest. A place ``cut`` where the earlier prompt's scan ended a first-pass match,
with both texts equal up to at least ``cut + longest`` (``longest`` the longest first-pass token),
is one where the new prompt's scan ends the same match: every candidate match starting before
``cut`` lies in the shared text. So the stretches and tokens before ``cut`` are the same, and so are
their ids. Their mask is the same when the generated ranges, clipped to ``[0, cut)``, are equal
(a token overlaps a range exactly when it overlaps the range's part before ``cut``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import NamedTuple

from ..format.spans import Range

__all__ = ["Encoded", "RecentPrompts", "common_prefix_length", "ranges_agree_until"]

_SCAN = 64  # below this many characters, compare one by one


class Encoded(NamedTuple):
    """One encoded prompt: its ids and mask (immutable: not the lists returned, and not tracked by
    the collector), and the places after its first-pass added tokens (``cut_chars``, ascending) with
    the number of tokens before each."""

    text: str
    generated: tuple[Range, ...]
    ids: tuple[int, ...]
    mask: bytes
    cut_chars: list[int]
    cut_tokens: list[int]


def common_prefix_length(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b`` (copying at most about ``len(a)``)."""
    low, high = 0, min(len(a), len(b))  # a[:low] == b[:low]; a mismatch, if any, lies in [low, high)
    while high - low > _SCAN:
        middle = (low + high) // 2
        if a.startswith(b[low:middle], low):
            low = middle
        else:
            high = middle
    while low < high and a[low] == b[low]:
        low += 1
    return low


def ranges_agree_until(a: Sequence[Range], b: Sequence[Range]) -> int | None:
    """The largest ``cut`` such that ``a`` and ``b`` clipped to ``[0, c)`` are equal for every
    ``c <= cut`` (sorted, non-overlapping ranges); None when they are equal."""
    for (a_start, a_end), (b_start, b_end) in zip(a, b, strict=False):  # the longer one's rest is looked at below
        if a_start != b_start:
            return min(a_start, b_start)
        if a_end != b_end:
            return min(a_end, b_end)
    if len(a) == len(b):
        return None
    return (a[len(b)] if len(a) > len(b) else b[len(a)])[0]


class RecentPrompts:
    """The last ``size`` prompts encoded, most recent first (not locked: the encoder's lock guards it)."""

    def __init__(self, size: int, longest: int) -> None:
        self._size = size
        self._longest = longest
        self._kept: list[Encoded] = []

    def reuse(self, text: str, generated: tuple[Range, ...]) -> tuple[int, list[int], list[int], list[int], list[int]]:
        """``(start, ids, mask, cut_chars, cut_tokens)``: the longest beginning of ``text`` whose ids and
        mask a kept prompt gives exactly (fresh lists), ``(0, [], [], [], [])`` when none does."""
        best: tuple[int, int, int, Encoded] | None = None  # (characters, cuts used, tokens, prompt)
        for prompt in self._kept:
            found = self._shared(prompt, text, generated)
            if found[0] > 0 and (best is None or found[0] > best[0]):
                best = (*found, prompt)
            if found[0] and found[1] >= len(prompt.cut_chars) - 1:  # all of a prompt but its end: enough
                break
        if best is None:
            return 0, [], [], [], []
        start, used, tokens, prompt = best
        self._kept.remove(prompt)
        self._kept.insert(0, prompt)
        ids, mask = list(prompt.ids[:tokens]), list(prompt.mask[:tokens])
        return start, ids, mask, prompt.cut_chars[:used], prompt.cut_tokens[:used]

    def _shared(self, prompt: Encoded, text: str, generated: tuple[Range, ...]) -> tuple[int, int, int]:
        """``(characters, cuts, tokens)``: the place up to which ``prompt`` gives ``text``'s tokens, how
        many of its cuts lie up to it and how many tokens lie before it (zeros: none)."""
        first = min(_SCAN, len(text), len(prompt.text))
        if prompt.text[:first] != text[:first]:  # the usual case for a prompt of another conversation
            return 0, 0, 0
        shared = len(prompt.text) if text.startswith(prompt.text) else common_prefix_length(text, prompt.text)
        agree = ranges_agree_until(generated, prompt.generated)
        if shared == len(text) == len(prompt.text) and agree is None:
            return shared, len(prompt.cut_chars), len(prompt.ids)  # the same prompt again: all of it
        limit = shared - self._longest
        if agree is not None:
            limit = min(limit, agree)
        used = bisect_right(prompt.cut_chars, limit)
        return (prompt.cut_chars[used - 1], used, prompt.cut_tokens[used - 1]) if used else (0, 0, 0)

    def keep(self, prompt: Encoded) -> None:
        """Keep ``prompt`` as the most recent, dropping the oldest past ``size``."""
        if self._size == 0:
            return
        self._kept.insert(0, prompt)
        del self._kept[self._size:]
