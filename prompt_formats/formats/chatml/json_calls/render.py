"""The walk of the ChatML templates that write JSON tool calls (Qwen2.5, Qwen3, Qwen3-Instruct-2507, Qwen3-VL).

A transcription of their control flow, as :mod:`..render` is of Qwen3.6's; where they differ, the
walk reads the :class:`~.template.JsonTemplate`. In template order:

1. the prologue: with tools, one system turn holding the first message's text when it is a system
   message (else the template's default system prompt, if it has one), then the tools as JSON
   lines and the call instructions; without tools, that system message (or the default) alone;
2. (templates that read reasoning) a backwards scan finds the last user message whose content is
   a string not wrapped in ``<tool_response>…</tool_response>`` (none: the last message);
3. the turns: a user message, or a system message after the first, as a turn; an assistant's
   content (after the last query, its reasoning first, in a think block), then its calls, each a
   JSON object; a run of tool results as one user turn; a message of any other role is not
   written (its text is reported dropped);
4. the generation prompt.

Where the engine itself fails (text concatenated with a value that is no string, ``|tojson`` of
arguments that are not there), :class:`~prompt_formats.errors.InvalidInputError` names the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...._text.plain import as_handed, require_plain
from ...._text.tojson import json_chunks, tojson_at
from ....errors import InvalidInputError, type_name
from ....format.chat_format import Conversation, Tools
from ....model.messages import message_dict
from ....model.reading import is_list, reasoning_field, reasoning_of
from ..content import VisionCount
from ..drops import EVERY_FIELD, OTHER_FIELDS, OTHER_KEYS, holds_text, losing_fields, note_assistant_drops
from ..render import NotedRender, split_think, tools_block
from ..template import ABSENT
from ..tokens import (
    ASSISTANT_THINKING,
    ASSISTANT_TURN,
    EMPTY_THINK_BLOCK,
    IM_START,
    JSON_CALL_ARGUMENTS,
    JSON_CALL_END,
    JSON_CALL_NEXT,
    JSON_CALL_OPEN,
    JSON_TOOL_RESPONSE_CLOSE,
    JSON_TOOL_RESPONSE_OPEN,
    JSON_TOOL_RUN_OPEN,
    SYSTEM_TURN,
    THINK_BLOCK_END,
    THINK_CLOSE,
    TOOL_RESPONSE_CLOSE,
    TOOL_RESPONSE_OPEN,
    TURN_END,
)
from .content import chars, concatenated, printed, text_parts, vision_parts
from .template import QWEN3_INSTRUCT_2507, JsonTemplate

__all__ = ["generation_prompt", "json_noted", "last_query", "message_dicts", "render_json_chatml", "roles_of"]


def message_dicts(messages: Conversation) -> tuple[list[dict[str, Any]], list[str]]:
    """The messages as dicts, and their roles as the template compares them (``""``: not a string)."""
    if not is_list(messages):
        raise InvalidInputError("messages", f"expected a list of messages, got {type_name(messages)}")
    msgs = [m if type(m) is dict else message_dict(m, i) for i, m in enumerate(messages)]
    if not msgs:  # the template reads messages[0]: the engine fails
        raise InvalidInputError("messages", "expected at least one message")
    return msgs, roles_of(msgs)


def roles_of(msgs: list[dict[str, Any]]) -> list[str]:
    """The messages' roles as the template compares them (``""``: not a string)."""
    return [role if type(role := m.get("role")) is str else chars(role) if isinstance(role, str) else ""
            for m in msgs]


def _prologue(out: list[str], msgs: list[dict[str, Any]], roles: list[str], tools: Tools,
              template: JsonTemplate) -> int:
    """The system turn (the tools, the first message's text if it is a system message); returns the
    length of that text (it ends where the prologue's pieces end, but for what follows it)."""
    block = tools_block(tools, json_calls=True)
    system = msgs[0] if roles[0] == "system" else None
    if system is not None:
        content = system.get("content")
        if template.vision:
            text = text_parts(content, "messages[0].content", template.strings_only)
        elif block and template.prints_content:
            text = printed(ABSENT if content is None else content, "messages[0].content", template.strings_only)
        else:
            text = concatenated(content, "messages[0].content")
        out.extend((SYSTEM_TURN, text, "\n\n" + block) if block else (SYSTEM_TURN, text, TURN_END))
        return len(text)
    if block:
        default = template.default_system
        out.extend((SYSTEM_TURN, default + "\n\n" if default else "", block))
    elif template.default_system:
        out.append(SYSTEM_TURN + template.default_system + TURN_END)
    return 0


