"""What an OpenAI-compatible server does to a request's messages before the template runs, written
with the standard library only (the reference the ``decode_tool_arguments`` tests compare with).

vLLM and SGLang ``json.loads`` a call's string arguments into an object; the formats do so only
where Python holds the value exactly (strict JSON, no key twice, no number beyond a double), and
only for a JSON object, so the template writes the value the client meant.
"""

from __future__ import annotations

import json
import math
from typing import Any


class NotExact(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({key for key, _ in pairs}) != len(pairs):
        raise NotExact("a key twice")
    return dict(pairs)


def _constant(name: str) -> Any:
    raise NotExact(name)


def _float(literal: str) -> float:
    if math.isinf(float(literal)):
        raise NotExact(literal)
    return float(literal)


def reference_decoded(arguments: Any) -> Any:
    """The argument a server's decoding gives: the JSON object a string holds, else the value itself."""
    if not isinstance(arguments, str):
        return arguments
    try:
        value = json.loads(arguments, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float)
    except (ValueError, RecursionError):
        return arguments
    return value if isinstance(value, dict) else arguments


def _decoded_call(call: Any) -> Any:
    if not isinstance(call, dict):
        return call
    body = call.get("function", call)
    if not isinstance(body, dict) or "arguments" not in body:
        return call
    body = {**body, "arguments": reference_decoded(body["arguments"])}
    return {**call, "function": body} if "function" in call else body


def decode_every_call(messages: list[Any]) -> list[Any]:
    """Every assistant call's arguments decoded (the ChatML templates render every call)."""
    out = []
    for message in messages:
        calls = message.get("tool_calls") if isinstance(message, dict) and message.get("role") == "assistant" else None
        if isinstance(calls, list):
            message = {**message, "tool_calls": [_decoded_call(call) for call in calls]}
        out.append(message)
    return out
