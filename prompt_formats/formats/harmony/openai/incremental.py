"""Incremental gpt-oss rendering for sessions: a growing conversation re-renders only what changed.

Built on :func:`~.render.render_messages` and :func:`~.prompt.prompt_pieces` (called read-only).
After the system and developer messages (fixed by the tools, the options and the first message;
the system message's date is read on every render, as ``render`` reads it), a loop message's text
depends on the message and:

- for a tool result, on the call it answers (the last tool call, unless a final answer came after
  it): it is rendered after that call, whose text is then cut off;
- for a tool call, on whether a final answer (an assistant message without tool calls) comes
  after it: the template keeps the call's analysis only until then. Both texts are kept, and when
  a new final answer arrives the calls before it switch to the one without analysis;
- for a final answer, on whether it ends a prompt without generation prompt (training data: its
  analysis and ``<|return|>``): such a request steps aside to the full render.

Each new message is rendered alone (or after its call), through the same writers, so with the
same checks; anything unexpected — an error, input that is not a list of dicts, a guard,
``decode_tool_arguments`` — steps aside to the full render (the session's fallback), which is the
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
from .render import render_messages, system_message
from .texts import GENERATION

if TYPE_CHECKING:
    from ....format.chat_format import Conversation, Tools

__all__ = ["GptOssIncremental", "incremental_renderer"]

# How many stable messages are joined into one chunk of the prompt's head: the prompt is then the
# system and developer messages, a few chunks and the last messages, so joining it copies each once.
_CHUNK = 16
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

    __slots__ = ("_call_at", "_call_text", "_developer", "_dropped", "_last_final",
                 "_options", "_texts", "_tools")

    def __init__(self, tools: Tools, options: Mapping[str, Any]) -> None:
        self._tools, self._options = tools, dict(options)
        self._reset()

    def _reset(self) -> None:
        self._rendered: list[Any] = []  # the caller's message objects, as last rendered
        self._developer: list[str] = []  # the developer message's pieces
        self._texts: list[str] = []  # each message's text ("" for the first one when it gave the instructions)
        self._dropped: dict[int, str] = {}  # the text without analysis of each call after the last final answer
        self._call_at = -1  # the tool call a tool result answers (-1: none)
        self._call_text = ""  # its text with its analysis
        self._last_final = -1  # the last final answer (-1: none)
        self._chunks: list[str] = []  # texts[previous end:end] joined, for each end in chunk_ends
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
        return self._joined(system, stable, GENERATION if add_generation_prompt else "")

    def _first(self, messages: list[Any]) -> int:
        """Render every message; the number of messages (all of them stable)."""
        head = prompt_pieces(messages[:1], self._tools, True, SystemOptions(self._options), noting=False)
        self._developer = head.pieces[1:head.loop_at]
        self._texts = [""] * len(messages)
        self._dropped, self._call_text = {}, ""
        self._call_at = self._last_final = -1
        self._chunks, self._chunk_ends = [], []
        self._render_new(messages, head.start)
        return len(messages)

    def _extend(self, messages: list[Any]) -> int:
        """Render the new messages, and the calls a new final answer drops the analysis of; the first changed."""
        old = len(self._rendered)
        self._texts += [""] * (len(messages) - old)
        return min(old, self._render_new(messages, old))

    def _render_new(self, messages: list[Any], start: int) -> int:
        """Render messages ``start`` on, each as a loop message after the ones before it, and drop the
        analysis of the calls before a new final answer; the first of them (else the number of messages)."""
        texts, dropped, previous_final = self._texts, self._dropped, self._last_final
        for index in range(start, len(messages)):
            message = messages[index]
            role = message.get("role")
            if role == "tool" and self._call_at >= 0:
                texts[index] = _alone([messages[self._call_at], message])[len(self._call_text):-len(GENERATION)]
            elif role == "assistant" and message.get("tool_calls") is not None:
                self._call_text = texts[index] = _alone([message])[:-len(GENERATION)]
                dropped[index] = _alone([message, _PLACEHOLDER_FINAL])[:-len(_AFTER_PLACEHOLDER)]
                self._call_at = index
            else:  # a user message, a final answer, or what raises as the first loop message would
                texts[index] = _alone([message])[:-len(GENERATION)]
                if role == "assistant":
                    self._call_at, self._last_final = -1, index
        last_final = self._last_final
        if last_final == previous_final:
            return len(messages)
        changed = [index for index in sorted(dropped) if index < last_final]  # the calls after the previous final
        for index in changed:
            texts[index] = dropped.pop(index)
        return changed[0] if changed else len(messages)

    def _joined(self, system: str, stable: int, tail: str) -> str:
        """The prompt: the system and developer messages, the chunks of messages before ``stable``
        (one more when enough are stable), the other messages, ``tail``."""
        texts, chunks, ends = self._texts, self._chunks, self._chunk_ends
        upto = ends[-1] if ends else 0
        if stable - upto >= _CHUNK:
            chunks.append("".join(texts[upto:stable]))
            ends.append(stable)
            upto = stable
        return "".join((system, *self._developer, *chunks, *texts[upto:], tail))
