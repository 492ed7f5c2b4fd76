"""The ChatML turn rules of the Qwen3.6 chat template, shared by both ChatML formats.

:func:`render_chatml` is a line-by-line transcription of the template's control flow into Python:
same checks in the same order (so the same input raises the same message first), same quirks. The
two ChatML formats differ only in what happens before it (system messages merged, or the guard).

Reading guide, in template order:

1. (multi-system only) every system message's content is rendered, trimmed, empty ones dropped,
   the rest joined with a blank line into one leading system message;
2. ``No messages provided.`` if nothing is left;
3. the system turn, with the tools block when tools are offered;
4. a backwards scan finds the last *real* user query (a user message whose trimmed text is
   wrapped in ``<tool_response>…</tool_response>`` does not count); none raises;
5. the turns, in order; assistant turns after that query keep their ``<think>`` block;
6. the generation prompt.
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from math import isfinite
from typing import TYPE_CHECKING, Any, ClassVar

import regex

from ..._json import flat_dicts_json, flat_lists_json, json_chunks, not_serialisable, printed, text_or_json, tojson
from ...errors import FormatError, InvalidInputError, TemplateError, type_name
from ...format import ChatFormat, Conversation, Tools, checked_guard
from ...messages import REASONING_FIELDS, ToolCall, ToolDefinition, message_dict
from ...options import BOOLEAN, Option, describe
from ...streaming import (
    ContentDelta,
    Malformed,
    ReasoningDelta,
    StreamParser,
    StrippedText,
    Terminator,
    TerminatorScan,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
    hold_point,
    new_call_id,
)
from ...tools import PLAIN_TOOLS_CACHE, PreparedTools
from ..reply_values import TOO_MANY_DIGITS, digits_note, typed_value
from ..reply_values import schema_types as schema_types
from ..reply_values import typed_parameter_value as typed_parameter_value
from .tokens import CONTROL_TOKENS

if TYPE_CHECKING:
    from ...guard import ControlTokenGuard, Policy

__all__ = [
    "ChatMLFormat",
    "ChatMLMultiSystemFormat",
    "ChatMLReplyParser",
    "ChatMLSafetyFormat",
    "render_chatml",
    "typed_parameter_value",
]

_IMAGE = "<|vision_start|><|image_pad|><|vision_end|>"
_VIDEO = "<|vision_start|><|video_pad|><|vision_end|>"

_TOOLS_HEADER = "<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>"
_TOOLS_FOOTER = (
    "\n</tools>"
    "\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n"
    "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n"
    "</parameter>\n<parameter=example_parameter_2>\nThis is the value for the second parameter\n"
    "that can span\nmultiple lines\n</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n"
    "- Function calls MUST follow the specified format: an inner <function=...></function> block must be "
    "nested within <tool_call></tool_call> XML tags\n- Required parameters MUST be specified\n"
    "- You may provide optional reasoning for your function call in natural language BEFORE the function "
    "call, but NOT after\n- If there is no function call available, answer the question like normal with "
    "your current knowledge and do not tell the user about function calls\n</IMPORTANT>"
)

_OPTION_SPECS = (
    Option("enable_thinking", BOOLEAN,
           "only exactly False disables thinking in the generation prompt (empty think block)"),
    Option("preserve_thinking", BOOLEAN, "only exactly True keeps the <think> block of every assistant turn"),
    Option("add_vision_id", BOOLEAN, "truthy: number images and videos ('Picture 1: ', 'Video 1: ')"),
)
_OPTIONS = describe(_OPTION_SPECS)


# Type sets the C-speed checks of the usual input compare with.
_DICT_ONLY = frozenset({dict})
_STR_ONLY = frozenset({str})
# An endless "role" (stateless: safe to share between threads), zipped by map() with the messages.
_ROLE_KEY = itertools.repeat("role")
# Dict and list tool-call arguments: encoding many at once (_write_containers) costs about 2 µs plus
# 0.25 µs each, one by one 0.4-0.7 µs each; so the first few of a prompt are encoded one by one
# where they are met, and the rest at once when they are that many of a kind.
_INLINE_CONTAINERS = 8
_MIN_BATCH = 8


class _VisionCount:
    """The template's ``image_count``/``video_count`` namespaces: one per render call."""

    # Class-level starting values: an instance costs nothing until an image or video is counted.
    images = 0
    videos = 0


def _content_text(
    content: Any, index: int | None, vision: _VisionCount, count: bool, is_system: bool, add_vision_id: Any
) -> str:
    """The template's ``render_content`` macro (untrimmed); ``index`` names the message in errors."""
    if isinstance(content, str):
        return printed(content)
    if content is None:
        return ""
    if not isinstance(content, (list, tuple)):
        # A mapping or a scalar: the macro's final ``else`` branch.
        raise TemplateError("Unexpected content type.")
    pieces = []
    for j, item in enumerate(content):
        if not isinstance(item, Mapping):
            raise InvalidInputError(
                f"messages[{index}].content[{j}]", f"expected a content part object, got {type_name(item)}"
            )
        if "image" in item or "image_url" in item or item.get("type") == "image":
            if is_system:
                raise TemplateError("System message cannot contain images.")
            if count:
                vision.images += 1
            if add_vision_id:
                pieces.append(f"Picture {vision.images}: ")
            pieces.append(_IMAGE)
        elif "video" in item or item.get("type") == "video":
            if is_system:
                raise TemplateError("System message cannot contain videos.")
            if count:
                vision.videos += 1
            if add_vision_id:
                pieces.append(f"Video {vision.videos}: ")
            pieces.append(_VIDEO)
        elif "text" in item:
            text = item["text"]
            if not isinstance(text, str):
                raise InvalidInputError(
                    f"messages[{index}].content[{j}].text", f"expected a string, got {type_name(text)}"
                )
            pieces.append(printed(text))
        else:
            raise TemplateError("Unexpected item type in content.")
    return "".join(pieces)


