"""The reply parser of Llama 3.1 and 3.2: a completion into content and tool calls.

The rules (docs/llama.md, "Parsing replies"): the templates write a call as the whole of an
assistant turn, ``{"name": NAME, "parameters": ARGUMENTS}`` (3.1's built-in tools as
``<|python_tag|>NAME.call(KEY="VALUE", …)``), and the model may open calls with ``<|python_tag|>``.
So a completion whose first text (after whitespace) is ``{`` is held to its end and read as calls
(one or more such objects, separated by ``;`` or whitespace; ``"arguments"`` is read where
``"parameters"`` is not) — when it is not, it is the content as written. Text before a
``<|python_tag|>`` is content, and what follows it is held and read as calls of either form (text
that is neither is kept as content, with a note). ``<|eot_id|>``, ``<|eom_id|>`` or
``<|end_of_text|>`` ends the reply. The content is ``str.strip()``-ped as a whole, as the template
trims it. Nothing is reasoning: the templates have none.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..._text.tojson import compact_json
from ...model.reading import strict_value_at
from ...replies.held_calls import WHITESPACE as _WHITESPACE
from ...replies.held_calls import HeldCallsParser
from ...replies.streaming import Event, Malformed, Terminator, TerminatorScan
from .tokens import EOM, EOS, EOT, PYTHON_TAG

__all__ = ["LlamaReplyParser", "State", "read_calls"]

_TAG = Terminator.marker(PYTHON_TAG)
_ENDS = (Terminator.marker(EOT), Terminator.marker(EOM), Terminator.marker(EOS))
_CONTENT_ENDS = (_TAG, *_ENDS)
_SEPARATOR = re.compile(r"\s*;?\s*")
#: 3.1's built-in call: ``NAME.call(KEY="VALUE", …)``, as the template writes it (a value unescaped:
#: one holding a ``"`` cannot be told from the text after it, and is not read).
_BUILTIN = re.compile(r'\s*([A-Za-z_]\w*)\.call\(((?:[A-Za-z_]\w*="[^"]*"(?:, [A-Za-z_]\w*="[^"]*")*)?)\)\s*')
_PAIR = re.compile(r'([A-Za-z_]\w*)="([^"]*)"')
_CALL_KEYS = frozenset({"name", "parameters", "arguments"})


#: A call read: its name, its arguments (an object, or the JSON text of another value), their text, notes.
Read = tuple[str, "Mapping[str, Any] | str", str, list[Event]]


class State(enum.IntEnum):
    START = 0  # before the first text: a call if it opens with "{"
    CONTENT = 1  # to <|python_tag|> or the end
    JSON = 2  # a reply that opened with "{", held to its end
    TAGGED = 3  # after <|python_tag|>, held to its end or the next tag
    DONE = 4  # after the end marker: not part of the reply


def _strict_value(text: str, pos: int) -> tuple[Any, int] | None:
    """The JSON value at ``pos`` and where it ends (strict: no ``NaN``, no number beyond a double), or ``None``."""
    try:
        found = strict_value_at(text, pos)
    except (ValueError, RecursionError):  # not JSON, a constant, too many digits; too deep
        return None
    return found


def _call_of(value: Any) -> Read | None:
    """A decoded object as a call: a ``name`` (a string) and its ``parameters`` or ``arguments``."""
    if type(value) is not dict or type(value.get("name")) is not str or not value["name"]:
        return None
    key = "parameters" if "parameters" in value else "arguments" if "arguments" in value else None
    if key is None:
        return None
    name, arguments = value["name"], value[key]
    notes: list[Event] = []
    if value.keys() - _CALL_KEYS or len(value.keys() & _CALL_KEYS) == 3:
        ignored = sorted(value.keys() - {"name", key})
        notes.append(Malformed(f"tool call ({name}): keys {ignored} ignored"))
    if type(arguments) is dict:
        return name, arguments, compact_json(arguments), notes
    if type(arguments) is str:  # (the template writes string arguments as a JSON string: kept so)
        return name, arguments, arguments, notes
    text = compact_json(arguments)
    notes.append(Malformed(f"tool call ({name}) has arguments that are not a JSON object: kept as text"))
    return name, text, text, notes


def read_calls(body: str) -> list[Read] | None:
    """The calls ``body`` holds: JSON call objects, separated by ``;`` or whitespace, or one built-in
    ``NAME.call(…)``; ``None`` when it is anything else."""
    builtin = _BUILTIN.fullmatch(body)
    if builtin is not None:
        arguments = {key: value for key, value in _PAIR.findall(builtin.group(2))}
        return [(builtin.group(1), arguments, compact_json(arguments), [])]
    calls: list[Read] = []
    pos = _WHITESPACE.match(body).end()  # type: ignore[union-attr]
    while pos < len(body):
        found = _strict_value(body, pos) if body[pos] == "{" else None
        call = _call_of(found[0]) if found is not None else None
        if call is None or found is None:
            return None
        calls.append(call)
        pos = _SEPARATOR.match(body, found[1]).end()  # type: ignore[union-attr]
    return calls or None


class LlamaReplyParser(HeldCallsParser):
    """Llama 3's reply parser, per stream (the module docstring); ``parse`` feeds it everything."""

    __slots__ = ()

    AFTER_END = f"text after the end of the reply ('{EOT}'/'{EOM}') ignored"

    def __init__(self, id_factory: Callable[[], str] | None = None) -> None:
        super().__init__(State.START, id_factory)

    def _advance(self, buf: str, final: bool) -> int:
        scan = TerminatorScan(buf)
        pos = 0
        while True:
            state = self._state
            if state == State.DONE:
                return self._past_end(buf, pos)
            if state == State.START:
                pos, progressed = self._start(buf, pos, final)
            elif state == State.CONTENT:
                pos, term = self._text_to(buf, pos, final, scan, False, _CONTENT_ENDS)
                progressed = term is not None
                if term is not None:
                    self._state = State.TAGGED if term is _TAG else State.DONE
            else:
                pos, progressed = self._held(buf, pos, final, scan)
            if not progressed:
                return pos

    def _start(self, buf: str, pos: int, final: bool) -> tuple[int, bool]:
        """START: whitespace, then ``{`` (a call, maybe) or anything else (content)."""
        # (The whitespace is taken as it comes, not held: whatever follows, the reply keeps none of it.)
        skip = _WHITESPACE.match(buf, pos).end()  # type: ignore[union-attr]
        if skip == len(buf):
            return skip, False
        self._state = State.JSON if buf[skip] == "{" else State.CONTENT
        return skip, True

    def _held(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """JSON or TAGGED: the text held to the next tag or end marker (or the completion's end), then read."""
        held = self._held_call(buf, pos, final, scan, _CONTENT_ENDS)
        if held is None:
            return pos, False
        body, term, end = held
        calls = read_calls(body)
        tagged = self._state == State.TAGGED
        if calls is not None:
            for name, arguments, text, notes in calls:
                self._send_call(name, arguments, text, notes)
        elif tagged:
            self._kept_as_text(PYTHON_TAG + body, f"after '{PYTHON_TAG}' is neither JSON calls nor a built-in call")
        else:
            self._content.add(body)  # (JSON, or text opening with "{", that is no call: the content)
        self._state = State.TAGGED if term is _TAG else State.DONE if term is not None else State.CONTENT
        return end, True
