"""Perturbations of Harmony inputs, to prove ``RenderedPrompt.dropped`` with the Go oracle.

A loss is proved by the oracle, not by the format: perturbing every reported input at once (a tool
removed; a text replaced by a different non-empty text) must leave the Go output unchanged, and
perturbing any other input holding text as well must change it. This module reads the inputs on its
own (as ``harmony_oracle.to_case`` reads them) and knows nothing of the format's code:

- :func:`candidates`: every input holding text, as the format's error paths name them: each tool
  (``tools[i]``) and a tool's non-empty ``description`` / ``parameters``; each message holding
  text (``messages[i]``), its content holding text, each reasoning field holding a non-empty string,
  its non-empty tool calls;
- :func:`perturbed`: a copy of the input with the inputs at some paths perturbed. A text gets a
  suffix (so it stays non-empty and differs, and two perturbations never undo each other); a tool
  call gets other arguments and, unless it is named ``python``, another name that is not
  ``python``; a whole message has every text it holds perturbed; a tool is removed.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from prompt_formats.model.messages import Message, ToolCall
from tests.support.drops import call_holds_units
from tests.support.harmony_oracle import _text

__all__ = ["candidates", "covered", "perturbed"]

REASONING_KEYS = ("reasoning_content", "thinking", "reasoning")
SUFFIX = "·perturbed"
_PATH = re.compile(r"(tools|messages)\[(\d+)\](?:\.function)?(?:\.(\w+))?\Z")


def _tool_body(tool: Any) -> tuple[Any, str]:
    return (tool["function"], ".function") if "function" in tool else (tool, "")


def _message_fields(message: Any) -> list[str]:
    """The fields of one message that hold text: content, reasoning fields, tool calls."""
    fields = []
    if isinstance(message, Message):
        if _text(message.content):
            fields.append("content")
        if isinstance(message.reasoning, str) and message.reasoning:
            fields.append("reasoning")
        if any(call_holds_units({"name": call.name, "arguments": call.arguments}) for call in message.tool_calls):
            fields.append("tool_calls")
        return fields
    if _text(message.get("content")):
        fields.append("content")
    fields += [key for key in REASONING_KEYS if isinstance(message.get(key), str) and message[key]]
    calls = message.get("tool_calls")
    if calls and (not isinstance(calls, list) or any(call_holds_units(call) for call in calls)):
        fields.append("tool_calls")
    return fields


def candidates(messages: Sequence[Any], tools: Sequence[Any] | None) -> list[str]:
    """Every input holding text, by its path (see the module docstring)."""
    out = []
    for i, tool in enumerate(tools or ()):
        out.append(f"tools[{i}]")
        body, nested = _tool_body(tool)
        out += [f"tools[{i}]{nested}.{key}" for key in ("description", "parameters") if body.get(key)]
    for i, message in enumerate(messages):
        fields = _message_fields(message)
        if fields:
            out.append(f"messages[{i}]")
            out += [f"messages[{i}].{field}" for field in fields]
    return out


def covered(path: str, dropped: Iterable[str], messages: Sequence[Any]) -> bool:
    """Whether perturbing ``path`` is within perturbing all of ``dropped``: it is one of them, a field of
    a message or tool among them, or a message all of whose fields holding text are among them."""
    dropped = set(dropped)
    if path in dropped:
        return True
    kind, index, field = _PATH.match(path).groups()  # type: ignore[union-attr]
    if field is not None:
        return f"{kind}[{index}]" in dropped
    if kind == "messages":
        fields = _message_fields(messages[int(index)])
        return all(f"{path}.{field}" in dropped for field in fields)
    return False


def _other_call(call: Any) -> Any:
    if isinstance(call, ToolCall):
        name = call.name if call.name == "python" else call.name + SUFFIX
        return attrs.evolve(call, name=name, arguments={"perturbed": [call.arguments is None]})
    call = copy.deepcopy(call)
    body = call["function"] if isinstance(call.get("function"), dict) else call
    if body.get("name") != "python" and isinstance(body.get("name"), str):
        body["name"] += SUFFIX
    body["arguments"] = '{"perturbed": true}' if body.get("arguments") != '{"perturbed": true}' else "{}"
    return call


def _perturb_field(message: Any, field: str) -> Any:
    if isinstance(message, Message):
        if field == "content":
            return attrs.evolve(message, content=_text(message.content) + SUFFIX)
        if field == "reasoning":
            return attrs.evolve(message, reasoning=message.reasoning + SUFFIX)
        return attrs.evolve(message, tool_calls=tuple(map(_other_call, message.tool_calls)))
    message = dict(message)
    if field == "content":
        message["content"] = _text(message.get("content")) + SUFFIX
    elif field == "tool_calls":
        message["tool_calls"] = [_other_call(call) for call in message["tool_calls"]]
    else:
        message[field] += SUFFIX
    return message


def _perturb_tool_field(tool: dict[str, Any], field: str) -> dict[str, Any]:
    tool = copy.deepcopy(tool)
    body, _ = _tool_body(tool)
    if field == "description":
        body["description"] = str(body["description"]) + SUFFIX
    else:
        body["parameters"] = {"type": "object", "properties": {"perturbed": {"type": "string"}}}
    return tool


def perturbed(
    messages: Sequence[Any], tools: Sequence[Any] | None, paths: Iterable[str]
) -> tuple[list[Any], list[Any] | None]:
    """``(messages, tools)`` with the inputs at ``paths`` perturbed (see the module docstring)."""
    messages = list(messages)
    tool_list = list(tools) if tools is not None else None
    removed: set[int] = set()
    for path in paths:
        kind, index_text, field = _PATH.match(path).groups()  # type: ignore[union-attr]
        index = int(index_text)
        if kind == "tools":
            assert tool_list is not None
            if field is None:
                removed.add(index)
            else:
                tool_list[index] = _perturb_tool_field(tool_list[index], field)
        elif field is None:
            for name in _message_fields(messages[index]):
                messages[index] = _perturb_field(messages[index], name)
        else:
            messages[index] = _perturb_field(messages[index], field)
    if tool_list is not None:
        tool_list = [tool for i, tool in enumerate(tool_list) if i not in removed]
    return messages, tool_list
