"""The turn rules of the Qwen3.6 chat template: :func:`render_chatml`, shared by the ChatML formats.

A transcription of the template's control flow: the same checks in the same order (so the same
input raises the same message first), the same quirks. In template order:

1. (multi-system only) every system message's content is rendered, trimmed, empty ones dropped,
   the rest joined with a blank line into one leading system message;
2. ``No messages provided.`` if nothing is left (both in :mod:`.read`);
3. the prologue: the system turn, with the tools block when tools are offered (:func:`_prologue`);
4. a backwards scan finds the last *real* user query (a user message whose trimmed text is wrapped
   in ``<tool_response>…</tool_response>`` does not count); none raises (in :func:`render_chatml`);
5. the turns, in order, one writer per role; assistant turns after that query keep their
   ``<think>`` block;
6. the generation prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from ..._text.plain import plain_data, require_plain
from ..._text.tojson import json_refused, printed, tojson
from ...errors import InvalidInputError, TemplateError, type_name
from ...format.chat_format import Conversation, Tools
from ...format.spans import Range
from ...model.reading import REASONING_FIELDS, call_body, is_list, reasoning_field, reasoning_of
from ...model.tools import PreparedTools, rendered_tools
from .content import UNCOUNTED, VisionCount, content_text, trimmed_text
from .drops import holds_text, note_assistant_drops, with_unwritten_fields
from .read import Merged, read_messages
from .template import ABSENT, UPSTREAM, Template
from .tokens import (
    ASSISTANT_THINKING,
    ASSISTANT_TURN,
    CALL_AFTER_CONTENT,
    CALL_FIRST,
    CALL_NEXT,
    CALLS_END,
    JSON_TOOLS_FOOTER,
    JSON_TOOLS_HEADER,
    SYSTEM_TURN,
    THINK_BLOCK_END,
    THINK_CLOSE,
    THINK_OPEN,
    TOOL_RESPONSE_CLOSE,
    TOOL_RESPONSE_FIRST,
    TOOL_RESPONSE_LAST,
    TOOL_RESPONSE_MORE,
    TOOL_RESPONSE_NEXT,
    TOOL_RESPONSE_OPEN,
    TOOLS_FOOTER,
    TOOLS_HEADER,
    TURN_END,
    USER_TURN,
)
from .untrusted import (
    JSON_KINDS,
    MAX_NESTING,
    FastGuard,
    guarded_content,
    guarded_json,
    guarded_message,
    guarded_name,
    render_guarded,
)

__all__ = [
    "ChatMLPieces", "NotedRender", "TurnSpans", "chatml_noted", "chatml_pieces", "guarded_noted", "prologue_pieces",
    "render_chatml",
    "split_think", "tools_block",
]

_ASSISTANT_HEADER = len(ASSISTANT_TURN)

# A message holding none of these keys has no reasoning field (reading.reasoning_of): the first is
# looked up alone, the others only when the message holds one of them.
_REASONING_FIELDS = frozenset(REASONING_FIELDS)
_FIRST_REASONING_FIELD = REASONING_FIELDS[0]


# --- The prologue and the last query. ----------------------------------------------------------------


def _tools_text(tools: Sequence[Mapping[str, Any]], header: str, footer: str) -> str:
    if not tools:  # the template's `if tools`
        return ""
    pieces = [header]
    append = pieces.append
    for i, tool in enumerate(tools):
        if type(tool) is not dict and not isinstance(tool, Mapping):
            raise InvalidInputError(f"tools[{i}]", f"expected a tool object, got {type_name(tool)}")
        append("\n")
        try:
            append(tojson(tool))
        except (TypeError, ValueError, RecursionError) as exc:
            append(json_refused(tool, f"tools[{i}]", exc))
    append(footer)
    return "".join(pieces)


def _xml_tools_text(tools: Sequence[Mapping[str, Any]]) -> str:
    return _tools_text(tools, TOOLS_HEADER, TOOLS_FOOTER)


def _json_tools_text(tools: Sequence[Mapping[str, Any]]) -> str:
    return _tools_text(tools, JSON_TOOLS_HEADER, JSON_TOOLS_FOOTER)


# Per call form: the key the block is cached under on a toolset, and its builder.
_TOOLS_BLOCKS = {False: ("chatml.tools_block", _xml_tools_text), True: ("chatml.json_tools_block", _json_tools_text)}


def tools_block(tools: Tools, json_calls: bool = False) -> str:
    """The system turn's tools text (without the system prompt); empty when no tools are offered.
    ``json_calls``: the block of the templates that write JSON calls (Qwen2.5–Qwen3), which starts
    at ``# Tools`` (else the system turn's opening comes with it).

    Rendered once per toolset (:func:`~prompt_formats.model.tools.rendered_tools`).
    """
    key, build = _TOOLS_BLOCKS[json_calls]
    if isinstance(tools, PreparedTools):  # (its truth is a Python-level call: _tools_text tests its tuple)
        return rendered_tools(tools, key, build)
    if not tools:
        return ""
    if type(tools) is not list and not is_list(tools):
        raise InvalidInputError("tools", f"expected a list of tool objects, got {type_name(tools)}")
    return rendered_tools(tools, key, build)


def _prologue(
    msgs: Sequence[dict[str, Any]], roles: list[str], tools: Tools, add_vision_id: Any, guard: FastGuard | None,
    template: Template, instructions: str,
) -> tuple[list[str], int]:
    """The prompt's first pieces (the tools block and the system message's text, or either, or none),
    and the length of the system text, which ends the prologue's text but for ``<|im_end|>\n``."""
    block = tools_block(tools)
    if roles[0] != "system":
        return prologue_pieces(block, None, template, instructions), 0
    system = msgs[0] if guard is None else guarded_message(guard, msgs[0], roles[0])
    # The system message is first, and its index is 0 or it is the merged one: errors name it as 0.
    text = trimmed_text(system, 0, UNCOUNTED, False, True, add_vision_id)
    return prologue_pieces(block, text, template, instructions), len(text)


