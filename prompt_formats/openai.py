"""Parser events as OpenAI ``chat.completion.chunk`` deltas, and the reply's ``finish_reason``.

A server streams each event a format's stream parser returns as ``choices[0].delta`` of a chunk:

- :class:`~prompt_formats.streaming.ReasoningDelta` → ``{"reasoning_content": text}`` (the field
  vLLM and SGLang stream reasoning in);
- :class:`~prompt_formats.streaming.ContentDelta` → ``{"content": text}``;
- :class:`~prompt_formats.streaming.ToolCallStart` → the call's first piece: ``index``, ``id``,
  ``type`` and the function's ``name``, with empty ``arguments``;
- :class:`~prompt_formats.streaming.ToolCallArgumentsDelta` → more of that call's ``arguments``;
- :class:`~prompt_formats.streaming.ToolCallEnd` and :class:`~prompt_formats.streaming.Malformed`
  → ``None``: nothing for the client (a malformed piece's text came as content already).

A client that merges the deltas the usual way (:func:`accumulate`: texts concatenated, each call's
first piece kept and its arguments concatenated) gets the assistant message the deltas describe.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .messages import AssistantReply
from .streaming import ContentDelta, Event, ReasoningDelta, ToolCallArgumentsDelta, ToolCallStart

__all__ = ["accumulate", "delta", "finish_reason"]


def delta(event: Event) -> dict[str, Any] | None:
    """The ``choices[0].delta`` dict that carries ``event``, or ``None`` for an event clients never see."""
    kind = type(event)
    if kind is ContentDelta:
        return {"content": event.text}  # type: ignore[union-attr]
    if kind is ReasoningDelta:
        return {"reasoning_content": event.text}  # type: ignore[union-attr]
    if kind is ToolCallStart:
        start: ToolCallStart = event  # type: ignore[assignment]
        piece = {"index": start.index, "id": start.id, "type": "function",
                 "function": {"name": start.name, "arguments": ""}}
        return {"tool_calls": [piece]}
    if kind is ToolCallArgumentsDelta:
        more: ToolCallArgumentsDelta = event  # type: ignore[assignment]
        return {"tool_calls": [{"index": more.index, "function": {"arguments": more.text}}]}
    return None


def finish_reason(reply: AssistantReply, length: bool = False) -> str:
    """The chunk's ``finish_reason``: ``"length"`` when generation hit its token limit (``length``),
    else ``"tool_calls"`` when the reply calls tools, else ``"stop"``."""
    if length:
        return "length"
    return "tool_calls" if reply.tool_calls else "stop"


def accumulate(deltas: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
    """The assistant message a stream of deltas describes, merged as OpenAI clients merge them.

    ``content`` is ``None`` until a content delta arrives; ``reasoning_content`` and ``tool_calls``
    appear only when a delta carries them. ``None`` entries (events with no delta) are skipped.
    """
    message: dict[str, Any] = {"role": "assistant", "content": None}
    calls: dict[int, dict[str, Any]] = {}
    for piece in deltas:
        if piece is None:
            continue
        for key in ("content", "reasoning_content"):
            if piece.get(key) is not None:
                message[key] = (message.get(key) or "") + piece[key]
        for call_piece in piece.get("tool_calls") or ():
            call = calls.get(call_piece["index"])
            function = call_piece.get("function", {})
            if call is None:
                calls[call_piece["index"]] = {
                    "id": call_piece.get("id"), "type": call_piece.get("type", "function"),
                    "function": {"name": function.get("name"), "arguments": function.get("arguments", "")},
                }
            else:
                call["function"]["arguments"] += function.get("arguments", "")
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return message
