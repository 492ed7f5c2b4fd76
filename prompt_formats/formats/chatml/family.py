"""What every ChatML format shares, whichever walk writes its template: :class:`ChatMLFamilyFormat`;
and what the formats of a walk read with a declared template share: :class:`WalkedChatMLFormat`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import attrs

from ...format.chat_format import GUARD_CONFIG, Conversation, GuardedFormat, Tools, render_strictly
from ...format.continuation import continued_field, render_continued
from ...format.options import Option, describe
from ...format.spans import GeneratedPolicy, RenderedPrompt
from ...guard import ControlTokenGuard
from ...guard.vocabulary import UntrustedReading
from .options import take_serving_options
from .parse import ChatMLReplyParser
from .render import NotedRender
from .schema import tool_schemas
from .spans import continued_prompt, rendered_prompt
from .template import ABSENT
from .tokens import CONTROL_TOKENS

__all__ = ["ChatMLFamilyFormat", "WalkedChatMLFormat"]


class ChatMLFamilyFormat(GuardedFormat):
    """Base of the ChatML formats: the family's control tokens (a guard is an option), its reply
    parser, ``render_spans`` and sessions; a subclass that names its ``template`` takes the options
    that template reads (:meth:`template_specs`)."""

    parses = True
    renders_spans = True
    renders_incrementally = True
    config_specs: ClassVar[tuple[Option, ...]] = (GUARD_CONFIG,)
    control_tokens = CONTROL_TOKENS
    parse_options: ClassVar[Mapping[str, str]] = {}
    #: The declared differences the format's walk reads (its template's); also whether the prompt
    #: opens a think block (``thinks``) and the form of its calls (``json_calls``).
    template: ClassVar[Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A format that names its template takes that template's options (what it reads)."""
        super().__init_subclass__(**kwargs)
        if "template" in cls.__dict__:
            cls.option_specs, cls.parse_option_specs = cls.template_specs(cls.__dict__["template"])
            cls.options = describe(cls.option_specs)
            cls.parse_options = describe(cls.parse_option_specs)

    @staticmethod
    def template_specs(template: Any) -> tuple[tuple[Option, ...], tuple[Option, ...]]:
        """``render``'s options and the parser's under ``template``."""
        raise NotImplementedError

    def stream_parser(
        self,
        tools: Tools = None,
        *,
        id_factory: Callable[[], str] | None = None,
        **context: Any,
    ) -> ChatMLReplyParser:
        """A new :class:`~.parse.ChatMLReplyParser` for one completion (the text after the generation prompt).

        The reasoning comes first where the prompt opened a think block, as the format's template
        reads ``enable_thinking`` (the JSON-call templates open none: the model writes its own); a
        call in the template's form is the usual one (the other form is read too, with a note).
        ``tools`` types the call arguments by their schemas (and a call to any other tool gets a
        note in ``reply.notes``); ``context`` takes ``render``'s options (``continue_final_message``
        as render took it: the completion continues the final message's content, or its reasoning
        when the option names a reasoning field, with its leading whitespace kept, so the continued
        message is the prefill as the prompt shows it followed by the reply's text); ``id_factory``
        makes the call ids (default ``call_`` + 24 random hex digits). Rules:
        :mod:`prompt_formats.formats.chatml.parse`.

        Its events, concatenated over any split of the completion into deltas, assemble to exactly
        ``parse(completion)`` (with the same ``id_factory`` sequence).
        """
        continued = None
        if context:
            self.check_options(context, self.parse_options)
            continued = continued_field(context.get("continue_final_message"), False)
        template = self.template
        return ChatMLReplyParser(tool_schemas(tools), template.thinks(context.get("enable_thinking", ABSENT)),
                                 id_factory, continued, json_calls=template.json_calls)


