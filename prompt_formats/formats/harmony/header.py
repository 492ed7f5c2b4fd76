"""A Harmony message header: what it says (the body's kind, a call's name) or why it is malformed.

Read by the reply parser (:mod:`.parse`): ``<|channel|>CHANNEL``, `` to=RECIPIENT`` and a content type
(``<|constrain|>TYPE`` or a bare word), in any order, spaces optional before the markers.
"""

from __future__ import annotations

import enum

from .tokens import CHANNEL, CONSTRAIN, FUNCTIONS

__all__ = ["CHANNEL_KINDS", "NO_CHANNEL", "TWO_CHANNELS", "Kind", "MessageHeader", "parse_header"]


class Kind(enum.Enum):
    """Where a message's body goes."""

    REASONING = "reasoning"
    CONTENT = "content"
    JSON_CALL = "a tool call's JSON arguments"
    PYTHON_CALL = "the python tool's code"


#: The kind of a message's body on each channel.
CHANNEL_KINDS = {"analysis": Kind.REASONING, "final": Kind.CONTENT, "commentary": Kind.CONTENT}


class MessageHeader:
    """What a message header says: its kind and, for a tool call, the tool's name; or why it is malformed.

    ``note`` is set when the header was read tolerantly (it is not well formed, but its meaning is clear).
    """

    __slots__ = ("kind", "name", "note", "problem")

    def __init__(self, kind: Kind = Kind.CONTENT, name: str = "", problem: str = "", note: str = "") -> None:
        self.kind = kind
        self.name = name
        self.problem = problem
        self.note = note


# Spaces optional before the markers: one is put there, so that splitting on spaces finds each field.
_SPACED_CHANNEL = " " + CHANNEL
_SPACED_CONSTRAIN = " " + CONSTRAIN


def _header_fields(words: list[str]) -> tuple[str | None, str | None, str]:
    """``(channel, recipient, problem)`` of a header's words after the role (``problem`` ``""`` if none)."""
    channel = recipient = content_type = None
    for word in words:
        if word.startswith(CHANNEL):
            if channel is not None:
                return None, None, TWO_CHANNELS
            channel = word[len(CHANNEL):]
        elif word.startswith("to="):
            if recipient is not None:
                return None, None, "message header with two recipients"
            recipient = word[3:]
        else:
            if content_type is not None:
                return None, None, f"message header with unexpected text {word!r}"
            content_type = word
    return channel, recipient, ""


def _call_header(recipient: str) -> MessageHeader:
    if recipient == "python":
        return MessageHeader(Kind.PYTHON_CALL, "python")
    name = recipient[len(FUNCTIONS):] if recipient.startswith(FUNCTIONS) else recipient
    if not name:
        return MessageHeader(problem=f"tool call to an empty name ({recipient!r})")
    return MessageHeader(Kind.JSON_CALL, name)


def parse_header(text: str, with_role: bool) -> MessageHeader:
    """Read a message header (the text before ``<|message|>``; ``with_role`` when it came after ``<|start|>``)."""
    words = text.replace(CHANNEL, _SPACED_CHANNEL).replace(CONSTRAIN, _SPACED_CONSTRAIN).split()
    if with_role:
        role = words.pop(0) if words else ""
        if role != "assistant":
            return MessageHeader(problem=f"message from role {role!r}, not 'assistant'")
    channel, recipient, problem = _header_fields(words)
    if problem:
        return MessageHeader(problem=problem)
    if recipient is not None:
        return _call_header(recipient)
    if channel is None:
        # What gpt-oss sometimes writes, and openai-harmony's parser and Ollama read as the answer.
        return MessageHeader(note=NO_CHANNEL)
    kind = CHANNEL_KINDS.get(channel)
    if kind is None:
        return MessageHeader(problem=f"message on unknown channel {channel!r}")
    return MessageHeader(kind)


TWO_CHANNELS = "message header with two channels"
NO_CHANNEL = "message without a channel: read as final content"
