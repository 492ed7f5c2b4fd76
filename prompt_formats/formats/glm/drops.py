"""What GLM-4.5's template leaves out of the prompt: ``RenderedPrompt.dropped`` for ``glm-4.5``.

A loss is input that holds text (:func:`~prompt_formats.format.spans.holds_text`; a tool call's
name or arguments, its other fields being identifiers; in a content, ``<think>`` and ``</think>`` are
the template's markup, not text, and so is ``/nothink``; in a list of parts, a text part's ``text``
and a string, but not a ``text`` that holds none, which the template prints: ``None``). The
template leaves out:

- an assistant's reasoning at or before the last user message, or empty once stripped: its reasoning
  field (``messages[i].reasoning_content`` …), or, where its content's ``</think>`` gave it, that
  part of the content (``messages[i].content``); a reasoning field the template does not read
  (another alias of another value, or one that is no string);
- of an assistant's content split at ``</think>``, what comes before the last ``<think>`` of the part
  before the first ``</think>``, and every part between the first and the last ``</think>``;
- in a list of parts, each part whose ``type`` is not ``"text"`` that holds a text
  (``messages[i].content[j]``); of a tool result's item holding an ``output``, everything else;
  a tool result that is an object, whole (``messages[i].content``: the template writes its keys);
- the tool calls of a message that is not an assistant's, and every field of a message of a role it
  does not write (its content, reasoning and calls: the message itself is not lost, since it still
  separates a run of tool results, each of which then opens ``<|observation|>``).

``tests/spans/test_glm_spans.py`` proves the list exact with the Jinja2 template
(``tests/support/drops.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...format.spans import calls_hold_text, holds_text, is_text_part, reasoning_holding_text
from ...model.reading import REASONING_FIELDS, reasoning_of
from .render import SHOWN, UNWRITTEN, WHOLE, reasoning_and_content, visible_text
from .tokens import NOTHINK, THINK_CLOSE, THINK_OPEN

__all__ = ["dropped"]

_PLAIN_KEYS = frozenset({"role", "content", "name", "tool_call_id"})


def _holds(text: str) -> bool:
    """Whether text holds text, ``<think>``, ``</think>`` and ``/nothink`` being markup."""
    return bool(text.replace(THINK_OPEN, "").replace(THINK_CLOSE, "").replace(NOTHINK, "").strip())


def _content_holds_text(content: Any) -> bool:
    if isinstance(content, (list, tuple)):
        return any((is_text_part(part) and _holds(part["text"])) or (isinstance(part, str) and _holds(part))
                   for part in content)
    return _holds(content) if isinstance(content, str) else holds_text(content)


def _parts_dropped(content: Any, path: str, tool: bool) -> list[str]:
    if tool and isinstance(content, Mapping):  # (its keys are written, one result each)
        return [path] if holds_text(list(content.values())) else []
    if not isinstance(content, (list, tuple)):
        return []
    return [f"{path}[{j}]" for j, part in enumerate(content) if is_text_part(part) and _holds(part["text"])
            and (part.get("type") != "text" if not tool else "output" in part)]


def _text_held(content: Any, path: str) -> str:
    """``visible_text(content)`` with each part's text that holds none (``None``, ``[]``: printed by
    the template, as ``None``, ``[]``) written as a space: what of the text the input holds. (No
    marker holds such a print, nor can a space join two pieces into one.)"""
    if type(content) is list or type(content) is tuple:
        content = [_SPACE if type(item) is dict and item.get("type") == "text"
                   and type(text := item.get("text", "")) is not str and not holds_text(text) else item
                   for item in content]
    return visible_text(content, path)


_SPACE = {"type": "text", "text": " "}


def _assistant_dropped(message: dict[str, Any], i: int, how: int) -> list[str]:
    found = _parts_dropped(message.get("content"), f"messages[{i}].content", False)
    _, _, from_content = reasoning_and_content(message, i)
    if from_content:
        parts = _text_held(message.get("content"), f"messages[{i}].content").split(THINK_CLOSE)
        lost = "".join(parts[1:-1]) + (parts[0].rsplit(THINK_OPEN, 1)[0] if THINK_OPEN in parts[0] else "")
        reasoning = parts[0].rsplit(THINK_OPEN, 1)[-1]  # (reasoning_and_content's, "\n"s aside)
        if _holds(lost) or (how != SHOWN and _holds(reasoning)):
            found.append(f"messages[{i}].content")
    read = reasoning_of(message)
    shown = how == SHOWN and type(read) is str
    found += [f"messages[{i}].{key}" for key in REASONING_FIELDS
              if holds_text(value := message.get(key)) and not (shown and value == read)]
    return found


def dropped(msgs: list[dict[str, Any]], how: list[int]) -> tuple[str, ...]:
    """The inputs holding text the template leaves out, as error paths, by message (the template
    writes every tool). ``how``: what the walk wrote of each message. Never raises on input the walk wrote."""
    found: list[str] = []
    for i, message in enumerate(msgs):
        role = message.get("role")
        usual = how[i] == WHOLE and role != "assistant" and message.keys() <= _PLAIN_KEYS
        if usual and type(message.get("content")) is str:
            continue  # the usual message: nothing lost, at the cost of one test
        calls = calls_hold_text(message.get("tool_calls"))
        if how[i] == UNWRITTEN:  # (by field: the message itself still tells a run of tool results apart)
            if _content_holds_text(message.get("content")):
                found.append(f"messages[{i}].content")
            found += [f"messages[{i}].{key}" for key in reasoning_holding_text(message)]
            if calls:
                found.append(f"messages[{i}].tool_calls")
            continue
        if role == "assistant":
            found += _assistant_dropped(message, i, how[i])
            continue
        found += _parts_dropped(message.get("content"), f"messages[{i}].content", role == "tool")
        found += [f"messages[{i}].{key}" for key in reasoning_holding_text(message)]
        if calls:
            found.append(f"messages[{i}].tool_calls")
    return tuple(found)
