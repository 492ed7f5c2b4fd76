"""The gpt-oss template's walk: the system message, the developer message, then one writer per role.

The messages are read as transformers hands them to the template (``apply_chat_template``): a key
whose value is ``None`` is absent, and an assistant's ``thinking`` is its own ``thinking``, else its
``reasoning_content``, else its ``reasoning`` (transformers' reasoning aliases). What the template
reads where, and what it keeps, is in ``docs/gpt-oss.md``; the writers below follow it in order.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any, NoReturn

import orjson

from ...._text.plain import plain_data, printed_value
from ...._text.tojson import json_chunks, json_refused, tojson
from ....errors import FormatError, InvalidInputError, TemplateError, type_name
from ....model.messages import message_dict
from .options import SystemOptions
from .texts import (
    ANALYSIS,
    BROWSER_TOOL,
    CALL,
    CALL_CHANNEL,
    CALL_HEAD,
    CHANNEL_TAGS,
    CHANNELS,
    DEVELOPER,
    END,
    FINAL,
    FUNCTIONS_CHANNEL,
    GENERATION,
    MESSAGE,
    PYTHON_TOOL,
    RESULT_CHANNEL,
    RESULT_HEAD,
    RETURN,
    SYSTEM,
    USER,
)

__all__ = [
    "REASONING_READ", "FirstRender", "LoopState", "as_mapping", "checked_messages", "developer_instructions",
    "developer_message", "render_messages", "system_message",
]

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
NO_RESULT_PROBLEM = (
    "expected a value, got null or nothing (transformers drops a null field, and the template then fails "
    "writing the missing content as JSON)"
)
#: transformers' reasoning aliases, in the order the template's ``thinking`` takes them.
REASONING_READ = ("thinking", "reasoning_content", "reasoning")
_ALIASES_AFTER = {"thinking": ("reasoning_content", "reasoning"), "reasoning_content": ("reasoning",)}
NO_CALL_ERROR = "Message has tool role, but there was no previous assistant message with a tool call!"


def checked_messages(messages: Any) -> Sequence[Any]:
    """``messages`` itself once it is a non-empty list (or sequence) of messages; another class of
    list or tuple as the list of its items (read once by iteration, as transformers hands it over:
    the walk indexes it, and its own indexing or length could say what its items do not)."""
    given: Sequence[Any] = messages
    if type(messages) is not list and type(messages) is not tuple:
        if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
            raise InvalidInputError("messages", f"expected a list of messages, got {type_name(messages)}")
        if isinstance(messages, (list, tuple)):
            given = list(messages)
    if not given:
        raise InvalidInputError("messages", "expected at least one message (the template reads messages[0])")
    return given


def as_mapping(message: Any, index: int) -> Mapping[str, Any]:
    """A message as the mapping the writers read (a :class:`~prompt_formats.model.messages.Message` as its dict)."""
    return message if type(message) is dict else message_dict(message, index)


def json_text(value: Any, index: int, field: str, key: str = "") -> str:
    """The template's ``value|tojson`` (``json.dumps(value, ensure_ascii=False)``) for ``messages[index].field``
    (and ``key`` after it: the path is spelt out only for an error).

    Raises InvalidInputError naming the field for a value JSON cannot encode. Fast path for an exact
    ``str`` (tool results, string arguments): orjson escapes every code point as ``json.dumps`` does
    (``tests/render/test_gpt_oss_examples.py`` checks them all) at a tenth of the cost; it refuses a lone surrogate,
    which then takes the checked path. Agent requests hold many tool results, hence the fast path.
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
        return json_refused(value, f"messages[{index}].{field}{key}", exc)


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
    """``(instructions, taken)``: the first message's content if it is a system or developer message.

    The template prints the content (``{{ developer_message }}``) when it is truthy: a string as it
    is, any other value as Python's ``str`` of it (a list of parts is printed as its list).
    """
    if first.get("role") not in ("system", "developer"):
        return "", False
    content = first.get("content")
    if type(content) is str or isinstance(content, str):
        return content, True
    return (printed_value(content, "messages[0].content") if content else ""), True


@functools.lru_cache(maxsize=256)
def _system_message(identity: str, date: str, effort: str, builtin: tuple[bool, bool] | None, functions: bool) -> str:
    pieces = [SYSTEM, identity, "\nKnowledge cutoff: 2024-06\nCurrent date: ", date, "\n\nReasoning: ", effort, "\n\n"]
    if builtin is not None:  # a truthy builtin_tools: the header, even when it names no tool the template knows
        browser, python = builtin
        pieces.append("# Tools\n\n")
        if browser:
            pieces.append(BROWSER_TOOL)
        if python:
            pieces.append(PYTHON_TOOL)
    pieces.append(CHANNELS)
    if functions:
        pieces.append(FUNCTIONS_CHANNEL)
    pieces.append(END)
    return "".join(pieces)


