"""The reply parser of Gemma 4: a completion into reasoning, content and tool calls.

The rules (docs/gemma-4.md, "Parsing replies"): ``<|channel>`` opens the reasoning (a first
line ``thought`` is the channel's name, not reasoning) up to ``<channel|>``; several channels join.
With ``in_thought`` the completion begins inside the reasoning (the prompt ended with
``<|channel>thought\\n``: tool results with thinking on). A call is
``<|tool_call>call:NAME{ARGUMENTS}<tool_call|>``, its arguments in the template's notation
(:mod:`.reading`: strings between ``<|"|>`` quotes, numbers, ``true``/``false``/``null``, objects
and lists), typed as written; read when its end marker arrives and sent whole. ``<turn|>``,
``<|tool_response>`` (after calls: the results come next) and ``<eos>`` end the reply. Reasoning and
content are each ``str.strip()``-ped as a whole. A call that cannot be read as the notation says
keeps its text as content, with a note in ``malformed``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from ...._text.tojson import compact_json
from ....replies.held_calls import HeldCallsParser
from ....replies.streaming import Note, Terminator, TerminatorScan
from ..tokens import CHANNEL_CLOSE, CHANNEL_OPEN, EOS, TOOL_CALL_CLOSE, TOOL_CALL_OPEN, TOOL_RESPONSE_OPEN, TURN_CLOSE
from .reading import read_arguments

__all__ = ["Gemma4ReplyParser", "State"]

_CHANNEL = Terminator.marker(CHANNEL_OPEN)
_CHANNEL_END = Terminator.marker(CHANNEL_CLOSE)
_CALL = Terminator.marker(TOOL_CALL_OPEN)
_CALL_END = Terminator.marker(TOOL_CALL_CLOSE)
_STOPS = (Terminator.marker(TURN_CLOSE), Terminator.marker(TOOL_RESPONSE_OPEN), Terminator.marker(EOS))
_REASONING_ENDS = (_CHANNEL_END, *_STOPS)
_CONTENT_ENDS = (_CHANNEL, _CALL, *_STOPS)
_IN_CALL_ENDS = (_CALL_END, *_STOPS)
#: The channel's name the template writes before the reasoning.
_THOUGHT = "thought\n"
_PREFIX = "call:"


class State(enum.IntEnum):
    CHANNEL = 0  # right after <|channel>: its name, then the reasoning
    REASONING = 1  # to <channel|>
    CONTENT = 2  # to a channel, a call or the end
    CALL = 3  # inside a call, to its end marker
    DONE = 4  # after an end marker: not part of the reply


class Gemma4ReplyParser(HeldCallsParser):
    """Gemma 4's reply parser, per stream (the module docstring); ``parse`` feeds it everything."""

    __slots__ = ()

    AFTER_END = f"text after the end of the reply ('{TURN_CLOSE}'/'{TOOL_RESPONSE_OPEN}'/'{EOS}') ignored"
    CALL_OPEN, CALL_CLOSE, IN_CALL_ENDS = TOOL_CALL_OPEN, TOOL_CALL_CLOSE, _IN_CALL_ENDS
    CONTENT, DONE = State.CONTENT, State.DONE

    def __init__(self, id_factory: Callable[[], str] | None = None, in_thought: bool = False) -> None:
        super().__init__(State.REASONING if in_thought else State.CONTENT, id_factory)

    def _advance(self, buf: str, final: bool) -> int:
        scan = TerminatorScan(buf)
        pos = 0
        while True:
            state = self._state
            if state == State.DONE:
                return self._past_end(buf, pos)
            if state == State.CHANNEL:
                pos, progressed = self._channel(buf, pos, final)
            elif state == State.CALL:
                pos, progressed = self._call_step(buf, pos, final, scan)
            else:
                pos, progressed = self._text_step(buf, pos, final, scan)
            if not progressed:
                return pos

    def _channel(self, buf: str, pos: int, final: bool) -> tuple[int, bool]:
        """CHANNEL: the name ``thought`` and its line end, if there, are not reasoning."""
        rest = buf[pos:pos + len(_THOUGHT)]
        if rest == _THOUGHT:
            pos += len(_THOUGHT)
        elif not final and _THOUGHT.startswith(rest):
            return pos, False  # it may yet be the name
        self._state = State.REASONING
        return pos, True

    def _text_step(self, buf: str, pos: int, final: bool, scan: TerminatorScan) -> tuple[int, bool]:
        """REASONING or CONTENT: text up to the state's next marker."""
        reasoning = self._state == State.REASONING
        pos, term = self._text_to(buf, pos, final, scan, reasoning, _REASONING_ENDS if reasoning else _CONTENT_ENDS)
        if term is None:
            return pos, False
        if term is _CHANNEL_END:
            self._state = State.CONTENT
        elif term is _CHANNEL:
            self._state = State.CHANNEL
        else:
            self._state = State.CALL if term is _CALL else State.DONE
        return pos, True

    def _read_call(self, body: str) -> bool:
        """Send the call ``body`` holds (``call:NAME{…}``); False if it is not one as the format writes it."""
        brace = body.find("{")
        if not body.startswith(_PREFIX) or brace < 0:
            return False
        name = body[len(_PREFIX):brace].strip()
        read = read_arguments(body[brace:]) if name else None
        if read is None:
            return False
        arguments, repeated = read
        index = self._send_call(name, arguments, compact_json(arguments))
        self._out += [Note(f"tool call {index} ({name}) repeats key {key!r}: its first value is kept")
                      for key in repeated]
        return True
