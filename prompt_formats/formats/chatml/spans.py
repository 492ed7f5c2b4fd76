"""``render_spans`` for the ChatML formats: where each message landed, and what the model generated.

The builder of :mod:`.render` notes each turn's ranges as it writes it (``render.NotedRender``): a
user or tool message's range is its printed content (none when it is empty), from the lengths of
the pieces it writes (its opener, content, closer); an assistant message's range, and what it
generated, is its whole turn after ``<|im_start|>assistant\n`` up to and including its
``<|im_end|>``; the system message's, its text in the prologue. What is left here is mapping the
positions after merging back to input messages, and the ``generated=`` policy. Under
``chatml-multi-system`` every system message merged into the leading system turn gets its own part
of that turn's text (the blank lines joining them are the template's). What a range covers:
docs/training-data.md. The differential tests compare every range with transformers' generation
indices and rebuild the prompt from the ranges and the template's literals, so a writer whose
layout changes fails them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...errors import InvalidInputError
from ...format.chat_format import Conversation, Tools
from ...format.continuation import TAG_TEXT, render_continued
from ...format.spans import GeneratedPolicy, Range, RenderedPrompt, cut_prompt
from ...model.messages import message_dict
from .drops import note_cut_drops
from .render import NotedRender

__all__ = ["continued_prompt", "rendered_prompt"]

_BLANK_LINE = len("\n\n")


def rendered_prompt(text: str, noted: NotedRender, message_count: int, policy: GeneratedPolicy) -> RenderedPrompt:
    """The :class:`RenderedPrompt` of one conversation's prompt ``text`` and what its render
    noted (``message_count``: input messages)."""
    roles, origins, merged, (turns, generated, _) = noted.roles, noted.origins, noted.merged, noted.spans
    if type(origins) is range:  # every input message kept, or all but a leading blank system one
        ranges = [()] * origins.start + turns if origins.start else turns
    else:
        ranges = [()] * message_count
        for pos, origin in enumerate(origins):
            if origin is not None:
                ranges[origin] = turns[pos]
        if origins[0] is None:
            _split_merged(turns[0], merged, ranges)
    if policy != "all":
        generated = _selected(generated, roles, policy)
    return RenderedPrompt.unchecked(text, tuple(ranges), tuple(generated), tuple(noted.dropped))


def _selected(generated: list[Range], roles: list[str], policy: GeneratedPolicy) -> list[Range]:
    """The ranges of the assistant turns ``policy`` selects (``generated``: every assistant turn's,
    in order), as ``prompt_formats.format.spans.select_generated`` selects them by input message (positions
    keep the input order; a message without a turn is a system one, never a user's), already in
    canonical form: one range per turn, any two apart by at least the next turn's header. (So not
    ``select_generated`` itself, whose sorting and merging would cost a large part of the budget;
    tests/spans/test_chatml_spans.py checks the selection against the policies' definition on every
    case.)"""
    if policy == "last":
        return generated[-1:]
    # after_last_user: the assistant turns after the last user message.
    last_user = max((pos for pos, role in enumerate(roles) if role == "user"), default=-1)
    after = roles[last_user + 1:].count("assistant")
    return generated[len(generated) - after:]


def _split_merged(merged_range: tuple[Range, ...], merged: Sequence[tuple[int, int]],
                  ranges: list[tuple[Range, ...]]) -> None:
    """Give each system message merged into ``merged_range`` its part: the merged text is every
    non-empty system text, in input order, joined with blank lines (``read._merge_system``, which
    noted each one's input index and length in ``merged``)."""
    (at, _), = merged_range
    for index, size in merged:
        ranges[index] = ((at, at + size),)
        at += size + _BLANK_LINE


def continued_prompt(messages: Conversation, tools: Tools, walk: Callable[[Any], tuple[str, NotedRender]],
                     field: str, policy: GeneratedPolicy, reads: str | None = None) -> RenderedPrompt:
    """The :class:`RenderedPrompt` of ``render``'s prompt under ``continue_final_message`` (``field``
    continued): the tagged conversation rendered and noted as without it (``walk(tagged)``: the
    template's walk, no generation prompt, its prompt and what it noted; ``reads``: the fields it
    reads, where it does not read every reasoning field), then cut where
    transformers cuts it (:func:`~prompt_formats.format.continuation.render_continued`, as ``render`` cuts
    it). Every range is cut there: the continued message's runs to the end of the prompt (generated,
    where it is an assistant's); ``dropped`` adds what the cut leaves out. Raises
    :class:`~prompt_formats.errors.InvalidInputError` where the prompt holds the tag's text of its
    own (the input's): the cut then is not the continued text's end."""
    renders: list[tuple[str, NotedRender]] = []

    def noted_render(tagged: Any) -> str:
        renders.append(walk(tagged))
        return renders[-1][0]

    prompt = render_continued(noted_render, messages, field, reads)
    text, noted = renders[-1]
    if TAG_TEXT in prompt:
        raise _holding_tag(messages, tools)
    whole = rendered_prompt(text, noted, len(messages), policy)
    cut = len(prompt)
    given = [message_dict(message, index) for index, message in enumerate(messages)]
    cut_whole = [bool(ranges) and ranges[0][0] >= cut for ranges in whole.messages]
    return cut_prompt(whole, cut, note_cut_drops(list(whole.dropped), given, cut_whole, field))


def _holding_tag(messages: Conversation, tools: Tools) -> InvalidInputError:
    """The error for an input whose text holds the tag's: at the first tool or message field holding it."""
    fields: list[tuple[str, Any]] = [(f"tools[{k}]", tool) for k, tool in enumerate(tools or ())]
    for index, message in enumerate(messages):
        fields.extend((f"messages[{index}].{key}", value) for key, value in message_dict(message, index).items())
    path = next((path for path, value in fields if _holds(value, TAG_TEXT)), "messages")
    return InvalidInputError(path, f"holds {TAG_TEXT!r}, the text where continue_final_message cuts the prompt (as "
                             "transformers does): render_spans cannot say what such a cut leaves out")


def _holds(value: Any, text: str) -> bool:
    """Whether a string under ``value`` (a key or a value, at any depth) holds ``text``."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if text in item:
                return True
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False
