"""The gpt-oss template's main logic: the system message, the developer message, one writer per role.

The messages are read as transformers hands them to the template (``apply_chat_template``): a key
whose value is ``None`` is absent, and an assistant's ``thinking`` is its own ``thinking``, else its
``reasoning_content``, else its ``reasoning`` (transformers' reasoning aliases). What the template
reads where, and what it keeps, is in ``docs/gpt-oss.md``; the writers below follow it in order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from ..._json import tojson_at
from ...errors import InvalidInputError, TemplateError, type_name
from ...messages import message_dict
from .tokens import (
    ANALYSIS,
    CALL,
    CALL_CHANNEL,
    CALL_HEAD,
    CHANNEL_TAGS,
    DEVELOPER,
    END,
    FINAL,
    GENERATION,
    MESSAGE,
    RESULT_CHANNEL,
    RESULT_HEAD,
    RETURN,
    USER,
)

__all__ = ["conversation_view", "render_messages"]

CONTENT_TAGS_ERROR = (
    "You have passed a message containing <|channel|> tags in the content field. Instead of doing this, you "
    "should pass analysis messages (the string between '<|message|>' and '<|end|>') in the 'thinking' field, "
    "and final messages (the string between '<|message|>' and '<|end|>') in the 'content' field."
)
THINKING_TAGS_ERROR = CONTENT_TAGS_ERROR.replace("in the content field", "in the thinking field", 1)
BOTH_ERROR = (
    "Cannot pass both content and thinking in an assistant message with tool calls! Put the analysis message "
    "in one or the other, but not both."
)
NO_CALL_ERROR = "Message has tool role, but there was no previous assistant message with a tool call!"


def conversation_view(messages: Any) -> list[Mapping[str, Any]]:
    """The messages as mappings (a :class:`~prompt_formats.messages.Message` as its OpenAI dict)."""
    if (type(messages) is not list and type(messages) is not tuple) and (
        isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence)
    ):
        raise InvalidInputError("messages", f"expected a list of messages, got {type_name(messages)}")
    if not messages:
        raise InvalidInputError("messages", "expected at least one message (the template reads messages[0])")
    return [m if type(m) is dict else message_dict(m, i) for i, m in enumerate(messages)]


def json_text(value: Any, path: str) -> str:
    """The template's ``value|tojson`` (``json.dumps(value, ensure_ascii=False)``), or InvalidInputError at ``path``.

    Fast path for an exact ``str`` (tool results, string arguments): orjson escapes every code point
    as ``json.dumps`` does (``tests/test_gpt_oss.py`` checks them all) at a tenth of the cost; it
    refuses a lone surrogate, which then takes the checked path. Wins the agent rows of
    ``benchmarks/bench_gpt_oss.py``.
    """
    if type(value) is str:
        try:
            return orjson.dumps(value).decode()
        except TypeError:  # orjson.JSONEncodeError: a lone surrogate
            pass
    return tojson_at(value, path)


def _string(message: Mapping[str, Any], key: str, index: int, what: str) -> str:
    value = message.get(key)
    if isinstance(value, str):
        return value
    got = "null or nothing" if value is None else type_name(value)
    raise InvalidInputError(f"messages[{index}].{key}", f"expected a string ({what}), got {got}")


def _optional_string(message: Mapping[str, Any], key: str, index: int) -> str | None:
    value = message.get(key)
    if value is None or isinstance(value, str):
        return value
    raise InvalidInputError(f"messages[{index}].{key}", f"expected a string or null, got {type_name(value)}")


def _role(message: Mapping[str, Any], index: int) -> str:
    role = message.get("role")
    if isinstance(role, str):
        return role
    raise InvalidInputError(f"messages[{index}].role", f"expected a string, got {type_name(role)}")


def developer_instructions(first: Mapping[str, Any]) -> tuple[str, bool]:
    """``(instructions, taken)``: the first message's content if it is a system or developer message."""
    if first.get("role") not in ("system", "developer"):
        return "", False
    return _optional_string(first, "content", 0) or "", True


def developer_message(instructions: str, functions: str) -> str:
    """The developer message (``""`` when there are neither instructions nor tools)."""
    if not instructions and not functions:
        return ""
    pieces = [DEVELOPER]
    if instructions:
        pieces += ("# Instructions\n\n", instructions, "\n\n")
    if functions:
        pieces += ("# Tools\n\n", functions)
    pieces.append(END)
    return "".join(pieces)


def _thinking(message: Mapping[str, Any], index: int) -> str | None:
    """The template's ``message.thinking`` after transformers' aliasing (``None``: not defined)."""
    key = "thinking"
    value = message.get(key)
    if value is None:
        key = "reasoning_content"
        value = message.get(key)
        if value is None:
            key = "reasoning"
            value = message.get(key)
            if value is None:
                return None
    if type(value) is str or isinstance(value, str):
        return value
    raise InvalidInputError(f"messages[{index}].{key}", f"expected a string or null, got {type_name(value)}")


def _check_tags(text: str | None, error: str) -> None:
    if text is not None and (CHANNEL_TAGS[0] in text or CHANNEL_TAGS[1] in text):
        raise TemplateError(error)


