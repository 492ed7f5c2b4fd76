"""Harmony, OpenAI's gpt-oss prompt format, exactly as Ollama renders it with its Go template.

The reference is ``tests/fixtures/harmony_gpt_oss.gotmpl`` executed by Go's ``text/template`` with the
data Ollama feeds it. :meth:`HarmonyFormat.render` produces the same bytes, in one pass over the
messages, with every quirk of that template and of Ollama's preprocessing kept:

- Ollama *collates* the messages first: ``.System`` is the content of every system message joined
  with a blank line (``"\\n\\n"``), and a message of the same role as the one before it (``tool``
  excepted) is merged into that one: contents joined with ``"\\n\\n"``, its other fields (reasoning,
  tool name) dropped. System messages stay in the list (so they separate runs) but render nothing
  there; the system header is always rendered, with an empty system text if there is none;
- the header says ``Reasoning: <level>`` unless thinking was explicitly disabled, and has the
  ``# Tools / ## python`` block only when a tool named ``python`` is offered (no other tool renders);
- a user message renders as ``<|start|>user<|message|>…<|end|>``; an assistant message renders its
  reasoning (``analysis`` channel) only if it comes after the last user message, then its content
  (``final`` channel) if non-empty; a tool result renders only when the tool is named ``python``;
  other roles render nothing (they still take part in collation);
- prefill: when the last message is an assistant message with content, ``<|end|>`` is left off
  *every* final-channel message; when it has reasoning but no content, ``<|end|>`` is left off every
  analysis message. Otherwise the prompt ends with the generation header ``<|start|>assistant``.

Input normalisation (OpenAI-style dicts or :class:`~prompt_formats.messages.Message` objects):
``developer`` is read as ``system``; reasoning is the first non-``None`` of ``reasoning_content``,
``thinking``, ``reasoning``; a tool result's name is ``tool_name``, else ``name``, else (as Ollama's
OpenAI endpoint does) the name of the tool call whose ``id`` is its ``tool_call_id``; content is a
string, ``None`` (empty) or a list of text parts joined with ``"\\n\\n"``. Image and video parts
raise :class:`UnsupportedContentError`. Tool calls are read only to name such a tool result; other
fields are not read.
"""

from __future__ import annotations

import datetime
import functools
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ...errors import FormatError, InvalidInputError, type_name
from ...format import ChatFormat, Conversation, Tools, checked_guard
from ...messages import REASONING_FIELDS, ImagePart, Message, TextPart, ToolCall, VideoPart, named_function
from ...options import Option, describe
from ...streaming import (
    ContentDelta,
    Malformed,
    ReasoningDelta,
    StreamParser,
    Terminator,
    TerminatorScan,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
    hold_point,
    json_string_body,
    new_call_id,
)
from ...tools import PreparedTools
from ..reply_values import JSON_TOO_DEEP, TOO_MANY_DIGITS, digits_note, read_json

if TYPE_CHECKING:
    from ...guard import ControlTokenGuard

__all__ = ["HarmonyFormat", "HarmonyReplyParser", "UnsupportedContentError", "parse_header", "render_harmony"]


class UnsupportedContentError(InvalidInputError):
    """A content part the format cannot render (the Harmony template is text-only: images, videos).

    ``path`` names the part, e.g. ``messages[2].content[1]``.
    """


# ---------------------------------------------------------------------------------------------------
# Fixed text of the template.

_SYSTEM_START = "<|start|>system<|message|>"
_DATE = "\nCurrent date: "
_PYTHON_TOOL = (
    "\n# Tools\n## python\n"
    "Use this tool to execute Python code in your chain of thought. The code will not be shown to the "
    "user. This tool should be used for internal reasoning, but not for code that is intended to be "
    "visible to the user (e.g. plots/tables/files).\n"
    "When you send a message containing Python code to python, it will be executed in a stateful "
    "Jupyter notebook environment and respond with its output. Internet access may be unavailable."
)
_SYSTEM_END = (
    "\n# Valid channels: analysis, commentary, final. Channel must be included for every message.\n<|end|>"
)
_USER = "<|start|>user<|message|>"
_ANALYSIS = "<|start|>assistant<|channel|>analysis<|message|>"
_FINAL = "<|start|>assistant<|channel|>final<|message|>"
_PYTHON_RESULT = "<|start|>python to=assistant<|message|>"
_END = "<|end|>"
_GENERATION = "<|start|>assistant"


# ---------------------------------------------------------------------------------------------------
# Options.

