"""What Gemma 3's template leaves out of the prompt: ``RenderedPrompt.dropped`` for ``gemma-3``.

A loss is input that holds text (:func:`~prompt_formats.format.spans.holds_text`; in a list of
parts, a part's ``text`` or a string item holding some, an image or video part's none). The
template leaves out:

- every tool (``tools[i]``): it has no tools;
- every message's tool calls (those whose name or arguments hold text: ``messages[i].tool_calls``)
  and reasoning fields (``messages[i].reasoning_content`` …);
- in a content that is a list, each item written as nothing (``messages[i].content[j]``): a part
  whose ``type`` is not ``"text"`` or ``"image"``, a string; a content that is an object, whole
  (``messages[i].content``: the template iterates its keys);
- of a leading system message, every part after the first (the first part's ``text`` is its text),
  and its whole content when no turn follows (nothing opens the turn it would begin).

``tests/spans/test_gemma_spans.py`` proves the list exact with the Jinja2 template
(``tests/support/drops.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....format.chat_format import Tools
from ....format.spans import calls_hold_text, holds_text, reasoning_holding_text
from ....model.tools import PreparedTools

__all__ = ["dropped"]

#: The keys of a message dict that hold no loss but what its content holds (identifiers and names).
_PLAIN_KEYS = frozenset({"role", "content", "name", "tool_call_id"})
_NOT_TEXT_KEYS = ("image", "image_url", "video")
_WRITTEN = ("text", "image")


def _holds_unit(item: Any) -> bool:
    """Whether a content item holds text: a string with some, or a text part's ``text`` (a part
    holding a string ``text`` and no image or video) with some."""
    if isinstance(item, str):
        return bool(item.strip())
    if not isinstance(item, Mapping) or item.get("type") in ("image", "video"):
        return False
    text = item.get("text")
    return isinstance(text, str) and bool(text.strip()) and not any(key in item for key in _NOT_TEXT_KEYS)


def _content_dropped(content: Any, path: str, first: int) -> list[str]:
    """The items of a content the walk wrote nothing for (from item ``first`` on)."""
    if isinstance(content, Mapping):
        return [path] if holds_text(content) else []
    if not isinstance(content, (list, tuple)):
        return []
    return [f"{path}[{j}]" for j in range(first, len(content)) if _holds_unit(content[j])
            and (first or not (isinstance(content[j], Mapping) and content[j].get("type") in _WRITTEN))]


def _system_dropped(content: Any, written: bool) -> list[str]:
    """What of the leading system message's content is lost (``written``: a turn follows it)."""
    if written:
        return _content_dropped(content, "messages[0].content", 1)
    if isinstance(content, str):
        return ["messages[0].content"] if content.strip() else []
    return ["messages[0].content"] if any(_holds_unit(item) for item in content) else []


def dropped(msgs: list[dict[str, Any]], tools: Tools, system: bool) -> tuple[str, ...]:
    """The inputs holding text the template leaves out, as error paths: tools first, then by message.

    For messages the walk wrote (``system``: the first is the system message), the rules are this
    module's docstring. Never raises on such input."""
    tool_list = tools.tools if isinstance(tools, PreparedTools) else tools or ()
    found = [f"tools[{k}]" for k, tool in enumerate(tool_list) if holds_text(tool)]
    for i, message in enumerate(msgs):
        content = message.get("content")
        if i == 0 and system:
            found += _system_dropped(content, len(msgs) > 1)
        elif type(content) is not str:  # (a string is written whole)
            found += _content_dropped(content, f"messages[{i}].content", 0)
        if message.keys() <= _PLAIN_KEYS:
            continue  # the usual message: no reasoning, no calls, at the cost of one test
        found += [f"messages[{i}].{key}" for key in reasoning_holding_text(message)]
        calls = message.get("tool_calls")
        if calls is not None and calls_hold_text(calls):
            found.append(f"messages[{i}].tool_calls")
    return tuple(found)
