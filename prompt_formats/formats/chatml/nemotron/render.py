"""The walk of the Nemotron 3 templates (Nano, Super, Ultra, 3.5): :func:`render_nemotron`.

A transcription of their control flow; where they differ, the walk reads the
:class:`~.template.NemotronTemplate`. In template order:

1. the system turn, always written: the first message's text when it is a system message, then
   the tools spelt as XML (:mod:`.tool_spec`) and the call instructions;
2. the last user message after it is found (-1: none);
3. the turns: an assistant's text is its reasoning in a think block followed by its content, or
   an empty think block followed by a content that holds no think tag; before the last user
   message (under ``truncate_history_thinking``, on by default) what a think block closes is cut
   away; then its calls in the XML form. A user or system message is its content as Python prints
   it (the last user message, under an effort flag, followed by its note); a run of tool results
   is one user turn, opened unless the run comes first; any other role is concatenated;
4. the generation prompt: a think block opened, or an empty one with thinking off.

Where the engine itself fails (text concatenated with a value that is no string, ``|items`` of
arguments that are no object, ``|tojson`` of a value JSON cannot encode),
:class:`~prompt_formats.errors.InvalidInputError` names the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...._text.plain import require_plain
from ...._text.tojson import json_refused
from ....errors import InvalidInputError, type_name
from ....format.chat_format import Conversation, Tools
from ....model.reading import REASONING_FIELDS, reasoning_field, reasoning_of
from ..drops import OTHER_FIELDS, OTHER_KEYS, holds_text, losing_fields, note_assistant_drops, text_outside_markup
from ..json_calls.content import chars, concatenated, printed
from ..json_calls.render import message_dicts
from ..render import NotedRender
from ..template import ABSENT, string_value
from ..tokens import (
    ASSISTANT_THINKING,
    ASSISTANT_TURN,
    CALL_FIRST,
    EMPTY_THINK,
    IM_START,
    NEMOTRON_CALL_END,
    NEMOTRON_NO_THINKING_PROMPT,
    NEMOTRON_PARAMETER_END,
    NEMOTRON_TOOL_RESPONSE_CLOSE,
    NEMOTRON_TOOL_RESPONSE_OPEN,
    PARAMETER_OPEN,
    SYSTEM_TURN,
    THINK_CLOSE,
    THINK_OPEN,
    TURN_END,
    USER_TURN,
)
from .template import NEMOTRON_3_NANO, NemotronTemplate, truthy
from .tool_spec import fields_of, nemotron_tools_block

__all__ = ["generation_prompt", "last_user", "nemotron_noted", "render_nemotron", "walk_options"]

_REASONING_KEYS = frozenset(REASONING_FIELDS)


def last_user(roles: list[str], first: int) -> int:
    """The index of the last user message from ``first`` on (-1: none)."""
    for i in range(len(roles) - 1, first - 1, -1):
        if roles[i] == "user":
            return i
    return -1


def _prologue(out: list[str], msgs: list[dict[str, Any]], first: int, tools: Tools) -> int:
    """The system turn, four pieces (empty when the leading system message has no content and no
    tools are offered: the template writes none); returns the length of its text (the second piece)."""
    content = msgs[0].get("content") if first else ""
    text = "" if content is None else concatenated(content, "messages[0].content")
    block = nemotron_tools_block(tools)
    if content is None and not block:
        out.extend(("", "", "", ""))
    else:
        out.extend((SYSTEM_TURN, text, "\n\n" + block if block and text else block, TURN_END))
    return len(text)


def _body(message: dict[str, Any], index: int, think_end: str, strings_only: bool) -> tuple[str, bool]:
    """An assistant turn's text before it is trimmed or cut: its reasoning in a think block, then
    its content; or its content, after an empty think block when it holds no think tag. And whether
    it is text: a content that is no string (without reasoning) is written, as Python prints it,
    only where the turn has no calls."""
    content = message.get("content")
    path = f"messages[{index}].content"
    if content is not None and type(content) is not str:
        require_plain(content, path)  # an object's text is a string: a turn's text
        if not truthy(content, path):
            content = None  # `content|default('', true)`
    reasoning = reasoning_of(message)
    if reasoning is not None and type(reasoning) is not str:
        require_plain(reasoning, f"messages[{index}].{reasoning_field(message)}")
    if isinstance(reasoning, str) and str.strip(reasoning):
        shown = printed(reasoning, f"messages[{index}].{reasoning_field(message)}", strings_only)
        return THINK_OPEN + "\n" + shown + think_end + (printed(content, path, strings_only) if content else ""), True
    if not content:
        return EMPTY_THINK, True
    if isinstance(content, str):
        text = chars(content)
        if THINK_OPEN in text or THINK_CLOSE in text:
            return text, True
        return EMPTY_THINK + printed(content, path, strings_only), True
    return printed(content, path, strings_only), False


def _cut_with_calls(body: str, trims: bool) -> str:
    """What an earlier turn with calls keeps of its text: what follows its last ``</think>`` (else
    what precedes its first ``<think>``), after an empty think block."""
    if THINK_CLOSE in body:
        body = body.split(THINK_CLOSE)[-1]
    elif THINK_OPEN in body:
        body = body.split(THINK_OPEN)[0]
    return EMPTY_THINK + (body.strip() if trims else body)


def _cut(body: str) -> str:
    """What an earlier turn without calls keeps of its text."""
    if THINK_OPEN in body and THINK_CLOSE in body:
        body = EMPTY_THINK + body.split(THINK_CLOSE)[-1]
    return body.strip()


def _argument(value: Any, strings_only: bool, calls: list[Any], index: int, k: int, key: str) -> str:
    """Argument ``key`` of call ``k`` that is no exact string, as the template writes it: an object
    or a list as JSON, anything else as Python prints it; ``strings_only`` (a guard): a value whose
    printing would write text the guard did not check is refused. Its path is made for errors only."""
    if isinstance(value, str):
        return printed(value, _argument_path(calls, index, k, key), strings_only)
    if strings_only and not isinstance(value, (int, float, Mapping, list, tuple)) and value is not None:
        raise InvalidInputError(_argument_path(calls, index, k, key),
                                f"a {type_name(value)} (with a guard, refused: its printing would go unchecked)")
    try:
        return string_value(value)
    except (TypeError, ValueError, RecursionError) as exc:
        return json_refused(value, _argument_path(calls, index, k, key), exc)
    except Exception:  # its printing fails (its __str__ raises): the engine fails
        raise InvalidInputError(_argument_path(calls, index, k, key),
                                f"a {type_name(value)} that cannot be printed") from None


def _argument_path(calls: list[Any], index: int, k: int, key: str) -> str:
    """The path of argument ``key`` of call ``k`` (for errors)."""
    return f"{_call_path(calls, index, k)}.arguments.{key}"


def _iterated(calls: Any, index: int) -> list[Any] | None:
    """What the template's ``for`` meets in ``tool_calls`` (a string's characters, an object's keys),
    or ``None`` where it writes no calls: none, not iterable, or empty."""
    if calls is None:
        return None
    if type(calls) is list:
        return calls or None
    try:
        iter(calls)
    except TypeError:
        return None  # `tool_calls is iterable`: false
    except Exception:
        pass  # (the engine fails on it below)
    try:
        return list(calls) if len(calls) else None
    except Exception:  # no length, or a failing one: the engine fails
        raise InvalidInputError(f"messages[{index}].tool_calls", f"a {type_name(calls)} the engine cannot take "
                                "(no length, or one that cannot be read)") from None


def _call_path(calls: list[Any], index: int, k: int) -> str:
    """The path of call ``k``'s fields (its ``function``'s, where it has one): made for errors only."""
    call = calls[k]
    return f"messages[{index}].tool_calls[{k}]" + (".function" if isinstance(call, Mapping) and "function" in call
                                                   else "")


def _call_text(body: Mapping[str, Any], calls: list[Any], index: int, k: int, strings_only: bool) -> str:
    """Call ``k``'s parameters: one element per argument (its ``arguments`` must be an object); the
    path in an error is made only then."""
    if "arguments" not in body:
        return ""
    arguments = body["arguments"]
    if type(arguments) is not dict and not isinstance(arguments, Mapping):  # `arguments|items`: the engine fails
        hint = " (decode_tool_arguments=true decodes JSON text first)" if isinstance(arguments, str) else ""
        raise InvalidInputError(_call_path(calls, index, k) + ".arguments",
                                f"expected an object, got {type_name(arguments)}{hint}")
    pieces = []
    for key, value in arguments.items():
        if type(key) is not str:
            key = printed(key, _call_path(calls, index, k) + ".arguments", strings_only)
        if type(value) is not str:
            value = _argument(value, strings_only, calls, index, k, key)
        pieces.append(f"{PARAMETER_OPEN}{key}>\n{value}{NEMOTRON_PARAMETER_END}")
    return "".join(pieces)


def _body_of(call: Any, index: int, k: int) -> Mapping[str, Any] | None:
    """The fields of a call that is not the usual ``{"function": {...}}`` dict (:func:`.fields_of`)."""
    path = f"messages[{index}].tool_calls[{k}]"
    body = fields_of(call, path)
    if body is not None and "function" in body:
        return fields_of(body["function"], path + ".function")
    return body


def _write_calls(out: list[str], calls: list[Any], index: int, strings_only: bool) -> None:
    """An assistant turn's calls, each in the XML form (a call that is no object, or whose
    ``function`` is none, as one without a name or arguments, as the engine reads it)."""
    for k, call in enumerate(calls):
        body = call.get("function") if type(call) is dict else None
        if type(body) is not dict:
            body = _body_of(call, index, k)
            if body is None:
                out.append(f"{CALL_FIRST}>\n{NEMOTRON_CALL_END}")
                continue
        name = body.get("name", ABSENT)
        if type(name) is not str:
            name = printed(name, _call_path(calls, index, k) + ".name", strings_only)
        out.append(f"{CALL_FIRST}{name}>\n{_call_text(body, calls, index, k, strings_only)}{NEMOTRON_CALL_END}")


def _write_assistant(out: list[str], message: dict[str, Any], index: int, cut: bool, template: NemotronTemplate,
                     drops: list[str] | None) -> None:
    """An assistant turn (``cut``: before the last user message, what a think block closes cut away)."""
    body, is_text = _body(message, index, template.think_end, template.strings_only)
    calls = _iterated(message.get("tool_calls"), index)
    out.append(ASSISTANT_TURN)
    if calls:
        if not is_text or not body.strip():
            out.append(EMPTY_THINK)
        else:
            out.append((_cut_with_calls(body, template.trims_cut_content) if cut else body.strip()) + "\n")
        _write_calls(out, calls, index, template.strings_only)
    else:
        out.append(_cut(body) if cut else body.strip())
    out.append(TURN_END)
    if drops is not None:
        _note_assistant(drops, message, index, cut, bool(calls), is_text)
        _note_calls(drops, message.get("tool_calls"), index, bool(calls))


def _note_calls(drops: list[str], calls: Any, index: int, written: bool) -> None:
    """What the template leaves out of the calls: all of them where it writes none, else what it
    reads as undefined (a call that is no object, a ``function`` that is none)."""
    path = f"messages[{index}].tool_calls"
    if not written or not isinstance(calls, (list, tuple)):
        if holds_text(calls):
            drops.append(path)
        return
    for k, call in enumerate(calls):
        if not isinstance(call, Mapping):
            lost, at = call, f"{path}[{k}]"
        elif "function" in call and not isinstance(call["function"], Mapping):
            lost, at = call["function"], f"{path}[{k}].function"
        else:
            continue
        if holds_text(lost):
            drops.append(at)


def _note_assistant(drops: list[str], message: dict[str, Any], index: int, cut: bool, calls: bool,
                    is_text: bool) -> None:
    """What an assistant turn leaves out: its reasoning where cut (or no string), the aliases it does
    not read, what its cut takes of the content's text, and a content that is no string in a turn with calls."""
    written = False
    if not _REASONING_KEYS.isdisjoint(message):  # (none of them: none to lose)
        reasoning = reasoning_of(message)
        written = isinstance(reasoning, str) and bool(str.strip(reasoning))
        note_assistant_drops(drops, message, None, index, reasoning_field(message), False, written and not cut)
    content = message.get("content")
    if type(content) is str:
        if cut and _cut_loses(content, calls, written):
            drops.append(f"messages[{index}].content")
    elif not is_text and calls:
        if losing_fields(message, ("content",)):
            drops.append(f"messages[{index}].content")
    elif content is not None and not isinstance(content, str) and not content:
        if holds_text(content):
            drops.append(f"messages[{index}].content")  # a falsy value written as nothing (0, False)
    elif content is not None and cut and _cut_loses(chars(content) if isinstance(content, str) else printed(
            content, "", False), calls, written):
        drops.append(f"messages[{index}].content")  # (one that is no string: cut in its printing)