def system_message(options: SystemOptions, functions: bool) -> str:
    """The whole system message, ``<|start|>system<|message|>…<|end|>``; ``functions``: tools are offered."""
    return _system_message(options.identity, options.date, options.effort, options.builtin, functions)


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


def _tags_checked(value: Any, index: int, key: str, error: str) -> Any:
    """``value`` after the template's ``TAG in value`` tests (``error`` when one holds); ``None``: not defined.

    The template tests membership, which a string, a list and a mapping all answer (a list holds the
    tag only as one of its items); any other value makes Jinja2 fail, which is an input error here.
    """
    if value is None:
        return None
    if isinstance(value, (str, list, tuple, Mapping)):
        if TAG_ANALYSIS in value or TAG_FINAL in value:
            raise TemplateError(error)
        return value
    raise InvalidInputError(
        f"messages[{index}].{key}", f"expected a string, a list or null (the template tests it), got {type_name(value)}"
    )


def _checked_texts(message: Mapping[str, Any], index: int, state: LoopState) -> tuple[Any, Any, str]:
    """An assistant message's ``(content, thinking, thinking's key)`` (``None``: not defined), after the
    template's checks for channel tags in each. Either may be a list or a mapping: the template
    only concatenates them where it writes them, and a writer checks them there. A reasoning alias
    the template does not read, holding other text, is noted lost."""
    content = message.get("content")
    if content is not None and type(content) is not str:
        content = _tags_checked(content, index, "content", CONTENT_TAGS_ERROR)
    elif content is not None and (TAG_ANALYSIS in content or TAG_FINAL in content):
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
    if thinking is not None:
        if type(thinking) is not str:
            thinking = _tags_checked(thinking, index, key, THINKING_TAGS_ERROR)
        elif TAG_ANALYSIS in thinking or TAG_FINAL in thinking:
            raise TemplateError(THINKING_TAGS_ERROR)
        # Key tests before the call: most messages hold one alias.
        if key != "reasoning" and state.noting and (
            "reasoning" in message or (key == "thinking" and "reasoning_content" in message)
        ):
            _unread_aliases(message, index, key, thinking, state)
    return content, thinking, key


#: What the template writes of no user's or tool result's turn: its reasoning and tool calls.
_UNWRITTEN_KEYS = frozenset({*REASONING_READ, "tool_calls"})


def _note_unwritten(message: Mapping[str, Any], index: int, state: LoopState) -> None:
    """Note what a user's, a tool result's or the first message's turn leaves out: its reasoning
    fields and each of its tool calls, wherever they hold anything."""
    if _UNWRITTEN_KEYS.isdisjoint(message):  # (the usual message: one C-level test)
        return
    state.lost += [(index, key) for key in REASONING_READ if message.get(key)]
    calls = message.get("tool_calls")
    if type(calls) is list or type(calls) is tuple:  # (each call, as an assistant's after its first)
        state.lost += [(index, f"tool_calls[{k}]") for k, call in enumerate(calls) if _call_holds_text(call)]


def _holds(value: Any) -> bool:
    """Whether a value holds text, as this template's losses count it: anything but ``None``, ``""``
    and an empty list or object (``0`` and ``False`` are written, as ``0`` and ``false``)."""
    if value is None:
        return False
    if isinstance(value, str):
        return value != ""
    if isinstance(value, (Mapping, list, tuple)):
        return len(value) > 0
    return True


def _call_holds_text(call: Any) -> bool:
    """Whether a tool call holds text (:func:`_holds`) where the template reads one: the name,
    arguments or content type of its ``function`` (when that is set) or of itself; a value that is
    no call, in itself."""
    body = (call.get("function") or call) if isinstance(call, Mapping) else call
    if not isinstance(body, Mapping):
        return _holds(body)
    return _holds(body.get("name")) or _holds(body.get("arguments")) or _holds(body.get("content_type"))


def _holds_text(message: Mapping[str, Any]) -> bool:
    """Whether a message holds text (:func:`_holds`): its content, a reasoning field, a tool call."""
    if _holds(message.get("content")) or any(_holds(message.get(key)) for key in REASONING_READ):
        return True
    calls = message.get("tool_calls")
    if type(calls) is list or type(calls) is tuple:
        return any(_call_holds_text(call) for call in calls)
    return _holds(calls)


def _unread_aliases(message: Mapping[str, Any], index: int, key: str, read: Any, state: LoopState) -> None:
    """Note the reasoning aliases after ``key`` that hold text other than the one read (``read``)."""
    for alias in _ALIASES_AFTER[key]:
        value = message.get(alias)
        if value and value != read:
            state.lost.append((index, alias))


