"""What Gemma 4's template leaves out of the prompt: ``RenderedPrompt.dropped`` for ``gemma-4``.

A loss is input that holds text (:func:`~prompt_formats.format.spans.holds_text`; a tool call's
name or arguments, its other fields being identifiers; in a content, ``<|channel>`` and
``<channel|>`` are the template's markup). The template leaves out:

- a message's reasoning it does not write (at or before the last user message, unless
  ``preserve_thinking`` and the message has calls; a tool result's, the leading system message's),
  or another alias of it holding another value;
- of an assistant's (or ``model``'s) text, what a ``<|channel>`` opens, up to its ``<channel|>``
  (``messages[i].content``, or the part ``messages[i].content[j]``);
- in a list of parts, a part holding a text whose ``type`` is not ``"text"`` (a tool result's
  too); in the leading system message's list, an item with no ``text`` (written as a space) but a
  media part; a content that is a
  number, or an object the system message's list walk reads the keys of;
- a tool result that no calls precede (the template writes results only after an assistant's
  calls, and not after one that carries its own ``tool_responses``): its content;
- the tool calls of a tool result and of the leading system message, and their ``tool_responses``;
  elsewhere, of ``tool_responses``, each entry but its ``name`` and ``response`` (an entry that is no
  object, whole; a value that is no list, whole: the template writes its keys' or characters' results
  as ``unknown``).

Tools are not checked: the declarations leave out the schema keywords they do not know
(docs/gemma-4.md). ``tests/spans/test_gemma4_spans.py`` proves the list exact with the Jinja2
template (``tests/support/drops.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....format.spans import calls_hold_text, content_holds_text, holds_text, is_text_part
from ....model.reading import REASONING_FIELDS, reasoning_of
from ..tokens import CHANNEL_CLOSE, CHANNEL_OPEN
from .render import Walk

__all__ = ["dropped"]

_MARKERS = (CHANNEL_OPEN, CHANNEL_CLOSE)
_MEDIA = ("image", "image_url", "audio", "input_audio", "video")


def _media(part: Mapping[str, Any]) -> bool:
    """An image, audio or video part (which holds no text of its own)."""
    return part.get("type") in _MEDIA or any(key in part for key in _MEDIA)


def _thought_lost(text: str) -> bool:
    """Whether ``strip_thinking`` leaves out text of ``text`` (what each ``<|channel>`` opens)."""
    removed = "".join(part.split(CHANNEL_OPEN, 1)[1] for part in text.split(CHANNEL_CLOSE) if CHANNEL_OPEN in part)
    return content_holds_text(removed, _MARKERS)


def _reasoning_lost(message: dict[str, Any], i: int, shown: bool) -> list[str]:
    reasoning = message.get("reasoning")
    read = reasoning if reasoning else reasoning_of(message)
    return [f"messages[{i}].{key}" for key in REASONING_FIELDS
            if holds_text(value := message.get(key)) and not (shown and value == read)]


def _content_lost(content: Any, i: int, model: bool) -> list[str]:
    path = f"messages[{i}].content"
    if isinstance(content, str):
        return [path] if model and _thought_lost(content) else []
    if not isinstance(content, (list, tuple)):
        return [path] if content is not None and not isinstance(content, Mapping) and holds_text(content) else []
    found = []
    for j, part in enumerate(content):
        if not is_text_part(part):
            continue
        if part.get("type") != "text":
            if content_holds_text(part["text"], _MARKERS):
                found.append(f"{path}[{j}]")
        elif model and _thought_lost(part["text"]):
            found.append(f"{path}[{j}]")
    return found


def _system_lost(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    found = []
    if isinstance(content, (list, tuple)):  # (each item written as its text: a string or a list, as a space)
        found += [f"messages[0].content[{j}]" for j, item in enumerate(content)
                  if holds_text(item) and not (isinstance(item, Mapping) and ("text" in item or _media(item)))]
    elif content is not None and not isinstance(content, str) and holds_text(content):
        found.append("messages[0].content")
    found += _reasoning_lost(message, 0, False)
    if calls_hold_text(message.get("tool_calls")):
        found.append("messages[0].tool_calls")
    if holds_text(message.get("tool_responses")):
        found.append("messages[0].tool_responses")
    return found


def _legacy_lost(value: Any, path: str) -> list[str]:
    """What of ``tool_responses`` (written: a list's objects, each as its ``name`` and ``response``) is lost."""
    if not value or not isinstance(value, (list, tuple)):  # (not written, or written as its keys' or
        return [path] if holds_text(value) else []  # characters' "unknown" results)
    return [f"{path}[{j}]" for j, entry in enumerate(value) if holds_text(_unwritten(entry))]


def _unwritten(entry: Any) -> Any:
    """What the template does not write of a ``tool_responses`` entry: all of one that is no object; of
    an object, its other keys' values and a false ``name`` (written ``unknown``)."""
    if not isinstance(entry, Mapping):
        return entry
    lost = [item for key, item in entry.items() if key not in ("name", "response")]
    return [*lost, entry.get("name")] if not entry.get("name") else lost


def _tool_lost(message: dict[str, Any], i: int, written: bool) -> list[str]:
    content = message.get("content")
    if not written:
        found = [f"messages[{i}].content"] if content_holds_text(content) else []
    elif isinstance(content, (list, tuple)):
        found = [f"messages[{i}].content[{j}]" for j, part in enumerate(content)
                 if is_text_part(part) and part.get("type") != "text" and content_holds_text(part["text"])]
    else:
        found = []
    found += _reasoning_lost(message, i, False)
    if calls_hold_text(message.get("tool_calls")):
        found.append(f"messages[{i}].tool_calls")
    if holds_text(message.get("tool_responses")):
        found.append(f"messages[{i}].tool_responses")
    return found


def dropped(msgs: list[dict[str, Any]], written: Walk) -> tuple[str, ...]:
    """The inputs holding text the template leaves out, as error paths, by message. ``written``: the
    noted walk that wrote ``msgs``. Never raises on input the walk wrote."""
    roles = written.roles
    told = {mark[0] for mark in written.marks or () if roles[mark[0]] == "tool"}
    found: list[str] = []
    for i, message in enumerate(msgs):
        role = roles[i]
        if i < written.start:
            found += _system_lost(message)
        elif role == "tool":
            found += _tool_lost(message, i, i in told)
        else:
            found += _reasoning_lost(message, i, i in written.shown)
            found += _legacy_lost(message.get("tool_responses"), f"messages[{i}].tool_responses")
            found += _content_lost(message.get("content"), i, role in ("assistant", "model"))
    return tuple(found)