def _text(
    message: Mapping[str, Any], index: int | None, vision: _VisionCount, count: bool, is_system: bool,
    add_vision_id: Any,
) -> str:
    """A message's content as the template renders it, trimmed (``render_content(...)|trim``)."""
    content = message.get("content")
    if type(content) is str:
        return content.strip()
    return _content_text(content, index, vision, count, is_system, add_vision_id).strip()


def _checked_role(message: Mapping[str, Any], index: int) -> str:
    role = message.get("role")
    if not isinstance(role, str):
        raise InvalidInputError(f"messages[{index}].role", f"expected a string, got {type_name(role)}")
    return role


def _as_dicts(messages: Conversation) -> Sequence[Mapping[str, Any]]:
    """The messages as mappings (a list of dicts is read as is by the caller, never modified)."""
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        raise InvalidInputError("messages", f"expected a list of messages, got {type_name(messages)}")
    return [message_dict(message, i) for i, message in enumerate(messages)]


def _system_text(message: Mapping[str, Any], index: int, add_vision_id: Any) -> str:
    content = message.get("content")
    if type(content) is not str:
        # A system message never reaches the image counter: images in it raise first.
        content = _content_text(content, index, _VisionCount(), False, True, add_vision_id)
    return content.strip()


def _merge_system(
    msgs: Sequence[Mapping[str, Any]], roles: list[str] | None, add_vision_id: Any
) -> tuple[Sequence[Mapping[str, Any]], list[str], Sequence[int | None]]:
    """The multi-system block: (messages, their roles, their indexes in the caller's list).

    Every system message's content is rendered and trimmed; the non-empty ones, joined with a blank
    line, become the one leading system message; the others keep their order.
    """
    if roles is not None:
        systems = roles.count("system")
        if not systems:
            return msgs, roles, range(len(msgs))
        if systems == 1 and roles[0] == "system" and type(msgs[0].get("content")) is str:
            # One leading system message with text (the usual case): merging it changes nothing but
            # its trimming, which the turn renders anyway; or drops it if it is blank.
            if msgs[0]["content"].strip():
                return msgs, roles, range(len(msgs))
            return msgs[1:], roles[1:], range(1, len(msgs))
    system_texts: list[str] = []
    kept: list[Mapping[str, Any]]
    kept_roles: list[str]
    origins: list[int | None]
    if roles is not None:
        # Every role is a string: only system contents can raise, and they are read in order.
        positions = [roles.index("system")]
        for _ in range(systems - 1):
            positions.append(roles.index("system", positions[-1] + 1))
        texts = [_system_text(msgs[i], i, add_vision_id) for i in positions]
        system_texts = [text for text in texts if text]
        # The other messages are the runs between system messages, copied a run at a time.
        kept, kept_roles, origins = [], [], []
        start = 0
        for end in [*positions, len(msgs)]:
            kept += msgs[start:end]
            kept_roles += roles[start:end]
            origins += range(start, end)
            start = end + 1
    else:
        kept, kept_roles, origins = [], [], []
        for i, message in enumerate(msgs):
            # Checked here, in message order, so that errors come in the order the template meets them.
            role = _checked_role(message, i)
            if role == "system":
                text = _system_text(message, i, add_vision_id)
                if text:
                    system_texts.append(text)
            else:
                kept.append(message)
                kept_roles.append(role)
                origins.append(i)
    if system_texts:
        kept.insert(0, {"role": "system", "content": "\n\n".join(system_texts)})
        kept_roles.insert(0, "system")
        origins.insert(0, None)
    return kept, kept_roles, origins


def _tools_text(tools: Sequence[Mapping[str, Any]]) -> str:
    pieces = [_TOOLS_HEADER]
    append = pieces.append
    for i, tool in enumerate(tools):
        if type(tool) is not dict and not isinstance(tool, Mapping):
            raise InvalidInputError(f"tools[{i}]", f"expected a tool object, got {type_name(tool)}")
        append("\n")
        try:
            append(tojson(tool))
        except (TypeError, ValueError, RecursionError) as exc:
            raise not_serialisable(f"tools[{i}]", exc) from None
    append(_TOOLS_FOOTER)
    return "".join(pieces)


_TOOLS_KEY = "chatml.tools_block"


def tools_block(tools: Tools) -> str:
    """The system turn's tools text (without the system prompt); empty when no tools are offered.

    A :class:`PreparedTools` renders it once and caches it on itself; a plain list goes through
    :data:`~prompt_formats.tools.PLAIN_TOOLS_CACHE`, keyed by the list's content.
    """
    if not tools:
        return ""
    if isinstance(tools, PreparedTools):
        return tools.cached(_TOOLS_KEY, _tools_text)
    if type(tools) is not list and (isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence)):
        raise InvalidInputError("tools", f"expected a list of tool objects, got {type_name(tools)}")
    return PLAIN_TOOLS_CACHE.get(_TOOLS_KEY, tools, _tools_text)


def _bad_reasoning(message: Mapping[str, Any], index: int | None) -> InvalidInputError:
    key = next(key for key in REASONING_FIELDS if message.get(key) is not None)
    value = message[key]
    return InvalidInputError(f"messages[{index}].{key}", f"expected a string, got {type_name(value)}")


def _call_path(index: int | None, calls: Sequence[Mapping[str, Any]], k: int) -> str:
    return f"messages[{index}].tool_calls[{k}]" + (".function" if "function" in calls[k] else "")


