"""What the Llama 3.1 and 3.2 templates leave out of the prompt: ``RenderedPrompt.dropped``.

A loss is input that holds text (:func:`~prompt_formats.format.spans.holds_text`; a tool call's
name or arguments, its other fields being identifiers). The templates leave out:

- the request's tools (``tools[i]``) when the ``custom_tools`` option is given: those are written;
- every reasoning field (``messages[i].reasoning_content`` …);
- the content of a message with tool calls (``messages[i].content``): its one call is written;
- the tool calls of the first message when it is the system message, or when its text goes to the
  first user turn with the tools (``messages[i].tool_calls``).

Every message is written in some way, so none is lost whole. ``tests/spans/test_llama_spans.py``
proves the list exact with the Jinja2 template (``tests/support/drops.py``).
"""

from __future__ import annotations

from typing import Any

from ...format.chat_format import Tools
from ...format.spans import calls_hold_text, content_holds_text, holds_text, reasoning_holding_text
from ...model.tools import PreparedTools
from .render import CALL, Setup

__all__ = ["dropped"]

_PLAIN_KEYS = frozenset({"role", "content", "name", "tool_call_id"})


def dropped(msgs: list[dict[str, Any]], tools: Tools, setup: Setup, how: list[int]) -> tuple[str, ...]:
    """The inputs holding text the template leaves out, as error paths: tools first, then by message.

    ``how``: what the walk wrote of each message (:data:`~.render.CONTENT` …). The rules are this
    module's docstring. Never raises on input the walk wrote."""
    found = []
    if setup.tools_path != "tools":
        tool_list = tools.tools if isinstance(tools, PreparedTools) else tools or ()
        found += [f"tools[{k}]" for k, tool in enumerate(tool_list) if holds_text(tool)]
    for i, message in enumerate(msgs):
        if message.keys() <= _PLAIN_KEYS:
            continue  # the usual message: nothing lost, at the cost of one test
        found += [f"messages[{i}].{key}" for key in reasoning_holding_text(message)]
        if how[i] == CALL:
            if content_holds_text(message.get("content")):
                found.append(f"messages[{i}].content")
        elif calls_hold_text(message.get("tool_calls")):
            found.append(f"messages[{i}].tool_calls")
    return tuple(found)