_OPTION_SPECS = (
    Option("current_date", frozenset({"string", "null"}),
           "datetime.date or 'YYYY-MM-DD' string for 'Current date:' (default: today, local time)"),
    Option("think", frozenset({"boolean", "null", "string"}),
           "Ollama's think value: None (unset), True, False, 'low', 'medium', 'high' or 'max'"),
    Option("reasoning_effort", frozenset({"string", "null"}),
           "OpenAI's reasoning effort: 'none', 'minimal', 'low', 'medium', 'high' or 'xhigh'"),
)
_OPTIONS = describe(_OPTION_SPECS)

_OPTION_NAMES = frozenset(_OPTIONS)

ThinkValue = bool | Literal["low", "medium", "high", "max"] | None


def _ollama_think(value: ThinkValue) -> tuple[bool, str, bool]:
    """``(Think, ThinkLevel, IsThinkSet)`` as Ollama derives them from a think value for gpt-oss."""
    if value is None:
        return False, "", False
    if value is True:
        return True, "medium", True
    if value is False:
        return False, "", True
    return True, "high" if value == "max" else value, True


def _reasoning_line(think: bool, level: str, is_set: bool) -> str:
    """The template's reasoning-level branch, transcribed."""
    if is_set and think and level != "":
        return "\nReasoning: " + level
    if not is_set or (is_set and think):
        return "\nReasoning: medium"
    return ""


_THINK_VALUES: tuple[ThinkValue, ...] = (None, True, False, "low", "medium", "high", "max")
#: think value -> the header's reasoning line. Keys are checked by type first (True == 1 in a dict).
_REASONING_LINE: dict[ThinkValue, str] = {v: _reasoning_line(*_ollama_think(v)) for v in _THINK_VALUES}
#: OpenAI reasoning_effort -> the equivalent Ollama think value.
_EFFORT_TO_THINK: dict[str, ThinkValue] = {
    "none": False,
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
}


def _reasoning_line_for(think: Any, effort: Any) -> str:
    if effort is not None:
        if think is not None:
            raise FormatError("harmony: pass either think or reasoning_effort, not both")
        if not isinstance(effort, str) or effort not in _EFFORT_TO_THINK:
            raise InvalidInputError(
                "reasoning_effort",
                "expected null or one of 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', "
                f"got {_shown(effort)}",
            )
        return _REASONING_LINE[_EFFORT_TO_THINK[effort]]
    if think is None or type(think) is bool or (isinstance(think, str) and think in _REASONING_LINE):
        return _REASONING_LINE[think]
    raise InvalidInputError(
        "think", f"expected null, a bool or one of 'low', 'medium', 'high', 'max', got {_shown(think)}"
    )


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else type_name(value)


_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


@functools.lru_cache(maxsize=256)
def _date_from_string(value: str) -> str:
    if _DATE_RE.fullmatch(value):
        try:
            datetime.date.fromisoformat(value)
        except ValueError:
            pass
        else:
            return value
    raise InvalidInputError("current_date", f"expected a 'YYYY-MM-DD' date, got {value!r}")


#: (today's local date as text, the time.time() at which it stops being today)
_today: tuple[str, float] = ("", 0.0)


def _today_text() -> str:
    """Today's local date as ``YYYY-MM-DD`` (Go's ``time.Now().Format("2006-01-02")``), cached until midnight."""
    global _today
    text, until = _today
    if time.time() < until:
        return text
    today = datetime.date.today()
    midnight = datetime.datetime.combine(today + datetime.timedelta(days=1), datetime.time())
    text = f"{today.year:04d}-{today.month:02d}-{today.day:02d}"
    _today = (text, midnight.timestamp())
    return text


def _date_text(value: Any) -> str:
    """The ``currentDate`` text: Go's ``Format("2006-01-02")`` of the given or today's local date."""
    if value is None:
        return _today_text()
    if isinstance(value, str):
        return _date_from_string(value)
    if isinstance(value, datetime.date):  # a datetime is a date too: its calendar date is used
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    raise InvalidInputError(
        "current_date", f"expected a datetime.date or a 'YYYY-MM-DD' string, got {type_name(value)}"
    )


# ---------------------------------------------------------------------------------------------------
# Tools: only whether one is named "python" matters.


def _tool_name(tool: Any, index: int) -> Any:
    if not isinstance(tool, Mapping):
        raise InvalidInputError(f"tools[{index}]", f"expected a tool object, got {type_name(tool)}")
    return named_function(tool, f"tools[{index}]")[2]


