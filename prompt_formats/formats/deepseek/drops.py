"""What DeepSeek-V3's template leaves out of the prompt: ``RenderedPrompt.dropped`` for ``deepseek-v3``.

A loss is input that holds text (:func:`~prompt_formats.format.spans.holds_text`; a tool call's
name or arguments, its other fields being identifiers; in a content, ``</think>`` is the template's
markup, not text). The template leaves out:

- every tool (``tools[i]``): it writes no tools;
- every reasoning field (``messages[i].reasoning_content`` …);
- a message of a role it does not write (``messages[i]``: any but system, user, assistant and tool);
- of an assistant's content, what comes before its last ``</think>`` (``messages[i].content``);
- the content of an assistant message with tool calls after the conversation's first such
  message, or whose calls are none (``messages[i].content``: the template reads it only with the
  first call of the conversation);
- the tool calls of a message that is not an assistant's (``messages[i].tool_calls``).

``tests/spans/test_deepseek_spans.py`` proves the list exact with the Jinja2 template
(``tests/support/drops.py``).
"""

from __future__ import annotations

from typing import Any

from ...format.chat_format import Tools
from ...format.spans import calls_hold_text, content_holds_text, holds_text, reasoning_holding_text
from ...model.tools import PreparedTools
from .render import CONTENT_LEFT_OUT, SPLIT, UNWRITTEN, WHOLE
from .tokens import THINK_CLOSE

__all__ = ["dropped"]

_PLAIN_KEYS = frozenset({"role", "content", "name", "tool_call_id"})
_MARKUP = (THINK_CLOSE,)


def _message_dropped(message: dict[str, Any], i: int, how: int) -> list[str]:
    content = message.get("content")
    reasonings = reasoning_holding_text(message)
    calls = calls_hold_text(message.get("tool_calls"))
    if how == UNWRITTEN:
        return [f"messages[{i}]"] if reasonings or calls or content_holds_text(content, _MARKUP) else []
    found = []
    if how == SPLIT:  # (a string: the walk split it) what comes before its last </think>
        content = str(content).rsplit(THINK_CLOSE, 1)[0]
    if how in (SPLIT, CONTENT_LEFT_OUT) and content_holds_text(content, _MARKUP):
        found.append(f"messages[{i}].content")
    found += [f"messages[{i}].{key}" for key in reasonings]
    if calls and message.get("role") != "assistant":
        found.append(f"messages[{i}].tool_calls")
    return found


def dropped(msgs: list[dict[str, Any]], tools: Tools, how: list[int]) -> tuple[str, ...]:
    """The inputs holding text the template leaves out, as error paths: tools first, then by message.

    ``how``: what the walk wrote of each message (:data:`~.render.WHOLE` …). The rules are this
    module's docstring. Never raises on input the walk wrote."""
    tool_list = tools.tools if isinstance(tools, PreparedTools) else tools or ()
    found = [f"tools[{k}]" for k, tool in enumerate(tool_list) if holds_text(tool)]
    for i, message in enumerate(msgs):
        if how[i] == WHOLE and message.keys() <= _PLAIN_KEYS:
            continue  # the usual message: nothing lost, at the cost of one test
        found += _message_dropped(message, i, how[i])
    return tuple(found)
