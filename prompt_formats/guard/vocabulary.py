"""What a format family tells the guard: its control tokens and how its template reads untrusted text.

The guard (:mod:`prompt_formats.guard`) knows no format: each family spells its tokens in its
``tokens.py`` as :class:`ControlTokens` and describes how its template puts untrusted text in the
prompt (:class:`UntrustedReading`, in the family's ``untrusted.py``); the guard reads fields that way.

A set is literal tokens plus *token families*: a tokenizer vocabulary can hold a whole range of
special tokens (o200k_harmony reserves ``<|reserved_200000|>`` onwards), and a range is covered by
its pattern, not by a list that is only as good as the vocabulary it was copied from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import attrs

from ..model.reading import part_kind

__all__ = [
    "ESCAPE_MARKER",
    "ControlTokens",
    "FastGuard",
    "TokenFamily",
    "UntrustedReading",
    "is_text_part",
    "parts_clean",
]

#: The character :meth:`ControlTokenGuard.escape` inserts after a token's first character.
ESCAPE_MARKER = "\\"

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


class ControlTokens(tuple[str, ...]):
    """A family's control tokens: the literal ones (the tuple's items) and the ranges of its
    vocabulary covered by pattern (``families``, read-only), which a guard over the set covers.

    Compares, hashes and iterates as the tuple of its literal tokens. A set that declares families
    is remembered (:func:`declared_families`): any collection holding all of its literal tokens —
    the plain tuple of it, a list, the set extended by more tokens — covers its families too, so a
    guard never covers less than the family declared.
    """

    _families: tuple[TokenFamily, ...]

    def __new__(cls, tokens: Iterable[str], families: Iterable[TokenFamily] = ()) -> ControlTokens:
        made = super().__new__(cls, tokens)
        object.__setattr__(made, "_families", tuple(families))
        if made._families:  # remembered once per distinct set (unpickling makes the same set again)
            _DECLARED.setdefault((tuple(made), made._families), made)
        return made

    @property
    def families(self) -> tuple[TokenFamily, ...]:
        return self._families

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ControlTokens is immutable: cannot set {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (ControlTokens, (tuple(self), self._families))


#: Every distinct ControlTokens set made that declares families (a family's tokens.py makes one at import).
_DECLARED: dict[tuple[tuple[str, ...], tuple[TokenFamily, ...]], ControlTokens] = {}


def declared_families(tokens: Iterable[str]) -> tuple[TokenFamily, ...]:
    """The families ``tokens`` covers: its own (a :class:`ControlTokens`), and those of every declared
    set all of whose literal tokens it holds; in that order, each once."""
    held = set(tokens)
    found: list[TokenFamily] = list(getattr(tokens, "families", ()))
    for declared in tuple(_DECLARED.values()):
        if held.issuperset(declared):
            found.extend(declared.families)
    return tuple(dict.fromkeys(found))


def is_text_part(part: Any) -> bool:
    """A content part rendered as its ``text``: a mapping of the text kind whose ``text`` is a string."""
    return isinstance(part, Mapping) and part_kind(part) == "text" and isinstance(part.get("text"), str)


def parts_clean(content: Any, lead: str) -> bool:
    """True if ``content`` is a list of exact dicts none of whose ``text`` can hold a token (each is
    ``None``, absent, or an exact ``str`` without ``lead``); False if unsure.

    No text part then holds the lead, so no run of them does: the guard leaves such content as it is."""
    if type(content) is not list:
        return False
    for part in content:
        if type(part) is not dict:
            return False
        text = part.get("text")
        if text is not None and (type(text) is not str or lead in text):
            return False
    return True


@attrs.frozen
class UntrustedReading:
    """One format family's reading of untrusted fields.

    ``tokens`` and ``families``: the family's control tokens (what a guard made for it covers).
    ``join_parts``: adjacent text parts of a message are concatenated with nothing between them, so
    a token split across parts counts. ``tool_calls``: tool-call names and arguments in history are
    rendered. ``name_follower``: the fixed text written right after a tool-call name or argument
    name (``""`` for none), which can complete a token the name ends with. ``text_part``: which
    content parts are rendered as their text (a text that is no string as the template prints it,
    its plain data's ``str``; no ``text``, nothing). ``silent_part``: which other parts write
    nothing, so that the text parts on either side of them are adjacent (``None``: every other part
    writes something between them). ``trim_parts``: each text part is ``str.strip()``-ped before
    the parts are joined. ``roles``: a message's role is written as it is given (Gemma 3 writes any
    role but ``assistant``), so it is untrusted text too.
    """

    tokens: tuple[str, ...]
    families: tuple[TokenFamily, ...] = ()
    join_parts: bool = True
    tool_calls: bool = True
    name_follower: str = ""
    text_part: Callable[[Any], bool] = is_text_part
    silent_part: Callable[[Any], bool] | None = None
    trim_parts: bool = False
    roles: bool = False


class FastGuard(NamedTuple):
    """The guard's policy as a renderer applies it where it reads each untrusted string
    (:meth:`ControlTokenGuard.fast_path`). Each function is the one :meth:`~ControlTokenGuard.guard_messages`
    applies to that field; each may raise (a token under ``reject``, a value too deep to check), and
    the renderer then steps aside to the checked path."""

    #: The one character every token starts with: a string without it is left as it is. JSON text
    #: writes it as itself (it is none of ``"``, ``\\`` and the control characters).
    lead: str
    #: The fixed text the format writes right after a tool-call name or argument name.
    follower: str
    #: A search that finds something in every string the policy would change or refuse (followed
    #: by its fixed text), and in the JSON text of every such value; it may find more.
    suspect: Callable[[str], object]
    #: The policy on one string followed by fixed text: ``text(string, follower)``.
    text: Callable[[str, str], str]
    #: The policy on a message's content (a string, a list of parts, anything else as it is).
    content: Callable[[Any], Any]
    #: The policy on a JSON-like value, every string in it (a tool-call argument value).
    json: Callable[[Any], Any]
