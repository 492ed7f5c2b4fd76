"""Harmony, OpenAI's gpt-oss prompt format, exactly as Ollama renders it with its Go template.

The reference is ``tests/fixtures/harmony_gpt_oss.gotmpl`` executed by Go's ``text/template`` with the
data Ollama feeds it. :meth:`HarmonyFormat.render` produces the same bytes, in one pass over the
messages, with every quirk of that template and of Ollama's preprocessing kept:

- Ollama *collates* the messages first: ``.System`` is the content of every system message joined
  with a blank line (``"\\n\\n"``), and a message of the same role as the one before it (``tool``
  excepted) is merged into that one: contents joined with ``"\\n\\n"``, its other fields (reasoning,
  tool name) dropped. System messages stay in the list (so they separate runs) but render nothing
  there; the system header is always rendered, with an empty system text if there is none;
- the header says ``Reasoning: <level>`` unless thinking was explicitly disabled, and has the
  ``# Tools / ## python`` block only when a tool named ``python`` is offered (no other tool renders);
- a user message renders as ``<|start|>user<|message|>…<|end|>``; an assistant message renders its
  reasoning (``analysis`` channel) only if it comes after the last user message, then its content
  (``final`` channel) if non-empty; a tool result renders only when the tool is named ``python``;
  other roles render nothing (they still take part in collation);
- prefill: when the last message is an assistant message with content, ``<|end|>`` is left off
  *every* final-channel message; when it has reasoning but no content, ``<|end|>`` is left off every
  analysis message. Otherwise the prompt ends with the generation header ``<|start|>assistant``.

Input normalisation (OpenAI-style dicts or :class:`~prompt_formats.model.messages.Message` objects):
``developer`` is read as ``system``; reasoning is the first non-``None`` of ``reasoning_content``,
``thinking``, ``reasoning``; a tool result's name is ``tool_name``, else ``name``, else (as Ollama's
OpenAI endpoint does) the name of the tool call whose ``id`` is its ``tool_call_id``; content is a
string, ``None`` (empty) or a list of text parts joined with ``"\\n\\n"``. Image and video parts
raise :class:`UnsupportedContentError`. Tool calls are read only to name such a tool result; other
fields are not read. The reply parser's rules are in :mod:`prompt_formats.formats.harmony.parse`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ....errors import InvalidInputError
from ....format.chat_format import GUARD_CONFIG, Conversation, GuardedFormat, Tools, refuse_losses, render_strictly
from ....format.options import Option, strict_flag
from ....format.spans import RenderedPrompt, check_generated_policy
from ....model.arguments import decode_arguments_option
from ....model.tools import offered_names
from ..parse import HarmonyReplyParser, parse_header
from ..tokens import CONTROL_TOKENS
from ..untrusted import HARMONY_READING
from .incremental import HarmonyIncremental, incremental_renderer
from .options import (
    OPTION_SPECS,
    OPTIONS,
    PARSE_OPTION_SPECS,
    PARSE_OPTIONS,
    PREFILLS,
    date_text,
    reasoning_line_for,
    refuse_generation_prompt,
    shown,
)
from .render import UnsupportedContentError, render_harmony
from .spans import harmony_rendered_prompt

__all__ = ["HarmonyFormat", "HarmonyReplyParser", "UnsupportedContentError", "parse_header", "render_harmony"]


class HarmonyFormat(GuardedFormat):
    """gpt-oss Harmony, byte-identical to Ollama's Go template (see the package docstring).

    Options: ``current_date`` (``datetime.date`` or ``"YYYY-MM-DD"``; default today's local date),
    ``think`` (Ollama's think value) or ``reasoning_effort`` (OpenAI's; not both).

    ``add_generation_prompt``: the template has no such switch; it always ends with the generation
    header ``<|start|>assistant`` unless the last message is an assistant prefill, in which case the
    prompt ends inside that message so the model continues it. ``None`` (the default) and ``True``
    render that; ``False`` raises :class:`~prompt_formats.errors.FormatError` rather than render
    something the template never produces. ``render_batch`` passes it to :meth:`render` as given.
    """

    name = "harmony"
    summary = "OpenAI gpt-oss Harmony as Ollama's Go template renders it"
    parses = True
    renders_spans = True
    config_specs: ClassVar[tuple[Option, ...]] = (GUARD_CONFIG,)
    control_tokens = CONTROL_TOKENS
    option_specs: ClassVar[tuple[Option, ...]] = OPTION_SPECS
    options: ClassVar[Mapping[str, str]] = OPTIONS
    parse_option_specs: ClassVar[tuple[Option, ...]] = PARSE_OPTION_SPECS
    parse_options: ClassVar[Mapping[str, str]] = PARSE_OPTIONS

    def stream_parser(
        self,
        tools: Tools = None,
        *,
        id_factory: Callable[[], str] | None = None,
        **context: Any,
    ) -> HarmonyReplyParser:
        """A new :class:`HarmonyReplyParser` for one completion (the text after ``<|start|>assistant``).

        ``context``: ``prefill`` (see :attr:`parse_options`) and ``render``'s options (no effect);
        ``tools``: a call to a tool not among them is a call all the same (Harmony names its
        recipients), with a note (none when no tools are given); ``id_factory`` makes the call ids
        (default ``call_`` + 24 random hex digits).
        Rules: the docstring of :mod:`prompt_formats.formats.harmony.parse`.

        Its events, concatenated over any split of the completion into deltas, assemble to exactly
        ``parse(completion)`` (with the same ``id_factory`` sequence).
        """
        prefill = None
        if context:
            self.check_options(context, self.parse_options)
            prefill = context.get("prefill")
            if prefill is not None and prefill not in PREFILLS:
                raise InvalidInputError(
                    "prefill", f"expected null, 'analysis', 'final' or 'commentary', got {shown(prefill)}"
                )
        return HarmonyReplyParser(prefill, id_factory, offered_names(tools))

    renders_incrementally = True

    def _incremental_renderer(self, tools: Tools, options: dict[str, Any]) -> HarmonyIncremental | None:
        # strict: the full render refuses the losses, which the session's pieces do not track.
        if self.guard is not None or "strict" in options:
            return None
        return incremental_renderer(tools, options)

    def render(self, messages: Conversation, tools: Tools = None, add_generation_prompt: bool | None = None,
               **options: Any) -> str:
        """Render one conversation to exactly the bytes Ollama's Harmony template produces.

        ``add_generation_prompt``: ``None`` (the default) or ``True``; ``False`` raises (see the class).
        Raises a :class:`~prompt_formats.errors.FormatError` subclass for invalid input or options:
        :class:`~prompt_formats.errors.InvalidInputError` naming the field
        (``messages[3].content: expected a string, a list of parts or null, got int``),
        :class:`UnsupportedContentError` for image or video parts,
        :class:`~prompt_formats.errors.UnknownOptionError` for an option not in :attr:`options`.
        ``strict=True``: the same text, or :class:`~prompt_formats.errors.InvalidInputError` at the
        first input the template leaves out (:meth:`render_spans`' ``dropped``).
        """
        if options and "strict" in options:
            return render_strictly(self, messages, tools, add_generation_prompt, options)
        messages, date, reasoning_line = self._prepared(messages, add_generation_prompt, options)
        return render_harmony(messages, tools, date, reasoning_line)

    def render_spans(
        self,
        messages: Conversation,
        tools: Tools = None,
        add_generation_prompt: bool | None = None,
        generated: object = "all",
        **options: Any,
    ) -> RenderedPrompt:
        """:meth:`render`'s text, with the ranges each message produced and the ranges the model generated.

        Takes :meth:`render`'s arguments and raises its errors (and
        :class:`~prompt_formats.errors.InvalidInputError` at ``generated`` for an unknown policy:
        ``"all"``, ``"last"``, ``"after_last_user"``, as ``prompt_formats.format.spans.select_generated``).
        A message's ranges: its content as printed (inside its run's merged message, or in the
        header's system text for a system message), and for the first message of an assistant run
        its reasoning where written. ``generated``: each selected assistant Harmony message from
        right after ``<|start|>assistant`` up to and including ``<|end|>``, or to the end of its text
        where the template leaves ``<|end|>`` off; the message a prefill leaves open and the
        generation prompt are not generated. Rules: :mod:`prompt_formats.formats.harmony.ollama.spans`.
        ``dropped``: every input holding text the template leaves out
        (:mod:`prompt_formats.formats.harmony.ollama.drops`); ``strict=True`` raises
        :class:`~prompt_formats.errors.InvalidInputError` at the first of them instead.
        """
        policy = check_generated_policy(generated)
        strict = strict_flag(options.pop("strict")) if "strict" in options else False
        messages, date, reasoning_line = self._prepared(messages, add_generation_prompt, options)
        rendered = harmony_rendered_prompt(messages, tools, date, reasoning_line, policy)
        if strict and rendered.dropped:
            refuse_losses(rendered.dropped)
        return rendered

    def _prepared(
        self, messages: Conversation, add_generation_prompt: bool | None, options: dict[str, Any]
    ) -> tuple[Conversation, str, str]:
        """The arguments checked; the messages guarded (if configured), the date and reasoning line."""
        if add_generation_prompt is not None and add_generation_prompt is not True:
            refuse_generation_prompt(add_generation_prompt)
        if options:
            self.check_options(options)
        if "decode_tool_arguments" in options:
            decode_arguments_option(options["decode_tool_arguments"])  # checked; no effect (see OPTION_SPECS)
        date = date_text(options.get("current_date"))
        reasoning_line = reasoning_line_for(options.get("think"), options.get("reasoning_effort"))
        if self.guard is not None:
            messages = self.guard.guard_messages(messages, HARMONY_READING)
        return messages, date, reasoning_line

