"""``render_spans`` for Harmony: where each input message landed in Ollama's template, and what was generated.

One pass, as ``render_harmony`` makes it: :func:`~.render.collated` collates the messages (noting
the messages it merges into an earlier one's entry), then the writer below writes the same pieces
as ``render_harmony``'s and adds up their lengths, so every range is known when the text is. The tests
compare the text with the Go oracle's and ``render``'s, and the generated ranges with those the Go
oracle records on a tagged copy of the template, on every generated case: a change of layout in
``render.py`` that is not made here fails them.

What a range covers (docs/harmony.md, docs/training-data.md):

- a message's ranges: its content as the template prints it (inside the merged Harmony message of
  its run, or, for a system or developer message, inside the header's system text); for the first
  message of an assistant run also its reasoning, where the analysis message is written. Empty text,
  no range; a role the template does not write (a non-python tool result, an unknown role), none.
- generated: each assistant Harmony message (analysis or final) from right after
  ``<|start|>assistant`` up to and including its ``<|end|>``; where the template leaves ``<|end|>``
  off, up to the end of the message's text. The message a prefill leaves open is not generated, nor
  is the generation prompt. Every input message of an assistant run owns the run's generated ranges,
  so the ``generated=`` policies select a run through any of its messages.
"""

from __future__ import annotations

from ...format import Conversation, Tools
from ...spans import GeneratedPolicy, Range, RenderedPrompt
from .render import Entry, Member, collated, message_ends
from .tokens import ANALYSIS, DATE, END, FINAL, GENERATION, PYTHON_RESULT, SYSTEM_END, SYSTEM_START, USER

__all__ = ["harmony_rendered_prompt"]

_JOIN = len("\n\n")
_AUTHOR = len(GENERATION)  # "<|start|>assistant": where a generated range starts, after it
_END, _USER, _ANALYSIS, _FINAL, _PYTHON = len(END), len(USER), len(ANALYSIS), len(FINAL), len(PYTHON_RESULT)

Ranges = tuple[Range, ...]


class _Generated:
    """The generated Harmony messages in text order: their ranges and their entries' indices."""

    __slots__ = ("entries", "ranges")

    def __init__(self) -> None:
        self.ranges: list[Range] = []
        self.entries: list[int] = []

    def add(self, entry: int, start: int, end: int) -> None:
        self.ranges.append((start, end))
        self.entries.append(entry)


def _split(start: int, content: str, later: list[str], reasoning: Range | None) -> list[Ranges]:
    """The ranges of the messages of a merged entry whose content starts at ``start`` (-1: not
    written): the first message's is what ``later`` (the other messages' contents) leaves of it,
    each joined to the previous by ``"\\n\\n"``; the first also has the entry's reasoning range."""
    sizes = [len(content) - sum(len(text) + _JOIN for text in later), *map(len, later)]
    out: list[Ranges] = []
    for size in sizes:
        out.append(((start, start + size),) if size and start >= 0 else ())
        if start >= 0:
            start += size + _JOIN
    if reasoning is not None:
        out[0] = (reasoning, *out[0])
    return out


def _later_by_entry(merged: list[Member]) -> dict[int, list[str]]:
    """Per entry that merged messages, their contents in order."""
    later: dict[int, list[str]] = {}
    for entry, content in merged:
        later.setdefault(entry, []).append(content)
    return later


def _write(
    out: list[str], entries: list[Entry], last_user: int, ends: tuple[str, str], later: dict[int, list[str]]
) -> tuple[list[Ranges], _Generated]:
    """Append the conversation's pieces to ``out`` (the header already in it) as ``render_harmony``
    writes them; each input message's ranges, in input order, and the generated Harmony messages."""
    analysis_end, final_end = ends
    pos = sum(map(len, out))
    header = len(SYSTEM_START)  # where the next system text starts in the header
    ranges: list[Ranges] = []
    made = _Generated()
    for index, (role, content, thinking, name) in enumerate(entries):
        reasoning = None
        if role == "user":
            out += (USER, content, END)
            start = pos + _USER
            pos = start + len(content) + _END
        elif role == "assistant":
            if thinking and index > last_user:
                out += (ANALYSIS, thinking, analysis_end)
                reasoning = (pos + _ANALYSIS, pos + _ANALYSIS + len(thinking))
                made.add(index, pos + _AUTHOR, reasoning[1] + len(analysis_end))
                pos = reasoning[1] + len(analysis_end)
            start = pos + _FINAL
            if content:
                out += (FINAL, content, final_end)
                made.add(index, pos + _AUTHOR, start + len(content) + len(final_end))
                pos = start + len(content) + len(final_end)
        elif role == "system":  # written in the header
            start = header
            header += len(content) + _JOIN
        elif role == "tool" and name == "python":
            out += (PYTHON_RESULT, content, END)
            start = pos + _PYTHON
            pos = start + len(content) + _END
        else:
            start = -1
        if later and index in later:
            ranges += _split(start, content, later[index], reasoning)
        elif not content or start < 0:
            ranges.append(() if reasoning is None else (reasoning,))
        else:
            own = (start, start + len(content))
            ranges.append((own,) if reasoning is None else (reasoning, own))
    return ranges, made


def _selected(made: _Generated, entries: list[Entry], last_user: int, policy: GeneratedPolicy) -> Ranges:
    """The generated ranges of the assistant messages ``policy`` selects, as
    ``prompt_formats.spans.select_generated`` over every message owning its run's ranges makes them:
    an assistant message is after the last user message exactly when its run is after the last user
    run. Already canonical: in text order, any two apart by at least ``<|start|>assistant``."""
    if policy == "all":
        return tuple(made.ranges)
    if policy == "last":
        last = max((index for index, entry in enumerate(entries) if entry[0] == "assistant"), default=-1)
        return tuple(pair for entry, pair in zip(made.entries, made.ranges, strict=True) if entry == last)
    return tuple(pair for entry, pair in zip(made.entries, made.ranges, strict=True) if entry > last_user)


def harmony_rendered_prompt(
    messages: Conversation, tools: Tools, date: str, reasoning_line: str, policy: GeneratedPolicy
) -> RenderedPrompt:
    """The :class:`RenderedPrompt` of ``render_harmony(messages, tools, date, reasoning_line)``.

    Raises what ``render_harmony`` raises, before any range is made."""
    merged: list[Member] = []
    tools_text, system, entries, last_user = collated(messages, tools, merged)
    ends = message_ends(entries)
    out = [SYSTEM_START, "\n\n".join(system), DATE, date, reasoning_line, tools_text, SYSTEM_END]
    ranges, made = _write(out, entries, last_user, ends, _later_by_entry(merged) if merged else {})
    if ends[0] and ends[1]:  # no prefill: the generation prompt
        out.append(GENERATION)
    else:  # the message the prefill leaves open, for the model to continue
        made.ranges.pop()
        made.entries.pop()
    return RenderedPrompt.unchecked("".join(out), tuple(ranges), _selected(made, entries, last_user, policy))
