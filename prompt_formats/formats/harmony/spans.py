"""``render_spans`` for Harmony: where each input message landed in Ollama's template, and what was generated.

``render_harmony`` collates the messages before it writes them, which joins the contents of a run of
same-role messages and so loses where one ends. Rather than make ``render`` note those edges (work
every call would pay), this module renders with ``render_harmony`` and then walks the messages once
more, collating them the same way but keeping every input message's own content, and adds up the
lengths of the pieces the template writes (its fixed pieces' lengths are constants). The tests rebuild
the prompt from the ranges and the template's literals on every generated case and compare the text
with the Go oracle's, so a change of layout in ``render.py`` that is not made here fails them.

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

from collections.abc import Sequence
from typing import Any

from ...format import Conversation, Tools
from ...spans import GeneratedPolicy, Range, RenderedPrompt, select_generated
from .render import _call_names, _fields, _tool_call_id, _tools_text, render_harmony
from .tokens import ANALYSIS, DATE, END, FINAL, GENERATION, PYTHON_RESULT, SYSTEM_END, SYSTEM_START, USER

__all__ = ["harmony_rendered_prompt"]

_JOIN = len("\n\n")
_AUTHOR = len(GENERATION)  # "<|start|>assistant": where a generated range starts, after it


class _Run:
    """One collated entry: its role, input message indices, the first one's reasoning and tool name."""

    __slots__ = ("members", "name", "role", "thinking")

    def __init__(self, role: str, index: int, thinking: str | None, name: str | None) -> None:
        self.role = role
        self.members = [index]
        self.thinking = thinking
        self.name = name


def _collate_runs(messages: Sequence[Any], fields: list[tuple[str, str, Any, Any]]) -> tuple[list[_Run], int]:
    """Ollama's collation as ``render._collate`` does it, keeping each run's input message indices;
    with the index of the last user run (or -1)."""
    runs: list[_Run] = []
    last_user = -1
    names: dict[str, str] | None = None
    for index, (role, _content, thinking, name) in enumerate(fields):
        if runs and runs[-1].role == role and role != "tool":
            runs[-1].members.append(index)
            continue
        if role == "user":
            last_user = len(runs)
        elif role == "tool" and not name:
            call_id = _tool_call_id(messages[index], index)
            if call_id:
                names = _call_names(messages) if names is None else names
                name = names.get(call_id, name)
        runs.append(_Run(role, index, thinking, name))
    return runs, last_user


def _lay_out(members: list[int], contents: list[str], pos: int, ranges: list[list[Range]]) -> int:
    """Give each member its content's range in their ``"\\n\\n"``-joined text starting at ``pos``;
    the position after that text."""
    for position, index in enumerate(members):
        if position:
            pos += _JOIN
        size = len(contents[index])
        if size:
            ranges[index].append((pos, pos + size))
        pos += size
    return pos


def _assistant(
    run: _Run, contents: list[str], pos: int, open_ends: tuple[bool, bool], shows_thinking: bool,
    ranges: list[list[Range]],
) -> tuple[int, list[Range]]:
    """Lay out one assistant run (analysis message, then final message); the position after it and
    its generated ranges. ``open_ends``: whether the analysis and the final messages lack ``<|end|>``."""
    generated: list[Range] = []
    if run.thinking and shows_thinking:
        start = pos + _AUTHOR
        pos += len(ANALYSIS)
        ranges[run.members[0]].append((pos, pos + len(run.thinking)))
        pos += len(run.thinking) + (0 if open_ends[0] else len(END))
        generated.append((start, pos))
    before = pos + len(FINAL)
    after = _lay_out(run.members, contents, before, ranges)
    if after > before:  # the merged content is not empty: the final message is written
        pos = after + (0 if open_ends[1] else len(END))
        generated.append((before - len(FINAL) + _AUTHOR, pos))
    return pos, generated


def harmony_rendered_prompt(
    messages: Conversation, tools: Tools, date: str, reasoning_line: str, policy: GeneratedPolicy
) -> RenderedPrompt:
    """The :class:`RenderedPrompt` of ``render_harmony(messages, tools, date, reasoning_line)``.

    Raises what ``render_harmony`` raises, before any range is made."""
    text = render_harmony(messages, tools, date, reasoning_line)
    fields = [_fields(message, index) for index, message in enumerate(messages)]
    contents = [entry[1] for entry in fields]
    ranges: list[list[Range]] = [[] for _ in fields]
    runs, last_user = _collate_runs(messages, fields)
    system = [index for index, entry in enumerate(fields) if entry[0] == "system"]
    pos = _lay_out(system, contents, len(SYSTEM_START), ranges)
    tools_text = _tools_text(tools) if tools else ""
    pos += len(DATE) + len(date) + len(reasoning_line) + len(tools_text) + len(SYSTEM_END)
    last = runs[-1] if runs and runs[-1].role == "assistant" else None
    # The run's merged content is not empty: a content of its own, or a "\n\n" join.
    prefill_content = last is not None and (len(last.members) > 1 or any(contents[i] for i in last.members))
    prefill_thinking = last is not None and not prefill_content and bool(last.thinking)
    open_ends = (prefill_thinking, prefill_content)
    generated: list[list[Range]] = [[] for _ in fields]
    for number, run in enumerate(runs):
        if run.role == "user":
            pos = _lay_out(run.members, contents, pos + len(USER), ranges) + len(END)
        elif run.role == "assistant":
            pos, made = _assistant(run, contents, pos, open_ends, number > last_user, ranges)
            if run is last and (prefill_content or prefill_thinking):
                made.pop()  # the message the prefill leaves open, for the model to continue
            for index in run.members:
                generated[index] = made
        elif run.role == "tool" and run.name == "python":
            pos = _lay_out(run.members, contents, pos + len(PYTHON_RESULT), ranges) + len(END)
    roles = [entry[0] for entry in fields]
    return RenderedPrompt.unchecked(
        text, tuple(tuple(own) for own in ranges), select_generated(roles, generated, policy)
    )
