"""The walk of DeepSeek-V3's template (``tests/fixtures/families/deepseekv3.jinja``), in its order:

1. the ``bos_token``, then the text of every system message, wherever it is, joined by a blank line;
2. each message in turn: a user's text after ``<｜User｜>``; an assistant's tool calls, each
   ``TYPE<｜tool▁sep｜>NAME`` and its arguments (a string, written as it is) in a json code block,
   then ``<｜tool▁calls▁end｜><｜end▁of▁sentence｜>`` — the first such message of the conversation
   opens with ``<｜Assistant｜>`` and its content, every later one with a newline alone (its content
   is not written: the template's flag is never reset); an assistant's text after
   ``<｜Assistant｜>``, only what follows its last ``</think>`` — or, right after tool results, after
   ``<｜tool▁outputs▁end｜>`` and whole; a tool result inside ``<｜tool▁output▁begin｜>`` …, the
   conversation's first one also opening ``<｜tool▁outputs▁begin｜>``; any other role, nothing;
3. ``<｜tool▁outputs▁end｜>`` if the last message is a tool result, else (with
   ``add_generation_prompt``) the generation prompt ``<｜Assistant｜><think>\\n``.

Every text is joined to text, so the engine fails (:class:`~prompt_formats.errors.InvalidInputError`
naming the field) on a content, a call's type, name or arguments that is no string — a ``None``
content too, which transformers leaves out, and dict arguments. Tools are never written.
"""

from __future__ import annotations

from typing import Any

from ...errors import InvalidInputError, type_name
from ...model.messages import message_dicts, role_of
from ...model.reading import template_iterated
from .tokens import (
    ARGUMENTS_CLOSE,
    ARGUMENTS_OPEN,
    ASSISTANT,
    CALL_BEGIN,
    CALLS_BEGIN,
    CALLS_TURN_END,
    EOS,
    GENERATION,
    OUTPUT_BEGIN,
    OUTPUT_END,
    OUTPUTS_BEGIN,
    OUTPUTS_END,
    SEP,
    SYSTEM_JOIN,
    THINK_CLOSE,
    USER,
)

__all__ = [
    "CONTENT_LEFT_OUT", "SPLIT", "UNWRITTEN", "WHOLE", "Note", "Walk", "message_dicts", "role_of", "turns", "walk",
]

#: Where the walk wrote a message's text: ``(message index, piece, offset in it, size)``.
Note = tuple[int, int, int, int]
#: What the walk wrote of a message (``Walk.how``): nothing (its role is none the template writes);
#: all it writes; its content after the last ``</think>``; its calls without its content.
UNWRITTEN, WHOLE, SPLIT, CONTENT_LEFT_OUT = 0, 1, 2, 3


def _text(value: Any, i: int, field: str = "content") -> str:
    """A value the template joins to text (``messages[i].<field>``): a string, else the engine fails.
    (The path is spelt only for the error: building it for every text cost a tenth of a render.)"""
    if type(value) is str:
        return value
    raise _not_text(value, f"messages[{i}].{field}")


def _not_text(value: Any, path: str) -> InvalidInputError:
    problem = "missing" if value is None else f"expected a string, got {type_name(value)}"
    return InvalidInputError(path, f"{problem}: the template joins it to text")