def _cut_loses(content: str, calls: bool, reasoning: bool) -> bool:
    """Whether a cut takes text of ``content`` (the turn's reasoning, if any, comes before it)."""
    if THINK_CLOSE in content and (calls or THINK_OPEN in content or reasoning):
        return text_outside_markup(content.rsplit(THINK_CLOSE, 1)[0])
    if calls and THINK_OPEN in content and not reasoning:
        return text_outside_markup(content.split(THINK_OPEN, 1)[1])
    return False


def _turn_text(message: dict[str, Any], index: int, strings_only: bool) -> str:
    """A user's, system's or tool's content as the template prints it (none: nothing)."""
    content = message.get("content")
    if type(content) is str:
        return content
    return printed(ABSENT if content is None else content, f"messages[{index}].content", strings_only)


def _write_turns(out: list[str], msgs: list[dict[str, Any]], roles: list[str], first: int, cut_before: int,
                 noted_user: int, template: NemotronTemplate, noted: NotedRender | None) -> None:
    """Every turn after the system turn, in order (assistant turns before ``cut_before`` cut; the
    user message at ``noted_user`` followed by the template's effort note); ``noted`` gets each
    one's ranges and losses."""
    last = len(msgs) - 1
    drops = None if noted is None or noted.turns_only else noted.dropped
    turns = noted.spans[2] if noted is not None and noted.turns_only else None
    at = 0 if noted is None or turns is not None else sum(map(len, out))
    strings_only = template.strings_only
    for i in range(first, len(msgs)):
        message, role, written = msgs[i], roles[i], len(out)
        text, text_at = None, 0  # a content as written, and its piece
        if role == "assistant":
            _write_assistant(out, message, i, i < cut_before, template, drops)
        elif role == "user" or role == "system":
            text = _turn_text(message, i, strings_only)
            text_at = written + 1
            if i == noted_user:
                content = message.get("content")
                text = chars(content) if isinstance(content, str) else text
                out.extend((USER_TURN, text, template.effort_note + TURN_END))
            else:
                out.extend((IM_START + role + "\n", text, TURN_END))
        elif role == "tool":
            if i > first and roles[i - 1] != "tool":
                out.append(USER_TURN)
            text = _turn_text(message, i, strings_only)
            text_at = len(out) + 1
            out.extend((NEMOTRON_TOOL_RESPONSE_OPEN, text, NEMOTRON_TOOL_RESPONSE_CLOSE))
            if i == last or roles[i + 1] != "tool":
                out.append(TURN_END)
        else:
            text = _other_turn(out, message, i)
            text_at = written + 1
        if noted is not None:
            if turns is not None:  # (sessions: where each turn starts, nothing else)
                turns.append(written)
            else:
                at = _note_turn(noted, out, written, at, message, i, role, text, text_at)