def last_query(msgs: list[dict[str, Any]], roles: list[str]) -> int:
    """The last user message whose content is a string not wrapped as a tool response (-1: none)."""
    for i in range(len(msgs) - 1, -1, -1):
        content = msgs[i].get("content")
        if roles[i] == "user" and isinstance(content, str) and not (
                content.startswith(TOOL_RESPONSE_OPEN) and content.endswith(TOOL_RESPONSE_CLOSE)):
            return i
        if roles[i] == "user":
            require_plain(content, f"messages[{i}].content")  # an object's text would be a query
    return -1


def _call_body(call: Any, template: JsonTemplate, path: str) -> Mapping[str, Any]:
    """The mapping a call's name and arguments are read from (its ``function``, or the call)."""
    if not isinstance(call, Mapping):
        raise InvalidInputError(path, f"expected an object, got {type_name(call)}")
    if "function" in call:
        function = call["function"]
        if template.function_if_present or function:
            if not isinstance(function, Mapping):  # the engine reads no arguments from it
                raise InvalidInputError(path + ".function", f"expected an object, got {type_name(function)}")
            body: Mapping[str, Any] = as_handed(function)
            return body
        if template.strings_only:  # the guard checks the function's fields, not the call's own
            raise InvalidInputError(path + ".function", f"an empty {type_name(function)}: the template reads the "
                                    "call's own name and arguments (with a guard, refused: they go unchecked)")
    return call


def _body_path(index: int, k: int, path: str) -> str:
    """The path of call ``k``'s body: ``path`` where the slow reading made it, else its ``function``'s
    (made only for an error or an unusual value: the usual call's costs nothing)."""
    return path or f"messages[{index}].tool_calls[{k}].function"


def _arguments_text(arguments: Any, quotes: bool, strings_only: bool, index: int, k: int, path: str) -> str:
    """A call's ``arguments`` as written: a string as printed (``quotes``: as a JSON string),
    anything else as JSON, or the error naming them (at :func:`_body_path`); ``strings_only`` (a
    guard): what holds text and is neither a string nor an object (which the guard checks) is refused."""
    if type(arguments) is dict:
        try:
            return "".join(json_chunks(arguments, 0))
        except (TypeError, ValueError, RecursionError):
            pass  # (tojson_at gives the text on a fresh stack, or the error)
    elif isinstance(arguments, str) and not quotes:
        return printed(arguments, _body_path(index, k, path) + ".arguments", strings_only)
    elif strings_only and not isinstance(arguments, (str, Mapping)) and holds_text(arguments):
        raise InvalidInputError(_body_path(index, k, path) + ".arguments", f"expected an object or a string, got "
                                f"{type_name(arguments)} (with a guard, refused: the guard checks an object's values "
                                "and a string)")
    return tojson_at(arguments, _body_path(index, k, path) + ".arguments")


def _write_calls(out: list[str], calls: Any, content: Any, index: int, template: JsonTemplate) -> None:
    """An assistant turn's calls, each after a newline (the first only after a ``content`` that is
    not empty)."""
    if type(calls) is not list and not isinstance(calls, (list, tuple)):
        raise InvalidInputError(f"messages[{index}].tool_calls", f"expected a list, got {type_name(calls)}")
    quotes = template.quotes_string_arguments
    for k, call in enumerate(calls):
        # The usual call, {"function": {...}} with the function a dict that is not empty, read at once.
        body = call.get("function") if type(call) is dict else None
        path = ""
        if type(body) is not dict or not body:
            path = f"messages[{index}].tool_calls[{k}]"
            call = as_handed(call)
            body = _call_body(call, template, path)
            if body is not call:
                path += ".function"
        arguments = body.get("arguments", ABSENT)
        if arguments is ABSENT:  # `|tojson` of an undefined value: the engine fails
            raise InvalidInputError(_body_path(index, k, path) + ".arguments",
                                    "expected the call's arguments, got none")
        if type(arguments) is str and not quotes:
            text = arguments
        else:
            text = _arguments_text(arguments, quotes, template.strings_only, index, k, path)
        name = body.get("name", ABSENT)
        if type(name) is not str:
            name = printed(name, _body_path(index, k, path) + ".name", template.strings_only)
        out.append(f"{JSON_CALL_NEXT if k or content else JSON_CALL_OPEN}{name}{JSON_CALL_ARGUMENTS}{text}"
                   f"{JSON_CALL_END}")


def _assistant_content(message: dict[str, Any], index: int, template: JsonTemplate) -> str:
    """An assistant's content as the template reads it (Qwen2.5: a string wherever it is written)."""
    content = message.get("content")
    if template.vision:  # (it prints the content: a string subclass by its __str__)
        return text_parts(content, f"messages[{index}].content", template.strings_only)
    if isinstance(content, str):
        return chars(content)
    if template.prints_content and (not message.get("tool_calls") or content):
        raise InvalidInputError(f"messages[{index}].content", f"expected a string, got {type_name(content)}")
    require_plain(content, f"messages[{index}].content")  # an object's text is a string, written
    return ""