class WalkedChatMLFormat(ChatMLFamilyFormat):
    """Base of the ChatML formats whose template is one walk read with a declared template (the
    JSON-call and the Nemotron ones): ``render`` and ``render_spans`` are that walk (:meth:`_walk`,
    :meth:`_walk_noted`), after the serving options and, with a guard, its policy.

    ``guard``: an optional :class:`~prompt_formats.guard.ControlTokenGuard` applied to the messages
    and tools before rendering (off by default: the output is then exactly the template's); with
    it, a value that is no string where the template prints one is refused.
    """

    #: How the guard reads the messages' untrusted text under this walk.
    reading: ClassVar[UntrustedReading]

    def __init__(self, guard: ControlTokenGuard | None = None) -> None:
        super().__init__(guard)
        # The template as this instance renders it, made once: with a guard, strings only where it prints.
        template = self.template
        self._walk_template: Any = template if self.guard is None else attrs.evolve(template, strings_only=True)

    def _walk(self, messages: Conversation, tools: Tools, add_generation_prompt: Any, options: dict[str, Any]) -> str:
        """The walk's prompt under the template's ``options``."""
        raise NotImplementedError

    def _walk_noted(self, messages: Conversation, tools: Tools, add_generation_prompt: Any,
                    options: dict[str, Any]) -> tuple[str, NotedRender]:
        """The walk's prompt and what it noted (for ``render_spans``)."""
        raise NotImplementedError

    def _guarded_tools(self, guard: ControlTokenGuard, tools: Tools) -> Tools:
        """``tools`` with ``guard``'s policy applied (a walk may check what else it writes of them)."""
        guarded: Tools = guard.guard_tools(tools)
        return guarded

    def _prepared(self, messages: Conversation, tools: Tools, add_generation_prompt: Any, options: dict[str, Any]
                  ) -> tuple[Conversation, Tools, dict[str, Any], str | None]:
        """The options checked and the serving ones applied; the guard's policy applied (tools
        first, then the messages, so its errors come in that order)."""
        field = None
        if options:
            self.check_options(options)
            messages, options, field = take_serving_options(messages, options, add_generation_prompt)
        guard = self.guard
        if guard is not None:
            tools = self._guarded_tools(guard, tools)
            messages = guard.guard_messages(messages, self.reading)
        return messages, tools, options, field

    def render(
        self,
        messages: Conversation,
        tools: Tools = None,
        add_generation_prompt: bool = False,
        **options: Any,
    ) -> str:
        """Render ``messages`` byte-identically to the reference template (the format's walk).
        ``decode_tool_arguments``, ``continue_final_message`` and ``strict`` as for every ChatML
        format (:meth:`ChatMLFormat.render <.ChatMLFormat.render>`)."""
        if options and "strict" in options:
            return render_strictly(self, messages, tools, add_generation_prompt, options)
        messages, tools, options, field = self._prepared(messages, tools, add_generation_prompt, options)
        if field is not None:
            return render_continued(lambda tagged: self._walk(tagged, tools, False, options), messages, field,
                                    self._walk_template.fields_read)
        return self._walk(messages, tools, add_generation_prompt, options)

    def _render_spans(self, messages: Conversation, tools: Tools, add_generation_prompt: bool | None,
                      policy: GeneratedPolicy, options: dict[str, Any]) -> RenderedPrompt:
        """:meth:`render_spans` (its contract: :meth:`ChatFormat.render_spans`): a user, tool or system
        message's range is its written content; an assistant's, and what it generated, its turn from
        right after ``<|im_start|>assistant\\n`` up to and including its ``<|im_end|>``."""
        messages, tools, options, field = self._prepared(messages, tools, add_generation_prompt, options)
        if field is not None:
            return continued_prompt(messages, tools, lambda tagged: self._walk_noted(tagged, tools, False, options),
                                    field, policy, self._walk_template.fields_read)
        text, noted = self._walk_noted(messages, tools, add_generation_prompt, options)
        return rendered_prompt(text, noted, len(messages), policy)
