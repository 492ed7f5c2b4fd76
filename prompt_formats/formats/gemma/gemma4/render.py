"""The walk of Gemma 4's template (``tests/fixtures/families/gemma4.jinja``), in its order:

1. the ``bos_token``; then, when thinking is on, tools are offered or the first message is a
   ``system`` or ``developer`` one, a system turn: ``<|think|>`` (thinking on), that message's text
   (a string trimmed; each item of a list as its ``text`` trimmed and a space), each tool's
   declaration in ``<|tool>…<tool|>`` (:mod:`.notation`);
2. every other message but a tool result, in turn: ``<|turn>ROLE`` (``assistant`` written ``model``;
   an assistant after an assistant, tool results between them aside, continues the same turn); its
   reasoning in ``<|channel>thought`` after the last user message (or in a message with calls under
   ``preserve_thinking``); its calls ``<|tool_call>call:NAME{…}<tool_call|>``; after calls, the tool
   results that follow it (its ``tool_responses`` instead, if it has them), each
   ``<|tool_response>response:NAME{…}<tool_response|>``; its content (an assistant's without the
   thought channels it holds, every text trimmed; media as ``<|image|>``, ``<|audio|>``,
   ``<|video|>``); then ``<|tool_response>`` after calls with no result, nothing where the next
   message continues the turn or the results end the conversation, else ``<turn|>``;
3. the generation prompt: ``<|turn>model`` unless the last message ended on calls or results (then
   ``<|channel>thought`` after results with thinking on).

A tool result that no assistant's calls precede is not written. Where the engine itself fails,
:class:`~prompt_formats.errors.InvalidInputError` names the field; arguments that are no object
are the template's own error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...._text.plain import of_json_type, require_plain
from ....errors import InvalidInputError, TemplateError, type_name
from ....format.chat_format import Tools
from ....model.messages import message_dicts, role_of
from ....model.reading import reasoning_of
from ....model.tools import PreparedTools, rendered_tools
from ..tokens import (
    ARGUMENTS_NOT_OBJECT,
    AUDIO_TOKEN,
    CALL_PREFIX,
    CHANNEL_CLOSE,
    CHANNEL_OPEN,
    IMAGE_TOKEN,
    MODEL,
    MODEL_PROMPT,
    THINK,
    THOUGHT_CLOSE,
    THOUGHT_OPEN,
    TOOL_CALL_CLOSE,
    TOOL_CLOSE,
    TOOL_OPEN,
    TOOL_RESPONSE_OPEN,
    TURN_CLOSE,
    TURN_CLOSED,
    TURN_OPEN,
    VIDEO_TOKEN,
)
from .notation import (
    UNDEFINED,
    argument,
    declaration,
    field,
    is_sequence,
    iterated,
    printed,
    response_block,
    sorted_items,
)

__all__ = ["Walk", "message_dicts", "strip_thinking", "tools_block", "walk"]

_IMAGE_KINDS = ("image", "image_url")
_AUDIO_KINDS = ("audio", "input_audio")


def strip_thinking(text: Any, path: str) -> str:
    """The template's ``strip_thinking``: the text without what each ``<|channel>`` opens up to its
    ``<channel|>``, trimmed."""
    if type(text) is not str:
        if text is not UNDEFINED and type(text) in (int, float, bool, list, dict, tuple, type(None)):
            raise InvalidInputError(path, f"expected a string, got {type_name(text)}: the template splits it")
        if text is UNDEFINED:
            raise InvalidInputError(path, "missing: the template splits it")
        require_plain(text, path)
    return "".join(part.split(CHANNEL_OPEN)[0] for part in text.split(CHANNEL_CLOSE)).strip()


def media(kind: Any) -> str:
    """What a part of this ``type`` writes besides its text: a media token, or nothing."""
    if kind in _IMAGE_KINDS:
        return IMAGE_TOKEN
    if kind in _AUDIO_KINDS:
        return AUDIO_TOKEN
    return VIDEO_TOKEN if kind == "video" else ""


def _get(part: Any, key: str, path: str) -> Any:
    """``part.get(key)``: the engine fails on a part that is no object."""
    if type(part) is not dict:
        require_plain(part, path)
        raise InvalidInputError(path, f"expected an object, got {type_name(part)}: the template calls its get")
    value = part.get(key)
    if type(value) not in (str, int, float, bool, type(None), list, dict):
        require_plain(value, f"{path}.{key}")
    return value


def call_text(call: Any, path: str) -> str:
    """One call, ``<|tool_call>call:NAME{…}<tool_call|>``."""
    function = field(call, "function", path)
    name = field(function, "name", f"{path}.function")
    if type(name) is not str:
        if name is not UNDEFINED:
            require_plain(name, f"{path}.function.name")
        problem = "missing" if name is UNDEFINED else f"expected a string, got {type_name(name)}"
        raise InvalidInputError(f"{path}.function.name", f"{problem}: the template joins it to text")
    arguments = field(function, "arguments", f"{path}.function")
    if type(arguments) is dict:
        body = ",".join(printed(key, f"{path}.function.arguments") + ":"
                        + argument(value, False, f"{path}.function.arguments")
                        for key, value in sorted_items(arguments, f"{path}.function.arguments"))
    elif arguments is None:
        body = ""
    else:
        if arguments is not UNDEFINED and type(arguments) not in (str, int, float, bool, list, tuple):
            require_plain(arguments, f"{path}.function.arguments")
        raise TemplateError(ARGUMENTS_NOT_OBJECT)
    return CALL_PREFIX + name + "{" + body + "}" + TOOL_CALL_CLOSE


def _tools_text(tools: Any) -> str:
    pieces = []
    for k, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise InvalidInputError(f"tools[{k}]", f"expected a tool object, got {type_name(tool)}")
        pieces += [TOOL_OPEN, declaration(tool, f"tools[{k}]"), TOOL_CLOSE]
    return "".join(pieces)


def tools_block(tools: Tools) -> str:
    """Each tool's declaration in ``<|tool>…<tool|>``; empty for none. Rendered once per toolset."""
    if isinstance(tools, PreparedTools):
        return rendered_tools(tools, "gemma4.tools_block", _tools_text) if tools else ""
    if not tools:
        return ""
    if not isinstance(tools, (list, tuple)):
        raise InvalidInputError("tools", f"expected a list of tool objects, got {type_name(tools)}")
    return rendered_tools(tools, "gemma4.tools_block", _tools_text)