def _write_assistant(out: list[str], message: dict[str, Any], index: int, kept_after: int, last: bool,
                     template: JsonTemplate, drops: list[str] | None) -> None:
    """An assistant turn; after position ``kept_after``, with its reasoning in a think block."""
    content = message.get("content")
    if type(content) is not str:
        content = _assistant_content(message, index, template)
    reasoning, read, split = "", None, False
    if template.reasoning:
        value = reasoning_of(message)
        if isinstance(value, str):
            reasoning, read = chars(value), reasoning_field(message)
        else:
            require_plain(value, f"messages[{index}].{reasoning_field(message)}")  # an object's text is reasoning
            if THINK_CLOSE in content:
                reasoning, content = split_think(content)
                split = True
    kept = index > kept_after and (last or bool(reasoning))
    if kept:
        out.extend((ASSISTANT_THINKING, reasoning.strip("\n"), THINK_BLOCK_END, content.lstrip("\n")))
    else:
        out.extend((ASSISTANT_TURN, content))
    if drops is not None:
        drops.extend(f"messages[{index}].{f}" for f in _lost_content(message, content, template.vision))
        note_assistant_drops(drops, message, message.get("content"), index, read, split, kept)
    if calls := message.get("tool_calls"):
        # (Qwen3-VL tests the message's own content for the newline before the first call)
        _write_calls(out, calls, message.get("content") if template.vision else content, index, template)
    out.append(TURN_END)


def _turn_content(message: dict[str, Any], index: int, template: JsonTemplate, printing: bool,
                  vision: VisionCount | None, add_vision_id: Any) -> str:
    """A user's, system's or tool's content (Qwen2.5: concatenated, or ``printing``: printed;
    Qwen3-VL: its parts, images and videos counted in ``vision``)."""
    content = message.get("content")
    path = f"messages[{index}].content"
    if isinstance(content, str):  # printed (a subclass by its __str__), or concatenated (its characters)
        return printed(content, path, template.strings_only) if printing or vision is not None else chars(content)
    if vision is not None:
        return vision_parts(content, path, template.strings_only, vision, add_vision_id)
    if template.prints_content:
        if printing:
            return printed(ABSENT if content is None else content, path, template.strings_only)
        return concatenated(content, path)
    require_plain(content, path)  # an object's text is a string, written
    return ""


def _write_turns(out: list[str], msgs: list[dict[str, Any]], roles: list[str], kept_after: int,
                 template: JsonTemplate, add_vision_id: Any, noted: NotedRender | None) -> None:
    """Every message's turn after the prologue, in order; ``noted`` gets each one's ranges and losses."""
    last = len(msgs) - 1
    drops = None if noted is None or noted.turns_only else noted.dropped
    turns = noted.spans[2] if noted is not None and noted.turns_only else None
    at = 0 if noted is None or turns is not None else sum(map(len, out))
    vision = VisionCount() if template.vision else None  # the template's image and video counters
    later_system = template.writes_later_system
    for i, message in enumerate(msgs):
        written, role = len(out), roles[i]
        text, text_at = None, 0  # a user, system or tool message's content as written, and its piece
        if role == "user" or (role == "system" and i and later_system):
            text = message.get("content")
            if type(text) is not str:
                text = _turn_content(message, i, template, False, vision, add_vision_id)
            out.extend((IM_START + role + "\n", text, TURN_END))
            text_at = written + 1
        elif role == "assistant":
            _write_assistant(out, message, i, kept_after, i == last, template, drops)
        elif role == "tool":
            text = message.get("content")
            if type(text) is not str:
                text = _turn_content(message, i, template, True, vision, add_vision_id)
            if not i or roles[i - 1] != "tool":
                out.append(JSON_TOOL_RUN_OPEN)
            text_at = len(out) + 1
            out.extend((JSON_TOOL_RESPONSE_OPEN, text, JSON_TOOL_RESPONSE_CLOSE))
            if i == last or roles[i + 1] != "tool":
                out.append(TURN_END)
        elif role == "system" and not i:  # the leading system message: the prologue's
            continue
        if noted is not None:
            if turns is not None:  # (sessions: where each turn starts, nothing else)
                turns.append(written)
            else:
                at = _note_turn(noted, out, written, at, message, i, role, text, text_at, template.vision)


