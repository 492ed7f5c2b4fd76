"""The gpt-oss template's main logic after the system message: the developer message, then one writer per role.

The messages are read as transformers hands them to the template (``apply_chat_template``): a key
whose value is ``None`` is absent, and an assistant's ``thinking`` is its own ``thinking``, else its
``reasoning_content``, else its ``reasoning`` (transformers' reasoning aliases). What the template
reads where, and what it keeps, is in ``docs/gpt-oss.md``; the writers below follow it in order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

import orjson

from ..._json import json_chunks, not_serialisable, tojson
from ...errors import FormatError, InvalidInputError, TemplateError, type_name
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

__all__ = ["as_mapping", "checked_messages", "developer_instructions", "developer_message", "render_messages"]

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
TAG_ANALYSIS, TAG_FINAL = CHANNEL_TAGS
NO_RESULT_PROBLEM = "expected a value (the template writes it as JSON), got null or nothing"
NO_CALL_ERROR = "Message has tool role, but there was no previous assistant message with a tool call!"


def checked_messages(messages: Any) -> Sequence[Any]:
    """``messages`` itself once it is a non-empty list (or sequence) of messages."""
    if (type(messages) is not list and type(messages) is not tuple) and (
        isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence)
    ):
        raise InvalidInputError("messages", f"expected a list of messages, got {type_name(messages)}")
    if not messages:
        raise InvalidInputError("messages", "expected at least one message (the template reads messages[0])")
    return messages


def as_mapping(message: Any, index: int) -> Mapping[str, Any]:
    """A message as the mapping the writers read (a :class:`~prompt_formats.messages.Message` as its dict)."""
    return message if type(message) is dict else message_dict(message, index)


def json_text(value: Any, index: int, field: str, key: str = "") -> str:
    """The template's ``value|tojson`` (``json.dumps(value, ensure_ascii=False)``) for ``messages[index].field``
    (and ``key`` after it: the path is spelt out only for an error).

    Raises InvalidInputError naming the field for a value JSON cannot encode. Fast path for an exact
    ``str`` (tool results, string arguments): orjson escapes every code point as ``json.dumps`` does
    (``tests/render/test_gpt_oss_examples.py`` checks them all) at a tenth of the cost; it refuses a lone surrogate,
    which then takes the checked path. Wins the agent rows of ``benchmarks/bench_gpt_oss.py``.
    """
    kind = type(value)
    try:
        if kind is str:
            try:
                return orjson.dumps(value).decode()
            except TypeError:  # orjson.JSONEncodeError: a lone surrogate
                return tojson(value)
        if kind is dict or kind is list:  # tojson's own call for them, without its dispatch
            return "".join(json_chunks(value, 0))
        return tojson(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise not_serialisable(f"messages[{index}].{field}{key}", exc) from None


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


def developer_message(instructions: str, functions: str) -> list[str]:
    """The developer message's pieces (none when there are neither instructions nor tools).

    Pieces, not one string: the long texts (instructions, the tools namespace) are then copied once,
    by the prompt's final join.
    """
    if not instructions and not functions:
        return []
    pieces = [DEVELOPER]
    if instructions:
        pieces += ("# Instructions\n\n", instructions, "\n\n")
    if functions:
        pieces += ("# Tools\n\n", functions)
    pieces.append(END)
    return pieces


def _refuse_calls(calls: Any, index: int) -> NoReturn:
    """Raise for ``tool_calls`` that are not a non-empty list (the template reads ``[0]``)."""
    got = "an empty list" if isinstance(calls, (list, tuple)) else type_name(calls)
    problem = f"expected a non-empty list of tool calls (the template reads [0]), got {got}"
    raise InvalidInputError(f"messages[{index}].tool_calls", problem)


def _refuse_text(value: Any, index: int, path: str) -> NoReturn:
    """Raise for a call's field that the template writes and that is not a string."""
    raise InvalidInputError(f"messages[{index}].{path}", f"expected a string, got {type_name(value)}")


def _checked_texts(message: Mapping[str, Any], index: int) -> tuple[str | None, str | None]:
    """An assistant message's ``(content, thinking)`` (``None``: not defined), after the template's checks
    for channel tags in each."""
    content = message.get("content")
    if content is not None and type(content) is not str:
        content = _optional_string(message, "content", index)
    if content is not None and (TAG_ANALYSIS in content or TAG_FINAL in content):
        raise TemplateError(CONTENT_TAGS_ERROR)
    # The template's ``message.thinking`` after transformers' aliasing (``None``: not defined).
    key = "thinking"
    thinking = message.get(key)
    if thinking is None:
        key = "reasoning_content"
        thinking = message.get(key)
        if thinking is None:
            key = "reasoning"
            thinking = message.get(key)
    if thinking is not None and type(thinking) is not str and not isinstance(thinking, str):
        raise InvalidInputError(f"messages[{index}].{key}", f"expected a string or null, got {type_name(thinking)}")
    if thinking is not None and (TAG_ANALYSIS in thinking or TAG_FINAL in thinking):
        raise TemplateError(THINKING_TAGS_ERROR)
    return content, thinking


