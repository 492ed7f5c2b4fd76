"""Incremental Harmony rendering for sessions: a growing conversation re-renders only what changed.

Built on :func:`~.render.collated` (called read-only): after Ollama's collation, an entry's text
depends on the entry and, for an assistant entry's reasoning, on whether it comes after the last
user entry; the header holds every system text; a prefill (the last entry an assistant message
with content or reasoning) changes the ends of every assistant message. So when messages are
appended, the new ones are collated alone, and:

- a new user entry re-renders the assistant entries after the previous one (their reasoning is
  dropped);
- a new system message re-renders the header;
- what collation could join across the old and the new messages is rendered in full: a first new
  message of the role of the last entry (it merges into that entry), a new tool result named only
  by its ``tool_call_id`` (the name is looked up in every message), a new tool call whose id names
  an earlier such result (the last call with an id names it);
- a prefill request, or anything unexpected (an error, input that is not a list of dicts, a guard),
  steps aside to the full render (the session's fallback), which is the one checked path.

This is the fast path of the ``harmony`` row of ``benchmarks/bench_session.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import is_
from typing import TYPE_CHECKING, Any

from ...arguments import decode_arguments_option
from .options import date_text, reasoning_line_for
from .render import Entry, collated, message_ends
from .tokens import ANALYSIS, DATE, END, FINAL, GENERATION, PYTHON_RESULT, SYSTEM_END, SYSTEM_START, USER

if TYPE_CHECKING:
    from ...format import Conversation, Tools

__all__ = ["HarmonyIncremental", "incremental_renderer"]

# How many stable entries are joined into one chunk of the prompt's head: the prompt is then the
# header, a few chunks and the last entries, so that joining it copies each entry's text once.
_CHUNK = 16
_DICT_ONLY = frozenset({dict})


def incremental_renderer(tools: Tools, options: Mapping[str, Any]) -> HarmonyIncremental | None:
    """The per-session state for these tools and options, or ``None`` where every render raises."""
    try:
        decode_arguments_option(options.get("decode_tool_arguments"))
        reasoning_line = reasoning_line_for(options.get("think"), options.get("reasoning_effort"))
        date_text(options.get("current_date"))
        tools_text = collated([], tools)[0]
    except Exception:  # every render raises it: full renders do
        return None
    return HarmonyIncremental(tools_text, reasoning_line, options.get("current_date"))


def _entry_text(entry: Entry, keeps_reasoning: bool) -> str:
    """An entry as the template writes it when the prompt is no prefill (every message ends in ``<|end|>``)."""
    role, content, thinking, name = entry
    if role == "user":
        return USER + content + END
    if role == "assistant":
        text = ANALYSIS + thinking + END if thinking and keeps_reasoning else ""
        return text + FINAL + content + END if content else text
    if role == "tool" and name == "python":
        return PYTHON_RESULT + content + END
    return ""


def _named_by_id(message: dict[str, Any]) -> Any:
    """A tool result's ``tool_call_id`` when collation names it by that id (it has no name), else ``None``."""
    if message.get("role") != "tool":
        return None
    name = message.get("tool_name")
    if name is None:
        name = message.get("name")
    return None if name else message.get("tool_call_id") or None


def _call_ids(messages: list[dict[str, Any]]) -> set[Any]:
    """The ids of the tool calls in ``messages`` (what collation reads to name a tool result)."""
    ids: set[Any] = set()
    for message in messages:
        calls = message.get("tool_calls")
        if type(calls) is list or type(calls) is tuple:
            ids.update(call.get("id") for call in calls if isinstance(call, Mapping))
    return ids


class _FullRender(Exception):
    """Collation joins the old and the new messages: every entry is collated again."""


