"""Incremental Harmony rendering for sessions: a growing conversation re-renders only what changed.

Built on the walk of :mod:`.render`: after the header, the prompt is a list of
pieces, three per Harmony message (start marker, text, end), which :func:`~.render.write_messages`
appends to. A message's pieces depend on the message itself and on what follows it only in three
ways: a user message after an assistant's reasoning takes that analysis message out; a system
message joins the header's text; a prefill (the last message an assistant's) takes off the ends.
So the session keeps the pieces and, for each request that appends messages:

- writes the new messages alone, after the kept pieces;
- where they hold a user message, takes out the analysis messages written after the previous one
  (:func:`~.render.take_out`);
- where they hold a system message, re-renders the header;
- where Ollama's collation joins old and new messages, renders every message again: a first new
  message of the role of the last one (it merges into it), a new tool result named only by its
  ``tool_call_id`` (the name is looked up in every message), a new tool call whose id names an
  earlier such result (the last call with an id names it);
- a prefill request, or anything unexpected (an error, input that is not a list, new messages that
  are not dicts, a guard), steps aside to the full render (the session's fallback), the one checked path.

Why: an agent loop renders the whole conversation again each turn; this writes only the new turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ....format.history import ExtendingRenderer, RenderAgain, joined_with
from ....model.arguments import decode_arguments_option
from ..tokens import GENERATION
from .options import date_text, reasoning_line_for
from .render import PROLOGUE, open_marker, prologue, take_out, write_messages

if TYPE_CHECKING:
    from ....format.chat_format import Conversation, Tools

__all__ = ["HarmonyIncremental", "incremental_renderer"]

# How many stable pieces are joined into one chunk of the prompt's body (three per Harmony message):
# the prompt is then the header, a few chunks and the last pieces, so joining it copies each text once.
_CHUNK = 48


def incremental_renderer(tools: Tools, options: Mapping[str, Any]) -> HarmonyIncremental | None:
    """The per-session state for these tools and options, or ``None`` where every render raises."""
    try:
        decode_arguments_option(options.get("decode_tool_arguments"))
        reasoning_line = reasoning_line_for(options.get("think"), options.get("reasoning_effort"))
        date_text(options.get("current_date"))
        header = prologue([], tools, "", reasoning_line)
    except Exception:  # every render raises it: full renders do
        return None
    return HarmonyIncremental(header, options.get("current_date"))


def _call_ids(messages: list[dict[str, Any]]) -> set[Any]:
    """The ids of the tool calls in ``messages`` (what names a tool result given only a ``tool_call_id``)."""
    ids: set[Any] = set()
    for message in messages:
        calls = message.get("tool_calls")
        if type(calls) is list or type(calls) is tuple:
            ids.update(call.get("id") for call in calls if isinstance(call, Mapping))
    return ids


def _role(message: dict[str, Any]) -> Any:
    """A message's role as the writers compare it with its predecessor's (``developer`` is ``system``)."""
    role = message.get("role")
    return "system" if role == "developer" else role


class HarmonyIncremental(ExtendingRenderer):
    """One session's pieces of the prompt. Not shared: the session holds it under a lock."""

    __slots__ = ("_analyses", "_current_date", "_header", "_last_role",
                 "_named_by_id", "_out", "_run", "_system", "_system_count")
    _first_reads_any = True  # (the walk reads a message of any type as render first reads it)

    def __init__(self, header: list[str], current_date: Any) -> None:
        self._header, self._current_date = header, current_date
        self._reset()

    def _reset(self) -> None:
        self._rendered: list[Any] = []  # the caller's message objects, as last rendered
        self._out: list[str] = list(self._header)  # the header's pieces, then three per Harmony message
        self._system: list[str] = []  # every system message's text, in order
        self._system_count = 0  # how many of them the header's text (out[1]) joins
        self._analyses: list[int] = []  # where the analysis messages after the last user message start
        self._last_role: Any = None
        self._run = 0  # where the last assistant run's pieces start in out
        self._named_by_id: set[Any] = set()  # the ids that name earlier tool results
        self._chunks: list[str] = []  # out[previous end:end] joined, for each end in chunk_ends
        self._chunk_ends: list[int] = []

    def render(self, messages: Conversation, add_generation_prompt: bool | None) -> str | None:
        """The prompt ``render`` gives, or ``None`` to step aside to a full render."""
        if add_generation_prompt is not None and add_generation_prompt is not True:
            return None
        try:
            date = date_text(self._current_date)  # today's, when not given: read on every render
        except Exception:  # the full render raises it
            return None
        stable = self._stable(messages)
        if stable is None:
            return None
        if open_marker(self._out, self._last_role, self._run) is not None:
            return None  # a prefill: the pieces are kept, the full render writes its ends
        return self._joined(stable, date)

    def _first(self, messages: list[Any]) -> int:
        """Write every message; where the pieces start (all of them changed)."""
        self._reset()
        self._write(messages, PROLOGUE, self._named_by_id)
        return PROLOGUE

    def _extend(self, messages: list[Any]) -> int:
        """Write the new messages, take out what they change; the first piece changed."""
        out = self._out
        old = len(self._rendered)
        if len(messages) == old:
            return len(out)
        new = messages[old:]
        last_role = self._last_role
        if ((last_role is not None and _role(new[0]) == last_role != "tool")
                or (self._named_by_id and not self._named_by_id.isdisjoint(_call_ids(new)))):
            raise RenderAgain  # collation joins the old and the new messages: every message is written again
        start = len(out)
        earlier, self._analyses = self._analyses, []
        named: set[Any] = set()
        self._write(new, start, named)
        if named:  # a new tool result named by its id: the name is looked up in every message
            raise RenderAgain  # (what was written here is dropped: every message is written again)
        if not earlier:
            return start
        if any(message.get("role") == "user" for message in new):
            stable = earlier[0]  # a new user message: the analysis messages after the previous one go
            take_out(out, earlier)
            return stable
        self._analyses = earlier + self._analyses
        return start

    def _write(self, messages: list[Any], start: int, named: set[Any] | None = None) -> None:
        """Write ``messages`` after ``out[:start]``, noting the analysis messages they leave and the last
        run (and in ``named`` the ids that name their tool results)."""
        out, system = self._out, self._system
        last_role, run, analyses = write_messages(messages, out, system, named=named)
        if messages:
            self._last_role, self._run = last_role, run if run >= start else self._run
        # The analysis messages write_messages did not take out (no user message follows them); they
        # are the ones a later user message takes out.
        self._analyses += analyses

    def _joined(self, stable: int, date: str) -> str:
        """The prompt: the header, the chunks of pieces before ``stable`` (one more when enough are
        stable), the other pieces, the generation prompt."""
        out, chunks, ends = self._out, self._chunks, self._chunk_ends
        if len(self._system) != self._system_count:
            out[1] = "\n\n".join(self._system)
            self._system_count = len(self._system)
        out[3] = date
        upto = ends[-1] if ends else PROLOGUE
        if stable - upto >= _CHUNK:
            chunks.append("".join(out[upto:stable]))
            ends.append(stable)
            upto = stable
        if not chunks:
            return joined_with(out, GENERATION)
        return "".join((*out[:PROLOGUE], *chunks, *out[upto:], GENERATION))