def _written(value: Any, index: int, key: str) -> str:
    """``value`` where the template concatenates it to its text: a string, else Jinja2 fails."""
    if type(value) is str or isinstance(value, str):
        return value
    got = "null or nothing" if value is None else type_name(value)
    raise InvalidInputError(f"messages[{index}].{key}", f"expected a string (the template writes it), got {got}")


def _final_follows(messages: Sequence[Any], index: int) -> bool:
    """Whether an assistant message without tool calls comes after ``messages[index]``."""
    return _last_final(messages, index + 1) > index


class FirstRender:
    """What a session's first render notes as the walk goes: where each loop message's pieces start
    in out (then where the last one's end), the last final answer (-1: none) and the tool calls after
    it (written with their analysis), which the session's next requests start from."""

    __slots__ = ("last_final", "open_calls", "starts")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.last_final = -1
        self.open_calls: list[int] = []


class LoopState:
    """What one pass over the loop messages carries: the analyses written so far that a later final
    answer takes out again, and what the template left out (``lost``: ``(message index, field)``,
    the field ``""`` for a whole message, ``None`` for a whole message that holds nothing: no loss).
    ``noting``: whether ``lost`` is wanted (``render_spans`` and ``strict``); without it, ``render``
    makes none of the losses of the usual agent request (a dropped analysis, calls after the first,
    an unread alias), which cost it a tenth of its time on agent requests."""

    __slots__ = ("analyses", "first", "lost", "messages", "noting")

    def __init__(self, messages: Sequence[Any], noting: bool, first: FirstRender | None = None) -> None:
        self.messages = messages
        self.noting = noting
        self.analyses: list[tuple[int, int, str]] = []  # (place in out, message index, field)
        self.lost: list[tuple[int, str | None]] = []
        self.first = first  # a session's first render: what it notes


def _write_tool_call(out: list[str], message: Mapping[str, Any], calls: Any, index: int, state: LoopState) -> str:
    """Append an assistant message with tool calls (its analysis, noted in ``state.analyses``, then
    its first call); its call's name.

    The template's ``tool_call`` is ``tool_calls[0]``, or its ``function`` when that is set. One
    function, appending straight into ``out``: it runs for most messages of an agent conversation.
    """
    content, thinking, thinking_key = _checked_texts(message, index, state)
    if (type(calls) is not list and not isinstance(calls, (list, tuple))) or not calls:
        _refuse_calls(calls, index)
    call = calls[0]  # the first call only, as the template
    field = "tool_calls[0]"
    if type(call) is not dict:
        if not isinstance(call, Mapping):
            raise InvalidInputError(f"messages[{index}].{field}", f"expected a tool call object, got {type_name(call)}")
        call = plain_data(call)  # (its items, as transformers hands it over: its own get could lie)
    function = call.get("function")
    if function:
        call = function
        field = "tool_calls[0].function"
        if type(call) is not dict:
            if not isinstance(call, Mapping):
                raise InvalidInputError(f"messages[{index}].{field}", f"expected an object, got {type_name(call)}")
            call = plain_data(call)
    if content and thinking:
        raise TemplateError(BOTH_ERROR)
    analysis, key = (content, "content") if content else (thinking, thinking_key)
    if analysis and type(analysis) is not str and not isinstance(analysis, str):
        if not _final_follows(state.messages, index):
            _written(analysis, index, key)  # the template writes it, and fails
        state.lost.append((index, key))  # a final answer follows: the template drops it unwritten
        analysis = None
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
    if analysis:
        state.analyses.append((len(out), index, key))
        out += (ANALYSIS, analysis, END)
    out += (CALL_HEAD, name, CALL_CHANNEL, content_type, MESSAGE, arguments, CALL)
    if len(calls) > 1 and state.noting:  # (a call that holds nothing, an empty one, loses nothing)
        state.lost += [(index, f"tool_calls[{k}]") for k in range(1, len(calls)) if _call_holds_text(calls[k])]
    return name


def _answer(message: Mapping[str, Any], index: int, ends_prompt: bool, state: LoopState) -> tuple[str, ...]:
    """An assistant message without tool calls: its final answer, ``<|end|>``-terminated; when it ends
    the prompt (no generation prompt: training data), its analysis first and ``<|return|>``."""
    _, thinking, key = _checked_texts(message, index, state)
    if not ends_prompt:
        content = message.get("content")
        if type(content) is not str:
            content = _written(content, index, "content")
        if thinking and state.noting:
            state.lost.append((index, key))  # earlier turns' analysis is dropped
        return (FINAL, content, END)
    if thinking is not None:
        thinking = _written(thinking, index, key)
        return (ANALYSIS, thinking, END, FINAL, _written(message.get("content"), index, "content"), RETURN)
    return (FINAL, _written(message.get("content"), index, "content"), RETURN)


