"""The Llama 3 family: Llama 3.1 (``llama-3.1``) and Llama 3.2 (``llama-3.2``), exactly as their
templates render, and their replies.

The references are ``tests/fixtures/families/llama3_1.jinja`` and ``llama3_2.jinja``, rendered by
Jinja2 as transformers configures it. The two templates are one walk (:mod:`.render`) with two
declared differences (:mod:`.options`); spans :mod:`.spans`; losses :mod:`.drops`; the reply parser
:mod:`.parse`; every marker :mod:`.tokens`. What surprises users is on docs/llama.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ...errors import FormatError, InjectionError, InvalidInputError
from ...format.chat_format import GUARD_CONFIG, Conversation, GuardedFormat, Tools, render_strictly
from ...format.options import Option
from ...format.spans import GeneratedPolicy, RenderedPrompt
from ...guard import ControlTokenGuard
from ...model.arguments import decode_arguments_option, decode_every_call
from ...model.tools import offered_names
from .incremental import LlamaIncremental
from .options import LLAMA_3_1, LLAMA_3_2, Variant, setup
from .parse import LlamaReplyParser
from .render import Setup, message_dicts, walk
from .spans import rendered_prompt
from .tokens import LLAMA3_CONTROL_TOKENS
from .untrusted import LLAMA3_READING, refuse_unread

__all__ = ["LLAMA3_CONTROL_TOKENS", "LLAMA3_READING", "Llama31Format", "Llama32Format", "LlamaReplyParser"]


def _guarded_setup(guard: ControlTokenGuard, written: Setup) -> Setup:
    """The options' text checked as the guard checks untrusted text (fail closed: they are written
    as they are), and the tools the template writes checked as tools."""
    try:
        tools = guard.guard_tools(written.tools)
    except (InjectionError, InvalidInputError) as error:
        if written.tools_path == "tools" or not error.path.startswith("tools"):
            raise
        at = "custom_tools" + error.path[len("tools"):]  # (the guard names what it was given: these tools)
        raise (InjectionError(at, error.token) if isinstance(error, InjectionError)
               else InvalidInputError(at, error.problem)) from None
    written_options = [("date_string", written.date), *(("builtin_tools", str(item)) for item in written.builtin or ())]
    for name, value in written_options:
        if guard.guard_content(value, name) is not value:
            raise InvalidInputError(name, "holds a control token: with a guard, an option is not escaped")
    return written._replace(tools=tools) if tools is not written.tools else written


class LlamaFormat(GuardedFormat):
    """The Llama 3 templates' one walk; a subclass declares its :class:`~.options.Variant`."""

    variant: ClassVar[Variant]
    parses = True
    renders_spans = True
    renders_incrementally = True
    config_specs: ClassVar[tuple[Option, ...]] = (GUARD_CONFIG,)
    control_tokens = LLAMA3_CONTROL_TOKENS

    def render(self, messages: Conversation, tools: Tools = None, add_generation_prompt: bool | None = None,
               **options: Any) -> str:
        """Render one conversation to exactly the text the model's template renders.

        ``add_generation_prompt`` (``None``: no) ends the prompt with the assistant's header. Raises
        :class:`~prompt_formats.errors.TemplateError` with the template's message (tools to list in
        a first user message that is not there; a turn of more or fewer than one tool call), and
        :class:`~prompt_formats.errors.InvalidInputError` naming the field where the engine itself
        fails. ``strict=True``: the same text, or InvalidInputError at the first input left out.
        """
        if options and "strict" in options:
            return render_strictly(self, messages, tools, add_generation_prompt, options)
        msgs, written = self._prepared(messages, tools, options)
        return "".join(walk(msgs, written, add_generation_prompt).out)

    def _render_spans(self, messages: Conversation, tools: Tools, add_generation_prompt: bool | None,
                      policy: GeneratedPolicy, options: dict[str, Any]) -> RenderedPrompt:
        msgs, written = self._prepared(messages, tools, options)
        return rendered_prompt(msgs, tools, written, add_generation_prompt, policy)

    def _prepared(self, messages: Conversation, tools: Tools, options: dict[str, Any]
                  ) -> tuple[list[dict[str, Any]], Setup]:
        """The messages as dicts and the options read (guarded, if configured)."""
        if options:
            self.check_options(options)
            if decode_arguments_option(options.get("decode_tool_arguments")):
                messages = decode_every_call(messages)
        written = setup(options, tools, self.variant)
        if self.guard is None:
            return message_dicts(messages), written
        written = _guarded_setup(self.guard, written)
        msgs = message_dicts(self.guard.guard_messages(messages, LLAMA3_READING))
        refuse_unread(msgs)
        return msgs, written

    def _incremental_renderer(self, tools: Tools, options: dict[str, Any]) -> LlamaIncremental | None:
        # strict: the full render refuses the losses, which the session's walk does not track.
        if self.guard is not None or "strict" in options:
            return None
        try:
            self.check_options(options)
            written = setup(options, tools, self.variant)
            decoded = decode_arguments_option(options.get("decode_tool_arguments"))
        except FormatError:  # every render raises it: full renders do
            return None
        dated = self.variant.dated_today and "date_string" not in options
        return LlamaIncremental(written, dated, decoded)

    def stream_parser(self, tools: Tools = None, *, id_factory: Callable[[], str] | None = None,
                      **context: Any) -> LlamaReplyParser:
        """A new :class:`LlamaReplyParser` for one completion (the text after the assistant's header).

        ``context``: ``render``'s options (no effect); ``tools`` are checked (a call to any tool is
        read: the arguments are the JSON the model wrote, not typed by a schema); ``id_factory``
        makes the call ids. Its events, concatenated over any split of the completion, assemble to
        exactly ``parse(completion)``.
        """
        if context:
            self.check_options(context, self.parse_options)
        offered_names(tools)
        return LlamaReplyParser(id_factory)


