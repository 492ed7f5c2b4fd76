"""Incremental gpt-oss rendering for sessions: a growing conversation re-renders only what changed.

Built on :func:`~.render.render_messages` and :func:`~.prompt.prompt_pieces` (called read-only).
After the system and developer messages (fixed by the tools, the options and the first message;
the system message's date is read on every render, as ``render`` reads it), a loop message's text
depends on the message and:

- for a tool result, on the call it answers (the last tool call, unless a final answer came after
  it): it is rendered after that call, whose text is then cut off;
- for a tool call, on whether a final answer (an assistant message without tool calls) comes
  after it: the template keeps the call's analysis only until then. When a new final answer
  arrives, the calls before it are written again without their analysis;
- for a final answer, on whether it ends a prompt without generation prompt (training data: its
  analysis and ``<|return|>``): such a request steps aside to the full render.

A session's first request is rendered by the template's one walk, which notes where each message
starts (its texts left in the walk's pieces: :meth:`~prompt_formats.format.history.ExtendingRenderer._unsplit`);
each later message is rendered alone (or after its call), through the same writers, so with the
same checks; anything unexpected — an error, input that is not a list, new messages that are not
dicts, a guard, ``decode_tool_arguments`` — steps aside to the full render (the session's fallback), which is the
one checked path. Why: an agent loop renders the whole conversation again each turn; this writes
only the new turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ....format.history import ExtendingRenderer
from ....model.arguments import decode_arguments_option
from .options import SystemOptions
from .prompt import prompt_pieces
from .render import FirstRender, render_messages, system_message
from .texts import GENERATION

if TYPE_CHECKING:
    from ....format.chat_format import Conversation, Tools

__all__ = ["GptOssIncremental", "incremental_renderer"]

# A final answer after a tool call: the call is then written without its analysis.
_PLACEHOLDER_FINAL = {"role": "assistant", "content": "x"}


def incremental_renderer(tools: Tools, options: Mapping[str, Any]) -> GptOssIncremental | None:
    """The per-session state for these tools and options, or ``None`` where only full renders are exact."""
    try:
        if decode_arguments_option(options.get("decode_tool_arguments")):
            return None  # the messages are decoded before rendering
        if options.get("strict") is not None:
            return None  # a strict render is a render_spans, which full renders do
        SystemOptions(options)
    except Exception:  # every render raises it: full renders do
        return None
    return GptOssIncremental(tools, options)


def _alone(window: list[Any]) -> str:
    """The loop text of ``window`` with the generation prompt (so that no final answer ends it)."""
    out: list[str] = []
    render_messages(out, window, 0, True, noting=False)
    return "".join(out)


#: The placeholder's text after the call, generation prompt included, as the walk writes it.
_AFTER_PLACEHOLDER = _alone([_PLACEHOLDER_FINAL])


class GptOssIncremental(ExtendingRenderer):
    """One session's rendered loop messages (see the module docstring). Not shared: the session locks it."""

    __slots__ = ("_call_at", "_call_text", "_developer", "_last_final", "_open_calls",
                 "_options", "_texts", "_tools")
    _first_reads_any = True  # (every message, and an earlier call a new result follows, is read by the walk)

    def __init__(self, tools: Tools, options: Mapping[str, Any]) -> None:
        self._tools, self._options = tools, dict(options)
        self._reset()

    def _reset(self) -> None:
        self._rendered: list[Any] = []  # the caller's message objects, as last rendered
        self._developer: list[str] = []  # the developer message's pieces
        self._texts: list[str] = []  # each message's text ("" for the first one when it gave the instructions)
        self._open_calls: list[int] = []  # the calls after the last final answer (written with their analysis)
        self._call_at = -1  # the tool call a tool result answers (-1: none)
        self._call_text = ""  # its text with its analysis
        self._last_final = -1  # the last final answer (-1: none)
        self._chunks: list[str] = []
        self._chunk_ends: list[int] = []

    def render(self, messages: Conversation, add_generation_prompt: bool | None) -> str | None:
        """The prompt ``render`` gives, or ``None`` to step aside to a full render."""
        given: Any = add_generation_prompt  # render refuses what is neither a bool nor None
        if given is None:
            add_generation_prompt = False
        elif type(given) is not bool:
            return None
        try:
            system = system_message(SystemOptions(self._options), bool(self._tools))  # today's date, if not given
        except Exception:  # the full render raises it
            return None
        stable = self._stable(messages)
        if stable is None:
            return None
        if not add_generation_prompt and self._last_final == len(messages) - 1:
            return None  # a final answer ends the prompt: the full render writes its analysis and <|return|>
        tail = GENERATION if add_generation_prompt else ""
        return self._prompt((system, *self._developer), self._texts, stable, tail)

    def _first(self, messages: list[Any]) -> int:
        """Render every message, by the template's walk; the number of messages (all of them stable)."""
        first = FirstRender()
        head = prompt_pieces(messages, self._tools, True, SystemOptions(self._options), noting=False, first=first)
        pieces = head.pieces
        pieces.pop()  # the generation prompt: the request's own tail
        self._developer = pieces[1:head.loop_at]
        # (a first message that gave the instructions has no pieces of its own: its text is "")
        self._texts = self._unsplit(pieces, [head.loop_at] * head.start + first.starts)
        self._chunks, self._chunk_ends = [], []
        self._open_calls, self._last_final = first.open_calls, first.last_final
        self._call_at = first.open_calls[-1] if first.open_calls else -1
        self._call_text = self._text(self._texts, self._call_at) if self._call_at >= 0 else ""
        return len(messages)

    def _extend(self, messages: list[Any]) -> int:
        """Render the new messages, and the calls a new final answer drops the analysis of; the first changed."""
        old = len(self._rendered)
        self._texts += [""] * (len(messages) - old)
        return min(old, self._render_new(messages, old))

    def _render_new(self, messages: list[Any], start: int) -> int:
        """Render messages ``start`` on, each as a loop message after the ones before it, and write
        again without their analysis the calls before a new final answer; the first of them (else
        the number of messages)."""
        texts, open_calls, previous_final = self._texts, self._open_calls, self._last_final
        for index in range(start, len(messages)):
            message = messages[index]
            role = message.get("role")
            if role == "tool" and self._call_at >= 0:
                texts[index] = _alone([messages[self._call_at], message])[len(self._call_text):-len(GENERATION)]
            elif role == "assistant" and message.get("tool_calls") is not None:
                self._call_text = texts[index] = _alone([message])[:-len(GENERATION)]
                open_calls.append(index)
                self._call_at = index
            else:  # a user message, a final answer, or what raises as the first loop message would
                texts[index] = _alone([message])[:-len(GENERATION)]
                if role == "assistant":
                    self._call_at, self._last_final = -1, index
        last_final = self._last_final
        if last_final == previous_final:
            return len(messages)
        changed = [index for index in open_calls if index < last_final]  # the calls after the previous final
        for index in changed:
            texts[index] = _alone([messages[index], _PLACEHOLDER_FINAL])[:-len(_AFTER_PLACEHOLDER)]
        self._open_calls = [index for index in open_calls if index > last_final]
        return changed[0] if changed else len(messages)