def prologue_pieces(block: str, system_prompt: str | None, template: Template, instructions: str = "") -> list[str]:
    """The prompt's first pieces from the tools block, the system message's trimmed text (``None``:
    there is no system message; an empty one still makes a turn when no tools are offered, if the
    template writes one) and the reasoning ``instructions`` the template writes first."""
    if instructions:
        if block:
            block = SYSTEM_TURN + instructions + "\n\n" + block[len(SYSTEM_TURN):]
        else:
            return [SYSTEM_TURN + instructions + ("\n\n" + system_prompt if system_prompt else "") + TURN_END]
    if block:
        return [block, "\n\n" + system_prompt, TURN_END] if system_prompt else [block, TURN_END]
    if system_prompt is None or not (system_prompt or template.empty_system_turn):
        return []
    return [SYSTEM_TURN + system_prompt + TURN_END]


# --- The assistant's turn. ---------------------------------------------------------------------------


def split_think(content: str) -> tuple[str, str]:
    """A turn without a reasoning field whose content holds ``</think>``: the reasoning, the rest."""
    reasoning = content.split(THINK_CLOSE)[0].rstrip("\n").split(THINK_OPEN)[-1].lstrip("\n")
    return reasoning, content.split(THINK_CLOSE)[-1].lstrip("\n")


def _bad_reasoning(message: Mapping[str, Any], index: int | None) -> InvalidInputError:
    key = reasoning_field(message)
    return InvalidInputError(f"messages[{index}].{key}", f"expected a string, got {type_name(reasoning_of(message))}")


def _not_an_object(path: str, value: Any) -> InvalidInputError:
    return InvalidInputError(path, f"expected an object, got {type_name(value)}")


def _call_path(index: int | None, calls: Sequence[Mapping[str, Any]], k: int) -> str:
    return f"messages[{index}].tool_calls[{k}]" + (".function" if "function" in calls[k] else "")