def _call_name(name: Any, index: int | None, calls: Sequence[Mapping[str, Any]], k: int) -> str:
    """A tool call's name that is not an exact ``str``: its characters (the template concatenates it
    with text, which copies characters), or the error."""
    if not isinstance(name, str):
        raise InvalidInputError(_call_path(index, calls, k) + ".name", f"expected a string, got {type_name(name)}")
    return str.__str__(name)


def _argument_name(key: Any, index: int | None, calls: Sequence[Mapping[str, Any]], k: int) -> str:
    """A tool-call argument's name that is not an exact ``str``: its characters, or the error."""
    if not isinstance(key, str):
        raise InvalidInputError(
            _call_path(index, calls, k) + ".arguments", f"expected string keys, got {type_name(key)} key {key!r}"
        )
    return str.__str__(key)


def _write_containers(
    out: list[Any],
    dicts_at: list[int],
    lists_at: list[int],
    msgs: Sequence[Mapping[str, Any]],
    origins: Sequence[int | None],
) -> None:
    """Replace the dict and list tool-call arguments :func:`render_chatml` left in ``out`` by their JSON.

    All the dicts at once and all the lists at once when there are at least ``_MIN_BATCH`` of the
    kind (:func:`flat_dicts_json`, :func:`flat_lists_json`: an agent's arguments are mostly flat:
    paths, options); otherwise, or where those refuse, one by one in prompt order, so that the first
    argument JSON cannot encode is the one whose error is raised.
    """
    one_by_one: list[int] = []
    for positions, encode in ((dicts_at, flat_dicts_json), (lists_at, flat_lists_json)):
        if len(positions) < _MIN_BATCH:
            one_by_one += positions
        else:
            texts = encode(list(map(out.__getitem__, positions)))
            if texts is None:
                one_by_one += positions
            else:
                for at, text in zip(positions, texts, strict=True):
                    out[at] = text
    for at in sorted(one_by_one):
        value = out[at]
        try:
            out[at] = "".join(json_chunks(value, 0))
        except (TypeError, ValueError, RecursionError) as exc:
            raise not_serialisable(_argument_path(value, msgs, origins), exc) from None


def _argument_path(value: Any, msgs: Sequence[Mapping[str, Any]], origins: Sequence[int | None]) -> str:
    """Where the first tool-call argument that is ``value`` itself is, for an error."""
    for pos, message in enumerate(msgs):
        calls: Sequence[Mapping[str, Any]] = ()
        if message.get("role") == "assistant":
            calls = message.get("tool_calls") or ()
        for k, call in enumerate(calls):
            arguments = call.get("function", call).get("arguments")
            if isinstance(arguments, Mapping):
                for key, argument in arguments.items():
                    if argument is value:
                        return f"{_call_path(origins[pos], calls, k)}.arguments.{str.__str__(key)}"
    raise AssertionError("the argument is in no tool call")  # pragma: no cover


