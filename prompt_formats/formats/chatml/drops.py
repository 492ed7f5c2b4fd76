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
- a tool call's ``arguments`` that are neither a string nor an object;
- a user's, a system message's or a tool result's reasoning fields and tool calls
  (:func:`with_unwritten_fields`: the template writes them for an assistant's turn only).

A value *holds text* when it has a character that is not whitespace (``str.isspace``, what the
template's ``|trim`` takes away), or a number or a boolean; in the parts of a content a split leaves
out, the markers the template reacts to (``<think>``, ``</think>``, ``<tool_response>``,
``</tool_response>``) are markup, not text, and images and videos are not text either. What holds
none (``""``, ``"  "``, ``[]``, ``None``, an empty think block) loses nothing.
``tests/render/test_chatml_drops.py`` proves the list exact with the Jinja2 template
(``tests/support/drops.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...format.spans import calls_hold_text, holds_text
from ...model.messages import message_dict
from ...model.reading import REASONING_FIELDS, part_kind
from .tokens import THINK_CLOSE, THINK_OPEN, TOOL_RESPONSE_CLOSE, TOOL_RESPONSE_OPEN

__all__ = [
    "EVERY_FIELD", "OTHER_FIELDS", "OTHER_KEYS", "holds_text", "losing_fields", "note_assistant_drops",
    "text_outside_markup", "with_unwritten_fields",
]

# Markup, not text, in a part the template leaves out: the test's markers (tests/support/drops.py)
# are those the template reacts to in an assistant's or a user's content.
_MARKUP = (THINK_OPEN, THINK_CLOSE, TOOL_RESPONSE_OPEN, TOOL_RESPONSE_CLOSE)


def text_outside_markup(piece: str, filler: str | None = None) -> bool:
    """Whether ``piece`` holds text outside the markers the template reacts to (and ``filler``)."""
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
    return any(text_outside_markup(piece, filler) for piece in lost)


def _is_text(part: Any) -> bool:
    """Whether a content item is a text part whose text is a string (anything else is no text)."""
    return isinstance(part, Mapping) and part_kind(part) == "text" and isinstance(part["text"], str)


def _text_only(content: Any) -> tuple[str, str | None]:
    """A content's text with each part that is no text as one character found nowhere in it (the
    filler; ``None`` when there is no such part), trimmed: where the template's text would have
    an image's or a video's placeholder, which can neither be trimmed nor make a marker."""
    if isinstance(content, str) or not isinstance(content, (list, tuple)):
        return ("" if content is None else str(content)).strip(), None
    texts = [part["text"] if _is_text(part) else None for part in content]
    if None not in texts:
        return "".join(texts).strip(), None  # type: ignore[arg-type]  # (every item a string)
    filler, seen = "\ue000", "".join(text for text in texts if text is not None)
    while filler in seen:
        filler = chr(ord(filler) + 1)
    pieces = [filler if text is None else text for text in texts]
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


def losing_fields(message: Mapping[str, Any], fields: tuple[str, ...]) -> list[str]:
    """The ``fields`` of ``message`` that hold text (a content: outside the markup the template reacts to)."""
    lost = []
    for field in fields:
        value = message.get(field)
        if field == "content":
            text, filler = _text_only(value)
            holds = text_outside_markup(text, filler)
        else:
            holds = calls_hold_text(value) if field == "tool_calls" else holds_text(value)
        if holds:
            lost.append(field)
    return lost


EVERY_FIELD = ("content", *REASONING_FIELDS, "tool_calls")
#: What a user, system or tool turn does not write.
OTHER_FIELDS = (*REASONING_FIELDS, "tool_calls")
#: (A message holding none of them loses none of them: one C-level test.)
OTHER_KEYS = frozenset(OTHER_FIELDS)


def with_unwritten_fields(dropped: list[str], messages: Sequence[Any]) -> list[str]:
    """``dropped`` (the losses a walk noted, tools' first, then by message) with every message's
    :data:`OTHER_FIELDS` holding text where its role is not ``assistant`` (its turn writes none of
    them), in message order; for the walk that notes only assistants' losses as it writes them."""
    found: list[str] = []
    for index, message in enumerate(messages):
        if type(message) is dict and (OTHER_KEYS.isdisjoint(message) or (
                type(role := message.get("role")) is str and role == "assistant")):
            continue  # (the usual message: read as _is_assistant reads it, without a call)
        fields = message_dict(message, index)
        if not _is_assistant(fields):
            found += [f"messages[{index}].{name}" for name in losing_fields(fields, OTHER_FIELDS)]
    return sorted([*dropped, *found], key=_index_of) if found else dropped


def _is_assistant(message: Mapping[str, Any]) -> bool:
    """Whether the walk wrote ``message`` as an assistant's turn: its role's plain text, as the walk
    reads it (a ``str`` subclass's own ``==`` is not asked)."""
    role = message.get("role")
    return role == "assistant" if type(role) is str else isinstance(role, str) and str.__str__(role) == "assistant"


def _after_continued(message: Mapping[str, Any], field: str) -> tuple[str, ...]:
    """The fields of the continued final message that its turn writes after the continued ``field``:
    an assistant's tool calls after its content, its content and tool calls after its reasoning."""
    if message.get("role") != "assistant":
        return ()
    return ("tool_calls",) if field == "content" else ("content", "tool_calls")


def _absent_alias(path: str, messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``path`` names a reasoning field its message does not hold (``None`` or no such key)."""
    field = path.partition(".")[2]
    return field in REASONING_FIELDS and path.startswith("messages[") and messages[_index_of(path)].get(field) is None


def _index_of(path: str) -> int:
    """The message index a ``messages[i]...`` path names (-1 for any other path: it comes first)."""
    return int(path[len("messages["):path.index("]")]) if path.startswith("messages[") else -1


def note_cut_drops(dropped: list[str], messages: Sequence[Mapping[str, Any]], cut_whole: list[bool],
                   field: str) -> list[str]:
    """``dropped`` (what the template leaves out of the prompt before its cut) with what
    ``continue_final_message``'s cut leaves out too: every field holding text of a message whose
    turn lies wholly after the cut (``cut_whole[i]``: a system message continued under
    ``chatml-multi-system`` ends the prompt in the leading system turn), and the fields of the final
    message written after the continued ``field``. A field lost whole replaces the paths under it."""
    final = len(messages) - 1
    # (The tagged copy the walk read gives the continued field's aliases: only the input's own count.)
    dropped = [path for path in dropped if not _absent_alias(path, messages)]
    cut: dict[int, list[str]] = {index: losing_fields(messages[index], EVERY_FIELD)
                                 for index in range(final) if cut_whole[index]}
    cut[final] = losing_fields(messages[final], _after_continued(messages[final], field))
    out = []
    for path in dropped:
        index = _index_of(path)
        if index in cut:
            prefix = f"messages[{index}]."
            if any(path == prefix + name or path.startswith((prefix + name + ".", prefix + name + "["))
                   for name in cut[index]):
                continue
        out.append(path)
    out.extend(f"messages[{index}].{name}" for index, names in cut.items() for name in names)
    out.sort(key=_index_of)  # stable: a message's own paths keep their order
    return out