class HarmonyIncremental:
    """One session's collated entries and their texts. Not shared: the session holds it under a lock."""

    __slots__ = ("_chunk_ends", "_chunks", "_current_date", "_entries", "_last_user", "_named_by_id",
                 "_reasoning_line", "_rendered", "_system", "_system_text", "_texts", "_tools_text")

    def __init__(self, tools_text: str, reasoning_line: str, current_date: Any) -> None:
        self._tools_text, self._reasoning_line, self._current_date = tools_text, reasoning_line, current_date
        self._reset()

    def _reset(self) -> None:
        self._rendered: list[Any] = []  # the caller's message objects, as last rendered
        self._entries: list[Entry] = []
        self._texts: list[str] = []  # each entry's text (:func:`_entry_text`)
        self._system: list[str] = []  # every system message's text, in order
        self._system_text = ""
        self._last_user = -1
        self._named_by_id: set[Any] = set()  # the ids that name earlier tool results
        self._chunks: list[str] = []  # texts[previous end:end] joined, for each end in chunk_ends
        self._chunk_ends: list[int] = []

    def render(self, messages: Conversation, add_generation_prompt: bool | None) -> str | None:
        """The prompt ``render`` gives, or ``None`` to step aside to a full render."""
        if add_generation_prompt is not None and add_generation_prompt is not True:
            return None
        try:
            rendered = self._rendered
            extends = (type(messages) is list and rendered and len(messages) >= len(rendered)
                       and all(map(is_, rendered, messages)))
            if type(messages) is not list or not set(map(type, messages[len(rendered):] if extends else messages)
                                                     ) <= _DICT_ONLY:
                self._reset()
                return None
            date = date_text(self._current_date)  # today's, when not given: read on every render
            try:
                stable = self._extend(messages) if extends else self._first(messages)
            except _FullRender:
                stable = self._first(messages)
        except Exception:  # the full render raises it, or renders what this could not
            self._reset()
            return None
        self._rendered = list(messages)
        ends = self._chunk_ends
        while ends and ends[-1] > stable:  # a chunk holding a changed entry, also when stepping aside
            ends.pop()
            self._chunks.pop()
        if message_ends(self._entries) != (END, END):
            return None  # a prefill: the entries are kept, the full render writes its ends
        return self._joined(stable, date)

    def _first(self, messages: list[Any]) -> int:
        """Collate and render every message; the number of entries (all of them stable)."""
        _, self._system, self._entries, self._last_user = collated(messages, None)
        last_user = self._last_user
        self._texts = [_entry_text(entry, index > last_user) for index, entry in enumerate(self._entries)]
        self._system_text = "\n\n".join(self._system)
        self._named_by_id = {call_id for call_id in map(_named_by_id, messages) if call_id is not None}
        self._chunks, self._chunk_ends = [], []
        return len(self._entries)

    def _extend(self, messages: list[Any]) -> int:
        """Collate and render the new messages, re-render what they change; the first entry changed."""
        old = len(self._rendered)
        if len(messages) == old:
            return len(self._entries)
        new = messages[old:]
        _, system, entries, last_user = collated(new, None)
        kept = self._entries
        if (entries[0][0] == kept[-1][0] != "tool" or any(map(_named_by_id, new))
                or (self._named_by_id and not self._named_by_id.isdisjoint(_call_ids(new)))):
            raise _FullRender
        start = len(kept)
        stable = start
        if last_user >= 0:
            last_user += start
            stable = self._drop_reasoning(self._last_user + 1, start)
            self._last_user = last_user
        kept += entries
        last_user = self._last_user
        self._texts += [_entry_text(entry, index > last_user) for index, entry in enumerate(entries, start)]
        if system:
            self._system += system
            self._system_text = "\n\n".join(self._system)
        return stable

    def _drop_reasoning(self, start: int, stop: int) -> int:
        """Re-render entries ``start`` to ``stop - 1`` as entries before the last user entry; the first changed."""
        entries, texts = self._entries, self._texts
        first = stop
        for index in range(start, stop):
            entry = entries[index]
            if entry[0] == "assistant" and entry[2]:
                texts[index] = _entry_text(entry, False)
                first = min(first, index)
        return first

    def _joined(self, stable: int, date: str) -> str:
        """The prompt: the header, the chunks of entries before ``stable`` (one more when enough are
        stable), the other entries, the generation prompt."""
        texts, chunks, ends = self._texts, self._chunks, self._chunk_ends
        upto = ends[-1] if ends else 0
        if stable - upto >= _CHUNK:
            chunks.append("".join(texts[upto:stable]))
            ends.append(stable)
            upto = stable
        return "".join((SYSTEM_START, self._system_text, DATE, date, self._reasoning_line, self._tools_text,
                        SYSTEM_END, *chunks, *texts[upto:], GENERATION))