def render_chatml(
    messages: Conversation,
    tools: Tools = None,
    add_generation_prompt: Any = False,
    merge_system: bool = False,
    *,
    enable_thinking: Any = None,
    preserve_thinking: Any = None,
    add_vision_id: Any = None,
) -> str:
    """Render ``messages`` exactly as the Qwen3.6 template does.

    ``merge_system=True`` is the multi-system template (every system message merged into one leading
    system turn); ``False`` the upstream one (a system message anywhere but first raises).
    Options have the template's semantics: ``enable_thinking`` disables only when it ``is False``,
    ``preserve_thinking`` enables only when it ``is True``, ``add_vision_id`` by truthiness.
    Cost is linear in the size of the input: each message is visited a bounded number of times and
    the prompt is joined once, at the end.
    """
    # The usual input (a list of dicts, string roles) is checked by C-speed passes over the whole
    # list; anything else goes through the helpers, which check it message by message.
    roles: list[Any] | None
    if type(messages) is list and set(map(type, messages)) <= _DICT_ONLY:
        msgs: Sequence[Mapping[str, Any]] = messages
        roles = list(map(dict.get, messages, _ROLE_KEY))  # message.get("role") for each, at C speed
    else:
        msgs = _as_dicts(messages)
        roles = [message.get("role") for message in msgs]
    if not set(map(type, roles)) <= _STR_ONLY:
        roles = None
    # `origins[pos]` is the caller's index of msgs[pos] (None for the merged system message), for errors.
    origins: Sequence[int | None]
    if merge_system and (roles is None or "system" in roles):
        msgs, roles, origins = _merge_system(msgs, roles, add_vision_id)
    else:
        origins = range(len(msgs))
    if not msgs:
        raise TemplateError("No messages provided.")
    if roles is None:
        roles = [_checked_role(message, i) for i, message in enumerate(msgs)]
    n = len(msgs)
    # The template's image and video counters; only list content reads them.
    vision = _VisionCount()

    out: list[str] = []
    block = tools_block(tools)
    if roles[0] == "system":
        system_text = _text(msgs[0], origins[0], vision, False, True, add_vision_id)
    if block:
        out.append(block)
        if roles[0] == "system" and system_text:
            out.append("\n\n" + system_text)
        out.append("<|im_end|>\n")
    elif roles[0] == "system":
        out.append("<|im_start|>system\n" + system_text + "<|im_end|>\n")

    last_query = -1
    for pos in range(n - 1, -1, -1):
        if roles[pos] == "user":
            query = _text(msgs[pos], origins[pos], vision, False, False, add_vision_id)
            if not (query.startswith("<tool_response>") and query.endswith("</tool_response>")):
                last_query = pos
                break
    if last_query < 0:
        raise TemplateError("No user query found in messages.")

    keep_all_thinking = preserve_thinking is True
    # Pieces go into `out` as they are and are copied once, by the final join.
    append = out.append
    extend = out.extend
    last = n - 1
    # Tool-call arguments that are dicts or lists: the first few are encoded where they are met;
    # the others go into `out` as they are, their positions here, and _write_containers puts their
    # JSON in their place, many at once (which pays only for many).
    inline_containers = _INLINE_CONTAINERS
    dicts_at: list[int] = []
    lists_at: list[int] = []
    try:
        for pos, (role, message) in enumerate(zip(roles, msgs, strict=True)):
            content = message.get("content")
            if type(content) is str:
                content = content.strip()
            else:
                content = _content_text(content, origins[pos], vision, True, False, add_vision_id).strip()
            # The template's branches, most frequent first (a role equals at most one of these names).
            if role == "tool":
                # A run of tool results is one user turn.
                extend((
                    "<|im_start|>user\n<tool_response>\n" if pos and roles[pos - 1] != "tool"
                    else "\n<tool_response>\n",
                    content,
                    "\n</tool_response><|im_end|>\n" if pos == last or roles[pos + 1] != "tool"
                    else "\n</tool_response>",
                ))
            elif role == "assistant":
                # transformers passes the first non-None of these fields as reasoning_content.
                reasoning = message.get("reasoning_content")
                if reasoning is None:
                    reasoning = message.get("thinking")
                    if reasoning is None:
                        reasoning = message.get("reasoning")
                if reasoning is None:
                    reasoning = ""
                    if "</think>" in content:
                        reasoning = content.split("</think>")[0].rstrip("\n").split("<think>")[-1].lstrip("\n")
                        content = content.split("</think>")[-1].lstrip("\n")
                elif type(reasoning) is not str and not isinstance(reasoning, str):
                    raise _bad_reasoning(message, origins[pos])
                if keep_all_thinking or pos > last_query:
                    extend(("<|im_start|>assistant\n<think>\n", reasoning.strip(), "\n</think>\n\n", content))
                else:
                    extend(("<|im_start|>assistant\n", content))
                calls = message.get("tool_calls")
                if calls:
                    if type(calls) is not list and not isinstance(calls, (list, tuple)):
                        raise InvalidInputError(
                            f"messages[{origins[pos]}].tool_calls", f"expected a list, got {type_name(calls)}"
                        )
                    # The first call follows the content after a blank line (right away when there is
                    # none); each later one follows the previous call's end after a newline. Names and
                    # argument values are made exact strings first (see _call_name, text_or_json), so
                    # that the f-strings below copy characters and call nothing.
                    # (`content` is trimmed text, or what follows "</think>" in it: empty, or ending in
                    # a non-space, so here the template's `content|trim` is empty just when it is.)
                    opening = "\n\n<tool_call>\n<function=" if content else "<tool_call>\n<function="
                    for k, call in enumerate(calls):
                        if type(call) is not dict and not isinstance(call, Mapping):
                            raise InvalidInputError(
                                f"messages[{origins[pos]}].tool_calls[{k}]",
                                f"expected an object, got {type_name(call)}",
                            )
                        function = call.get("function", call)  # the OpenAI shape nests the call in "function"
                        if type(function) is not dict and function is not call and not isinstance(function, Mapping):
                            raise InvalidInputError(
                                f"messages[{origins[pos]}].tool_calls[{k}].function",
                                f"expected an object, got {type_name(function)}",
                            )
                        name = function.get("name")
                        if type(name) is not str:
                            name = _call_name(name, origins[pos], calls, k)
                        arguments = function.get("arguments")  # absent and null both render nothing
                        if arguments is None:
                            append(f"{opening}{name}>\n")
                        elif type(arguments) is dict or isinstance(arguments, Mapping):
                            append(f"{opening}{name}>\n")
                            for key, value in arguments.items():
                                if type(key) is not str:
                                    key = _argument_name(key, origins[pos], calls, k)
                                if type(value) is not str:
                                    kind = type(value)
                                    if (kind is dict or kind is list) and not inline_containers:
                                        extend((f"<parameter={key}>\n", value, "\n</parameter>\n"))
                                        (dicts_at if kind is dict else lists_at).append(len(out) - 2)
                                        continue
                                    try:
                                        # The usual kinds inline, spelt as tojson spells them.
                                        if kind is int:
                                            value = int.__repr__(value)
                                        elif kind is bool:
                                            value = "true" if value else "false"
                                        elif kind is dict or kind is list:
                                            inline_containers -= 1
                                            value = "".join(json_chunks(value, 0))
                                        elif kind is float and isfinite(value):
                                            value = float.__repr__(value)
                                        else:
                                            value = text_or_json(value)
                                    except (TypeError, ValueError, RecursionError) as exc:
                                        path = f"{_call_path(origins[pos], calls, k)}.arguments.{key}"
                                        raise not_serialisable(path, exc) from None
                                append(f"<parameter={key}>\n{value}\n</parameter>\n")
                        elif isinstance(arguments, str):
                            extend((
                                f"{opening}{name}>\n<parameter=arguments>\n", printed(arguments), "\n</parameter>\n"
                            ))
                        else:
                            raise InvalidInputError(
                                _call_path(origins[pos], calls, k) + ".arguments",
                                f"expected an object or a JSON string, got {type_name(arguments)}",
                            )
                        opening = "</function>\n</tool_call>\n<tool_call>\n<function="
                    append("</function>\n</tool_call><|im_end|>\n")
                else:
                    append("<|im_end|>\n")
            elif role == "user":
                extend(("<|im_start|>user\n", content, "<|im_end|>\n"))
            elif role == "system":
                if pos:
                    raise TemplateError("System message must be at the beginning.")
            else:
                raise TemplateError("Unexpected message role.")
    except Exception:
        if dicts_at or lists_at:  # an argument before this error that JSON cannot encode is the first error
            _write_containers(out, dicts_at, lists_at, msgs, origins)
        raise
    if dicts_at or lists_at:
        _write_containers(out, dicts_at, lists_at, msgs, origins)

    if add_generation_prompt:
        append("<|im_start|>assistant\n<think>\n\n</think>\n\n" if enable_thinking is False
               else "<|im_start|>assistant\n<think>\n")
    return "".join(out)


