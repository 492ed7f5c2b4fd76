"""How a session's request relates to the one it rendered last: the check every incremental renderer
makes before it reuses anything (``prompt_formats.session``; the rules: docs/serving.md, "Sessions")."""

from __future__ import annotations

from typing import Any

__all__ = ["ExtendingRenderer", "RenderAgain", "drop_chunks_after", "extension"]

_DICT_ONLY = frozenset({dict})


def extension(rendered: list[Any], messages: Any) -> bool | None:
    """Whether ``messages`` extends ``rendered``, the messages rendered last.

    ``True``: a list that starts with the very message objects of ``rendered`` (not empty), the messages
    after them all dicts; ``False``: a list of dicts that does not (render it from the start);
    ``None``: anything else (not a list, or a message that is not a dict), which a full render takes.
    Identity, not equality, is the check: the session's contract is that rendered messages are not
    mutated, and comparing them would cost what reusing them saves.
    """
    if type(messages) is not list:
        return None
    given: list[Any] = messages
    count = len(rendered)
    extends = 0 < count <= len(given)
    # A loop, not all(map(operator.is_, ...)): compiled, it is one pointer comparison a message, where
    # the map makes a call of is_ for each (bench_session.py, the harmony rows of the compiled build);
    # in the pure build it costs a little more than the map.
    for i in range(count if extends else 0):
        if rendered[i] is not given[i]:
            extends = False
            break
    if not set(map(type, given[count:] if extends else given)) <= _DICT_ONLY:
        return None
    return extends


def drop_chunks_after(chunks: list[str], ends: list[int], stable: int) -> None:
    """Drop the joined chunks (``chunks[i]`` ends at piece ``ends[i]``) that reach past piece ``stable``:
    they hold a piece that changed."""
    while ends and ends[-1] > stable:
        ends.pop()
        chunks.pop()


class RenderAgain(Exception):
    """Raised by :meth:`ExtendingRenderer._extend`: what the new messages change takes a render from the start."""


class ExtendingRenderer:
    """The part every incremental renderer shares: which request extends the last, and stepping aside.

    A subclass sets ``_rendered`` (the message objects rendered last) and its joined ``_chunks`` of
    unchanged pieces in ``_reset``, and provides ``_first`` (render
    every message), ``_extend`` (render the messages after ``_rendered``, or raise :class:`RenderAgain`),
    each returning how much of its state is unchanged, and ``_reset`` (drop all state).
    """

    __slots__ = ("_chunk_ends", "_chunks", "_rendered")
    _rendered: list[Any]  # the caller's message objects, as last rendered
    _chunks: list[str]  # the pieces before _chunk_ends[i] (after the one before) joined
    _chunk_ends: list[int]

    def _first(self, messages: list[Any]) -> int:
        raise NotImplementedError

    def _extend(self, messages: list[Any]) -> int:
        raise NotImplementedError

    def _reset(self) -> None:
        raise NotImplementedError

    def _stable(self, messages: Any) -> int | None:
        """Render what ``messages`` changes: what ``_first`` or ``_extend`` returns; ``None`` (state
        dropped) to step aside to a full render, which renders what this could not or raises its error."""
        try:
            checked = extension(self._rendered, messages)
            if checked is None:
                self._reset()
                return None
            try:
                stable = self._extend(messages) if checked else self._first(messages)
            except RenderAgain:
                stable = self._first(messages)
        except Exception:  # the full render raises it, or renders what this could not
            self._reset()
            return None
        self._rendered = list(messages)
        drop_chunks_after(self._chunks, self._chunk_ends, stable)  # they hold a piece that changed
        return stable