def _write_tool_call(out: list[str], message: Mapping[str, Any], calls: Any, index: int, analyses: list[int]) -> str:
    """Append an assistant message with tool calls (its analysis, whose place in ``out`` is added to
    ``analyses``, then its first call); its call's name.

    The template's ``tool_call`` is ``tool_calls[0]``, or its ``function`` when that is set. One
    function, appending straight into ``out``: it runs for most messages of an agent conversation.
    """
    content, thinking = _checked_texts(message, index)
    if (type(calls) is not list and not isinstance(calls, (list, tuple))) or not calls:
        _refuse_calls(calls, index)
    call = calls[0]  # the first call only, as the template
    field = "tool_calls[0]"
    if type(call) is not dict and not isinstance(call, Mapping):
        raise InvalidInputError(f"messages[{index}].{field}", f"expected a tool call object, got {type_name(call)}")
    function = call.get("function")
    if function:
        call = function
        field = "tool_calls[0].function"
        if type(call) is not dict and not isinstance(call, Mapping):
            raise InvalidInputError(f"messages[{index}].{field}", f"expected an object, got {type_name(call)}")
    if content and thinking:
        raise TemplateError(BOTH_ERROR)
    name = call.get("name")
    if type(name) is not str and not isinstance(name, str):
        _refuse_text(name, index, field + ".name")
    content_type = call.get("content_type", "json")
    if type(content_type) is not str and not isinstance(content_type, str):
        _refuse_text(content_type, index, field + ".content_type")
    if "arguments" not in call:
        raise InvalidInputError(
            f"messages[{index}].{field}.arguments", "expected a value (the template writes it as JSON), got nothing"
        )
    arguments = json_text(call["arguments"], index, field, ".arguments")
    analysis = content or thinking
    if analysis:
        analyses.append(len(out))
        out += (ANALYSIS, analysis, END)
    out += (CALL_HEAD, name, CALL_CHANNEL, content_type, MESSAGE, arguments, CALL)
    return name


def _answer(message: Mapping[str, Any], index: int, ends_prompt: bool) -> tuple[str, ...]:
    """An assistant message without tool calls: its final answer, ``<|end|>``-terminated; when it ends
    the prompt (no generation prompt: training data), its analysis first and ``<|return|>``."""
    _, thinking = _checked_texts(message, index)
    content = _string(message, "content", index, "the template writes it")
    if not ends_prompt:
        return (FINAL, content, END)  # earlier turns' analysis is dropped
    if thinking is not None:
        return (ANALYSIS, thinking, END, FINAL, content, RETURN)
    return (FINAL, content, RETURN)


def _last_final(messages: Sequence[Any], start: int) -> int:
    """The index of the last assistant message without tool calls (-1: none)."""
    for j in range(len(messages) - 1, start - 1, -1):
        message = messages[j]
        if type(message) is not dict:
            message = message_dict(message, j)
        if message.get("role") == "assistant" and message.get("tool_calls") is None:
            return j
    return -1


def _drop_analyses(out: list[str], analyses: list[int]) -> None:
    """Take out the analysis messages at ``analyses`` (a final answer follows them: the template drops them).

    One copy of the pieces after the first of them: each piece is behind at most one final answer's
    drop, so the whole render stays linear in the conversation's length.
    """
    first = previous = analyses[0]
    kept: list[str] = []
    for at in analyses:
        kept += out[previous:at]
        previous = at + 3  # ANALYSIS, its text, END
    kept += out[previous:]
    out[first:] = kept
    analyses.clear()


def render_messages(out: list[str], messages: Sequence[Any], start: int, add_generation_prompt: bool) -> None:
    """Append the template's text for ``messages[start:]`` (the loop messages) and the generation prompt.

    Raises :class:`TemplateError` with the template's message where it raises, in the same order, and
    :class:`InvalidInputError` naming the field for input outside the documented shape.
    """
    try:
        _render_loop(out, messages, start, add_generation_prompt)
    except FormatError:
        # The template looks ahead for a final answer from every call; a message that is not one
        # (message_dict's error) anywhere after an error still raises first, as it did from that scan.
        _last_final(messages, start)
        raise
    if add_generation_prompt:
        out.append(GENERATION)


def _render_loop(out: list[str], messages: Sequence[Any], start: int, add_generation_prompt: bool) -> None:
    """:func:`render_messages` but the generation prompt and the order of its errors."""
    # A call's analysis is written, and taken out again when a final answer follows (one pass,
    # instead of looking ahead from each call as the template does).
    analyses: list[int] = []
    last = len(messages) - 1
    last_tool_name: str | None = None
    for index in range(start, len(messages)):
        message = messages[index]
        if type(message) is not dict:
            message = message_dict(message, index)
        role = message.get("role")
        if role == "tool":
            if last_tool_name is None:
                raise TemplateError(NO_CALL_ERROR)
            content = message.get("content")
            if content is None:
                raise InvalidInputError(f"messages[{index}].content", NO_RESULT_PROBLEM)
            out += (RESULT_HEAD, last_tool_name, RESULT_CHANNEL, json_text(content, index, "content"), END)
        elif role == "assistant":
            calls = message.get("tool_calls")
            if calls is not None:
                last_tool_name = _write_tool_call(out, message, calls, index, analyses)
            else:
                if analyses:
                    _drop_analyses(out, analyses)
                ends_prompt = index == last and not add_generation_prompt
                out += _answer(message, index, ends_prompt)
                if not ends_prompt:
                    last_tool_name = None
        elif role == "user":
            content = message.get("content")
            if type(content) is not str:
                content = _string(message, "content", index, "the template writes it")
            out += (USER, content, END)
        elif isinstance(role, str):
            raise InvalidInputError(
                f"messages[{index}].role",
                f"the template renders only user, assistant and tool messages after the first; it would drop {role!r}",
            )
        else:
            _role(message, index)
