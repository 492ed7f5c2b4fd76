"""The "certainly clean" prefilters: cheap tests that clear input the exact walk would leave unchanged.

Each returns True only when the exact policy would find nothing; on any doubt it answers False
and the caller walks the value field by field. A prefilter never clears a value it could not read
in full (a value orjson cannot encode, too deep for it included, answers "unsure").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import orjson

from ..model.reading import reasoning_field
from .scheme import EscapeScheme
from .vocabulary import UntrustedReading

__all__ = ["Prefilters"]

_UNBUILT: Any = object()


class Prefilters(EscapeScheme):
    """The prefilters of :class:`~prompt_formats.guard.ControlTokenGuard` (a mixin)."""

    trust_assistant: bool
    _lead_bytes: bytes
    _blob_patterns: dict[str, re.Pattern[bytes] | None]

    def _suspects(self, messages: Sequence[Any], reading: UntrustedReading) -> list[int]:
        """Indices of the messages that may hold a token, ascending; the others are certainly clean.

        Like :meth:`_all_clean` (one read of each plain dict message's content: a string without
        the lead character, or whose search finds no token, is clean; the tool calls of all
        messages cleared together by one orjson encoding), but it goes on past the first doubt and
        also reads untrusted reasoning; only the suspects are then walked field by field. Trusted
        assistant content is searched too (cheaper than telling it apart): such a message is then
        walked and found unchanged.
        """
        lead = self._lead
        if lead is None:
            return list(range(len(messages)))
        untrusted_reasoning = not self.trust_assistant
        needs_escape = self._scanner.needs_escape.search
        tool_calls = reading.tool_calls
        suspects = []
        call_lists: list[Any] = []
        add_calls = call_lists.append
        for index, message in enumerate(messages):
            if type(message) is dict:
                content = message.get("content")
                if content is None or (type(content) is str and (lead not in content or needs_escape(content) is None)):
                    if untrusted_reasoning and reasoning_field(message) is not None:
                        suspects.append(index)
                    elif tool_calls:
                        calls = message.get("tool_calls")
                        if calls:
                            add_calls(calls)
                    continue
            suspects.append(index)
        follower = reading.name_follower
        if call_lists and not self._blob_clean(call_lists, follower):
            # Rare: find the messages whose calls need the walk.
            known = set(suspects)
            for index, message in enumerate(messages):
                if index not in known:
                    calls = message.get("tool_calls") if tool_calls else None
                    if calls and not self._blob_clean(calls, follower):
                        suspects.append(index)
            suspects.sort()
        return suspects

    def _all_clean(self, messages: Sequence[Any], reading: UntrustedReading, lead: str) -> bool:
        """The common case (trusted assistant, nothing found), as lean as it can be: True if every
        message is certainly clean; False at the first doubt, and :meth:`_suspects` looks closer.

        Only exact ``dict`` messages and exact ``str`` contents are cleared here (a subclass could
        answer ``get`` or ``strip`` differently from what its data says). The role is not read: a
        message is cleared by its untrusted fields whatever its role says.
        """
        needs_escape = self._scanner.needs_escape.search
        tool_calls = reading.tool_calls
        call_lists: list[Any] = []
        add_calls = call_lists.append
        for message in messages:
            if type(message) is not dict:
                return False
            content = message.get("content")
            if type(content) is str:
                # The pattern runs from the first lead on: its own scan for it is slower than find().
                if lead in content and needs_escape(content, content.find(lead)) is not None:
                    return False
            elif content is not None:
                return False
            if tool_calls and "tool_calls" in message:
                calls = message["tool_calls"]
                if calls:
                    add_calls(calls)
        return not call_lists or self._blob_clean(call_lists, reading.name_follower)

    def _blob_clean(self, value: Any, follower: str = "") -> bool:
        """True if no string in ``value`` (keys included) can put a token in the prompt; False if unsure.

        One orjson encoding (C speed; it writes a string's text verbatim, as UTF-8, except ``"``,
        ``\\`` and control characters, which no token holds, and a backslash shows doubled, which
        is still a run of markers) and one search of it for a lead followed by markers and a token's
        tail or its start, or one that a name's end and ``follower`` complete (``Scanner.blob_suspect``).
        A value orjson cannot encode (too deep, a lone surrogate, an integer beyond 64 bits, another
        type, a subclass of a JSON type) answers "unsure".
        """
        pattern = self._blob_patterns.get(follower, _UNBUILT)
        if pattern is _UNBUILT:  # built once per follower (two threads may both build it: the same)
            pattern = self._blob_patterns[follower] = self._scanner.blob_suspect(follower)
        if pattern is None:
            return False
        # Subclasses of str, int, dict and list are passed through, so they answer "unsure": orjson
        # would write a subclass's data, a template may print its __str__.
        try:
            data = orjson.dumps(value, option=orjson.OPT_PASSTHROUGH_SUBCLASS)
        except TypeError:
            try:  # int, float, bool or None dict keys (json.dumps accepts them)
                data = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_SUBCLASS)
            except (TypeError, ValueError, RecursionError):
                return False
        except (ValueError, RecursionError):
            return False
        at = data.find(self._lead_bytes)
        return at < 0 or pattern.search(data, at) is None