class Llama31Format(LlamaFormat):
    """The ``llama-3.1`` format: Llama 3.1's template, byte for byte.

    ``<|begin_of_text|>``; a system turn with the dates (and, for tools, ``Environment: ipython``);
    the tools as indented JSON in the first user turn (option ``tools_in_user_message``: true by
    default; false, in the system turn); turns of ``<|start_header_id|>ROLE<|end_header_id|>`` and the
    text trimmed, ``<|eot_id|>``; one tool call a turn as ``{"name": …, "parameters": …}``; tool
    results as JSON in ``ipython`` turns. Options ``bos_token``, ``custom_tools``, ``date_string``
    (default ``26 Jul 2024``), ``builtin_tools`` (``<|python_tag|>NAME.call(…)`` calls, ``<|eom_id|>``),
    ``decode_tool_arguments`` (string arguments decoded first, as a server does).
    Reference: ``tests/fixtures/families/llama3_1.jinja``.
    """

    name = "llama-3.1"
    summary = "Llama 3.1 as its template renders it (tools in the first user turn, one JSON call a turn)"
    variant = LLAMA_3_1
    option_specs: ClassVar[tuple[Option, ...]] = LLAMA_3_1.option_specs
    options: ClassVar[Mapping[str, str]] = {spec.name: spec.description for spec in LLAMA_3_1.option_specs}
    parse_option_specs: ClassVar[tuple[Option, ...]] = LLAMA_3_1.parse_option_specs
    parse_options: ClassVar[Mapping[str, str]] = {spec.name: spec.description
                                                  for spec in LLAMA_3_1.parse_option_specs}


class Llama32Format(LlamaFormat):
    """The ``llama-3.2`` format: Llama 3.2's template, byte for byte.

    Llama 3.1's walk without built-in tools, and with today's date (transformers' ``strftime_now``:
    the local date, ``%d %b %Y``) where no ``date_string`` is given. Options ``bos_token``,
    ``custom_tools``, ``tools_in_user_message``, ``date_string``, ``decode_tool_arguments``.
    Reference: ``tests/fixtures/families/llama3_2.jinja``.
    """

    name = "llama-3.2"
    summary = "Llama 3.2 as its template renders it (Llama 3.1's, dated today, no built-in tools)"
    variant = LLAMA_3_2
    option_specs: ClassVar[tuple[Option, ...]] = LLAMA_3_2.option_specs
    options: ClassVar[Mapping[str, str]] = {spec.name: spec.description for spec in LLAMA_3_2.option_specs}
    parse_option_specs: ClassVar[tuple[Option, ...]] = LLAMA_3_2.parse_option_specs
    parse_options: ClassVar[Mapping[str, str]] = {spec.name: spec.description
                                                  for spec in LLAMA_3_2.parse_option_specs}
