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


def _write(
    out: list[str], entries: list[Entry], last_user: int, ends: tuple[str, str], generated: list[Range],
    owners: list[int],
) -> list[Ranges]:
    """Append the conversation's pieces to ``out`` (the header already in it) as ``render_harmony``
    writes them, and each generated Harmony message's range to ``generated`` (its entry's index to
    ``owners``); per entry, the ranges of its content (all of it, for a merged entry) after its
    written reasoning's. One loop, each range made where its piece is written."""
    analysis_end, final_end = ends
    analysis_size, final_size = len(analysis_end), len(final_end)
    pos = sum(map(len, out))
    header = len(SYSTEM_START)  # where the next system text starts in the header
    ranges: list[Ranges] = []
    add_range, add_generated, add_owner = ranges.append, generated.append, owners.append
    for index, (role, content, thinking, name) in enumerate(entries):
        if role == "user":
            out += (USER, content, END)
            start = pos + _USER
            pos = start + len(content) + _END
            add_range(((start, pos - _END),) if content else ())
        elif role == "assistant":
            if thinking and index > last_user:
                out += (ANALYSIS, thinking, analysis_end)
                start = pos + _ANALYSIS
                reasoning = (start, start + len(thinking))
                add_generated((pos + _AUTHOR, reasoning[1] + analysis_size))
                add_owner(index)
                pos = reasoning[1] + analysis_size
            else:
                reasoning = None
            if content:
                out += (FINAL, content, final_end)
                start = pos + _FINAL
                add_generated((pos + _AUTHOR, start + len(content) + final_size))
                add_owner(index)
                pos = start + len(content) + final_size
                own = (start, start + len(content))
                add_range((own,) if reasoning is None else (reasoning, own))
            else:
                add_range(() if reasoning is None else (reasoning,))
        elif role == "tool" and name == "python":
            out += (PYTHON_RESULT, content, END)
            start = pos + _PYTHON
            pos = start + len(content) + _END
            add_range(((start, pos - _END),) if content else ())
        elif role == "system":  # written in the header
            add_range(((header, header + len(content)),) if content else ())
            header += len(content) + _JOIN
        else:
            add_range(())
    return ranges


def _by_message(entry_ranges: list[Ranges], merged: list[Member]) -> list[Ranges]:
    """Each input message's ranges from its entry's (see :func:`_write`): a merged entry's content
    range split into its messages' contents, each joined to the previous by ``"\\n\\n"``; the
    first message keeps the entry's reasoning range."""
    later: dict[int, list[str]] = {}
    for entry, content in merged:
        later.setdefault(entry, []).append(content)
    out: list[Ranges] = []
    for entry, own in enumerate(entry_ranges):
        contents = later.get(entry)
        if contents is None:
            out.append(own)
        elif not own:  # not written (a merged content is never empty: it holds a join)
            out += [()] * (1 + len(contents))
        else:
            reasoning, (start, end) = own[:-1], own[-1]
            first = end - start - sum(len(text) + _JOIN for text in contents)
            for position, size in enumerate([first, *map(len, contents)]):
                piece = ((start, start + size),) if size else ()
                out.append(reasoning + piece if position == 0 else piece)
                start += size + _JOIN
    return out


def _selected(generated: list[Range], owners: list[int], entries: list[Entry], last_user: int,
              policy: GeneratedPolicy) -> Ranges:
    """The generated ranges of the assistant messages ``policy`` selects, as
    ``prompt_formats.spans.select_generated`` over every message owning its run's ranges makes them:
    an assistant message is after the last user message exactly when its run is after the last user
    run. Already canonical: in text order, any two apart by at least ``<|start|>assistant``."""
    if policy == "all":
        return tuple(generated)
    if policy == "last":
        last = max((index for index, entry in enumerate(entries) if entry[0] == "assistant"), default=-1)
        return tuple(pair for owner, pair in zip(owners, generated, strict=True) if owner == last)
    return tuple(pair for owner, pair in zip(owners, generated, strict=True) if owner > last_user)


def harmony_rendered_prompt(
    messages: Conversation, tools: Tools, date: str, reasoning_line: str, policy: GeneratedPolicy
) -> RenderedPrompt:
    """The :class:`RenderedPrompt` of ``render_harmony(messages, tools, date, reasoning_line)``.

    Raises what ``render_harmony`` raises, before any range is made."""
    merged: list[Member] = []
    tools_text, system, entries, last_user = collated(messages, tools, merged)
    ends = message_ends(entries)
    out = [SYSTEM_START, "\n\n".join(system), DATE, date, reasoning_line, tools_text, SYSTEM_END]
    generated: list[Range] = []
    owners: list[int] = []
    ranges = _write(out, entries, last_user, ends, generated, owners)
    if ends[0] and ends[1]:  # no prefill: the generation prompt
        out.append(GENERATION)
    else:  # the message the prefill leaves open, for the model to continue
        generated.pop()
        owners.pop()
    if merged:
        ranges = _by_message(ranges, merged)
    return RenderedPrompt.unchecked(
        "".join(out), tuple(ranges), _selected(generated, owners, entries, last_user, policy)
    )