def _call_name(name: Any, guard: FastGuard | None, lead: str | None, index: int | None,
               calls: Sequence[Mapping[str, Any]], k: int) -> str:
    """A tool call's name that is not an exact ``str`` or holds the guard's ``lead``: as the guard
    leaves it, then its characters (the template concatenates it with text, which copies
    characters), or the error."""
    if not isinstance(name, str):
        raise InvalidInputError(_call_path(index, calls, k) + ".name", f"expected a string, got {type_name(name)}")
    name = str.__str__(name)  # (its plain value, searched: a subclass's own __contains__ could answer otherwise)
    return guarded_name(guard, name) if lead is not None and lead in name else name


def _argument_name(key: Any, guard: FastGuard | None, lead: str | None, index: int | None,
                   calls: Sequence[Mapping[str, Any]], k: int) -> str:
    """A tool-call argument's name that is not an exact ``str`` or holds the guard's ``lead``: as
    :func:`_call_name` reads a name."""
    if not isinstance(key, str):
        try:
            shown = f" {key!r}"
        except Exception:  # a repr that raises (an integer past str()'s digit limit): the type alone
            shown = ""
        problem = f"expected string keys, got {type_name(key)} key{shown}"
        raise InvalidInputError(_call_path(index, calls, k) + ".arguments", problem)
    key = str.__str__(key)  # (as _call_name)
    return guarded_name(guard, key) if lead is not None and lead in key else key


def _argument_text(value_text: Callable[[Any], str], value: Any, index: int | None,
                   calls: Sequence[Mapping[str, Any]], k: int, key: str) -> str:
    """``value_text(value)`` (the template's writing of an argument value), or the error naming the argument."""
    try:
        return value_text(value)
    except (TypeError, ValueError, RecursionError) as exc:
        return json_refused(value, f"{_call_path(index, calls, k)}.arguments.{key}", exc)


def _function_of(call: Any, index: int | None, k: int) -> dict[Any, Any]:
    """A tool call's function body (:func:`~prompt_formats.model.reading.call_body`) that is not a
    dict itself, as a dict (a copy of another mapping, which the compiled build reads natively),
    or the error."""
    if type(call) is not dict:
        if not isinstance(call, Mapping):
            raise _not_an_object(f"messages[{index}].tool_calls[{k}]", call)
        call = plain_data(call)  # (its items, as transformers hands it over: its own get could lie)
    function = call_body(call)
    if type(function) is dict:
        return function
    if function is not call and not isinstance(function, Mapping):
        raise _not_an_object(f"messages[{index}].tool_calls[{k}].function", function)
    return dict(function.items())


def _fields_of(arguments: Any) -> dict[Any, Any] | None:
    """Arguments that are no dict: a copy of a mapping (read as the usual dict), else ``None``."""
    if arguments is None or isinstance(arguments, str) or not isinstance(arguments, Mapping):
        return None  # (an exact str is no Mapping: the ABC's isinstance is a Python-level call)
    return dict(arguments.items())