def _offers_python(tools: Iterable[Any]) -> bool:
    found = False
    for i, tool in enumerate(tools):
        # Fast path for the usual {"type": "function", "function": {"name": ...}} dict.
        function = tool.get("function") if type(tool) is dict else None
        name = function.get("name") if type(function) is dict else None
        if type(name) is not str:
            name = _tool_name(tool, i)
        if name == "python":
            found = True
    return found


def _tools_text(tools: Tools) -> str:
    """The header's tools text: the python block if a tool named ``python`` is offered, else ``""``.

    Every tool's name is checked (``tools[i].function.name: expected a string``); a
    :class:`PreparedTools` is checked once and the answer cached on it.
    """
    if not tools:
        return ""
    if type(tools) is list or type(tools) is tuple:
        offers = _offers_python(tools)
    elif isinstance(tools, PreparedTools):
        offers = tools.cached("harmony.offers_python", _offers_python)
    elif isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        raise InvalidInputError("tools", f"expected a list of tool objects, got {type_name(tools)}")
    else:
        offers = _offers_python(tools)
    return _PYTHON_TOOL if offers else ""


# ---------------------------------------------------------------------------------------------------
# Messages.


def _parts_text(parts: Iterable[Any], index: int) -> str:
    texts = []
    for j, part in enumerate(parts):
        if isinstance(part, Mapping):
            if "image" in part or "image_url" in part or part.get("type") == "image":
                kind = "image"
            elif "video" in part or part.get("type") == "video":
                kind = "video"
            elif "text" in part:
                text = part["text"]
                if not isinstance(text, str):
                    raise InvalidInputError(
                        f"messages[{index}].content[{j}].text", f"expected a string, got {type_name(text)}"
                    )
                texts.append(text)
                continue
            else:
                raise InvalidInputError(
                    f"messages[{index}].content[{j}]", f"unknown content part type {part.get('type')!r}"
                )
        elif isinstance(part, TextPart):
            if not isinstance(part.text, str):
                raise InvalidInputError(
                    f"messages[{index}].content[{j}].text", f"expected a string, got {type_name(part.text)}"
                )
            texts.append(part.text)
            continue
        elif isinstance(part, ImagePart):
            kind = "image"
        elif isinstance(part, VideoPart):
            kind = "video"
        else:
            raise InvalidInputError(
                f"messages[{index}].content[{j}]", f"expected a content part object, got {type_name(part)}"
            )
        raise UnsupportedContentError(
            f"messages[{index}].content[{j}]", f"{kind} parts are not supported by the harmony format (text only)"
        )
    return "\n\n".join(texts)


def _content_text(content: Any, index: int) -> str:
    if content is None:
        return ""
    if isinstance(content, (list, tuple)):
        return _parts_text(content, index)
    raise InvalidInputError(
        f"messages[{index}].content", f"expected a string, a list of parts or null, got {type_name(content)}"
    )