def _lost_content(message: dict[str, Any], text: str, vision: bool) -> list[str]:
    """``["content"]`` when a content that is no string holds text the turn does not write
    (``text``: what it wrote): all of it, for a list of parts written as nothing, and for an object
    written as nothing or, by Qwen3-VL, as its keys' markers."""
    content = message.get("content")
    if isinstance(content, str):
        return []
    if isinstance(content, (list, tuple)):
        return [] if text else losing_fields(message, ("content",))
    return ["content"] if (not text or vision) and holds_text(content) else []


def _note_turn(noted: NotedRender, out: list[str], written: int, at: int, message: dict[str, Any], index: int,
               role: str, text: str | None, text_at: int, vision: bool) -> int:
    """Note message ``index``'s range (:meth:`.NotedRender.note_turn`) and what it loses (``vision``:
    Qwen3-VL's reading of a content); returns where the next turn starts."""
    end = noted.note_turn(out, written, at, role == "assistant", text, text_at)
    if role == "assistant":
        return end  # (its losses are noted as it is written)
    if text is None:  # not written: every field that holds text is lost
        noted.dropped.extend(f"messages[{index}].{f}" for f in losing_fields(message, EVERY_FIELD))
    else:
        lost = _lost_content(message, text, vision)
        if not OTHER_KEYS.isdisjoint(message):
            lost += losing_fields(message, OTHER_FIELDS)
        if lost:
            noted.dropped.extend(f"messages[{index}].{f}" for f in lost)
    return end


def render_json_chatml(
    messages: Conversation,
    tools: Tools = None,
    add_generation_prompt: Any = False,
    template: JsonTemplate = QWEN3_INSTRUCT_2507,
    *,
    enable_thinking: Any = ABSENT,
    add_vision_id: Any = None,
    _noted: NotedRender | None = None,
) -> str:
    """Render ``messages`` exactly as ``template``'s Jinja source does (the module docstring).

    ``enable_thinking`` (templates that read reasoning): exactly ``False`` closes an empty think
    block in the generation prompt. ``add_vision_id`` (Qwen3-VL), by truthiness: images and videos
    numbered. ``_noted`` (``render_spans``): gets the pieces, each message's
    ranges and what the template leaves out (:class:`~.render.NotedRender`).
    """
    msgs, roles = message_dicts(messages)
    out: list[str] = []
    system_length = _prologue(out, msgs, roles, tools, template)
    if _noted is not None:
        _note_prologue(_noted, out, msgs, roles, system_length, template)
    # The assistant turns after the last real query keep their reasoning (none: the last message).
    kept_after = (last_query(msgs, roles) % len(msgs)) if template.reasoning else len(msgs)
    _write_turns(out, msgs, roles, kept_after, template, add_vision_id, _noted)
    if add_generation_prompt:
        out.append(generation_prompt(template, enable_thinking))
    if _noted is not None:
        _noted.spans[2].append(len(out))
        _noted.pieces, _noted.roles, _noted.origins = out, roles, range(len(msgs))
    return "" if _noted is not None and _noted.turns_only else "".join(out)  # (sessions join the pieces)


def _note_prologue(noted: NotedRender, out: list[str], msgs: list[dict[str, Any]], roles: list[str],
                   length: int, template: JsonTemplate) -> None:
    """The leading system message's range: its text, the prologue's second piece."""
    if roles[0] != "system":
        return
    noted.spans[0].append(((len(out[0]), len(out[0]) + length),) if length else ())
    noted.spans[2].append(len(out))  # (its turn: none; the turns start after the prologue)
    if noted.turns_only:
        return
    lost = [*_lost_content(msgs[0], out[1], template.vision), *losing_fields(msgs[0], OTHER_FIELDS)]
    noted.dropped.extend(f"messages[0].{f}" for f in lost)


def generation_prompt(template: JsonTemplate, enable_thinking: Any) -> str:
    """The generation prompt: the assistant's turn opened (with an empty think block, when the
    template reads reasoning, for ``enable_thinking=False``)."""
    return ASSISTANT_TURN + EMPTY_THINK_BLOCK if template.reasoning and enable_thinking is False else ASSISTANT_TURN


def json_noted(messages: Conversation, tools: Tools, add_generation_prompt: Any, template: JsonTemplate,
               options: Mapping[str, Any], turns_only: bool = False) -> tuple[str, NotedRender]:
    """:func:`render_json_chatml`'s prompt and what it noted (for ``render_spans``; ``turns_only``,
    for sessions: no prompt, ``""``, and :class:`~..render.NotedRender`'s turns)."""
    noted = NotedRender(turns_only)
    text = render_json_chatml(messages, tools, add_generation_prompt, template,
                              enable_thinking=options.get("enable_thinking", ABSENT),
                              add_vision_id=options.get("add_vision_id"), _noted=noted)
    return text, noted