def _system_text(content: Any) -> str:
    """A leading system message's text: a string trimmed; each item of a list (an object's keys) as
    its ``text`` trimmed and a space; nothing for anything else."""
    if type(content) is str:
        return content.strip()
    if type(content) not in (list, tuple, dict):
        if content is not None and type(content) not in (int, float, bool):
            require_plain(content, "messages[0].content")
        return ""
    return "".join(printed(field(item, "text", f"messages[0].content[{j}]"), f"messages[0].content[{j}].text")
                   .strip() + " " for j, item in enumerate(content))


#: Where the walk wrote a message's text: ``(message index, first piece, end piece, generated)``; the
#: range runs from the first piece's start to the end piece's start (a turn's end less its newline).
Mark = tuple[int, int, int, bool]


class Walk:
    """One walk of the template over a conversation: the pieces it writes, and (for spans) where
    each message's text went. Per call; not shared."""

    __slots__ = ("last_user", "marks", "msgs", "out", "preserve", "previous", "previous_role", "roles", "shown",
                 "start", "thinking")

    def __init__(self, out: list[str], msgs: list[dict[str, Any]], thinking: bool, preserve: bool,
                 noted: bool = False) -> None:
        self.out = out
        self.msgs = msgs
        self.roles = [role_of(message, i) for i, message in enumerate(msgs)]
        self.thinking, self.preserve = thinking, preserve
        self.start = 1 if self.roles and self.roles[0] in ("system", "developer") else 0
        self.last_user = max((i for i in range(self.start, len(msgs)) if self.roles[i] == "user"), default=-1)
        self.previous: str | None = None  # what the last message ended on: think, tool, tool_call, tool_response
        self.previous_role: Any = None  # the role of the last message that is no tool result
        self.marks: list[Mark] | None = [] if noted else None
        self.shown: set[int] = set()  # the messages whose reasoning was written

    def _mark(self, k: int, first: int, generated: bool = False, end: int | None = None) -> None:
        """Message ``k``'s text runs from piece ``first`` to piece ``end`` (default: all written so far)."""
        end = len(self.out) if end is None else end
        if self.marks is not None and first < end:
            self.marks.append((k, first, end, generated))

    def system(self, tools_text: str) -> None:
        """The system turn, when there is one."""
        if not (self.thinking or tools_text or self.start):
            return
        self.out.append(TURN_OPEN + "system\n")
        if self.thinking:
            self.out.append(THINK + "\n")
            self.previous = "think"
        if self.start:
            self.out.append(_system_text(self.msgs[0].get("content")))
            self._mark(0, len(self.out) - 1)
        if tools_text:
            self.out.append(tools_text)
            self.previous = "tool"
        self.out.append(TURN_CLOSED)

    def message(self, k: int) -> None:
        """Message ``k``, as the template writes it (a tool result: nothing; its assistant wrote it)."""
        role = self.roles[k]
        if role == "tool":
            return
        message = self.msgs[k]
        self.previous = None
        written = MODEL if role == "assistant" else role
        if not (written == MODEL and self.previous_role == "assistant"):
            if type(written) is not str:
                problem = "missing" if role is None else f"expected a string, got {type_name(role)}"
                raise InvalidInputError(f"messages[{k}].role", f"{problem}: the template joins it to text")
            self.out.append(TURN_OPEN + written + "\n")
        first = len(self.out)
        calls = _read(message, "tool_calls", k)
        self._thought(message, k, calls)
        if calls:
            path = f"messages[{k}].tool_calls"
            self.out += [call_text(call, f"{path}[{j}]") for j, call in enumerate(iterated(calls, path))]
            self.previous = "tool_call"
        answered = self._results(k, calls, first)
        first = len(self.out)
        text = self._content(_read(message, "content", k), written == MODEL, k)
        self.out.append(text)
        ended = self._close(k, written, calls, answered, text)
        # A model turn's <turn|> is the model's (its newline the template's); another role's, the template's.
        self._mark(k, first, True, (len(self.out) - (1 if written == MODEL else 2)) if ended else None)
        self.previous_role = role

    def _thought(self, message: dict[str, Any], k: int, calls: Any) -> None:
        reasoning = _read(message, "reasoning", k)
        thought = reasoning if reasoning else reasoning_of(message)
        if not thought or not (k > self.last_user or (self.preserve and calls)):
            return
        if type(thought) is not str:
            require_plain(thought, f"messages[{k}].reasoning_content")
            raise InvalidInputError(f"messages[{k}].reasoning_content",
                                    f"expected a string, got {type_name(thought)}: the template joins it to text")
        self.out += [THOUGHT_OPEN, thought, THOUGHT_CLOSE]
        self.shown.add(k)

    def _results(self, k: int, calls: Any, first: int) -> bool:
        """The tool results written after message ``k``'s calls (whose text began at piece ``first``);
        whether there were any. The first result's ``<|tool_response>`` ends what the model wrote."""
        legacy = _read(self.msgs[k], "tool_responses", k)
        path = f"messages[{k}].tool_responses"
        if legacy:
            for j, result in enumerate(iterated(legacy, path)):
                name = field(result, "name", f"{path}[{j}]")
                block = response_block(name if name else "unknown", field(result, "response", f"{path}[{j}]"),
                                       f"{path}[{j}]")
                self._opened(k, first)
                self.out.append(block)
                self._mark(k, len(self.out) - 1)
            return self.previous == "tool_response"
        if not calls:
            self._mark(k, first, True)
            return False
        for j in range(k + 1, len(self.msgs)):
            if self.roles[j] != "tool":
                break
            self._opened(k, first)
            self.out.append(_result(self.msgs[j], j, calls))
            self._mark(j, len(self.out) - 1)
        if self.previous != "tool_response":
            self._mark(k, first, True)
        return self.previous == "tool_response"

    def _opened(self, k: int, first: int) -> None:
        """A result's ``<|tool_response>``: the first one closes what message ``k`` wrote from ``first``."""
        self.out.append(TOOL_RESPONSE_OPEN)
        if self.previous != "tool_response":
            self._mark(k, first, True)
            self.previous = "tool_response"

    def _content(self, content: Any, model: bool, k: int) -> str:
        path = f"messages[{k}].content"
        if type(content) is str:
            return strip_thinking(content, path) if model else content.strip()
        if not is_sequence(content):
            return ""
        pieces = []
        for j, part in enumerate(iterated(content, path)):
            kind = _get(part, "type", f"{path}[{j}]")
            if kind == "text":
                text = field(part, "text", f"{path}[{j}]")
                pieces.append(strip_thinking(text, f"{path}[{j}].text") if model
                              else printed(text, f"{path}[{j}].text").strip())
            else:
                pieces.append(media(kind))
        return "".join(pieces)

    def _close(self, k: int, written: Any, calls: Any, answered: bool, text: str) -> bool:
        """What ends message ``k``'s writing: ``<|tool_response>`` after unanswered calls, nothing where
        the turn goes on, else ``<turn|>`` and a newline (the template's: a piece of its own); whether
        it was that."""
        following = next((j for j in range(k + 1, len(self.msgs)) if self.roles[j] != "tool"), None)
        continues = (written == MODEL and following is not None and self.roles[following] == "assistant"
                     and (not calls or answered))
        if self.previous == "tool_call" and not answered:
            self.out.append(TOOL_RESPONSE_OPEN)
        elif not continues and not (answered and not text.strip() and following is None):
            self.out += [TURN_CLOSE, "\n"]
            return True
        return False

    def tail(self, generation: Any) -> str:
        """The generation prompt, if asked for."""
        if not generation:
            return ""
        if self.previous not in ("tool_response", "tool_call"):
            return MODEL_PROMPT
        return THOUGHT_OPEN if self.previous == "tool_response" and self.thinking else ""