def _write_tool_calls(out: list[str], calls: Any, content: str, index: int | None, guard: FastGuard | None,
                      lead: str | None, drops: list[str] | None, template: Template) -> None:
    """The turn's tool calls, and its end. Names and argument values are made exact strings first, so
    that the f-strings copy characters and call nothing. ``lead``: ``guard``'s (what is no string fails a test);
    ``drops``: gets the path of arguments that are neither an object nor a string (the template writes none)."""
    if type(calls) is not list and not isinstance(calls, (list, tuple)):
        raise InvalidInputError(f"messages[{index}].tool_calls", f"expected a list, got {type_name(calls)}")
    # The first call follows the content after a blank line (right away when there is none); each
    # later one follows the previous call's end. (`content` is trimmed text, or what follows
    # "</think>" in it: empty, or ending in a non-space, so the template's `content|trim` is empty
    # just when it is.)
    opening = CALL_AFTER_CONTENT if content else CALL_FIRST
    append = out.append
    value_text = template.value_text
    for k, call in enumerate(calls):
        function = call_body(call) if type(call) is dict else None
        body: dict[Any, Any] = function if type(function) is dict else _function_of(call, index, k)
        name = body.get("name")
        if type(name) is not str or (lead is not None and lead in name):
            name = _call_name(name, guard, lead, index, calls, k)
        arguments = body.get("arguments")  # absent and null both render nothing
        fields = arguments if type(arguments) is dict else _fields_of(arguments)
        if fields is not None:
            append(f"{opening}{name}>\n")
            for key, value in fields.items():
                if type(key) is not str or (lead is not None and lead in key):
                    key = _argument_name(key, guard, lead, index, calls, k)
                if type(value) is str:
                    if lead is not None and lead in value:
                        value = guarded_json(guard, value, value, str)
                    append(f"<parameter={key}>\n{value}\n</parameter>\n")
                    continue
                try:
                    text = value_text(value)
                except (TypeError, ValueError, RecursionError):
                    text = _argument_text(value_text, value, index, calls, k, key)
                if lead is not None and (lead in text or len(text) > MAX_NESTING or type(value) not in JSON_KINDS):
                    text = guarded_json(guard, value, text, partial(_argument_text, value_text), index, calls, k, key)
                append(f"<parameter={key}>\n{text}\n</parameter>\n")
        elif not template.string_arguments and "arguments" in body:  # `arguments|items` of a non-object
            if not (template.skips_empty_arguments and arguments == ""):
                raise template.arguments_refused(arguments, _call_path(index, calls, k) + ".arguments")
            append(f"{opening}{name}>\n")
        elif arguments is None:
            append(f"{opening}{name}>\n")
        elif isinstance(arguments, str):
            arguments = str.__str__(arguments)  # (as _call_name: the text written, searched)
            if lead is not None and lead in arguments:
                arguments = guarded_json(guard, arguments, arguments, str)
            out.extend((f"{opening}{name}>\n<parameter=arguments>\n", printed(arguments), "\n</parameter>\n"))
        else:  # neither an object nor a string: the template writes no parameter
            require_plain(arguments, _call_path(index, calls, k) + ".arguments")  # (an object's text is one)
            append(f"{opening}{name}>\n")
            if drops is not None and holds_text(arguments):
                drops.append(_call_path(index, calls, k) + ".arguments")
        opening = CALL_NEXT
    append(CALLS_END)


# --- The other roles, and the template's order. ------------------------------------------------------


#: What ``render_spans`` needs of one render, noted by the builder as it writes each turn: the
#: ranges of each message by position (after merging), and the assistant turns' ranges in order
#: (what the model generated: from right after ``<|im_start|>assistant\n`` up to and including
#: ``<|im_end|>``, not the newline after it), and the index in the pieces of each message's first
#: piece, then of the piece after the last turn (sessions read a turn's pieces from them; the system
#: message at position 0 writes the prologue, before them). A plain tuple: made on every
#: render_spans call.
TurnSpans = tuple[list[tuple[Range, ...]], list[Range], list[int]]


def _system_range(prologue: list[str], length: int) -> tuple[Range, ...]:
    """The range of the system text, ``length`` long, in the prologue's pieces (:func:`_prologue`):
    it ends their text but for ``<|im_end|>\n``."""
    if not length:
        return ()
    end = sum(map(len, prologue)) - len(TURN_END)
    return ((end - length, end),)


