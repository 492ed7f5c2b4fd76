"""Gemma 4 (``gemma-4``): Google's Gemma 4 models, exactly as their template renders, and their replies.

The reference is ``tests/fixtures/families/gemma4.jinja``, rendered by Jinja2 as transformers
configures it. The walk is :mod:`.render` (its value notation :mod:`.notation`). What surprises
users is on docs/gemma-4.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ....errors import FormatError
from ....format.chat_format import GUARD_CONFIG, Conversation, GuardedFormat, Tools, render_strictly
from ....format.options import STRICT, STRICT_PARSE, Option, bos_token, bos_token_specs
from ....format.spans import GeneratedPolicy, RenderedPrompt
from ....model.tools import offered_names
from ..tokens import BOS, GEMMA4_CONTROL_TOKENS
from ..untrusted import GEMMA4_READING
from .guarding import guarded_extras
from .incremental import Gemma4Incremental
from .parse import Gemma4ReplyParser
from .render import message_dicts, tools_block, walk
from .spans import rendered_prompt

__all__ = ["Gemma4Format", "Gemma4ReplyParser"]

_BOS_RENDER, _BOS_PARSE = bos_token_specs(BOS)
_THINKING = Option("enable_thinking", frozenset({"boolean", "null"}),
                   "true: '<|think|>' opens the system turn, and reasoning is read after tool results (default false)")
_PRESERVE = Option("preserve_thinking", frozenset({"boolean", "null"}),
                   "true: an assistant's reasoning is written in every message with tool calls, not only after the "
                   "last user message (default false)")
_OPTION_SPECS = (_BOS_RENDER, _THINKING, _PRESERVE, STRICT)
_ACCEPTED = "accepted so render's options can be passed as they are; no effect on parsing"
_PARSE_SPECS = (
    _BOS_PARSE, Option("enable_thinking", frozenset({"boolean", "null"}), _ACCEPTED + " (a channel is read as "
                       "reasoning wherever the completion opens one)"),
    Option("preserve_thinking", frozenset({"boolean", "null"}), _ACCEPTED),
    Option("in_thought", frozenset({"boolean", "null"}),
           "true: the completion begins inside the reasoning (the prompt ended with '<|channel>thought\\n', "
           "render's generation prompt after tool results with enable_thinking)"),
    STRICT_PARSE,
)


class Gemma4Format(GuardedFormat):
    """The ``gemma-4`` format: Gemma 4's template, byte for byte.

    ``<|turn>ROLE`` … ``<turn|>`` turns (``assistant`` written ``model``); a system turn for a
    leading system or developer message, the tools' declarations and ``<|think|>``; reasoning in a
    ``<|channel>thought`` block after the last user message; calls as
    ``<|tool_call>call:NAME{…}<tool_call|>`` and their results inside the same model turn, in the
    template's own notation (strings between ``<|"|>``). Options ``bos_token`` (default ``'<bos>'``),
    ``enable_thinking``, ``preserve_thinking``. Reference: ``tests/fixtures/families/gemma4.jinja``.
    """

    name = "gemma-4"
    summary = "Gemma 4 as its template renders it (thinking channel, calls and results in the model's turn)"
    config_specs: ClassVar[tuple[Option, ...]] = (GUARD_CONFIG,)
    control_tokens = GEMMA4_CONTROL_TOKENS
    option_specs: ClassVar[tuple[Option, ...]] = _OPTION_SPECS
    options: ClassVar[Mapping[str, str]] = {spec.name: spec.description for spec in _OPTION_SPECS}
    parse_option_specs: ClassVar[tuple[Option, ...]] = _PARSE_SPECS
    parse_options: ClassVar[Mapping[str, str]] = {spec.name: spec.description for spec in _PARSE_SPECS}

    def render(self, messages: Conversation, tools: Tools = None, add_generation_prompt: bool | None = None,
               **options: Any) -> str:
        """Render one conversation to exactly the text Gemma 4's template renders.

        ``add_generation_prompt`` (``None``: no) ends the prompt with ``<|turn>model\\n`` (after
        calls, nothing; after tool results with thinking on, ``<|channel>thought\\n``). Raises
        :class:`~prompt_formats.errors.TemplateError` with the template's message for a call's
        arguments that are no object, and :class:`~prompt_formats.errors.InvalidInputError` naming the
        field where the engine itself fails. ``strict=True``: the same text, or InvalidInputError at
        the first input left out.
        """
        if options and "strict" in options:
            return render_strictly(self, messages, tools, add_generation_prompt, options)
        msgs, tools_text, bos, thinking, preserve = self._prepared(messages, tools, options)
        return "".join(walk(msgs, tools_text, add_generation_prompt, thinking, preserve, bos).out)

    def _render_spans(self, messages: Conversation, tools: Tools, add_generation_prompt: bool | None,
                      policy: GeneratedPolicy, options: dict[str, Any]) -> RenderedPrompt:
        msgs, tools_text, bos, thinking, preserve = self._prepared(messages, tools, options)
        return rendered_prompt(msgs, tools_text, add_generation_prompt, thinking, preserve, bos, policy)

    renders_incrementally = True

    def _incremental_renderer(self, tools: Tools, options: dict[str, Any]) -> Gemma4Incremental | None:
        # strict: the full render refuses the losses, which the session's walk does not track.
        if self.guard is not None or "strict" in options:
            return None
        try:
            _, tools_text, bos, thinking, preserve = self._prepared([], tools, options)
        except FormatError:  # every render raises it: full renders do
            return None
        return Gemma4Incremental(tools_text, bos, thinking, preserve)

    def _prepared(self, messages: Conversation, tools: Tools, options: dict[str, Any]
                  ) -> tuple[list[dict[str, Any]], str, str, bool, bool]:
        """The messages as dicts, the tools' declarations, ``bos_token`` and the two thinking flags;
        options checked."""
        if options:
            self.check_options(options)
        bos = bos_token(options, BOS)
        thinking, preserve = bool(options.get("enable_thinking")), bool(options.get("preserve_thinking"))
        if self.guard is None:
            return message_dicts(messages), tools_block(tools), bos, thinking, preserve
        tools_text = tools_block(self.guard.guard_tools(tools))
        msgs = message_dicts(self.guard.guard_messages(messages, GEMMA4_READING))
        system_first = bool(msgs) and msgs[0].get("role") in ("system", "developer")
        return guarded_extras(self.guard, msgs, system_first), tools_text, bos, thinking, preserve

    def stream_parser(self, tools: Tools = None, *, id_factory: Callable[[], str] | None = None,
                      **context: Any) -> Gemma4ReplyParser:
        """A new :class:`Gemma4ReplyParser` for one completion (the text after the generation prompt).

        ``context``: ``render``'s options (no effect) and ``in_thought`` (the completion begins inside
        the reasoning). ``tools`` are checked (the notation types each value itself); ``id_factory``
        makes the call ids. Its events, concatenated over any split of the completion, assemble to
        exactly ``parse(completion)``.
        """
        if context:
            self.check_options(context, self.parse_options)
        offered_names(tools)
        return Gemma4ReplyParser(id_factory, bool(context.get("in_thought")))
