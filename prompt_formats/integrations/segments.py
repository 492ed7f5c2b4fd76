"""Token ids and assistant masks from a cache of the stretches between a tokenizer's added tokens.

A ``tokenizers`` fast tokenizer splits its input at its added tokens first (leftmost-longest over the
tokens that are not ``normalized``, then, within the pieces left, over those that are), gives each
match its id, and normalizes, pre-tokenizes and models each stretch between matches on its own.
Under the configurations :func:`inexact_reason` accepts, nothing else couples the stretches, so a
prompt's ids are the concatenation of its stretches' ids, and a stretch seen before (a tool block,
a system prompt, an agent session's earlier turns) comes from a cache keyed by its text.
:class:`SegmentEncoder` returns exactly what :func:`~prompt_formats.integrations.transformers.encode`
(or ``encode_with_tokenizer``) returns, and steps aside to it for every other configuration.
docs/training-data.md lists the conditions.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import regex

from ..errors import InvalidInputError, type_name
from ..format.spans import Range, RenderedPrompt
from .recent import Encoded, RecentPrompts
from .transformers import _check_text, assistant_token_mask, encode, encode_with_tokenizer

__all__ = ["SegmentEncoder", "inexact_reason"]

# A piece's ids and, when it was asked for, its offsets within the piece. Tuples: the collector
# stops tracking a tuple of ints, so a full cache adds nothing to each collection's work.
Piece = tuple[tuple[int, ...], tuple[tuple[int, int], ...] | None]
# How a piece's tokens are masked: False none, True all, or by the generated ranges it cuts (relative to it).
MaskRule = bool | tuple[Range, ...]
# The kinds of piece a prompt is split into.
_STRETCH, _FIRST, _SECOND = 0, 1, 2
# How many whole prompts an encoder keeps, for a follow-up request that starts with one (recent.py).
_RECENT_PROMPTS = 8

# Steps that act on each stretch alone, whatever precedes it (the rest are refused, not guessed at).
_NORMALIZERS = frozenset({
    "NFC", "NFD", "NFKC", "NFKD", "Lowercase", "Strip", "StripAccents", "Replace", "Prepend", "BertNormalizer",
    "Precompiled", "Nmt", "ByteLevel",
})
_PRE_TOKENIZERS = frozenset({
    "ByteLevel", "Whitespace", "WhitespaceSplit", "Punctuation", "Digits", "Split", "BertPreTokenizer",
    "UnicodeScripts", "CharDelimiterSplit", "Metaspace",
})
_MODELS = frozenset({"BPE", "WordPiece", "WordLevel", "Unigram"})


def _component_reason(part: str, config: Any, allowed: frozenset[str]) -> str | None:
    """Why a normalizer or pre-tokenizer may couple stretches (None: it acts on each one alone)."""
    if config is None:
        return None
    kind = config.get("type")
    if kind == "Sequence":
        for item in config.get(part + "s", config.get("pretokenizers", [])):
            if (reason := _component_reason(part, item, allowed)) is not None:
                return reason
        return None
    if kind not in allowed:
        return f"the {part} {kind!r} is not one known to act on each stretch alone"
    if kind == "Metaspace" and config.get("prepend_scheme") == "first":
        return "the Metaspace pre-tokenizer prepends only at the start of the text (prepend_scheme='first')"
    return None


def inexact_reason(config: dict[str, Any], encode_special_tokens: bool) -> str | None:
    """None when a tokenizer of this ``tokenizer.json`` configuration encodes a text as the
    concatenation of its stretches and added tokens encoded one by one; otherwise why not."""
    if config.get("truncation") is not None or config.get("padding") is not None:
        return "the tokenizer truncates or pads"
    if encode_special_tokens:
        return "the tokenizer encodes special tokens as text (encode_special_tokens)"
    normalizer = config.get("normalizer")
    for token in config.get("added_tokens", []):
        if token["lstrip"] or token["rstrip"] or token["single_word"] or not token["content"]:
            return f"the added token {token['content']!r} has lstrip, rstrip or single_word (or is empty)"
        if token["normalized"] and normalizer is not None:
            return f"the added token {token['content']!r} is matched in normalized text"
    for part, allowed in (("normalizer", _NORMALIZERS), ("pretokenizer", _PRE_TOKENIZERS)):
        key = "pre_tokenizer" if part == "pretokenizer" else part
        if (reason := _component_reason(part, config.get(key), allowed)) is not None:
            return reason
    model = config.get("model", {})
    if model.get("type") not in _MODELS or model.get("dropout"):
        return f"the model {model.get('type')!r} is not a deterministic BPE, WordPiece, WordLevel or Unigram"
    return _post_processor_reason(config.get("post_processor"))


def _post_processor_reason(post: Any) -> str | None:
    """Why a post-processor may treat a stretch's tokens unlike the prompt's (it runs even with
    ``add_special_tokens=False``): ByteLevel's trim_offsets with add_prefix_space spares a text's
    first token; TemplateProcessing then only sets type ids."""
    if post is None or post.get("type") == "TemplateProcessing":
        return None
    if post.get("type") == "Sequence":
        return next(filter(None, map(_post_processor_reason, post.get("processors", []))), None)
    if post.get("type") != "ByteLevel" or (post.get("trim_offsets") and post.get("add_prefix_space")):
        return (
            "the post-processor may change offsets by position (only ByteLevel without both trim_offsets and "
            "add_prefix_space, and TemplateProcessing, are known not to)"
        )
    return None


def _matcher(contents: Sequence[str]) -> Any:
    """Leftmost-longest over ``contents``: at the leftmost place, the longest alternative first."""
    if not contents:
        return None
    return regex.compile("|".join(regex.escape(c) for c in sorted(contents, key=len, reverse=True)))


class SegmentEncoder:
    """``encode`` (or ``encode_with_tokenizer``) with the stretches between added tokens cached.

    ``tokenizer`` is a ``PreTrainedTokenizerFast`` (results as :func:`encode` gives them) or a
    ``tokenizers.Tokenizer`` (as :func:`encode_with_tokenizer`). Its configuration is read once:
    :attr:`exact` says whether the cached path is used, :attr:`reason` why not; each call also
    checks that truncation, padding, ``encode_special_tokens`` and the added vocabulary's size are as
    read, and steps aside to the whole-text call otherwise. The cache is a least-recently-used one
    bounded by ``max_entries`` stretches and ``max_chars`` characters (a stretch longer than
    ``max_chars`` is encoded, not kept). The last few prompts are kept whole too (``recent.py``):
    a prompt that starts with one of them, as an agent session's follow-up request starts with the
    request before it, takes that part's ids and mask from it when they are provably the same
    (none kept when ``max_entries`` is 0). Thread-safe (the cache is locked; the tokenizer is called
    outside the lock); picklable (the tokenizer and the bounds, not the cache).
    """

    def __init__(self, tokenizer: Any, *, max_entries: int = 65_536, max_chars: int = 16_000_000) -> None:
        if max_entries < 0 or max_chars < 0:
            raise InvalidInputError("max_entries", "the cache bounds must not be negative")
        self._tokenizer = tokenizer
        self._max_entries = max_entries
        self._max_chars = max_chars
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, Piece] = OrderedDict()
        self._chars = 0
        self._hf = hasattr(tokenizer, "backend_tokenizer")
        self._backend: Any = tokenizer.backend_tokenizer if self._hf else tokenizer
        self.reason: str | None = self._read_configuration()

    @property
    def exact(self) -> bool:
        """Whether the cached path is used (the tokenizer's configuration makes it exact)."""
        return self.reason is None

    def _read_configuration(self) -> str | None:
        """Why the cached path is not exact for this tokenizer, or None (the splitters then set)."""
        if self._hf and (getattr(self._tokenizer, "split_special_tokens", False)
                         or set(self._tokenizer.model_input_names) != {"input_ids", "attention_mask"}):
            return "the transformers tokenizer splits special tokens or returns inputs other than ids and mask"
        try:
            config = json.loads(self._backend.to_str())
        except (AttributeError, TypeError, ValueError) as exc:
            return f"the tokenizer's configuration cannot be read: {exc}"
        if (reason := inexact_reason(config, bool(self._backend.encode_special_tokens))) is not None:
            return reason
        tokens = config.get("added_tokens", [])
        self._vocab_size = self._backend.get_vocab_size(with_added_tokens=True)
        contents = [t["content"] for t in tokens]
        alone = dict(zip(contents, self._encode_each(contents), strict=True))
        themselves = [t for t in tokens if alone[t["content"]][0] == (t["id"],)]
        # A normalized token holding a non-normalized one is never matched (the first pass takes that one
        # wherever it occurs); a stretch around it is encoded whole. Any other that is not itself is refused.
        if other := [t for t in tokens if t not in themselves and not t["normalized"]]:
            return f"the added token {other[0]['content']!r} alone does not encode to its own id"
        self._first = _matcher([t["content"] for t in themselves if not t["normalized"]])
        self._second = _matcher([t["content"] for t in themselves if t["normalized"]])
        self._added = {t["content"]: alone[t["content"]] for t in themselves}
        first = [t["content"] for t in themselves if not t["normalized"]]
        self._recent = RecentPrompts(_RECENT_PROMPTS, max(map(len, first), default=0))
        return None

    def _encode_each(self, texts: list[str]) -> list[Piece]:
        encodings = self._backend.encode_batch(texts, add_special_tokens=False) if texts else []
        return [(tuple(e.ids), tuple(e.offsets)) for e in encodings]

    def _encode_ids(self, texts: list[str]) -> list[Piece]:
        if not texts:
            return []
        fast = getattr(self._backend, "encode_batch_fast", None)  # the same ids, without tracking offsets
        if fast is None:
            return self._encode_each(texts)
        return [(tuple(e.ids), None) for e in fast(texts, add_special_tokens=False)]

    def _still_exact(self) -> bool:
        """The configuration read is still the tokenizer's (the per-call settings a caller may change)."""
        backend = self._backend
        return (self.reason is None and backend.truncation is None and backend.padding is None
                and not backend.encode_special_tokens
                and backend.get_vocab_size(with_added_tokens=True) == self._vocab_size)

    def encode(self, rendered: RenderedPrompt) -> dict[str, list[int]]:
        """``input_ids``, ``attention_mask`` and ``assistant_masks`` of a rendered prompt: exactly what
        :func:`encode` (for a ``PreTrainedTokenizerFast``) or :func:`encode_with_tokenizer` (for a
        ``tokenizers.Tokenizer``) returns for it, with the same errors."""
        if not isinstance(rendered, RenderedPrompt):
            raise InvalidInputError("rendered", f"expected a RenderedPrompt, got {type_name(rendered)}")
        if not self._still_exact():
            whole = encode(rendered, self._tokenizer) if self._hf else encode_with_tokenizer(rendered, self._tokenizer)
            return dict(whole)
        _check_text(rendered.text, "text")
        text, generated = rendered.text, rendered.generated
        with self._lock:
            start, ids, mask, cut_chars, cut_tokens = self._recent.reuse(text, generated)
        bounds = self._bounds(text, start)
        rules = _mask_rules(bounds, generated)
        pieces = self._pieces([(text[begin:end], type(rule) is tuple)
                               for (begin, end, kind), rule in zip(bounds, rules, strict=True) if not kind])
        stretch = iter(pieces)
        for (begin, end, kind), rule in zip(bounds, rules, strict=True):
            piece_ids, offsets = self._added[text[begin:end]] if kind else next(stretch)
            ids.extend(piece_ids)
            if type(rule) is tuple:
                mask.extend(assistant_token_mask(offsets or [], rule))
            else:
                mask.extend([1 if rule else 0] * len(piece_ids))
            if kind == _FIRST:
                cut_chars.append(end)
                cut_tokens.append(len(ids))
        if self._max_entries and len(text) <= self._max_chars:
            with self._lock:
                self._recent.keep(Encoded(text, generated, tuple(ids), bytes(mask), cut_chars, cut_tokens))
        return {"input_ids": ids, "attention_mask": [1] * len(ids), "assistant_masks": mask}

    def split(self, text: str) -> list[tuple[int, int, bool]]:
        """``(start, end, is_added_token)`` of the text's stretches and added tokens, in order, split
        as the tokenizer splits it: first at its non-normalized added tokens, then within what is
        left at its normalized ones (matched in the text itself: there is no normalizer then)."""
        return [(start, end, kind != _STRETCH) for start, end, kind in self._bounds(text, 0)]

    def _bounds(self, text: str, position: int) -> list[tuple[int, int, int]]:
        """:meth:`split` from ``position`` (0, or the end of a first-pass match), with each piece's
        kind: a stretch, a first-pass or a second-pass added token."""
        out: list[tuple[int, int, int]] = []
        for found in self._first.finditer(text, position) if self._first is not None else ():
            self._split_second(text, position, found.start(), out)
            out.append((found.start(), found.end(), _FIRST))
            position = found.end()
        self._split_second(text, position, len(text), out)
        return out

    def _split_second(self, text: str, start: int, end: int, out: list[tuple[int, int, int]]) -> None:
        position = start
        for found in self._second.finditer(text, start, end) if self._second is not None and start < end else ():
            if found.start() > position:
                out.append((position, found.start(), _STRETCH))
            out.append((found.start(), found.end(), _SECOND))
            position = found.end()
        if end > position:
            out.append((position, end, _STRETCH))

    def _pieces(self, stretches: list[tuple[str, bool]]) -> list[Piece]:
        """Each stretch's ids (and offsets where asked for): from the cache, the others tokenized in
        batched calls (without offsets where none are needed, which is faster)."""
        found: dict[str, Piece] = {}
        with self._lock:
            for text, needs_offsets in stretches:
                piece = self._cache.get(text)
                if piece is not None and (piece[1] is not None or not needs_offsets):
                    self._cache.move_to_end(text)
                    found[text] = piece
        with_offsets = list(dict.fromkeys(text for text, needs in stretches if needs and text not in found))
        asked = set(with_offsets)
        ids_only = list(dict.fromkeys(t for t, needs in stretches if not needs and t not in found and t not in asked))
        fresh = [*zip(with_offsets, self._encode_each(with_offsets), strict=True),
                 *zip(ids_only, self._encode_ids(ids_only), strict=True)]
        found.update(fresh)
        with self._lock:
            for text, piece in fresh:
                self._keep(text, piece)
        return [found[text] for text, _ in stretches]

    def _keep(self, text: str, piece: Piece) -> None:
        """Cache a stretch, evicting the least recently used ones past either bound (lock held)."""
        if len(text) > self._max_chars or self._max_entries == 0:
            return
        if text in self._cache:  # kept without offsets: now with them
            self._cache[text] = piece
            return
        self._cache[text] = piece
        self._chars += len(text)
        while len(self._cache) > self._max_entries or self._chars > self._max_chars:
            evicted, _ = self._cache.popitem(last=False)
            self._chars -= len(evicted)

    def cache_info(self) -> dict[str, int]:
        """How many stretches and characters the cache holds now."""
        with self._lock:
            return {"entries": len(self._cache), "chars": self._chars}

    def __getstate__(self) -> dict[str, Any]:
        return {"tokenizer": self._tokenizer, "max_entries": self._max_entries, "max_chars": self._max_chars}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["tokenizer"], max_entries=state["max_entries"], max_chars=state["max_chars"])  # type: ignore[misc]


def _mask_rules(bounds: list[tuple[int, int, int]], generated: Sequence[Range]) -> list[MaskRule]:
    """Each piece's :data:`MaskRule` by the rule of :func:`assistant_token_mask` (a token is masked
    when its offsets overlap a generated range), knowing that a piece's offsets lie within it."""
    rules: list[MaskRule] = []
    first = 0
    for start, end, _ in bounds:
        while first < len(generated) and generated[first][1] <= start:
            first += 1
        touching = []
        index = first
        while index < len(generated) and generated[index][0] < end:
            touching.append((generated[index][0] - start, generated[index][1] - start))
            index += 1
        if not touching:
            rules.append(False)  # start <= s <= e <= end: no range overlaps a token
        elif len(touching) == 1 and touching[0][0] < 0 and touching[0][1] > end - start:
            rules.append(True)  # the one range around the piece overlaps every token
        else:
            rules.append(tuple(touching))
    return rules