def _write_assistant(out: list[str], message: dict[str, Any], content: str, index: int | None, kept: bool,
                     guard: FastGuard | None, lead: str | None, drops: list[str] | None, template: Template) -> str:
    """An assistant turn (``kept``: with its reasoning); its content as written (after a ``<think>``
    block split off). ``drops``: as in :func:`_write_turns`."""
    # A reasoning field's text, else the content's <think> block (the content: what follows it).
    reasoning = message.get(_FIRST_REASONING_FIELD)
    if reasoning is None and not _REASONING_FIELDS.isdisjoint(message):
        reasoning = reasoning_of(message)
    split = False
    if reasoning is None:
        reasoning = ""
        if THINK_CLOSE in content and template.split_inline_think:
            reasoning, content = split_think(content)
            split = True
    elif type(reasoning) is not str:
        if not isinstance(reasoning, str):
            raise _bad_reasoning(message, index)
        reasoning = str.__str__(reasoning)  # (its text, as transformers hands it over: its own strip could lie)
    if kept:
        out.extend((ASSISTANT_THINKING, reasoning.strip(), THINK_BLOCK_END, content))
    else:
        out.extend((ASSISTANT_TURN, content))
    if drops is not None and (split or not _REASONING_FIELDS.isdisjoint(message)):  # (else it loses nothing)
        note_assistant_drops(drops, message, message.get("content"), index, reasoning_field(message), split, kept)
    if calls := message.get("tool_calls"):
        _write_tool_calls(out, calls, content, index, guard, lead, drops, template)
    else:
        out.append(TURN_END)
    return content


def _write_turns(
    out: list[str], msgs: Sequence[dict[str, Any]], roles: list[str], indexes: list[int | None],
    add_vision_id: Any, thinking_after: int, noted: NotedRender | None, guard: FastGuard | None, template: Template,
) -> None:
    """Every message's turn, in order; assistant turns after position ``thinking_after`` keep their
    reasoning; ``indexes``: each message's input index. ``noted`` (render_spans, sessions) gets where
    each turn starts and, unless only that is wanted, its ranges and what the template leaves out."""
    last = len(roles) - 1
    spans: TurnSpans | None = None  # the ranges, noted for render_spans
    drops: list[str] | None = None
    if noted is not None:
        ranges, generated, starts = noted.spans
        written, at = len(out), 0  # the prologue's pieces come first (and its text, for ranges)
        if not noted.turns_only:
            spans, drops, at = noted.spans, noted.dropped, sum(map(len, out))
    lead = None if guard is None else guard.lead  # untrusted: what is not an assistant's (see render_chatml)
    vision = None  # the template's image and video counters, made when content that is not a string is met
    # A leading system message is the prologue's; the turns start after it.
    first = 1 if roles[0] == "system" else 0
    for pos, message in enumerate(msgs[first:] if first else msgs, first):
        role = roles[pos]
        content = message.get("content")
        if lead is not None and role != "assistant" and (type(content) is not str or lead in content):
            content = guarded_content(guard, content)
        if type(content) is str:
            content = content.strip()
        else:
            vision = vision or VisionCount()
            content = content_text(content, indexes[pos], vision, True, False, add_vision_id).strip()
        # The template's branches, most frequent first (a role equals at most one of these names).
        if role == "tool":  # a run of tool results is one user turn
            out.extend((TOOL_RESPONSE_FIRST if pos and roles[pos - 1] != "tool" else TOOL_RESPONSE_NEXT, content,
                        TOOL_RESPONSE_LAST if pos == last or roles[pos + 1] != "tool" else TOOL_RESPONSE_MORE))
        elif role == "assistant":
            content = _write_assistant(out, message, content, indexes[pos], pos > thinking_after, guard, lead, drops,
                                       template)
        elif role == "user":
            out.extend((USER_TURN, content, TURN_END))
        else:
            raise TemplateError("System message must be at the beginning." if role == "system"
                                else "Unexpected message role.")
        if noted is None:
            continue
        if spans is None:  # (sessions: where each turn starts, nothing else)
            starts.append(written)
            written = len(out)
            continue
        if role == "assistant":  # generated: right after the header, up to and including <|im_end|>
            end = at + len("".join(out[written:]))  # (a join: faster than summing a few lengths)
            turn = (at + _ASSISTANT_HEADER, end - 1)
            ranges.append((turn,))
            generated.append(turn)
        else:  # a user or tool message's range: its printed content, between its opener and closer
            begin = at + len(out[written])
            end = begin + len(content)
            ranges.append(((begin, end),) if content else ())
            end += len(out[-1])
        starts.append(written)
        written, at = len(out), end