class Walk:
    """One walk of the template over a conversation: the pieces it writes, and (for spans) its notes
    and what it wrote of each message. Per call; not shared."""

    __slots__ = ("how", "is_output_first", "is_tool", "notes", "opened_calls", "out")

    def __init__(self, out: list[str], noted: bool = False) -> None:
        self.out = out
        self.notes: list[Note] | None = [] if noted else None
        self.how: list[int] | None = [] if noted else None
        self.opened_calls = False  # the template's ns.is_first: a turn of calls opened with its content
        self.is_tool = False  # the last message written was a tool result
        self.is_output_first = True

    def tail(self, generation: Any) -> str:
        """What ends the prompt: the tool results' end, else the generation prompt (if asked)."""
        return OUTPUTS_END if self.is_tool else GENERATION if generation else ""

    def system(self, msgs: list[dict[str, Any]], roles: list[Any]) -> None:
        """The system messages' texts, gathered (the piece after the ``bos_token``)."""
        texts = [_text(msgs[i].get("content"), i) for i, role in enumerate(roles) if role == "system"]
        if self.notes is not None:
            at = 0
            for i in (i for i, role in enumerate(roles) if role == "system"):
                size = len(msgs[i]["content"])
                if size:
                    self.notes.append((i, len(self.out), at, size))
                at += size + len(SYSTEM_JOIN)
        self.out.append(SYSTEM_JOIN.join(texts))

    def message(self, message: dict[str, Any], role: Any, i: int) -> None:
        """One message, as the template writes it."""
        if role == "user":
            self.is_tool = False
            content = message.get("content")
            if self.notes is None and type(content) is str:  # the usual user turn, without the calls
                self.out += (USER, content)
                return
            self.out.append(USER)
            self._noted(i, _text(content, i), WHOLE)
        elif role == "assistant" and message.get("tool_calls") is not None:  # (a None key is left out)
            self.is_tool = False
            self._calls(message, i)
        elif role == "assistant":
            self._assistant(message, i)
        elif role == "tool":
            self.is_tool = True
            self.out.append(OUTPUTS_BEGIN + OUTPUT_BEGIN if self.is_output_first else OUTPUT_BEGIN)
            self.is_output_first = False
            self._noted(i, _text(message.get("content"), i), WHOLE)
            self.out.append(OUTPUT_END)
        elif self.how is not None:
            self.how.append(UNWRITTEN if role != "system" else WHOLE)

    def _noted(self, i: int, text: str, how: int) -> None:
        if self.notes is not None:
            if text:
                self.notes.append((i, len(self.out), 0, len(text)))
            self.how.append(how)  # type: ignore[union-attr]
        self.out.append(text)

    def _assistant(self, message: dict[str, Any], i: int) -> None:
        content = _text(message.get("content"), i)
        if self.is_tool:
            self.is_tool = False
            self.out.append(OUTPUTS_END)
            self._noted(i, content + EOS, WHOLE)
            return
        how = WHOLE
        if THINK_CLOSE in content:
            content, how = content.rsplit(THINK_CLOSE, 1)[1], SPLIT
        self.out.append(ASSISTANT)
        self._noted(i, content + EOS, how)

    def _calls(self, message: dict[str, Any], i: int) -> None:
        calls = message["tool_calls"]
        if type(calls) is not list:
            calls = template_iterated(calls, f"messages[{i}].tool_calls", "a list of tool calls")
        pieces = []
        opened = False
        for k, call in enumerate(calls):
            if self.opened_calls:
                head = "\n" + CALL_BEGIN
            else:  # the conversation's first call: the turn opens with the message's content
                head = _text(message.get("content"), i) + CALLS_BEGIN + CALL_BEGIN
                opened = self.opened_calls = True
            pieces.append(head + _call_text(call, i, k))
        if opened:
            self.out.append(ASSISTANT)
        how = WHOLE if opened else CONTENT_LEFT_OUT  # (no call: the content is not read either)
        self._noted(i, "".join(pieces) + CALLS_TURN_END, how)


def walk(msgs: list[dict[str, Any]], bos: str, generation: Any, noted: bool = False) -> Walk:
    """The template's walk over ``msgs`` (the messages as dicts) after ``bos``; ``noted``: with the
    notes and what it wrote of each message (``render_spans``). The prompt is ``"".join(walk.out)``."""
    written = turns(msgs, bos, noted)
    written.out.append(written.tail(generation))
    return written


def turns(msgs: list[dict[str, Any]], bos: str, noted: bool = False) -> Walk:
    """:func:`walk` without its tail (what a session keeps)."""
    roles = [role if type(role := m.get("role")) is str else role_of(m, i) for i, m in enumerate(msgs)]
    written = Walk([bos], noted)
    written.system(msgs, roles)
    for i, message in enumerate(msgs):
        written.message(message, roles[i], i)
    return written


def _call_text(call: Any, i: int, k: int) -> str:
    """``TYPE<｜tool▁sep｜>NAME`` and the arguments' code block of call ``k`` of message ``i``."""
    function = call.get("function") if type(call) is dict else None
    kind = call.get("type") if type(call) is dict else None
    name = function.get("name") if type(function) is dict else None
    arguments = function.get("arguments") if type(function) is dict else None
    if type(kind) is not str or type(name) is not str or type(arguments) is not str:
        raise _call_refused(call, f"messages[{i}].tool_calls[{k}]")
    return kind + SEP + name + ARGUMENTS_OPEN + arguments + ARGUMENTS_CLOSE


def _call_refused(call: Any, path: str) -> InvalidInputError:
    """The engine's failure on a call whose type, name or arguments is no string: at the first."""
    if type(call) is not dict:
        problem = f"expected an object, got {type_name(call)}: the template joins its type to text"
        return InvalidInputError(path, problem)
    if type(call.get("type")) is not str:
        return _not_text(call.get("type"), f"{path}.type")
    function = call.get("function")
    if type(function) is not dict:
        return InvalidInputError(f"{path}.function", f"expected an object, got {type_name(function)}")
    key = "name" if type(function.get("name")) is not str else "arguments"
    return _not_text(function.get(key), f"{path}.function.{key}")