def _other_turn(out: list[str], message: dict[str, Any], index: int) -> str:
    """A message of any other role: its role and content concatenated (no string: the engine fails)."""
    role = message.get("role")
    if not isinstance(role, str):
        raise InvalidInputError(f"messages[{index}].role", f"expected a string, got {type_name(role)}")
    text = concatenated(message.get("content"), f"messages[{index}].content")
    out.extend((IM_START + chars(role) + "\n", text, TURN_END))
    return text


def _note_turn(noted: NotedRender, out: list[str], written: int, at: int, message: dict[str, Any], index: int,
               role: str, text: str | None, text_at: int) -> int:
    """Note message ``index``'s range (:meth:`.NotedRender.note_turn`) and, for a message of another
    role than the assistant's, the fields its turn does not write; returns where the next turn starts."""
    end = noted.note_turn(out, written, at, role == "assistant", text, text_at)
    if role != "assistant" and not OTHER_KEYS.isdisjoint(message):
        noted.dropped.extend(f"messages[{index}].{f}" for f in losing_fields(message, OTHER_FIELDS))
    return end


def render_nemotron(
    messages: Conversation,
    tools: Tools = None,
    add_generation_prompt: Any = False,
    template: NemotronTemplate = NEMOTRON_3_NANO,
    *,
    enable_thinking: Any = ABSENT,
    truncate_history_thinking: Any = ABSENT,
    effort: Any = ABSENT,
    _noted: NotedRender | None = None,
) -> str:
    """Render ``messages`` exactly as ``template``'s Jinja source does (the module docstring).

    Options by truthiness, as the template reads them: ``enable_thinking`` (default on) opens a
    think block in the generation prompt; ``truncate_history_thinking`` (default on) cuts the
    reasoning of the turns before the last user message; ``effort`` (the template's effort flag,
    default off) adds its note to the last user message. ``_noted`` (``render_spans``, sessions):
    gets the pieces, each message's ranges and what the template leaves out.
    """
    msgs, roles = message_dicts(messages)
    first = 1 if roles[0] == "system" else 0
    out: list[str] = []
    system_length = _prologue(out, msgs, first, tools)
    if _noted is not None:
        _note_prologue(_noted, msgs, first, system_length, len(out))
    user = last_user(roles, first)
    truncates = truncate_history_thinking is ABSENT or truthy(truncate_history_thinking, "truncate_history_thinking")
    noted_user = user if template.effort_flag and effort is not ABSENT and truthy(effort, template.effort_flag) else -1
    _write_turns(out, msgs, roles, first, user if truncates else -1, noted_user, template, _noted)
    if add_generation_prompt:
        out.append(generation_prompt(template, enable_thinking))
    if _noted is not None:
        _noted.spans[2].append(len(out))
        _noted.pieces, _noted.roles, _noted.origins = out, roles, range(len(msgs))
    return "" if _noted is not None and _noted.turns_only else "".join(out)  # (sessions join the pieces)


