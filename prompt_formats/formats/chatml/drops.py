"""What the Qwen3.6 template leaves out of the prompt: ``RenderedPrompt.dropped`` for the ChatML formats.

The template reads past, without writing them:

- an assistant turn's reasoning at or before the last user query (unless ``preserve_thinking`` is
  exactly ``True``): the reasoning field it read, or the ``<think>`` part of a content split at
  ``</think>``;
- in a content split at ``</think>`` (no reasoning field), wherever the turn is: the text before the
  last ``<think>`` of the part before the first ``</think>``, and every part between the first and
  the last ``</think>``;
- the reasoning aliases it does not read (transformers passes the first of ``reasoning_content``,
  ``thinking``, ``reasoning`` that is not ``None`` as ``reasoning_content``): another one whose value
  differs from it, or any of them when the reasoning itself is left out;
- a tool call's ``arguments`` that are neither a string nor an object.

A value *holds text* when it has a character that is not whitespace (``str.isspace``, what the
template's ``|trim`` takes away), or a number or a boolean; in the parts of a content a split leaves
out, the markers the template reacts to (``<think>``, ``</think>``, ``<tool_response>``,
``</tool_response>``) are markup, not text, and images and videos are not text either. What holds
none (``""``, ``"  "``, ``[]``, ``None``, an empty think block) loses nothing.
``tests/render/test_chatml_drops.py`` proves the list exact with the Jinja2 template
(``tests/support/drops.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...shape import REASONING_FIELDS, part_kind
from .tokens import THINK_CLOSE, THINK_OPEN, TOOL_RESPONSE_CLOSE, TOOL_RESPONSE_OPEN

__all__ = ["holds_text", "note_assistant_drops"]

# Markup, not text, in a part the template leaves out: the test's markers (tests/support/drops.py)
# are those the template reacts to in an assistant's or a user's content.
_MARKUP = (THINK_OPEN, THINK_CLOSE, TOOL_RESPONSE_OPEN, TOOL_RESPONSE_CLOSE)


def holds_text(value: Any) -> bool:
    """Whether ``value`` holds text (the module docstring), walked without recursion."""
    stack = [value]
    while stack:
        item = stack.pop()
        if item is None:
            continue
        if isinstance(item, str):
            if item.strip():
                return True
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        else:  # a number, a boolean, or anything else a client sent
            return True
    return False


def _text_outside_markup(piece: str, filler: str | None) -> bool:
    for marker in _MARKUP:
        piece = piece.replace(marker, " ")
    if filler is not None:
        piece = piece.replace(filler, " ")
    return bool(piece.strip())


def _split_loses_text(content: str, keep_reasoning: bool, filler: str | None) -> bool:
    """Whether splitting ``content`` (trimmed) at ``</think>`` as the template does leaves text out."""
    parts = content.split(THINK_CLOSE)
    before = parts[0].rstrip("\n").split(THINK_OPEN)
    lost = before[:-1] if keep_reasoning else before
    lost += parts[1:-1]
    return any(_text_outside_markup(piece, filler) for piece in lost)


def _text_only(content: Any) -> tuple[str, str | None]:
    """A content's text with each part that is no text as one character found nowhere in it (the
    filler; ``None`` when there is no such part), trimmed: where the template's text would have
    an image's or a video's placeholder, which can neither be trimmed nor make a marker."""
    if isinstance(content, str) or not isinstance(content, (list, tuple)):
        return ("" if content is None else str(content)).strip(), None
    texts = [part["text"] for part in content if part_kind(part) == "text"]
    if len(texts) == len(content):
        return "".join(texts).strip(), None
    filler, seen = "\ue000", "".join(texts)
    while filler in seen:
        filler = chr(ord(filler) + 1)
    pieces = [part["text"] if part_kind(part) == "text" else filler for part in content]
    return "".join(pieces).strip(), filler


def note_assistant_drops(drops: list[str], message: Mapping[str, Any], content: Any, index: int | None,
                         read: str | None, split: bool, kept: bool) -> None:
    """Add to ``drops`` what an assistant message loses: ``content`` is the content as the template
    reads it (before its text is made), ``read`` the reasoning field it read (``None``: none), ``split``
    whether the content was split at ``</think>``, ``kept`` whether the turn keeps its reasoning."""
    if split:
        text, filler = _text_only(content)
        if _split_loses_text(text, kept, filler):
            drops.append(f"messages[{index}].content")
    value = message.get(read) if read is not None else None
    for field in REASONING_FIELDS:
        other = message.get(field)
        if other is None or not holds_text(other):
            continue
        if field == read and kept:
            continue
        if field != read and kept and read is not None and other == value:
            continue  # the same text as the field read, which is in the prompt
        drops.append(f"messages[{index}].{field}")