def _optional_text(value: Any, index: int, key: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InvalidInputError(f"messages[{index}].{key}", f"expected a string, got {type_name(value)}")


def _fields(message: Any, index: int) -> tuple[str, str, str | None, str | None]:
    """``(role, content, thinking, tool_name)`` of one message, validated; ``developer`` -> ``system``.

    Reasoning is read (and validated) only on assistant messages and the tool name only on tool
    messages: the template reads them nowhere else. Absent ones are ``None``.
    """
    if isinstance(message, Mapping):
        role = message.get("role")
        if not isinstance(role, str):
            raise InvalidInputError(f"messages[{index}].role", f"expected a string, got {type_name(role)}")
        content = message.get("content")
        thinking = name = None
        if role == "assistant":
            for key in REASONING_FIELDS:
                thinking = message.get(key)
                if thinking is not None:
                    thinking = _optional_text(thinking, index, key)
                    break
        elif role == "tool":
            for key in ("tool_name", "name"):
                name = message.get(key)
                if name is not None:
                    name = _optional_text(name, index, key)
                    break
    elif isinstance(message, Message):
        role = message.role
        if not isinstance(role, str):
            raise InvalidInputError(f"messages[{index}].role", f"expected a string, got {type_name(role)}")
        content = message.content
        thinking = _optional_text(message.reasoning, index, "reasoning") if role == "assistant" else None
        name = _optional_text(message.name, index, "name") if role == "tool" else None
    else:
        raise InvalidInputError(f"messages[{index}]", f"expected a message object, got {type_name(message)}")
    if not isinstance(content, str):
        content = _content_text(content, index)
    if role == "developer":
        role = "system"
    return role, content, thinking, name


def _tool_call_id(message: Any, index: int) -> str | None:
    value = message.tool_call_id if isinstance(message, Message) else message.get("tool_call_id")
    return _optional_text(value, index, "tool_call_id")


def _call_names(messages: Sequence[Any]) -> dict[str, str]:
    """tool call id -> tool name, as Ollama's ``nameFromToolCallID`` finds it.

    Ollama searches the messages from the last to the first and, within one message, its tool
    calls in order; the first call with the id wins. Malformed calls are skipped (the template never
    reads tool calls; they serve only to name a tool result).
    """
    names: dict[str, str] = {}
    for message in reversed(messages):
        if isinstance(message, Message):
            for call in message.tool_calls:
                if call.id is not None:
                    names.setdefault(call.id, call.name)
            continue
        calls = message.get("tool_calls") if isinstance(message, Mapping) else None
        if not isinstance(calls, (list, tuple)):
            continue
        for call in calls:
            if not isinstance(call, Mapping):
                continue
            call_id = call.get("id")
            if not isinstance(call_id, str) or call_id in names:
                continue
            function = call.get("function", call)
            name = function.get("name") if isinstance(function, Mapping) else None
            names[call_id] = name if isinstance(name, str) else ""
    return names


def render_harmony(messages: Conversation, tools: Tools, date: str, reasoning_line: str) -> str:
    """Render ``messages`` as Ollama's Harmony template does, given the header's date and reasoning line.

    ``date`` is the ``Current date:`` text and ``reasoning_line`` the header's ``"\\nReasoning: …"``
    line (or ``""``); everything else follows the module docstring. Raises
    :class:`~prompt_formats.errors.InvalidInputError` (or its subclass
    :class:`UnsupportedContentError`) naming the offending field for malformed input.
    """
    if (type(messages) is not list and type(messages) is not tuple) and (
        isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence)
    ):
        raise InvalidInputError("messages", f"expected a list of messages, got {type_name(messages)}")
    tools_text = _tools_text(tools) if tools else ""

    # Ollama's collate: one entry per run of same-role messages (each tool message its own entry);
    # the run's first message keeps its reasoning and tool name, the contents are joined.
    system: list[str] = []
    entries: list[tuple[str, str, str | None, str | None]] = []
    last_user = -1
    previous = None
    unresolved: list[tuple[int, str]] = []  # (entry, tool_call_id) of tool results given no name
    role: Any
    content: Any
    thinking: Any
    name: Any
    for index, message in enumerate(messages):
        # Fast path for the common, well-formed dict; anything else goes through _fields.
        if type(message) is dict:
            role = message.get("role")
            content = message.get("content")
            thinking = name = None
            if role == "assistant":
                thinking = message.get("reasoning_content")
                if thinking is None:
                    thinking = message.get("thinking")
                    if thinking is None:
                        thinking = message.get("reasoning")
                ok = type(content) is str and (thinking is None or type(thinking) is str)
            elif role == "tool":
                name = message.get("tool_name")
                if name is None:
                    name = message.get("name")
                ok = type(content) is str and (name is None or type(name) is str)
            else:
                ok = type(content) is str and type(role) is str and role != "developer"
            if not ok:
                role, content, thinking, name = _fields(message, index)
        else:
            role, content, thinking, name = _fields(message, index)
        if role == "system":
            system.append(content)
        if role == previous and role != "tool":
            first = entries[-1]
            entries[-1] = (role, first[1] + "\n\n" + content, first[2], first[3])
            continue
        if role == "user":
            last_user = len(entries)
        elif role == "tool" and not name:
            call_id = _tool_call_id(message, index)
            if call_id:
                unresolved.append((len(entries), call_id))
        entries.append((role, content, thinking, name))
        previous = role
    if unresolved:
        names = _call_names(messages)
        for position, call_id in unresolved:
            role, content, thinking, name = entries[position]
            entries[position] = (role, content, thinking, names.get(call_id, name))

    prefill_content = prefill_thinking = False
    if entries and previous == "assistant":
        if entries[-1][1]:
            prefill_content = True
        elif entries[-1][2]:
            prefill_thinking = True
    final_end = "" if prefill_content else _END
    analysis_end = "" if prefill_thinking else _END

    out = [_SYSTEM_START, "\n\n".join(system), _DATE, date, reasoning_line, tools_text, _SYSTEM_END]
    append = out.append
    for index, (role, content, thinking, name) in enumerate(entries):
        if role == "user":
            append(_USER)
            append(content)
            append(_END)
        elif role == "assistant":
            if thinking and index > last_user:
                append(_ANALYSIS)
                append(thinking)
                append(analysis_end)
            if content:
                append(_FINAL)
                append(content)
                append(final_end)
        elif role == "tool" and name == "python":
            append(_PYTHON_RESULT)
            append(content)
            append(_END)
    if not (prefill_content or prefill_thinking):
        append(_GENERATION)
    return "".join(out)


