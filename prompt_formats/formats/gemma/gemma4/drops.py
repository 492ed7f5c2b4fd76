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
  too); in the leading system message's list, a string (written as a space); a content that is a
  number, or an object the system message's list walk reads the keys of;
- a tool result that no calls precede (the template writes results only after an assistant's
  calls, and not after one that carries its own ``tool_responses``): its content;
- the tool calls of a tool result and of the leading system message.

Tools are not checked: the declarations leave out the schema keywords they do not know
(docs/gemma.md). ``tests/spans/test_gemma4_spans.py`` proves the list exact with the Jinja2
template (``tests/support/drops.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....format.spans import calls_hold_text, content_holds_text, holds_text
from ....model.reading import REASONING_FIELDS, reasoning_of
from ..tokens import CHANNEL_CLOSE, CHANNEL_OPEN
from .render import Walk

__all__ = ["dropped"]

_MARKERS = (CHANNEL_OPEN, CHANNEL_CLOSE)
_NOT_TEXT_KEYS = ("image", "image_url", "video")


def _text_part(part: Any) -> bool:
    """A part holding a string ``text`` that is no image or video (what holds text in a list)."""
    return (isinstance(part, Mapping) and isinstance(part.get("text"), str)
            and part.get("type") not in ("image", "video") and not any(key in part for key in _NOT_TEXT_KEYS))


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
        if not _text_part(part):
            continue
        if part.get("type") != "text":
            if content_holds_text(part["text"]):
                found.append(f"{path}[{j}]")
        elif model and _thought_lost(part["text"]):
            found.append(f"{path}[{j}]")
    return found


def _system_lost(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    found = []
    if isinstance(content, (list, tuple)):
        found += [f"messages[0].content[{j}]" for j, item in enumerate(content)
                  if isinstance(item, str) and item.strip()]
    elif content is not None and not isinstance(content, str) and holds_text(content):
        found.append("messages[0].content")
    found += _reasoning_lost(message, 0, False)
    if calls_hold_text(message.get("tool_calls")):
        found.append("messages[0].tool_calls")
    return found


def _tool_lost(message: dict[str, Any], i: int, written: bool) -> list[str]:
    content = message.get("content")
    if not written:
        found = [f"messages[{i}].content"] if content_holds_text(content) else []
    elif isinstance(content, (list, tuple)):
        found = [f"messages[{i}].content[{j}]" for j, part in enumerate(content)
                 if _text_part(part) and part.get("type") != "text" and content_holds_text(part["text"])]
    else:
        found = []
    found += _reasoning_lost(message, i, False)
    if calls_hold_text(message.get("tool_calls")):
        found.append(f"messages[{i}].tool_calls")
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
            found += _content_lost(message.get("content"), i, role in ("assistant", "model"))
    return tuple(found)