class ChatMLFormat(ChatFormat):
    """Base of the two ChatML formats: the Qwen3.6 template's options and turn rules.

    ``guard``: an optional :class:`~prompt_formats.guard.ControlTokenGuard` applied to the messages
    and tools before rendering (off by default: the output is then exactly the template's).
    """

    merge_system: bool = False
    option_specs = _OPTION_SPECS
    options = _OPTIONS
    parse_option_specs = (
        Option("enable_thinking", BOOLEAN, "as in render: only exactly False means the prompt closed the think block"),
        *(Option(name, BOOLEAN, "accepted so render's options can be passed as they are; no effect on parsing")
          for name in ("preserve_thinking", "add_vision_id")),
    )
    parse_options: ClassVar[Mapping[str, str]] = describe(parse_option_specs)

    def stream_parser(
        self,
        tools: Tools = None,
        *,
        id_factory: Callable[[], str] | None = None,
        **context: Any,
    ) -> ChatMLReplyParser:
        """A new :class:`ChatMLReplyParser` for one completion (the text after the generation prompt).

        ``tools`` types the call arguments by their schemas (and makes a call to any other tool
        malformed); ``context`` takes ``render``'s options (``enable_thinking=False`` when the prompt
        was rendered so); ``id_factory`` makes the call ids (default ``call_`` + 24 random hex digits).
        Rules: the "Reply parser" section of :mod:`prompt_formats.formats.chatml`.

        Its events, concatenated over any split of the completion into deltas, assemble to exactly
        ``parse(completion)`` (with the same ``id_factory`` sequence).
        """
        if context:
            self.check_options(context, self.parse_options)
        return ChatMLReplyParser(_tool_schemas(tools), context.get("enable_thinking") is not False, id_factory)

    def __init__(self, guard: ControlTokenGuard | None = None) -> None:
        self.guard = checked_guard(guard)

    def render(
        self,
        messages: Conversation,
        tools: Tools = None,
        add_generation_prompt: bool = False,
        **options: Any,
    ) -> str:
        """Render ``messages`` byte-identically to the reference template (see :func:`render_chatml`).

        With a guard, its policy is applied first to every untrusted field (it may raise
        :class:`~prompt_formats.errors.InjectionError`).
        """
        if options:
            self.check_options(options)
        guard = self.guard
        if guard is not None:
            tools = guard.guard_tools(tools)
            messages = guard.guard_messages(messages)
        if options:
            return render_chatml(messages, tools, add_generation_prompt, self.merge_system, **options)
        return render_chatml(messages, tools, add_generation_prompt, self.merge_system)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()" if self.guard is None else f"{type(self).__name__}(guard={self.guard!r})"


# ===================================================================================================
# Reply parser (parse / stream_parser): the completion after the generation prompt, into reasoning,
# content and typed tool calls.
#
# Rules (the README's "Parsing replies" section and docs/parsing.md say the same for users):
#
# - Reasoning. With thinking on (``enable_thinking`` not exactly False, as in ``render``) the prompt
#   ended in ``<think>\n``, so the completion starts inside the reasoning: it runs up to ``</think>``
#   (all of the completion when there is none); a ``<think>`` the model repeats at its start (after
#   whitespace) is dropped. With thinking off, there is reasoning only if the completion opens with
#   ``<think>`` (after whitespace). A tool call that opens inside the reasoning ends it; the next
#   ``</think>`` (after the calls) is then the reasoning's own marker, taken out of the content.
# - Whitespace rule: reasoning and content are ``str.strip``-ped as wholes, as the template strips
#   both when it renders them. Content is all text outside reasoning and tool-call blocks (text between
#   or after calls included, whitespace between them kept), so ``content.strip()`` of the template's
#   ``{content}\n\n<tool_call>…`` is the content back.
# - Tool calls: ``<tool_call>`` opens one only when followed (after at most 32 whitespace characters)
#   by ``<function=NAME>``, NAME being 1 to 256 characters without ``<`` or ``>``; elsewhere it is
#   ordinary text, counted in a note. Inside: ``<parameter=P>VALUE</parameter>`` blocks separated by
#   whitespace, then ``</function>``, then optionally ``</tool_call>`` (after which another
#   ``<function=…>`` may follow in the same block). A value loses one leading and one trailing ``\n``
#   and is typed by the tool's schema (see :func:`typed_parameter_value`). A parameter repeated in a
#   call keeps its first value; the repeat's block goes to the content, with a note.
# - A call cut off by the end of the reply (the end of the completion, or a stop marker) after its
#   ``<function=NAME>`` stays a call with the parameters written so far, the unfinished value as its
#   text (untyped), and a note "tool call N (NAME) cut off…"; an unfinished tag joins the content.
#   (A call announced in a stream cannot be taken back; Harmony follows the same rule.)
# - Malformed calls (other text inside the block, a name not among the offered tools) are returned
#   as content, raw from ``<tool_call>`` to the offending point, with a note in ``reply.malformed``;
#   parsing goes on from that point as content.
# - ``<|im_end|>`` and ``<|endoftext|>`` end the reply; text after them is ignored (noted if it is not
#   whitespace).