def _note_prologue(noted: NotedRender, msgs: list[dict[str, Any]], first: int, length: int, pieces: int) -> None:
    """The leading system message's range (its text, the prologue's second piece; ``pieces``: the
    prologue's) and losses."""
    if not first:
        return
    noted.spans[0].append(((len(SYSTEM_TURN), len(SYSTEM_TURN) + length),) if length else ())
    noted.spans[2].append(pieces)  # (its turn: none; the turns start after the prologue)
    if not noted.turns_only:
        noted.dropped.extend(f"messages[0].{f}" for f in losing_fields(msgs[0], OTHER_FIELDS))


def generation_prompt(template: NemotronTemplate, enable_thinking: Any) -> str:
    """The generation prompt: a think block opened (by default), or an empty one closed."""
    return ASSISTANT_THINKING if template.thinks(enable_thinking) else NEMOTRON_NO_THINKING_PROMPT


def nemotron_noted(messages: Conversation, tools: Tools, add_generation_prompt: Any, template: NemotronTemplate,
                   options: Mapping[str, Any], turns_only: bool = False) -> tuple[str, NotedRender]:
    """:func:`render_nemotron`'s prompt and what it noted (for ``render_spans``; ``turns_only``, for
    sessions: no prompt, ``""``, and :class:`~..render.NotedRender`'s turns)."""
    noted = NotedRender(turns_only)
    text = render_nemotron(messages, tools, add_generation_prompt, template, _noted=noted, **walk_options(
        template, options))
    return text, noted


def walk_options(template: NemotronTemplate, options: Mapping[str, Any]) -> dict[str, Any]:
    """The walk's keywords from ``render``'s options (checked by the caller)."""
    return {"enable_thinking": options.get("enable_thinking", ABSENT),
            "truncate_history_thinking": options.get("truncate_history_thinking", ABSENT),
            "effort": options.get(template.effort_flag, ABSENT) if template.effort_flag else ABSENT}