def _check_generation_prompt(add_generation_prompt: Any) -> None:
    if add_generation_prompt is None or add_generation_prompt is True:
        return
    if add_generation_prompt is False:
        raise FormatError(
            "harmony: add_generation_prompt=False is not supported: the template always ends with "
            "'<|start|>assistant' (except after an assistant prefill); pass True or leave it out"
        )
    raise InvalidInputError("add_generation_prompt", f"expected a bool or null, got {type_name(add_generation_prompt)}")


class HarmonyFormat(ChatFormat):
    """gpt-oss Harmony, byte-identical to Ollama's Go template (see the module docstring).

    Options: ``current_date`` (``datetime.date`` or ``"YYYY-MM-DD"``; default today's local date),
    ``think`` (Ollama's think value) or ``reasoning_effort`` (OpenAI's; not both).

    ``add_generation_prompt``: the template has no such switch; it always ends with the generation
    header ``<|start|>assistant`` unless the last message is an assistant prefill, in which case the
    prompt ends inside that message so the model continues it. ``None`` (the default) and ``True``
    render that; ``False`` raises :class:`~prompt_formats.errors.FormatError` rather than render
    something the template never produces.
    """

    name = "harmony"
    summary = "OpenAI gpt-oss Harmony as Ollama's Go template renders it"
    option_specs = _OPTION_SPECS
    options = _OPTIONS

    def __init__(self, guard: ControlTokenGuard | None = None) -> None:
        # An optional control-token guard (e.g. ControlTokenGuard(HARMONY_CONTROL_TOKENS)) applied to
        # the messages before rendering; off by default, so the output is exactly the template's.
        self.guard = checked_guard(guard)

    parse_option_specs = (
        Option("prefill", frozenset({"string", "null"}),
               "None, or 'analysis'/'final'/'commentary' when the prompt ended inside such a message"),
        *(Option(spec.name, spec.kinds, "accepted so render's options can be passed as they are; no effect on parsing")
          for spec in _OPTION_SPECS),
    )
    parse_options: ClassVar[Mapping[str, str]] = describe(parse_option_specs)

    def stream_parser(
        self,
        tools: Tools = None,
        *,
        id_factory: Callable[[], str] | None = None,
        **context: Any,
    ) -> HarmonyReplyParser:
        """A new :class:`HarmonyReplyParser` for one completion (the text after ``<|start|>assistant``).

        ``context``: ``prefill`` (see :attr:`parse_options`) and ``render``'s options (no effect);
        ``tools`` are accepted for symmetry (Harmony names its recipients, so nothing depends on
        them); ``id_factory`` makes the call ids (default ``call_`` + 24 random hex digits).
        Rules: the "Reply parser" section of :mod:`prompt_formats.formats.harmony`.

        Its events, concatenated over any split of the completion into deltas, assemble to exactly
        ``parse(completion)`` (with the same ``id_factory`` sequence).
        """
        prefill = None
        if context:
            self.check_options(context, self.parse_options)
            prefill = context.get("prefill")
            if prefill is not None and prefill not in _PREFILLS:
                raise InvalidInputError(
                    "prefill", f"expected null, 'analysis', 'final' or 'commentary', got {_shown(prefill)}"
                )
        return HarmonyReplyParser(prefill, id_factory)

    def render(
        self,
        messages: Conversation,
        tools: Tools = None,
        add_generation_prompt: bool | None = None,
        **options: Any,
    ) -> str:
        """Render one conversation to exactly the bytes Ollama's Harmony template produces.

        Raises a :class:`~prompt_formats.errors.FormatError` subclass for invalid input or options:
        :class:`~prompt_formats.errors.InvalidInputError` naming the field
        (``messages[3].content: expected a string, a list of parts or null, got int``),
        :class:`UnsupportedContentError` for image or video parts,
        :class:`~prompt_formats.errors.UnknownOptionError` for an option not in :attr:`options`.
        """
        if add_generation_prompt is not None and add_generation_prompt is not True:
            _check_generation_prompt(add_generation_prompt)
        if options:
            if not _OPTION_NAMES.issuperset(options):
                self.check_options(options)
            date = _date_text(options.get("current_date"))
            think = options.get("think")
            effort = options.get("reasoning_effort")
            if effort is None and (type(think) is bool or think is None):
                reasoning_line = _REASONING_LINE[think]
            else:
                reasoning_line = _reasoning_line_for(think, effort)
        else:
            date = _today_text()
            reasoning_line = _REASONING_LINE[None]
        if self.guard is not None:
            # Harmony joins text parts with a blank line and never renders tool calls.
            messages = self.guard.guard_messages(messages, join_parts=False, tool_calls=False)
        return render_harmony(messages, tools, date, reasoning_line)

    def render_batch(
        self,
        conversations: Iterable[Conversation],
        tools: Tools = None,
        add_generation_prompt: bool | None = None,
        **kwargs: Any,
    ) -> list[str | FormatError]:
        """Render many conversations with the same tools and options, as :meth:`ChatFormat.render_batch`.

        ``add_generation_prompt`` is read as in :meth:`render` (``None`` or ``True``; ``False`` raises);
        every other keyword (``errors``, the options, ...) goes to :meth:`ChatFormat.render_batch`.
        """
        _check_generation_prompt(add_generation_prompt)
        return super().render_batch(conversations, tools, True, **kwargs)