_WS = r"[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
#: Possessive quantifiers (3.11+) make a failed call-start match give up at once instead of backtracking.
_PLUS = "+" if sys.version_info >= (3, 11) else ""
_NAME = "[^<>]{1,256}"
_CALL_START_PATTERN = "<tool_call>" + _WS + "{0,32}" + _PLUS + "<function=(" + _NAME + _PLUS + ")>"
_CALL_START = Terminator.regex(
    "<tool_call>", _CALL_START_PATTERN, len("<tool_call>") + 32 + len("<function=") + 256 + 1
)
_THINK_END = Terminator.marker("</think>")
_IM_END = Terminator.marker("<|im_end|>")
_END_OF_TEXT = Terminator.marker("<|endoftext|>")
_PARAMETER_END = Terminator.marker("</parameter>")
_REASONING_ENDS = (_THINK_END, _CALL_START, _IM_END, _END_OF_TEXT)
_CONTENT_ENDS = (_CALL_START, _IM_END, _END_OF_TEXT)
# Content after a tool call that ended the reasoning: the reasoning's own "</think>" may still come.
_CONTENT_ENDS_THINK_OPEN = (_THINK_END, _CALL_START, _IM_END, _END_OF_TEXT)
_VALUE_ENDS = (_PARAMETER_END, _IM_END, _END_OF_TEXT)
_STOPS = ("<|im_end|>", "<|endoftext|>")

_WS_RUN = re.compile(_WS + "*")
_THINK_OPEN = regex.compile("<think>")
# What may follow inside a function block, after whitespace.
_FUNCTION_ITEM = regex.compile(
    "<parameter=(" + _NAME + ")>|(</function>)|(<\\|im_end\\|>|<\\|endoftext\\|>)"
)
# What may follow a function's end: the block's end, or another function in the same block.
_AFTER_FUNCTION = regex.compile(_WS + "{0,32}(?:(</tool_call>)|<function=(" + _NAME + ")>)")

_JUNK_CALL_NOTE = "'<tool_call>' not followed by '<function=NAME>': kept as text"

# Parser states.
_REASONING_START, _CONTENT_START, _REASONING, _CONTENT, _FUNCTION, _VALUE, _AFTER, _DONE = range(8)

#: Options ``parse``/``stream_parser`` accept: ``render``'s, so the same dict can be passed to both.
_PARSE_OPTIONS = {
    "enable_thinking": "as in render: only exactly False means the prompt closed the think block",
    "preserve_thinking": "accepted for symmetry with render; no effect on parsing",
    "add_vision_id": "accepted for symmetry with render; no effect on parsing",
}

# --- Typing parameter values by the tool's JSON schema: prompt_formats.formats.reply_values. ---------


