"""The JSON form of a ChatML tool call, as Qwen2.5 and Qwen3 write it (and vLLM's and Ollama's parsers read it).

``<tool_call>``, then a JSON object of ``"name"`` (a string) and ``"arguments"`` (an object, or a
JSON string holding one, decoded once, as vLLM does; left out: none), then ``</tool_call>``::

    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

It is a call, noted with the form it was written in; its arguments are the JSON's values as written
(no schema types them: JSON has types). Its text is held from the ``{`` up to ``</tool_call>``
(tolerated, noted: another ``<tool_call>``, a stop marker, ``</think>`` in the reasoning, or the end
of the completion), and the call is sent whole there: a JSON object is known to be one only when it
ends. Text that is not such an object stays text, where it was written (content or reasoning), with
the note every ``<tool_call>`` that opened no call gets. The parser's JSON state
(:class:`~prompt_formats.formats.chatml.parse.ChatMLReplyParser`) holds the text; this module reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...replies.values import read_json
from .call_stream import value_json

if TYPE_CHECKING:
    pass

__all__ = ["read_json_call"]


def read_json_call(body: str) -> tuple[str, Mapping[str, Any] | str, str] | None:
    """``(name, arguments, arguments_text)`` of a JSON call's text, or ``None`` when it is not one.

    ``arguments`` is the object (a JSON string holding an object decoded), or, for arguments that
    are not an object, their JSON text (as a parsed call keeps arguments that are not an object).
    """
    value, problem = read_json(body)
    if problem is not None or not isinstance(value, dict):
        return None
    name = value.get("name")
    if not isinstance(name, str) or not name:
        return None
    arguments = value.get("arguments", {})
    if isinstance(arguments, str):
        decoded, problem = read_json(arguments)
        if problem is None and isinstance(decoded, dict):
            arguments = decoded
    text = value_json(arguments)
    return name, arguments if isinstance(arguments, dict) else text, text