def render_chatml(
    messages: Conversation,
    tools: Tools = None,
    add_generation_prompt: Any = False,
    template: Template = UPSTREAM,
    *,
    enable_thinking: Any = ABSENT,
    preserve_thinking: Any = ABSENT,
    reasoning_effort: Any = ABSENT,
    add_vision_id: Any = None,
    _fast_guard: FastGuard | None = None,
    _noted: NotedRender | None = None,
) -> str:
    """Render ``messages`` exactly as ``template`` does (:class:`~.template.Template`: the Qwen3.6
    template's differences, e.g. ``MULTI_SYSTEM``, every system message merged into one leading
    system turn, or ``UPSTREAM``, where a system message anywhere but first raises).
    Options have the template's semantics: ``enable_thinking`` disables only when it ``is False`` (or,
    when the template thinks only when asked, enables only when it ``is True``),
    ``preserve_thinking`` enables only when it ``is True`` (when the template reads it),
    ``add_vision_id`` by truthiness.
    Cost is linear in the size of the input: each message is visited a bounded number of times and
    the prompt is joined once, at the end. ``_fast_guard``: the guard's fast path (:mod:`.untrusted`);
    ``_noted`` (render_spans and sessions): gets the pieces and the turns' ranges (:class:`NotedRender`).
    """
    # The one builder, in the template's order (the module docstring).
    msgs, roles, origins, merged = read_messages(messages, template.merge_system, add_vision_id)
    # Each message's input index, for errors: a list (a range's item is a Python-level computation).
    indexes = origins if type(origins) is list else list(origins)
    effort = template.reasoning_effort  # (Qwen3.8's instructions: a call only for the template that writes them)
    instructions = template.reasoning_instructions(enable_thinking, reasoning_effort) if effort else ""
    out, system_length = _prologue(msgs, roles, tools, add_vision_id, _fast_guard, template, instructions)
    # The last user message that is not a wrapped tool response; none raises.
    for last_query in range(len(roles) - 1, -1, -1):
        if roles[last_query] == "user":
            message: Mapping[str, Any] = msgs[last_query]
            if _fast_guard is not None:
                message = guarded_message(_fast_guard, message, "user")
            query = trimmed_text(message, indexes[last_query], UNCOUNTED, False, False, add_vision_id)
            if not (query.startswith(TOOL_RESPONSE_OPEN) and query.endswith(TOOL_RESPONSE_CLOSE)):
                break
    else:
        raise TemplateError("No user query found in messages.")
    if _noted is not None and roles[0] == "system":
        _noted.spans[0].append(_system_range(out, system_length))
        _noted.spans[2].append(len(out))
    _write_turns(out, msgs, roles, indexes, add_vision_id,
                 -1 if template.keeps_every_think_block(preserve_thinking) else last_query, _noted, _fast_guard,
                 template)
    if _noted is not None:
        _noted.spans[2].append(len(out))
    if add_generation_prompt:
        out.append(template.generation_prompt(enable_thinking))
    if _noted is not None:
        _noted.pieces, _noted.roles, _noted.origins, _noted.merged = out, roles, origins, merged
        if not _noted.turns_only:  # (the walk notes assistants' losses)
            _noted.dropped = with_unwritten_fields(_noted.dropped, messages)
    return "" if _noted is not None and _noted.turns_only else "".join(out)  # (sessions join the pieces)