def _read(message: dict[str, Any], key: str, k: int) -> Any:
    """``message.get(key)``, a value of another type than JSON's read as its plain data."""
    value = message.get(key)
    if not of_json_type(value):
        require_plain(value, f"messages[{k}].{key}")
    return value


def _result(follow: dict[str, Any], j: int, calls: Any) -> str:
    """A tool result, named by the call whose id it answers (else its ``name``, else ``unknown``)."""
    name = _read(follow, "name", j) or "unknown"
    wanted = _read(follow, "tool_call_id", j)
    for call in calls:
        if call.get("id") == wanted:
            name = call["function"]["name"]
    body = _read(follow, "content", j)
    path = f"messages[{j}].content"
    if type(body) is str or not is_sequence(body):
        return response_block(name, body, f"messages[{j}].name")
    text = []
    for p, part in enumerate(iterated(body, path)):
        if _get(part, "type", f"{path}[{p}]") == "text":
            piece = part.get("text")
            if type(piece) is not str:
                raise InvalidInputError(f"{path}[{p}].text", f"expected a string, got {type_name(piece)}: "
                                        "the template joins it to text")
            text.append(piece)
    marks = [media(part.get("type")) for part in iterated(body, path)]
    return response_block(name, "".join(text), f"messages[{j}].name") + "".join(marks)


def walk(msgs: list[dict[str, Any]], tools_text: str, generation: Any, thinking: bool, preserve: bool,
         bos: str, noted: bool = False) -> Walk:
    """The template's walk over ``msgs`` (the messages as dicts) with ``tools_text`` (the tools'
    declarations, or nothing); ``noted``: with its marks. The prompt is ``"".join(walk.out)``."""
    written = Walk([bos], msgs, thinking, preserve, noted)
    written.system(tools_text)
    for k in range(written.start, len(msgs)):
        written.message(k)
    written.out.append(written.tail(generation))
    return written
