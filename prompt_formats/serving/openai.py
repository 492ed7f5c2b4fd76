"""Parser events as OpenAI ``chat.completion.chunk`` deltas, and the reply's ``finish_reason``.

A server streams each event a format's stream parser returns as ``choices[0].delta`` of a chunk:

- :class:`~prompt_formats.replies.streaming.ReasoningDelta` → ``{"reasoning_content": text}`` (the field
  vLLM and SGLang stream reasoning in);
- :class:`~prompt_formats.replies.streaming.ContentDelta` → ``{"content": text}``;
- :class:`~prompt_formats.replies.streaming.ToolCallStart` → the call's first piece: ``index``, ``id``,
  ``type`` and the function's ``name``, with empty ``arguments``;
- :class:`~prompt_formats.replies.streaming.ToolCallArgumentsDelta` → more of that call's ``arguments``;
- :class:`~prompt_formats.replies.streaming.ToolCallEnd`, :class:`~prompt_formats.replies.streaming.Malformed` and
  :class:`~prompt_formats.replies.streaming.Note` → ``None``: nothing for the client (a malformed piece's
  text came as content already).

A stream opens with :func:`opening_delta`, ``{"role": "assistant", "content": ""}``, once, before
any other delta, as OpenAI's streams do (and vLLM's and SGLang's): :func:`stream_deltas` gives the
deltas of one stream so, the opening one first even for an empty completion.

A client that merges the deltas the usual way (:func:`accumulate`: texts concatenated, each call's
first piece kept and its arguments concatenated) gets the assistant message the deltas describe.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..model.messages import AssistantReply
from ..replies.streaming import ContentDelta, Event, ReasoningDelta, ToolCallArgumentsDelta, ToolCallStart

__all__ = ["accumulate", "delta", "finish_reason", "opening_delta", "stream_deltas"]


def opening_delta() -> dict[str, Any]:
    """The first delta of a stream, ``{"role": "assistant", "content": ""}`` (a new dict each call)."""
    return {"role": "assistant", "content": ""}


def stream_deltas(events: Iterable[Event]) -> Iterator[dict[str, Any]]:
    """The ``choices[0].delta`` dicts of one stream: :func:`opening_delta` first, exactly once, then
    :func:`delta` of each event that has one, in order.

    The opening delta is yielded before ``events`` is asked for its first event, so a server can send
    it before the model writes anything; an empty completion gives the opening delta alone.
    """
    yield opening_delta()
    for event in events:
        piece = delta(event)
        if piece is not None:
            yield piece


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

    ``role`` is the last one a delta gave (``"assistant"`` if none). Texts are concatenated, and an
    empty text is no text, as :class:`~prompt_formats.model.messages.AssistantReply` has it: ``content`` is
    ``None`` when no delta brings some and a call comes (the opening delta's ``""`` brings none,
    where a client that only concatenates keeps ``""``), and ``""`` when neither comes (an empty
    reply: a message every format renders back); ``reasoning_content`` appears only when a delta
    brings some, ``tool_calls`` only when a delta carries a call. ``None`` entries (events with no
    delta) are skipped. So the deltas of :func:`stream_deltas` merge to exactly the reply's
    ``to_openai()``.
    """
    message: dict[str, Any] = {"role": "assistant", "content": None}
    texts: dict[str, list[str]] = {"content": [], "reasoning_content": []}
    calls: dict[int, dict[str, Any]] = {}
    for piece in deltas:
        if piece is None:
            continue
        if piece.get("role") is not None:
            message["role"] = piece["role"]
        for key, parts in texts.items():
            if piece.get(key):
                parts.append(piece[key])
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
    if texts["content"]:
        message["content"] = "".join(texts["content"])
    if texts["reasoning_content"]:
        message["reasoning_content"] = "".join(texts["reasoning_content"])
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    elif message["content"] is None:
        message["content"] = ""
    return message