# ===================================================================================================
# Reply parser (parse / stream_parser): the completion after ``<|start|>assistant`` into reasoning,
# content and tool calls.
#
# Grammar, as gpt-oss writes it: one or more messages, each ``HEADER<|message|>BODY`` ended by
# ``<|end|>``, ``<|call|>`` or ``<|return|>`` (or by the end of the completion); later messages start
# with ``<|start|>`` and the role. The header is ``<|channel|>CHANNEL``, `` to=RECIPIENT`` and a content
# type (``<|constrain|>TYPE`` or a bare word), in any order, spaces optional before the markers.
#
# - a message with a recipient is a tool call, on any channel: ``functions.NAME`` -> ``NAME`` with the
#   body as JSON arguments (a body that is not a JSON object is kept as the raw string and noted: as
#   "cut off" when the completion ended inside it, since a complete object without its ``<|call|>``
#   is a whole call whose stop token the server stripped);
#   ``python`` -> ``python`` with ``{"code": BODY}``; any other recipient -> that name, JSON arguments;
# - ``analysis`` -> reasoning; ``final`` and ``commentary`` -> content;
# - the texts of several messages bound for the same field are joined with a blank line (``"\n\n"``);
#   bodies are kept exactly (no stripping);
# - malformed structure (a header without ``<|message|>``, a role other than ``assistant``, no or an
#   unknown channel, repeated header fields, text between messages) goes to the content as written,
#   with a note in ``reply.malformed``;
# - ``<|start|>`` and the other markers inside a body are body text: only an end marker ends a message.
#
# Context: ``prefill="analysis"`` / ``"final"`` / ``"commentary"`` when the prompt ended inside such a
# message (the template's prefill), so the completion continues its body; ``render``'s options are
# accepted and have no effect.

_MESSAGE = Terminator.marker("<|message|>")
_END_MARKERS = tuple(Terminator.marker(m) for m in ("<|end|>", "<|call|>", "<|return|>"))
_HEADER_ENDS = (_MESSAGE, *_END_MARKERS)
_MESSAGE_STARTS = (Terminator.marker("<|start|>"), Terminator.marker("<|channel|>"))

_CHANNEL_KINDS = {"analysis": "reasoning", "final": "content", "commentary": "content"}
_PREFILLS = ("analysis", "final", "commentary")

# Parser states and message kinds.
_HEADER, _BODY, _BETWEEN = range(3)
_TO_REASONING, _TO_CONTENT, _TO_JSON_CALL, _TO_PYTHON_CALL = range(4)


class _Header:
    """What a message header says: its kind and, for a tool call, the tool's name; or why it is malformed."""

    __slots__ = ("kind", "name", "problem")

    def __init__(self, kind: int = _TO_CONTENT, name: str = "", problem: str = "") -> None:
        self.kind = kind
        self.name = name
        self.problem = problem