class NotedRender:
    """What ``render_spans`` and sessions need of one :func:`render_chatml` call, noted by it: the
    prompt's pieces (``"".join(pieces)`` is the prompt), the roles of the messages after merging
    system messages, the input index each came from (``None``: the merged system message), the
    ``(input index, length)`` of each system text the merged system message joined, in order, the
    turns' ranges (:data:`TurnSpans`), and the paths of what the template left out (:mod:`.drops`).
    ``turns_only`` (sessions): where each message's pieces start, no other range and no loss, and
    the walk returns ``""``, not the prompt (a session joins the pieces itself, once)."""

    __slots__ = ("dropped", "merged", "origins", "pieces", "roles", "spans", "turns_only")

    def __init__(self, turns_only: bool = False) -> None:
        self.turns_only = turns_only
        self.spans: TurnSpans = ([], [], [])
        self.dropped: list[str] = []
        self.pieces: list[str] = []
        self.roles: list[str] = []
        self.origins: Sequence[int | None] = ()
        self.merged: Merged = ()

    def note_turn(self, out: list[str], written: int, at: int, assistant: bool, text: str | None, text_at: int) -> int:
        """Note one message's range, its turn written as ``out``'s pieces from ``written`` on, at
        ``at``: an assistant's (``assistant``) from right after its header up to and including
        ``<|im_end|>``, also as generated; another's, its content ``text`` written as piece ``text_at``
        (``None``: not written, no range). Returns where the next turn starts. (Only the walk that
        notes more than the turns calls it.)"""
        ranges, generated, starts = self.spans
        end = at + sum(map(len, out[written:]))
        if assistant:
            turn = (at + _ASSISTANT_HEADER, end - 1)
            ranges.append((turn,))
            generated.append(turn)
        elif text is None:
            ranges.append(())
        else:
            begin = at + sum(map(len, out[written:text_at]))
            ranges.append(((begin, begin + len(text)),) if text else ())
        starts.append(written)
        return end


#: One conversation's pieces, as ``chatml_pieces`` returns them: ``(pieces, roles, origins, merged,
#: spans)``, as :class:`NotedRender` holds them. A plain tuple: made on every session render.
ChatMLPieces = tuple[list[str], list[str], Sequence[int | None], Merged, TurnSpans]


def chatml_pieces(
    messages: Conversation, tools: Tools, add_generation_prompt: Any, template: Template, options: Mapping[str, Any]
) -> ChatMLPieces:
    """:func:`render_chatml`'s pieces, never joined, with where every turn starts (``spans[2]``;
    the same builder, so the same errors and ``"".join(pieces)`` the same text). ``options``: the
    template's options, checked by the caller."""
    noted = chatml_noted(messages, tools, add_generation_prompt, template, options, turns_only=True)[1]
    return noted.pieces, noted.roles, noted.origins, noted.merged, noted.spans


def chatml_noted(
    messages: Conversation, tools: Tools, add_generation_prompt: Any, template: Template, options: Mapping[str, Any],
    turns_only: bool = False,
) -> tuple[str, NotedRender]:
    """:func:`render_chatml`'s prompt and what it noted (for ``render_spans``; ``turns_only``, for
    sessions: no prompt, ``""``, and :class:`NotedRender`'s turns). ``options``: the template's
    options, checked by the caller."""
    noted = NotedRender(turns_only)
    text = render_chatml(messages, tools, add_generation_prompt, template,
                         enable_thinking=options.get("enable_thinking", ABSENT),
                         preserve_thinking=options.get("preserve_thinking", ABSENT),
                         reasoning_effort=options.get("reasoning_effort", ABSENT),
                         add_vision_id=options.get("add_vision_id"), _noted=noted)
    return text, noted


def guarded_noted(
    fast: FastGuard, messages: Conversation, tools: Tools, add_generation_prompt: Any, template: Template,
    options: Mapping[str, Any], turns_only: bool = False,
) -> tuple[str, NotedRender] | None:
    """:func:`chatml_noted` through the guard's fast path (:func:`.untrusted.render_guarded`, the
    guard applied where the walk reads each untrusted field), or ``None`` where that path steps
    aside: the caller then guards every message and takes :func:`chatml_noted`."""
    noted = NotedRender(turns_only)
    text = render_guarded(fast, partial(render_chatml, template=template, _noted=noted), messages, tools,
                          add_generation_prompt, options)
    return None if text is None else (text, noted)