def _first_call(calls: Any, index: int) -> tuple[Mapping[str, Any], str]:
    """The template's ``tool_call``: ``tool_calls[0]``, or its ``function`` when that is set; and its path."""
    path = f"messages[{index}].tool_calls"
    if not isinstance(calls, (list, tuple)) or not calls:
        got = "an empty list" if isinstance(calls, (list, tuple)) else type_name(calls)
        raise InvalidInputError(path, f"expected a non-empty list of tool calls (the template reads [0]), got {got}")
    call = calls[0]
    path += "[0]"
    if type(call) is not dict and not isinstance(call, Mapping):
        raise InvalidInputError(path, f"expected a tool call object, got {type_name(call)}")
    function = call.get("function")
    if function:
        call = function
        path += ".function"
        if type(call) is not dict and not isinstance(call, Mapping):
            raise InvalidInputError(path, f"expected an object, got {type_name(call)}")
    return call, path


def _call_text(call: Mapping[str, Any], path: str) -> tuple[str, str]:
    """``(name, text)`` of the tool-call message the template writes for ``call``."""
    name = call.get("name")
    if type(name) is not str and not isinstance(name, str):
        raise InvalidInputError(path + ".name", f"expected a string, got {type_name(name)}")
    content_type = call.get("content_type", "json")
    if type(content_type) is not str and not isinstance(content_type, str):
        raise InvalidInputError(path + ".content_type", f"expected a string, got {type_name(content_type)}")
    if "arguments" not in call:
        raise InvalidInputError(path + ".arguments", "expected a value (the template writes it as JSON), got nothing")
    arguments = json_text(call["arguments"], path + ".arguments")
    return name, CALL_HEAD + name + CALL_CHANNEL + content_type + MESSAGE + arguments + CALL


class _Writer:
    """The template's loop over the messages after the developer message, one method per role."""

    __slots__ = ("add_generation_prompt", "last_final", "last_tool_name", "out")

    def __init__(self, out: list[str], add_generation_prompt: bool, last_final: int) -> None:
        self.out = out
        self.add_generation_prompt = add_generation_prompt
        self.last_final = last_final  # index of the last assistant message without tool calls
        self.last_tool_name: str | None = None

    def user(self, message: Mapping[str, Any], index: int) -> None:
        content = message.get("content")
        if type(content) is not str:
            content = _string(message, "content", index, "the template writes it")
        self.out += (USER, content, END)

    def tool(self, message: Mapping[str, Any], index: int) -> None:
        if self.last_tool_name is None:
            raise TemplateError(NO_CALL_ERROR)
        if message.get("content") is None:
            raise InvalidInputError(
                f"messages[{index}].content", "expected a value (the template writes it as JSON), got null or nothing"
            )
        content = json_text(message["content"], f"messages[{index}].content")
        self.out += (RESULT_HEAD, self.last_tool_name, RESULT_CHANNEL, content, END)

    def assistant(self, message: Mapping[str, Any], index: int, last: bool) -> None:
        content = message.get("content")
        if content is not None and type(content) is not str:
            content = _optional_string(message, "content", index)
        _check_tags(content, CONTENT_TAGS_ERROR)
        thinking = _thinking(message, index)
        _check_tags(thinking, THINKING_TAGS_ERROR)
        calls = message.get("tool_calls")
        if calls is not None:
            self._tool_call(calls, content, thinking, index)
        elif last and not self.add_generation_prompt:
            # The conversation ends with the answer (training data): its analysis and <|return|>.
            if thinking is not None:
                self.out += (ANALYSIS, thinking, END)
            self.out += (FINAL, _string(message, "content", index, "the template writes it"), RETURN)
        else:
            self.out += (FINAL, _string(message, "content", index, "the template writes it"), END)
            self.last_tool_name = None

    def _tool_call(self, calls: Any, content: str | None, thinking: str | None, index: int) -> None:
        call, path = _first_call(calls, index)  # the first call only, as the template
        if content and thinking:
            raise TemplateError(BOTH_ERROR)
        if self.last_final <= index:  # the analysis is dropped once a later final answer exists
            analysis = content or thinking
            if analysis:
                self.out += (ANALYSIS, analysis, END)
        name, text = _call_text(call, path)
        self.out.append(text)
        self.last_tool_name = name


def _last_final(messages: Sequence[Mapping[str, Any]], start: int) -> int:
    last = -1
    for j in range(start, len(messages)):
        message = messages[j]
        if message.get("role") == "assistant" and message.get("tool_calls") is None:
            last = j
    return last


def render_messages(
    out: list[str], messages: Sequence[Mapping[str, Any]], start: int, add_generation_prompt: bool
) -> None:
    """Append the template's text for ``messages[start:]`` (the loop messages) and the generation prompt.

    Raises :class:`TemplateError` with the template's message where it raises, in the same order, and
    :class:`InvalidInputError` naming the field for input outside the documented shape.
    """
    writer = _Writer(out, add_generation_prompt, _last_final(messages, start))
    last = len(messages) - 1
    for index in range(start, len(messages)):
        message = messages[index]
        role = message.get("role")
        if role == "assistant":
            writer.assistant(message, index, index == last)
        elif role == "tool":
            writer.tool(message, index)
        elif role == "user":
            writer.user(message, index)
        elif isinstance(role, str):
            raise InvalidInputError(
                f"messages[{index}].role",
                f"the template renders only user, assistant and tool messages after the first; it would drop {role!r}",
            )
        else:
            _role(message, index)
    if add_generation_prompt:
        out.append(GENERATION)