def parse_header(text: str, with_role: bool) -> _Header:
    """Read a message header (the text before ``<|message|>``; ``with_role`` when it came after ``<|start|>``)."""
    words = text.replace("<|channel|>", " <|channel|>").replace("<|constrain|>", " <|constrain|>").split()
    if with_role:
        role = words.pop(0) if words else ""
        if role != "assistant":
            return _Header(problem=f"message from role {role!r}, not 'assistant'")
    channel = recipient = content_type = None
    for word in words:
        if word.startswith("<|channel|>"):
            if channel is not None:
                return _Header(problem="message header with two channels")
            channel = word[len("<|channel|>"):]
        elif word.startswith("to="):
            if recipient is not None:
                return _Header(problem="message header with two recipients")
            recipient = word[3:]
        else:
            if content_type is not None:
                return _Header(problem=f"message header with unexpected text {word!r}")
            content_type = word
    if recipient is not None:
        if recipient == "python":
            return _Header(_TO_PYTHON_CALL, "python")
        name = recipient[len("functions."):] if recipient.startswith("functions.") else recipient
        if not name:
            return _Header(problem=f"tool call to an empty name ({recipient!r})")
        return _Header(_TO_JSON_CALL, name)
    if channel is None:
        return _Header(problem="message without a channel")
    kind = _CHANNEL_KINDS.get(channel)
    if kind is None:
        return _Header(problem=f"message on unknown channel {channel!r}")
    return _Header(_TO_REASONING if kind == "reasoning" else _TO_CONTENT)


