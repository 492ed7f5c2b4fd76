"""Shapes of a Harmony completion that are not well formed but whose meaning is clear, as the peers read them.

The parser (:mod:`.parse`) reads each of them as what it means and notes it; these functions only
recognise them:

- :func:`text_after_channel`: a header ended by an end marker without ``<|message|>``,
  ``<|channel|>analysis I must refuse<|end|>``: the text after the channel is the message (as
  openai-harmony's non-strict parser reads it);
- :func:`split_at_last_channel`: a header with a second ``<|channel|>``,
  ``<|channel|>commentary to=assistant<|channel|>analysis<|message|>``: the first header never got its
  ``<|message|>``; the message is the last one's (as llama.cpp reads it);
- :func:`closing_braces`: a JSON tool call cut off by the end of the completion with only closing
  braces missing, ``{"a":{"b":1}``: the braces that complete it (as Ollama repairs it).
"""

from __future__ import annotations

import re

from .tokens import CHANNEL, START

__all__ = ["closing_braces", "split_at_last_channel", "text_after_channel"]

_CHANNEL_THEN_TEXT = re.compile(
    "(?:" + re.escape(START) + "assistant)?" + re.escape(CHANNEL) + r"(\w+) (?!to=)(\S.*)", re.DOTALL
)
#: At most this many braces are added: a deeper cut-off call is left as written.
MAX_CLOSING_BRACES = 64


def text_after_channel(header: str) -> tuple[str, str] | None:
    """``(channel, text)`` of a header ``<|channel|>CHANNEL TEXT`` (``None`` for any other header)."""
    found = _CHANNEL_THEN_TEXT.fullmatch(header)
    return None if found is None else (found.group(1), found.group(2))


def split_at_last_channel(header: str) -> tuple[str, str]:
    """``(abandoned, header)``: the text before the header's last ``<|channel|>``, and the rest."""
    cut = header.rfind(CHANNEL)
    return header[:cut], header[cut:]


def closing_braces(body: str) -> str:
    """The ``}`` that close a JSON object cut off after a complete value (``""`` if that is not the case).

    Only braces may be missing: the body must start an object, end outside a string and an array,
    after a complete value or an opening brace.
    """
    if not body.lstrip().startswith("{"):
        return ""
    stack: list[str] = []
    in_string = escaped = False
    for ch in body:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]" and (not stack or (stack.pop() == "{") != (ch == "}")):
            return ""
    if in_string or not stack or "[" in stack or len(stack) > MAX_CLOSING_BRACES:
        return ""
    if body.rstrip()[-1:] in (",", ":"):
        return ""
    return "}" * len(stack)
