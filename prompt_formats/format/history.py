"""How a session's request relates to the one it rendered last: the check every incremental renderer
makes before it reuses anything (``prompt_formats.format.session``; the rules: docs/serving.md, "Sessions")."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import is_
from typing import Any, ClassVar, Final

__all__ = ["UNSPLIT", "ExtendingRenderer", "RenderAgain", "drop_chunks_after", "extension", "joined_prompt",
           "joined_with", "turn_texts"]

#: Whether this module runs compiled (its file is then the C extension, not this source or its bytecode).
_COMPILED: Final = not __file__.endswith((".py", ".pyc"))


def extension(rendered: list[Any], messages: Any, first_reads_any: bool = False) -> bool | None:
    """Whether ``messages`` extends ``rendered``, the messages rendered last.

    ``True``: a list that starts with the very message objects of ``rendered`` (not empty), the messages
    after them all dicts; ``False``: a list of dicts that does not (render it from the start), or with
    ``first_reads_any`` (a renderer whose first render reads every message as ``render`` does), any
    list that does not; ``None``: anything else (not a list, or a message that is not a dict), which a
    full render takes. Identity, not equality, is the check: the session's contract is that rendered
    messages are not mutated, and comparing them would cost what reusing them saves.
    """
    if type(messages) is not list:
        return None
    given: list[Any] = messages
    count = len(rendered)
    extends = 0 < count <= len(given) and _same_objects(rendered, given)
    if not extends and first_reads_any:
        return False  # (checking each message's type cost 2-8% of such a render)
    if not _all_dicts(given[count:] if extends else given):
        return None
    return extends


def _all_dicts(messages: list[Any]) -> bool:
    """Whether every item of ``messages`` is exactly a dict, told by identity: a set of their types,
    or counting ``dict`` among them, compares types by ``==`` (and a set by hash), which a class
    whose metaclass says it equals ``dict`` (and hashes as it) passes. Written for each build, as
    :func:`_same_objects` is."""
    if not _COMPILED:
        return all(map(is_, map(type, messages), repeat(dict)))
    return all(type(message) is dict for message in messages)  # mypyc makes it a loop


def _same_objects(rendered: list[Any], given: list[Any]) -> bool:
    """Whether ``given`` starts with the very objects of ``rendered`` (not longer than ``given``).

    One check, written for each build, as sessions make it on every turn: compiled, a loop (mypyc
    writes ``all()`` of a generator as one) is a pointer comparison an item, where the map of
    ``operator.is_`` makes a call of it for each; in the pure build the map is the cheaper of the
    two (one C loop against a bytecode loop or a generator). The tests run both builds.
    """
    if not _COMPILED:
        return all(map(is_, rendered, given))
    return all(rendered[i] is given[i] for i in range(len(rendered)))  # mypyc makes it a loop


def drop_chunks_after(chunks: list[str], ends: list[int], stable: int) -> None:
    """Drop the joined chunks (``chunks[i]`` ends at piece ``ends[i]``) that reach past piece ``stable``:
    they hold a piece that changed."""
    while ends and ends[-1] > stable:
        ends.pop()
        chunks.pop()


#: How many stable turns are joined into one chunk of the prompt's head: the prompt is then the
#: prologue, a few chunks and the last turns, so that joining it copies each turn's text once.
_CHUNK = 16


def joined_prompt(head: tuple[str, ...], texts: list[str], chunks: list[str], ends: list[int], stable: int,
                  tail: str, unsplit: Sequence[str] = ()) -> str:
    """The prompt of an incremental renderer: ``head`` (the pieces before the turns), the ``chunks``
    of turns (``texts``) before ``stable`` (one more when enough turns are stable: it is added to
    ``chunks`` and ``ends``), the other turns, ``tail``. A first chunk that is :data:`UNSPLIT` is
    the pieces ``unsplit``."""
    upto = ends[-1] if ends else 0
    end = min(stable, len(texts) - 2)  # the next request re-renders the last turn, often the one before
    if end - upto >= _CHUNK:
        chunks.append("".join(texts[upto:end]))
        ends.append(end)
        upto = end
    if chunks and chunks[0] is UNSPLIT:
        return "".join((*head, *unsplit, *chunks[1:], *texts[upto:], tail))
    if not chunks and not head:  # (every piece: joined where they are, not copied into a tuple first)
        return joined_with(texts, tail)
    return "".join((*head, *chunks, *texts[upto:], tail))


def joined_with(pieces: list[str], tail: str) -> str:
    """``"".join(pieces) + tail``, the pieces joined where they are (a first render's: hundreds of
    them, which a tuple of them and the tail would copy first) and left as they were."""
    pieces.append(tail)
    try:
        return "".join(pieces)
    finally:
        pieces.pop()


def _past_tail(texts: list[str], start: int, tail: str) -> int | None:
    """The piece where ``texts[start:]`` goes on once its text has begun with ``tail``; ``None`` where
    it does not begin with ``tail`` or ``tail`` ends inside a piece."""
    at = start
    while tail:
        if at == len(texts) or not tail.startswith(texts[at]):
            return None
        tail = tail[len(texts[at]):]
        at += 1
    return at


def turn_texts(pieces: list[str], starts: list[int], first: int = 0) -> list[str]:
    """The text of each message from ``first`` on, its pieces joined (``starts``: where each
    message's pieces start, then where the last one's end)."""
    return ["".join(pieces[starts[i]:starts[i + 1]]) for i in range(first, len(starts) - 1)]


#: The text of a turn still in the pieces of the prompt it was joined into (:meth:`ExtendingRenderer._unsplit`):
#: a unique object, told by identity (made at run time, so that no literal is ever the same object).
UNSPLIT = "".join(("<unsplit ", "turn>"))

#: A first render's pieces, where each message's pieces start in them (then where the last ends),
#: and the texts list the renderer keeps, whose UNSPLIT texts are those pieces joined.
_Pieces = tuple[list[str], list[int], list[str]]


def _join_unsplit(source: _Pieces, start: int, stop: int) -> None:
    """Join the texts of messages ``start`` to ``stop - 1`` that are still UNSPLIT in ``source``."""
    pieces, bounds, texts = source
    for index in range(start, stop):
        if texts[index] is UNSPLIT:
            texts[index] = "".join(pieces[bounds[index]:bounds[index + 1]])


class RenderAgain(Exception):
    """Raised by :meth:`ExtendingRenderer._extend`: what the new messages change takes a render from the start."""


class ExtendingRenderer:
    """The part every incremental renderer shares: which request extends the last, and stepping aside.

    A subclass sets ``_rendered`` (the message objects rendered last) and its joined ``_chunks`` of
    unchanged pieces in ``_reset``, and provides ``_first`` (render
    every message), ``_extend`` (render the messages after ``_rendered``, or raise :class:`RenderAgain`),
    each returning how much of its state is unchanged, and ``_reset`` (drop all state). A ``_first``
    may keep its texts UNSPLIT (:meth:`_unsplit`); its ``_extend`` then reads old texts through
    :meth:`_text` and writes each text it renders again.
    """

    __slots__ = ("_chunk_ends", "_chunks", "_last", "_rendered", "_source", "_split", "_stepped_aside")
    _rendered: list[Any]  # the caller's message objects, as last rendered
    _chunks: list[str]  # the pieces before _chunk_ends[i] (after the one before) joined
    _chunk_ends: list[int]
    # The prompt returned last, how many pieces it held and its tail, while no chunk is joined (else None).
    _last: tuple[str, int, str] | None
    # The pieces of a first render whose texts are UNSPLIT (:meth:`_unsplit`), until the next request.
    _source: _Pieces | None
    # Such a render's pieces, while the first chunk is made of them (its messages' texts UNSPLIT,
    # joined only if it is dropped), and that chunk: UNSPLIT, or its text once joined.
    _split: tuple[_Pieces, str] | None
    # Whether a request stepped aside because its walk raised (see _first_reads_any); unset before.
    _stepped_aside: bool

    #: Whether ``_first`` reads every message as ``render`` first reads it, whatever its type (the
    #: format's own reading of a message that is not a dict), and later requests read the earlier
    #: messages only so (through the walk): a first render then needs no check that every message is
    #: a dict. Once a request has stepped aside (its walk raised, as on a message ``render`` reads
    #: only the second time, as plain data), the session checks again: what failed is likely to recur.
    _first_reads_any: ClassVar[bool] = False

    def _first(self, messages: list[Any]) -> int:
        raise NotImplementedError

    def _reuses_last_prompt(self) -> bool:
        """Whether :meth:`_prompt` keeps the last prompt for the next request to take as its chunk:
        for a walk that only appends to its pieces and whose reply turn opens with its generation
        prompt (else the prompt would be held for nothing)."""
        return False

    def _extend(self, messages: list[Any]) -> int:
        raise NotImplementedError

    def _reset(self) -> None:
        raise NotImplementedError

    def _stable(self, messages: Any) -> int | None:
        """Render what ``messages`` changes: what ``_first`` or ``_extend`` returns; ``None`` (state
        dropped) to step aside to a full render, which renders what this could not or raises its error.
        Every change of state is made here, so a request whose prompt is never joined (an error
        between this and :meth:`_prompt`) leaves the state as right as one that is."""
        last = getattr(self, "_last", None)  # (unset before the first request)
        source = getattr(self, "_source", None)  # an earlier request's first render, taken up below
        self._last = None  # the last prompt is reused only by the request that extends it
        try:
            reads_any = self._first_reads_any and not getattr(self, "_stepped_aside", False)
            checked = extension(self._rendered, messages, reads_any)
            if checked is None:
                self._drop_state()
                return None
            try:  # (_extend reads UNSPLIT texts through _text: the source is taken up after it)
                stable = self._extend(messages) if checked else self._first_again(messages)
            except RenderAgain:
                checked = False
                stable = self._first_again(messages)
        except Exception:  # the full render raises it, or renders what this could not
            self._drop_state()
            self._stepped_aside = True
            return None
        settled = checked and source is not None
        if checked:
            self._last = last
            if source is not None:
                self._source = None
                self._settle(source, stable)
        self._rendered = list(messages)
        self._drop_chunks_after(stable)  # they hold a piece that changed
        if not settled:
            self._join_split_chunk()
        return stable

    def _drop_state(self) -> None:
        self._reset()
        self._source = self._split = None

    def _first_again(self, messages: list[Any]) -> int:
        self._source = self._split = None
        return self._first(messages)

    def _unsplit(self, pieces: list[str], bounds: list[int]) -> list[str]:
        """The texts of a first render's messages, each :data:`UNSPLIT`: :meth:`_prompt` joins
        ``pieces`` (then the tail) into the prompt once, and the next request takes the texts it
        needs from them, the stable ones as one chunk (:meth:`_settle`). ``bounds``: where each
        message's pieces start, then where the last one's end (``pieces`` before the first: the
        prompt's head).

        Why: joining each message's text apart, then the prompt, would copy every turn twice on a
        request that may have no follow-up. The caller keeps the list it gets (changing it in place).
        """
        texts = [UNSPLIT] * (len(bounds) - 1)
        self._source = (pieces, bounds, texts)
        return texts

    def _text(self, texts: list[str], index: int) -> str:
        """``texts[index]``, joined from its pieces while it is UNSPLIT."""
        text = texts[index]
        if text is not UNSPLIT:
            return text
        source, split = getattr(self, "_source", None), getattr(self, "_split", None)
        for pieces, bounds, unsplit in (*((source,) if source else ()), *(split[:1] if split else ())):
            if unsplit is texts:
                return "".join(pieces[bounds[index]:bounds[index + 1]])
        raise LookupError(f"the text of message {index} is neither joined nor in pieces kept")  # (a full render)

    def _settle(self, source: _Pieces, stable: int) -> None:
        """Take up an earlier first render's pieces: the messages before ``stable`` as the first
        chunk, UNSPLIT (its pieces joined into this request's prompt where they are, and into a
        chunk of its own by the next request that keeps it), each later text still UNSPLIT (not
        rendered again since) joined."""
        count = len(source[1]) - 1
        end = min(stable, count)
        if end and not self._chunks:
            self._chunks.append(UNSPLIT)
            self._chunk_ends.append(end)
            self._split = (source, UNSPLIT)
        else:
            end = 0
        _join_unsplit(source, end, count)

    def _split_pieces(self) -> _Pieces | None:
        """The pieces the first chunk is made of (``None``: it is not, or there is none)."""
        split: tuple[_Pieces, str] | None = getattr(self, "_split", None)
        if split is None or not self._chunks or self._chunks[0] is not split[1]:
            return None
        return split[0]

    def _unsplit_chunk(self) -> list[str]:
        """The pieces of an UNSPLIT first chunk (none: no such chunk)."""
        source = self._split_pieces()
        if source is None or self._chunks[0] is not UNSPLIT:
            return []
        pieces, bounds = source[0], source[1]
        return pieces[bounds[0]:bounds[self._chunk_ends[0]]]

    def _join_split_chunk(self) -> None:
        """Join an UNSPLIT first chunk that lasted past the request that made it (likely to last
        more); its pieces are kept, needed if it is dropped."""
        source = self._split_pieces()
        if source is not None and self._chunks[0] is UNSPLIT:
            chunk = self._chunks[0] = "".join(self._unsplit_chunk())
            self._split = (source, chunk)

    def _drop_chunks_after(self, stable: int) -> None:
        """:func:`drop_chunks_after`, the UNSPLIT texts of a dropped first chunk joined first."""
        source = self._split_pieces()
        if source is not None and self._chunk_ends[0] > stable:
            _join_unsplit(source, 0, self._chunk_ends[0])
            self._split = None
        drop_chunks_after(self._chunks, self._chunk_ends, stable)

    def _prompt(self, head: tuple[str, ...], texts: list[str], stable: int, tail: str) -> str:
        """The prompt: ``head``, the pieces ``texts`` (the first ``stable`` unchanged since the last
        prompt), ``tail`` (:func:`joined_prompt`).

        A first render's texts are UNSPLIT (:meth:`_unsplit`): its pieces and ``tail`` are joined
        once; an UNSPLIT first chunk is joined into the prompt from its pieces.

        The second prompt of a conversation would join its pieces twice, into the chunk the next
        requests reuse and into the prompt. Where the last prompt is that chunk's text already (it has
        no head, every piece it held is unchanged, and the new pieces begin with its tail, the
        generation prompt the reply's turn opens with), it is taken as the chunk, joined once.
        """
        source = self._source  # (set by this request's first render: the next request takes it up)
        if source is not None and source[2] is texts:
            return joined_with(source[0], tail)
        last, self._last = self._last, None
        if last is not None and not self._chunks and not head and stable >= last[1]:
            end = _past_tail(texts, last[1], last[2])
            if end is not None:
                self._chunks.append(last[0])
                self._chunk_ends.append(end)
        last = None  # (not held while the prompt is joined: its memory may be the new prompt's)
        text = joined_prompt(head, texts, self._chunks, self._chunk_ends, stable, tail, self._unsplit_chunk())
        # (Kept only while there is no chunk: once there is one, the prompts are made of chunks.)
        reusable = not self._chunks and not head and self._reuses_last_prompt()
        self._last = (text, len(texts), tail) if reusable else None
        return text
