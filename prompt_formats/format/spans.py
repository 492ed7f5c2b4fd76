"""Where every message lands in a rendered prompt, and which characters the model generated.

:class:`RenderedPrompt` is what a format's ``render_spans`` returns: the prompt text (exactly what
``render`` returns for the same call), per input message the character ranges it produced, and the
ranges the model generates, from which :meth:`RenderedPrompt.assistant_mask` makes a 0/1 mask per
character. Ranges are ``(start, end)`` pairs of string indices, ``end`` exclusive, as in
``text[start:end]``.

The rest of this module is the part of span rendering that does not depend on a format: which
assistant turns count as generated under a ``generated=`` policy, and the canonical form of a set of
ranges (sorted, no empty range, no two ranges that overlap or touch). What each format counts as
generated inside an assistant turn is the format's to say (docs/training-data.md).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs

from ..errors import InvalidInputError, type_name
from ..model.reading import REASONING_FIELDS

__all__ = [
    "GENERATED_POLICIES",
    "GeneratedPolicy",
    "Range",
    "RenderedPrompt",
    "calls_hold_text",
    "check_generated_policy",
    "content_holds_text",
    "cut_prompt",
    "holds_text",
    "is_text_part",
    "normalize_ranges",
    "noted_ranges",
    "select_generated",
]

#: A half-open character range ``(start, end)`` of a prompt's text.
Range = tuple[int, int]
#: Which assistant turns count as generated (see :func:`select_generated`).
GeneratedPolicy = Literal["all", "last", "after_last_user"]
GENERATED_POLICIES: tuple[GeneratedPolicy, ...] = ("all", "last", "after_last_user")


@attrs.frozen(slots=True)
class RenderedPrompt:
    """A rendered prompt with the ranges each message produced and the ranges the model generated.

    Guarantees (checked when the object is made, so a ``RenderedPrompt`` that exists holds them):

    - ``text`` is the prompt, exactly as ``render`` returns it for the same arguments.
    - ``messages`` has one entry per input message, in input order: a tuple of ``(start, end)``
      ranges in canonical form (:func:`normalize_ranges`), none overlapping a range of another message
      (a character of the prompt comes from at most one message). Several ranges where the template splits a message or
      merges it with others; an empty tuple where it renders nothing of it. Text outside every
      message's ranges is the template's own text (markers, role headers, the tools block, the
      generation prompt).
    - ``generated`` is in canonical form (:func:`normalize_ranges`): sorted, none empty, no two
      overlapping or touching. Two prompts generate the same characters exactly when their
      ``generated`` are equal.
    - Every range lies within ``0 <= start < end <= len(text)``.
    - ``dropped`` names, as error paths do (``messages[2]``, ``messages[7].tool_calls[1]``,
      ``messages[4].reasoning_content``, ``tools[3]``, ``builtin_tools[1]``), every input the template
      read past and left out of the prompt although it held text: a whole message, a field of one, a
      tool, an option's entry. Options and tools first, then by message index. Empty when nothing was
      lost. Each format's page lists what its template drops; ``strict=True`` refuses exactly the
      inputs for which it is not empty.

    Immutable, hashable, picklable.
    """

    text: str
    messages: tuple[tuple[Range, ...], ...]
    generated: tuple[Range, ...]
    dropped: tuple[str, ...] = ()

    def __attrs_post_init__(self) -> None:
        if type(self.text) is not str:
            raise InvalidInputError("text", f"expected a string, got {type_name(self.text)}")
        size = len(self.text)
        if type(self.messages) is not tuple:
            raise InvalidInputError("messages", f"expected a tuple, got {type_name(self.messages)}")
        claimed: list[tuple[int, int, int]] = []
        for index, ranges in enumerate(self.messages):
            path = f"messages[{index}]"
            _check_ranges(ranges, size, path)
            claimed.extend((start, end, index) for start, end in ranges)
        claimed.sort()
        for (_, previous_end, previous), (start, _, index) in itertools.pairwise(claimed):
            if start < previous_end:
                raise InvalidInputError(
                    f"messages[{index}]", f"overlaps a range of messages[{previous}] at character {start}"
                )
        _check_ranges(self.generated, size, "generated")
        if type(self.dropped) is not tuple or not all(type(path) is str for path in self.dropped):
            raise InvalidInputError("dropped", f"expected a tuple of field paths, got {self.dropped!r}")

    @classmethod
    def unchecked(
        cls,
        text: str,
        messages: tuple[tuple[Range, ...], ...],
        generated: tuple[Range, ...],
        dropped: tuple[str, ...] = (),
    ) -> RenderedPrompt:
        """The same object as ``RenderedPrompt(text, messages, generated, dropped)``, without the checks.

        For the package's renderers only: their output holds the guarantees by construction, which
        the differential tests check on every case (tests/spans/), and checking them again on
        every call would spend much of render_spans' budget (1.2 times render) on long sessions.
        """
        # The slots' own setters, past the frozen class's __setattr__: half the cost of
        # object.__setattr__, which counts on short conversations.
        prompt = _new(cls)
        _SET_TEXT(prompt, text)
        _SET_MESSAGES(prompt, messages)
        _SET_GENERATED(prompt, generated)
        _SET_DROPPED(prompt, dropped)
        return prompt

    def assistant_mask(self) -> bytearray:
        """One byte per character of ``text``: 1 where the character is generated, else 0."""
        mask = bytearray(len(self.text))
        for start, end in self.generated:
            mask[start:end] = b"\x01" * (end - start)
        return mask


_new = object.__new__
_SET_TEXT = RenderedPrompt.__dict__["text"].__set__
_SET_MESSAGES = RenderedPrompt.__dict__["messages"].__set__
_SET_GENERATED = RenderedPrompt.__dict__["generated"].__set__
_SET_DROPPED = RenderedPrompt.__dict__["dropped"].__set__


def _check_ranges(ranges: object, size: int, path: str) -> None:
    """Raise :class:`InvalidInputError` unless ``ranges`` is a tuple of ``(start, end)`` pairs of ints
    within ``[0, size]`` in canonical form (sorted, none empty, no two overlapping or touching)."""
    if type(ranges) is not tuple:
        raise InvalidInputError(path, f"expected a tuple of (start, end) ranges, got {type_name(ranges)}")
    floor = 0
    for position, pair in enumerate(ranges):
        where = f"{path}[{position}]"
        if type(pair) is not tuple or len(pair) != 2 or type(pair[0]) is not int or type(pair[1]) is not int:
            raise InvalidInputError(where, f"expected a (start, end) pair of ints, got {pair!r}")
        start, end = pair
        if not 0 <= start < end <= size:
            raise InvalidInputError(where, f"expected 0 <= start < end <= {size}, got ({start}, {end})")
        if position and start <= floor:
            raise InvalidInputError(where, f"starts at {start}, inside or touching the range before it")
        floor = end


def _clipped(ranges: tuple[Range, ...], end: int) -> tuple[Range, ...]:
    return tuple((start, min(stop, end)) for start, stop in ranges if start < end)


def cut_prompt(rendered: RenderedPrompt, end: int, dropped: Sequence[str]) -> RenderedPrompt:
    """``rendered`` with its text cut at ``end``, where ``continue_final_message`` ends the prompt
    inside the final message: every range clipped to the cut (so the continued message's runs to
    the end of the prompt), those left empty taken out; ``dropped``: the losses of the cut prompt."""
    return RenderedPrompt.unchecked(
        rendered.text[:end], tuple(_clipped(ranges, end) for ranges in rendered.messages),
        _clipped(rendered.generated, end), tuple(dropped),
    )


def check_generated_policy(policy: object) -> GeneratedPolicy:
    """Return ``policy`` if it is one of ``"all"``, ``"last"``, ``"after_last_user"``.

    Raises :class:`~prompt_formats.errors.InvalidInputError` (path ``generated``) for anything else.
    """
    if type(policy) is str:
        for known in GENERATED_POLICIES:
            if policy == known:
                return known
    choices = ", ".join(repr(known) for known in GENERATED_POLICIES)
    raise InvalidInputError("generated", f"expected one of {choices}, got {policy!r}")


def select_generated(
    roles: Sequence[str],
    generated_by_message: Sequence[Iterable[Range]],
    policy: object = "all",
) -> tuple[Range, ...]:
    """The generated ranges of the assistant messages ``policy`` selects, in canonical form.

    ``roles[i]`` is input message ``i``'s role and ``generated_by_message[i]`` the ranges the format
    counts as generated in it (only assistant messages' ranges are ever selected). Policies, by
    input message index, with roles compared exactly:

    - ``"all"``: every message whose role is ``"assistant"``.
    - ``"last"``: the last message whose role is ``"assistant"`` (none if there is none).
    - ``"after_last_user"``: every ``"assistant"`` message after the last message whose role is
      ``"user"``; all of them if no message is a user's. A user message that only carries tool
      results (ChatML's ``<tool_response>`` turns) still counts as a user message here.

    Raises :class:`~prompt_formats.errors.InvalidInputError` for an unknown policy or when the two
    sequences differ in length.
    """
    known = check_generated_policy(policy)
    if len(roles) != len(generated_by_message):
        raise InvalidInputError(
            "generated", f"{len(roles)} roles but {len(generated_by_message)} entries of generated ranges"
        )
    assistants = [index for index, role in enumerate(roles) if role == "assistant"]
    if known == "last":
        assistants = assistants[-1:]
    elif known == "after_last_user":
        last_user = max((index for index, role in enumerate(roles) if role == "user"), default=-1)
        assistants = [index for index in assistants if index > last_user]
    picked = [pair for index in assistants for pair in generated_by_message[index]]
    end = -1
    for pair in picked:  # a walk's ranges come in text order, apart: then they are canonical already
        if pair[0] <= end or pair[1] <= pair[0]:
            return normalize_ranges(picked)
        end = pair[1]
    return tuple(picked)


def normalize_ranges(ranges: Iterable[Range]) -> tuple[Range, ...]:
    """The canonical form of a set of ranges: sorted, empty ones dropped, overlapping or touching
    ones merged. Two inputs cover the same characters exactly when their canonical forms are equal."""
    merged: list[list[int]] = []
    for start, end in sorted(pair for pair in ranges if pair[0] < pair[1]):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1][1] = end
        else:
            merged.append([start, end])
    return tuple((start, end) for start, end in merged)


def noted_ranges(pieces: Sequence[str], notes: Iterable[tuple[int, int, int, int]], count: int
                 ) -> list[tuple[Range, ...]]:
    """The ranges of ``count`` messages in the text ``pieces`` join to, from a walk's notes: each
    ``(message index, piece, offset in it, size)`` is a range of that message, in the notes' order."""
    starts = list(itertools.accumulate(map(len, pieces), initial=0))
    ranges: list[tuple[Range, ...]] = [()] * count
    for index, piece, offset, size in notes:
        start = starts[piece] + offset
        ranges[index] += ((start, start + size),)
    return ranges


def holds_text(value: Any) -> bool:
    """Whether ``value`` holds text, what a loss in ``dropped`` is made of: a string with a character
    that is not whitespace (``str.isspace``, what a template's ``|trim`` takes away), a number, a
    boolean or any other object, at any depth of a mapping (keys included) or a list. ``None``,
    ``""``, ``"  "`` and empty containers hold none. Walked without recursion; a container met again
    (one that holds itself) is not walked again, so it ends on any value."""
    stack = [value]
    seen: set[int] = set()  # the containers walked (alive while the value is: their ids are unique)
    while stack:
        item = stack.pop()
        kind = type(item)
        # The exact JSON types first: the ABCs' isinstance tests cost several times more.
        if kind is str:
            if item and not item.isspace():  # (what strip() would leave, without copying the text)
                return True
        elif item is None:
            continue
        elif kind is dict or kind is list or kind is tuple or (
            not isinstance(item, str) and isinstance(item, (Mapping, list, tuple))
        ):
            if id(item) in seen:
                continue
            seen.add(id(item))
            if kind is list or kind is tuple or (kind is not dict and not isinstance(item, Mapping)):
                stack.extend(item)
            else:  # (its keys taken first: one that is text answers without a walk of the values)
                stack.extend(item.values())
                stack.extend(item.keys())
        elif isinstance(item, str):
            if item.strip():
                return True
        else:  # a number, a boolean, or anything else a client sent
            return True
    return False


def reasoning_holding_text(message: Mapping[str, Any]) -> list[str]:
    """The reasoning fields of a message dict holding text (:func:`holds_text`), in
    ``REASONING_FIELDS``' order: those a template that writes none of them loses."""
    return [key for key in REASONING_FIELDS if (value := message.get(key)) is not None and holds_text(value)]


def content_holds_text(content: Any, markers: tuple[str, ...] = ()) -> bool:
    """Whether a content holds text (:func:`holds_text`), ``markers`` (a template's markup, such as
    ``</think>``) not counting: a string's; a list's text parts' texts (a part holding a string
    ``text`` and no image or video) and string items, joined; any other value's."""
    if isinstance(content, (list, tuple)):
        content = "".join(part if isinstance(part, str) else part["text"] for part in content
                          if isinstance(part, str) or is_text_part(part))
    if isinstance(content, str):
        for marker in markers:
            content = content.replace(marker, "")
        return bool(content.strip())
    return holds_text(content)


def is_text_part(part: Any) -> bool:
    """A content part that holds a text: a mapping whose ``text`` is a string, no image or video."""
    return (isinstance(part, Mapping) and isinstance(part.get("text"), str)
            and not any(key in part for key in ("image", "image_url", "video"))
            and part.get("type") not in ("image", "video"))


def calls_hold_text(calls: Any) -> bool:
    """Whether tool calls hold text (:func:`holds_text`): a call's name or arguments (its other
    fields are identifiers), read from its ``function`` or, in the flat shape, itself; a value that
    is no list of calls, whatever it holds."""
    if not isinstance(calls, (list, tuple)):
        return holds_text(calls)
    for call in calls:
        body = call.get("function", call) if type(call) is dict or isinstance(call, Mapping) else None
        name = body.get("name") if type(body) is dict else None
        if type(name) is str and name and not name.isspace():  # the usual call, named (no ABC test, no walk)
            return True
        if isinstance(body, Mapping) and (holds_text(body.get("name")) or holds_text(body.get("arguments"))):
            return True
    return False