def _last_final(messages: Sequence[Any], start: int) -> int:
    """The index of the last assistant message without tool calls (-1: none)."""
    for j in range(len(messages) - 1, start - 1, -1):
        message = messages[j]
        if type(message) is not dict:
            message = message_dict(message, j)
        if message.get("role") == "assistant" and message.get("tool_calls") is None:
            return j
    return -1


def _drop_analyses(out: list[str], state: LoopState) -> None:
    """Take out the analysis messages noted in ``state.analyses`` (a final answer follows them: the
    template drops them), and note them lost.

    One copy of the pieces after the first of them: each piece is behind at most one final answer's
    drop, so the whole render stays linear in the conversation's length.
    """
    analyses = state.analyses
    first = previous = analyses[0][0]
    kept: list[str] = []
    for at, _, _ in analyses:
        kept += out[previous:at]
        previous = at + 3  # ANALYSIS, its text, END
    if state.noting:
        state.lost += [(index, key) for _, index, key in analyses]
    kept += out[previous:]
    out[first:] = kept
    if state.first is not None:
        _move_starts(state.first.starts, [at for at, _, _ in analyses])
    analyses.clear()


def _move_starts(starts: list[int], dropped: list[int]) -> None:
    """Move each message start in ``starts`` back by the pieces of the analyses ``dropped`` (their
    places in out, in order) before it; an analysis that begins its message leaves that start where it is."""
    index = len(starts) - 1
    while index >= 0 and starts[index] > dropped[0]:
        starts[index] -= 3 * bisect.bisect_left(dropped, starts[index])
        index -= 1


def render_messages(
    out: list[str], messages: Sequence[Any], start: int, add_generation_prompt: bool, noting: bool = True,
    first: FirstRender | None = None,
) -> list[tuple[int, str | None]]:
    """Append the template's text for ``messages[start:]`` (the loop messages) and the generation prompt;
    return what the template left out, as ``(message index, field)`` in message order (field ``""``:
    the whole message; ``None``: a whole message that holds nothing, unwritten but no loss), when
    ``noting`` (else the list is not to be read). ``first``, when given, gets what a session's first
    render notes (:class:`FirstRender`; its ``starts`` end where the last message's pieces end, before
    the generation prompt).

    Raises :class:`TemplateError` with the template's message where it raises, in the same order, and
    :class:`InvalidInputError` naming the field for input outside the documented shape.
    """
    state = LoopState(messages, noting, first)
    if start and noting:  # the first message, a system or developer message the header wrote
        _note_unwritten(messages[0] if type(messages[0]) is dict else message_dict(messages[0], 0), 0, state)
    try:
        _render_loop(out, state, start, add_generation_prompt)
    except FormatError:
        # The template looks ahead for a final answer from every call; a message that is not one
        # (message_dict's error) anywhere after an error still raises first, as it did from that scan.
        _last_final(messages, start)
        raise
    if first is not None:
        first.starts.append(len(out))
    if add_generation_prompt:
        out.append(GENERATION)
    lost = state.lost
    if len(lost) > 1:
        lost.sort(key=itemgetter(0))  # by message index only, a message's own losses kept in order
    return lost


def _render_loop(out: list[str], state: LoopState, start: int, add_generation_prompt: bool) -> None:
    """:func:`render_messages` but the generation prompt and the order of its errors."""
    # A call's analysis is written, and taken out again when a final answer follows (one pass,
    # instead of looking ahead from each call as the template does).
    messages = state.messages
    last = len(messages) - 1
    last_tool_name: str | None = None
    first = state.first
    starts = None if first is None else first.starts
    for index in range(start, len(messages)):
        message = messages[index]
        if starts is not None:
            starts.append(len(out))
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
            if state.noting:
                _note_unwritten(message, index, state)
        elif role == "assistant":
            calls = message.get("tool_calls")
            if calls is not None:
                last_tool_name = _write_tool_call(out, message, calls, index, state)
                if first is not None:
                    first.open_calls.append(index)
            else:
                if state.analyses:
                    _drop_analyses(out, state)
                ends_prompt = index == last and not add_generation_prompt
                out += _answer(message, index, ends_prompt, state)
                if not ends_prompt:
                    last_tool_name = None
                if first is not None:
                    first.open_calls, first.last_final = [], index
        elif role == "user":
            content = message.get("content")
            if type(content) is not str:
                content = _written(content, index, "content")
            out += (USER, content, END)
            if state.noting:
                _note_unwritten(message, index, state)
        elif isinstance(role, str):  # the template renders no other role after the first message
            state.lost.append((index, "" if _holds_text(message) else None))
        else:
            _role(message, index)