def _parameter_schemas(tools: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Tool name -> its parameters' ``properties`` (empty when it declares none); validates the tools."""
    schemas: dict[str, Mapping[str, Any]] = {}
    for i, tool in enumerate(tools):
        definition = ToolDefinition.from_openai(tool, i)
        properties = (definition.parameters or {}).get("properties")
        schemas[definition.name] = properties if isinstance(properties, Mapping) else {}
    return schemas


def _tool_schemas(tools: Tools) -> dict[str, Mapping[str, Any]] | None:
    if not tools:
        return None
    if isinstance(tools, PreparedTools):
        return tools.cached("chatml.parameter_schemas", _parameter_schemas)
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        raise InvalidInputError("tools", f"expected a list of tool objects, got {type_name(tools)}")
    return _parameter_schemas(tools)


# --- The state machine. -----------------------------------------------------------------------------


class ChatMLReplyParser(StreamParser):
    """Streaming parser of a Qwen3.6 ChatML completion (rules at the top of this section).

    Made by :meth:`ChatMLFormat.stream_parser`; per stream, picklable between feeds when its
    ``id_factory`` is.
    """

    __slots__ = (
        "_call_name",
        "_call_notes",
        "_call_raw",
        "_calls",
        "_content",
        "_duplicates",
        "_id_factory",
        "_junk_calls",
        "_late_think_end",
        "_param_name",
        "_params",
        "_reasoning",
        "_schemas",
        "_state",
        "_text_after_stop",
        "_value",
    )

    def __init__(
        self,
        schemas: dict[str, Mapping[str, Any]] | None,
        thinking: bool,
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        super().__init__()
        self._schemas = schemas
        self._id_factory = id_factory or new_call_id
        self._reasoning = StrippedText(self._emit_reasoning)
        self._content = StrippedText(self._emit_content)
        self._state = _REASONING_START if thinking else _CONTENT_START
        self._calls = 0
        self._junk_calls = 0
        # A tool call ended the reasoning before its "</think>": the next "</think>" is that marker.
        self._late_think_end = False
        self._call_notes: list[str] = []  # notes about the call being read, sent if it completes
        self._duplicates: list[str] = []  # raw repeated parameter blocks of that call (to the content)
        self._text_after_stop = False
        self._call_raw: list[str] = []
        self._call_name = ""
        self._params: dict[str, Any] = {}
        self._param_name = ""
        self._value: list[str] = []

    # Event emission. ------------------------------------------------------------------------------

    def _emit_reasoning(self, text: str) -> None:
        self._out.append(ReasoningDelta(text))

    def _emit_content(self, text: str) -> None:
        self._out.append(ContentDelta(text))

    def _scanned_text(self, text: str, state: int) -> None:
        """Text a reasoning or content state consumed: it may hold ``<tool_call>`` that opened no call."""
        if "<tool_call>" in text:
            self._junk_calls += text.count("<tool_call>")
        if state == _REASONING:
            self._reasoning.add(text)
        else:
            self._content.add(text)

    def _set_state(self, state: int) -> None:
        self._state = state
        if state == _REASONING:
            self._text = self._reasoning.add
        elif state == _CONTENT:
            self._text = self._content.add
        elif state == _VALUE:
            self._text = self._value.append
        else:
            self._text = None

    def _malformed(self, note: str) -> None:
        """The call being read is not one: its raw text becomes content, parsing goes on as content."""
        self._content.add("".join(self._call_raw))
        self._call_raw = []
        self._params = {}
        self._value.clear()
        self._duplicates = []
        self._call_notes = []
        self._out.append(Malformed(note))
        self._set_state(_CONTENT)

    def _open_call(self, raw: str, name: str) -> None:
        self._call_raw = [raw]
        self._call_name = name
        self._params = {}
        self._duplicates = []
        self._call_notes = []
        schemas = self._schemas
        if schemas is not None and name not in schemas:
            self._malformed(f"tool call to unknown tool {name!r}: kept as text")
        else:
            self._set_state(_FUNCTION)

    def _call_label(self) -> str:
        return f"tool call {self._calls} ({self._call_name})"

    def _keep_value(self, value: str, typed: bool, raw: str) -> None:
        """Store the parameter just read (``raw``: its block as written); a repeat is noted, kept as text."""
        name = self._param_name
        if name in self._params:
            # The first value stays (a streamed value cannot be taken back); the repeat joins the content,
            # with the whitespace before it, as written.
            before = self._call_raw[-2] if len(self._call_raw) > 1 and self._call_raw[-2].isspace() else ""
            self._duplicates.append(before + raw)
            self._call_notes.append(f"{self._call_label()}: parameter {name!r} repeated: the first value kept, "
                                    "the repeat kept as text")
            return
        schema = None
        if typed and self._schemas is not None:
            schema = self._schemas[self._call_name].get(name)
        if schema is None:
            self._params[name] = value
            return
        typed_text, problem = typed_value(value, schema)
        if problem == TOO_MANY_DIGITS:
            self._call_notes.append(f"{self._call_label()}: parameter {name!r} has {digits_note()}: kept as text")
        self._params[name] = typed_text

    def _close_value(self, closed: bool = True) -> None:
        """The value read ends: at ``</parameter>`` (typed by the schema), or cut off (kept as written)."""
        value = "".join(self._value)
        self._value.clear()  # cleared, not replaced: the _VALUE state appends to this list
        raw = f"<parameter={self._param_name}>{value}" + ("</parameter>" if closed else "")
        self._call_raw.append(raw)
        # One leading and one trailing newline belong to the format, not to the value.
        if value.startswith("\n"):
            value = value[1:]
        if closed and value.endswith("\n"):
            value = value[:-1]
        self._keep_value(value, closed, raw)

    def _close_call(self, cut_off: str | None = None) -> None:
        """The call is complete, or was cut off by the end of the reply (``cut_off``: its note)."""
        index = self._calls
        self._calls += 1
        call = ToolCall(name=self._call_name, arguments=self._params, id=self._id_factory())
        out = self._out
        out.append(ToolCallStart(index, call.id or "", call.name))
        out.append(ToolCallArgumentsDelta(index, call.arguments_json()))
        out.append(ToolCallEnd(index, call))
        if self._duplicates:
            self._content.add("".join(self._duplicates))
        out.extend(Malformed(note) for note in self._call_notes)
        if cut_off is not None:
            out.append(Malformed(cut_off))
        self._call_raw = []
        self._params = {}
        self._duplicates = []
        self._call_notes = []

    def _cut_off(self, unfinished: str = "") -> None:
        """The reply ended inside the call: it stays a call, with the arguments written so far."""
        note = f"{self._call_label()} cut off by the end of the completion: kept with the arguments written so far"
        if unfinished:
            note += f" (the unfinished {unfinished!r} kept as text)"
            self._content.add(unfinished)
        self._close_call(note)

    # The machine. ---------------------------------------------------------------------------------

    def _advance(self, buf: str, final: bool) -> int:
        pos = 0
        scan = TerminatorScan(buf)
        while True:
            state = self._state
            if state in (_REASONING, _CONTENT):
                pos, more = self._text_step(buf, pos, final, scan, state)
            elif state == _VALUE:
                pos, more = self._value_step(buf, pos, final, scan)
            elif state == _FUNCTION:
                pos, more = self._function_step(buf, pos, final)
            elif state == _AFTER:
                item = _AFTER_FUNCTION.match(buf, pos, partial=not final)
                if item is not None and item.partial:
                    return pos
                if item is None:
                    self._set_state(_CONTENT)
                elif item.group(1) is not None:
                    pos = item.end()
                    self._set_state(_CONTENT)
                else:
                    pos = item.end()
                    self._open_call(item.group(), item.group(2))
                more = True
            elif state in (_REASONING_START, _CONTENT_START):
                pos = _WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
                if pos == len(buf) and not final:
                    return pos
                opened = _THINK_OPEN.match(buf, pos, partial=not final)
                if opened is not None and opened.partial:
                    return pos
                if opened is not None:
                    pos = opened.end()
                self._set_state(_REASONING if state == _REASONING_START or opened is not None else _CONTENT)
                more = True
            else:  # _DONE: the reply has ended; what follows is not part of it.
                if not self._text_after_stop and pos < len(buf) and not buf[pos:].isspace():
                    self._text_after_stop = True
                return len(buf)
            if not more:
                return pos

    # Each step consumes from ``pos`` and returns ``(position, more)``: ``more`` is False when it
    # stopped for want of text (the position is then what ``_advance`` returns).

    def _text_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan, state: int) -> tuple[int, bool]:
        terms: tuple[Terminator, ...]
        if state == _REASONING:
            terms = _REASONING_ENDS
        else:
            terms = _CONTENT_ENDS_THINK_OPEN if self._late_think_end else _CONTENT_ENDS
        at, term, match = scan.next(pos, terms)
        if at < 0:
            stop = len(buf) if final else hold_point(buf, pos, terms)
            if stop > pos:
                self._scanned_text(buf[pos:stop], state)
            return stop, False
        if at > pos:
            self._scanned_text(buf[pos:at], state)
        if term is _CALL_START:
            if state == _REASONING:
                self._late_think_end = True
            self._open_call(match.group(), match.group(1))
            return match.end(), True
        if term is _THINK_END:
            # The reasoning's end marker, in its place or after the tool calls that ended the reasoning.
            self._late_think_end = False
            self._set_state(_CONTENT)
            return at + len("</think>"), True
        self._set_state(_DONE)
        return at + len(term.literal), True  # type: ignore[union-attr]

    def _value_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        at, term, _ = scan.next(pos, _VALUE_ENDS)
        if at < 0:
            if not final:
                stop = hold_point(buf, pos, _VALUE_ENDS)
                if stop > pos:
                    self._value.append(buf[pos:stop])
                return stop, False
            self._value.append(buf[pos:])
            self._close_value(closed=False)
            self._cut_off()
            self._set_state(_CONTENT)
            return len(buf), False
        if at > pos:
            self._value.append(buf[pos:at])
        if term is _PARAMETER_END:
            self._close_value()
            self._set_state(_FUNCTION)
            return at + len("</parameter>"), True
        self._close_value(closed=False)  # a stop marker ended the reply inside the value
        self._cut_off()
        self._set_state(_DONE)
        return at + len(term.literal), True  # type: ignore[union-attr]

    def _function_step(self, buf: str, pos: int, final: bool) -> tuple[int, bool]:
        skip = _WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
        if skip > pos:
            self._call_raw.append(buf[pos:skip])
            pos = skip
        if pos == len(buf):
            if not final:
                return pos, False
            self._cut_off()
            self._set_state(_CONTENT)
            return pos, True
        item = _FUNCTION_ITEM.match(buf, pos, partial=True)
        if item is not None and item.partial:
            if not final:
                return pos, False
            # The completion ends inside a tag: the call is cut off; the unfinished tag joins the content.
            self._cut_off(buf[pos:])
            self._set_state(_CONTENT)
            return len(buf), False
        if item is None:
            self._malformed("tool call with text outside its parameters: kept as text")
            return pos, True
        if item.group(1) is not None:
            self._param_name = item.group(1)
            self._set_state(_VALUE)
        elif item.group(2) is not None:
            self._call_raw.append("</function>")
            self._close_call()
            self._set_state(_AFTER)
        else:  # a stop marker ended the reply inside the call
            self._cut_off()
            self._set_state(_DONE)
        return item.end(), True

    def _finish(self) -> None:
        if self._junk_calls:
            count = self._junk_calls
            self._out.append(Malformed(_JUNK_CALL_NOTE + (f" ({count} times)" if count > 1 else "")))
        if self._text_after_stop:
            self._out.append(Malformed("text after the end of the reply ('<|im_end|>'/'<|endoftext|>') ignored"))


class ChatMLMultiSystemFormat(ChatMLFormat):
    """The ``chatml-multi-system`` format: every system message merged into one leading system turn.

    Agent clients send several system messages (a base prompt, then reminders between turns); the
    upstream template raises ``System message must be at the beginning.`` for them. This variant
    renders each system message's content, trims it, drops the empty ones, joins the rest with a
    blank line and renders that as the only system turn; every other message keeps its order.
    Reference: ``tests/fixtures/chatml_multi_system.jinja``.
    """

    name = "chatml-multi-system"
    summary = ("Qwen3.6 ChatML as its Jinja template renders it, every system message merged into one leading "
               "system turn (for agent clients that send several)")
    merge_system = True


class ChatMLSafetyFormat(ChatMLFormat):
    """The ``chatml-safety`` format: the strict upstream template, untrusted text unable to forge structure.

    On text that holds no control token the prompt is exactly the upstream template's
    (``tests/fixtures/chatml_upstream.jinja``). Before rendering, a
    :class:`~prompt_formats.guard.ControlTokenGuard` applies its policy to every untrusted field (see
    ``docs/safety.md``). ``policy``: ``"escape"`` (default), ``"reject"`` or ``"allow"``; ``tokens``:
    the control tokens (default :data:`~prompt_formats.guard.CHATML_CONTROL_TOKENS`);
    ``trust_assistant``: leave assistant content and reasoning unchecked (default ``True``). Or pass
    a ready ``guard`` instead of those three.
    """

    name = "chatml-safety"
    summary = ("Qwen3.6 ChatML as the strict upstream template renders it, with a guard against control tokens "
               "in untrusted text (--config policy=escape|reject|allow)")
    merge_system = False
    guard: ControlTokenGuard

    def __init__(
        self,
        policy: Policy = "escape",
        *,
        tokens: Iterable[str] = CONTROL_TOKENS,
        trust_assistant: bool = True,
        guard: ControlTokenGuard | None = None,
    ) -> None:
        from ...guard import ControlTokenGuard  # not at module level: the guard imports this package's tokens

        if not isinstance(trust_assistant, bool):  # a truthy string would leave assistant text unchecked
            raise InvalidInputError("trust_assistant", f"expected a boolean, got {type_name(trust_assistant)}")
        if guard is None:
            guard = ControlTokenGuard(tuple(tokens), policy, trust_assistant)
        elif (policy, tuple(tokens), trust_assistant) != ("escape", CONTROL_TOKENS, True):
            raise FormatError("chatml-safety: pass either guard or policy/tokens/trust_assistant, not both")
        super().__init__(guard)

    def __repr__(self) -> str:
        guard = self.guard
        return (
            f"{type(self).__name__}(policy={guard.policy!r}, trust_assistant={guard.trust_assistant!r}"
            + ("" if guard.tokens == CONTROL_TOKENS else f", tokens={guard.tokens!r}")
            + ")"
        )
