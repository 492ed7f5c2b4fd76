"""``render_spans`` for gpt-oss: where each message's Harmony messages are, and what the model generated.

The writers of ``render.py`` lay every loop message out as a fixed sequence of pieces, whose first
piece is a header constant:

- a user message: ``USER, content, END``;
- a tool result: ``RESULT_HEAD, name, RESULT_CHANNEL, json, END`` (the name is the last call's);
- an assistant message: one Harmony message, or an analysis message ``ANALYSIS, text, END`` and then
  one: a call ``CALL_HEAD, name, CALL_CHANNEL, content type, MESSAGE, arguments, CALL`` or an
  answer ``FINAL, content, END or RETURN``.

So the ranges come from one walk over the pieces after the system and developer messages, adding
up the lengths of the variable pieces (the fixed pieces' lengths are constants), without reading
the messages again and without any bookkeeping in ``render``. The tests compare every range with
transformers' generation indices and rebuild the prompt from the ranges and the template's literals
on every generated case, so a writer whose layout changes fails them.

A message's range is each Harmony message it produced, from right after ``<|start|>`` and its author
(``user``, ``assistant``, ``functions.NAME``) up to and including its terminator; for an assistant
message that is exactly what the model generated (docs/training-data.md). The leading system or
developer message's range is its text in the developer message's instructions.
"""

from __future__ import annotations

from ....format.spans import GeneratedPolicy, Range, RenderedPrompt
from . import texts as t
from .prompt import PromptPieces

__all__ = ["rendered_prompt"]

_ASSISTANT_AUTHOR = len(t.GENERATION)  # "<|start|>assistant"
_USER_AUTHOR = len(t.USER) - len(t.MESSAGE)  # "<|start|>user"
_USER_FIXED = len(t.USER) + len(t.END) - _USER_AUTHOR  # the fixed text inside a user message's range
_RESULT_HEAD = len(t.RESULT_HEAD)
_RESULT_FIXED = len(t.RESULT_CHANNEL) + len(t.END)
_ANALYSIS_FIXED = len(t.ANALYSIS) + len(t.END)
_CALL_FIXED = len(t.CALL_HEAD) + len(t.CALL_CHANNEL) + len(t.MESSAGE) + len(t.CALL)
_FINAL = len(t.FINAL)
_INSTRUCTIONS = 3  # the piece index of the instructions: system, DEVELOPER, "# Instructions\n\n", text


def rendered_prompt(
    prompt: PromptPieces, message_count: int, policy: GeneratedPolicy, options_lost: tuple[str, ...] = ()
) -> RenderedPrompt:
    """The :class:`RenderedPrompt` of one conversation's pieces (``message_count`` input messages);
    ``options_lost``: the options' entries the template ignored, first in ``dropped``."""
    pieces, start, k = prompt.pieces, prompt.start, prompt.loop_at
    skipped = {index for index, field in prompt.lost if not field}  # messages with no pieces
    ranges: list[tuple[Range, ...]] = []
    if start:
        begin = sum(map(len, pieces[:_INSTRUCTIONS]))
        ranges.append(((begin, begin + len(prompt.instructions)),) if prompt.instructions else ())
    pos = sum(map(len, pieces[:k]))  # the system and developer messages
    assistants: list[int] = []
    last_user = -1
    for index in range(start, message_count):
        if index in skipped:
            ranges.append(())
            continue
        head = pieces[k]
        if head == t.RESULT_HEAD:
            begin = pos + _RESULT_HEAD + len(pieces[k + 1])
            pos = begin + _RESULT_FIXED + len(pieces[k + 3])
            ranges.append(((begin, pos),))
            k += 5
        elif head == t.USER:
            last_user = index
            begin = pos + _USER_AUTHOR
            pos = begin + _USER_FIXED + len(pieces[k + 1])
            ranges.append(((begin, pos),))
            k += 3
        else:
            assistants.append(index)
            begin = pos + _ASSISTANT_AUTHOR
            split = -1
            if head == t.ANALYSIS:
                split = pos = pos + _ANALYSIS_FIXED + len(pieces[k + 1])
                k += 3
                head = pieces[k]
            if head == t.CALL_HEAD:
                pos += _CALL_FIXED + len(pieces[k + 1]) + len(pieces[k + 3]) + len(pieces[k + 5])
                k += 7
            else:  # FINAL
                pos += _FINAL + len(pieces[k + 1]) + len(pieces[k + 2])
                k += 3
            if split < 0:
                ranges.append(((begin, pos),))
            else:
                ranges.append(((begin, split), (split + _ASSISTANT_AUTHOR, pos)))
    generated = _generated(ranges, _selected(assistants, last_user, policy))
    dropped = (*options_lost, *(f"messages[{index}].{field}" if field else f"messages[{index}]"
                                for index, field in prompt.lost if field is not None))
    return RenderedPrompt.unchecked("".join(pieces), tuple(ranges), generated, dropped)


def _selected(assistants: list[int], last_user: int, policy: GeneratedPolicy) -> list[int]:
    """The assistant messages ``policy`` selects, as ``prompt_formats.format.spans.select_generated`` defines
    them (the leading message, when not a loop message, is a system or developer one: not a user's)."""
    if policy == "all":
        return assistants
    if policy == "last":
        return assistants[-1:]
    return [index for index in assistants if index > last_user]


def _generated(ranges: list[tuple[Range, ...]], selected: list[int]) -> tuple[Range, ...]:
    """The selected messages' ranges, already in canonical form: in message order, each message's in
    text order, any two apart by at least a ``<|start|>assistant`` header. (So not ``select_generated``,
    whose sorting and merging cost a fifth of ``render`` on agent requests; the tests compare the
    two on every case.)"""
    if len(selected) == 1:
        return ranges[selected[0]]
    return tuple(pair for index in selected for pair in ranges[index])