class HarmonyReplyParser(StreamParser):
    """Streaming parser of a gpt-oss Harmony completion (rules at the top of this section).

    Made by :meth:`HarmonyFormat.stream_parser`; per stream, picklable between feeds when its
    ``id_factory`` is.
    """

    __slots__ = (
        "_body",
        "_call_id",
        "_call_index",
        "_call_name",
        "_calls",
        "_has_content",
        "_has_reasoning",
        "_header",
        "_id_factory",
        "_kind",
        "_segment_open",
        "_state",
        "_stray",
        "_stray_started",
    )

    def __init__(self, prefill: str | None = None, id_factory: Callable[[], str] | None = None) -> None:
        super().__init__()
        self._id_factory = id_factory or new_call_id
        self._header: list[str] = []
        self._body: list[str] = []
        self._stray: list[str] = []
        self._stray_started = False
        self._has_reasoning = False
        self._has_content = False
        self._segment_open = False
        self._calls = 0
        self._call_index = -1
        self._call_id = ""
        self._call_name = ""
        self._kind = _TO_CONTENT
        if prefill is None:
            self._state = _HEADER
        else:
            self._start_body(_TO_REASONING if prefill == "analysis" else _TO_CONTENT)

    # Text routing. --------------------------------------------------------------------------------

    def _reasoning_text(self, text: str) -> None:
        if not self._segment_open:
            self._segment_open = True
            if self._has_reasoning:
                text = "\n\n" + text
            self._has_reasoning = True
        self._out.append(ReasoningDelta(text))

    def _content_text(self, text: str) -> None:
        if not self._segment_open:
            self._segment_open = True
            if self._has_content:
                text = "\n\n" + text
            self._has_content = True
        self._out.append(ContentDelta(text))

    def _json_call_text(self, text: str) -> None:
        self._body.append(text)
        self._out.append(ToolCallArgumentsDelta(self._call_index, text))

    def _python_call_text(self, text: str) -> None:
        self._body.append(text)
        self._out.append(ToolCallArgumentsDelta(self._call_index, json_string_body(text)))

    def _start_body(self, kind: int, name: str = "") -> None:
        self._state = _BODY
        self._kind = kind
        self._segment_open = False
        if kind == _TO_REASONING:
            self._text = self._reasoning_text
        elif kind == _TO_CONTENT:
            self._text = self._content_text
        else:
            index = self._call_index = self._calls
            self._calls += 1
            self._body = []
            self._call_id = self._id_factory()
            self._call_name = name
            self._out.append(ToolCallStart(index, self._call_id, name))
            if kind == _TO_PYTHON_CALL:
                self._out.append(ToolCallArgumentsDelta(index, '{"code": "'))
                self._text = self._python_call_text
            else:
                self._text = self._json_call_text

    def _end_body(self, cut_off: bool = False) -> None:
        """The message ends: at an end marker, or at the end of the completion (``cut_off``)."""
        kind = self._kind
        if kind in (_TO_JSON_CALL, _TO_PYTHON_CALL):
            index = self._call_index
            body = "".join(self._body)
            self._body = []
            arguments: Mapping[str, Any] | str
            if kind == _TO_PYTHON_CALL:
                self._out.append(ToolCallArgumentsDelta(index, '"}'))
                arguments = {"code": body}
            else:
                value, problem = read_json(body)
                if isinstance(value, dict):
                    arguments = value
                else:
                    arguments = body
                    self._out.append(Malformed(self._raw_arguments_note(index, problem, cut_off)))
            call = ToolCall(self._call_name, arguments, self._call_id)
            self._out.append(ToolCallEnd(index, call))
        self._state = _BETWEEN
        self._text = None

    def _raw_arguments_note(self, index: int, problem: str | None, cut_off: bool) -> str:
        label = f"tool call {index} ({self._call_name})"
        if problem == TOO_MANY_DIGITS:
            return f"{label}: arguments have {digits_note()}, kept raw"
        if problem == JSON_TOO_DEEP:
            return f"{label}: arguments nested too deeply to read, kept raw"
        if cut_off:
            # An end marker may have been stripped as the stop token, so only arguments that are not a
            # whole JSON object tell that the completion ended inside the call.
            return f"{label} cut off by the end of the completion: kept with the arguments written so far"
        return f"{label}: arguments are not a JSON object, kept raw"

    def _malformed_text(self, text: str, note: str) -> None:
        """Structure that is not well formed: its text joins the content as one piece, with a note."""
        self._segment_open = False
        if text:
            self._content_text(text)
        self._segment_open = False
        self._out.append(Malformed(note))

    # The machine. ---------------------------------------------------------------------------------

    def _advance(self, buf: str, final: bool) -> int:
        pos = 0
        end = len(buf)
        scan: TerminatorScan | None = None
        while True:
            if scan is None:
                scan = TerminatorScan(buf)
            state = self._state
            if state == _BODY:
                at, term, _ = scan.next(pos, _END_MARKERS)
                if at < 0:
                    stop = end if final else hold_point(buf, pos, _END_MARKERS)
                    if stop > pos:
                        self._text(buf[pos:stop])  # type: ignore[misc]
                    if final:
                        self._end_body(cut_off=True)
                    return stop
                if at > pos:
                    self._text(buf[pos:at])  # type: ignore[misc]
                pos = at + len(term.literal)  # type: ignore[union-attr]
                self._end_body()
            elif state == _HEADER:
                at, term, _ = scan.next(pos, _HEADER_ENDS)
                if at < 0:
                    stop = end if final else hold_point(buf, pos, _HEADER_ENDS)
                    if stop > pos:
                        self._header.append(buf[pos:stop])
                    if final:
                        raw = "".join(self._header)
                        self._header = []
                        if raw.strip():
                            self._malformed_text(raw, "message header not followed by '<|message|>': kept as text")
                    return stop
                if at > pos:
                    self._header.append(buf[pos:at])
                pos = at + len(term.literal)  # type: ignore[union-attr]
                raw = "".join(self._header)
                self._header = []
                if term is _MESSAGE:
                    self._open_message(raw)
                else:
                    if raw.strip():
                        self._malformed_text(raw, "message header not followed by '<|message|>': kept as text")
                    self._state = _BETWEEN
            else:  # _BETWEEN
                at, term, _ = scan.next(pos, _MESSAGE_STARTS)
                stop = at if at >= 0 else end if final else hold_point(buf, pos, _MESSAGE_STARTS)
                if stop > pos:
                    self._stray_text(buf[pos:stop])
                if at < 0:
                    if final:
                        self._end_stray()
                    return stop
                self._end_stray()
                self._header = [term.literal]  # type: ignore[union-attr]
                pos = at + len(term.literal)  # type: ignore[union-attr]
                self._state = _HEADER

    def _open_message(self, raw: str) -> None:
        """``raw`` (the header, from ``<|start|>`` if it had one) was ended by ``<|message|>``."""
        cut = raw.rfind("<|start|>")
        if cut >= 0:
            abandoned = raw[:cut]
            raw = raw[cut:]
            if abandoned:
                self._malformed_text(abandoned, "message header not followed by '<|message|>': kept as text")
            header = parse_header(raw[len("<|start|>"):], True)
        else:
            header = parse_header(raw, False)
        if header.problem:
            self._malformed_text(raw + "<|message|>", header.problem + ": kept as text")
            # The body follows the malformed header into the content, as one piece with it.
            self._start_body(_TO_CONTENT)
            self._segment_open = True
        else:
            self._start_body(header.kind, header.name)

    def _stray_text(self, text: str) -> None:
        if not self._stray_started:
            if text.isspace():
                self._stray.append(text)
                return
            self._stray_started = True
            self._segment_open = False
            if self._stray:
                text = "".join(self._stray) + text
                self._stray = []
        self._content_text(text)

    def _end_stray(self) -> None:
        if self._stray_started:
            self._out.append(Malformed("text between messages: kept as content"))
        self._segment_open = False
        self._stray_started = False
        self._stray = []
