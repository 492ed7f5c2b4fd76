"""The GLM family: GLM-4.5 (``glm-4.5``), exactly as its template renders, and its replies.

The reference is ``tests/fixtures/families/glm4moe.jinja``, rendered by Jinja2 as transformers
configures it. The walk is :mod:`.render`; spans :mod:`.spans`; losses :mod:`.drops`; the reply
parser :mod:`.parse`; every marker :mod:`.tokens`. What surprises users is on docs/glm.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ...format.chat_format import GUARD_CONFIG, Conversation, GuardedFormat, Tools, render_strictly
from ...format.options import STRICT, STRICT_PARSE, Option
from ...format.spans import GeneratedPolicy, RenderedPrompt
from ...model.tools import offered_names
from .guarding import refuse_printed
from .incremental import GlmIncremental
from .parse import GlmReplyParser
from .render import message_dicts, tools_block, walk
from .spans import rendered_prompt
from .tokens import GLM4_CONTROL_TOKENS
from .untrusted import GLM4_READING

__all__ = ["GLM4_CONTROL_TOKENS", "GLM4_READING", "Glm45Format", "GlmReplyParser"]

_THINKING = Option("enable_thinking", frozenset({"boolean", "null"}),
                   "given and false (null too: the template asks whether it is defined): '/nothink' after each user "
                   "message and an empty think block in the generation prompt")
_OPTION_SPECS = (_THINKING, STRICT)
_PARSE_SPECS = (Option("enable_thinking", frozenset({"boolean", "null"}), "accepted so render's options can be passed "
                       "as they are: a think block is read wherever the completion opens one"), STRICT_PARSE)


class Glm45Format(GuardedFormat):
    """The ``glm-4.5`` format: GLM-4.5's template (GLM-4-MoE), byte for byte.

    ``[gMASK]<sop>``; the tools as JSON in a system turn; ``<|user|>``, ``<|assistant|>``,
    ``<|system|>`` and ``<|observation|>`` turns; an assistant's reasoning in its think block only
    after the last user message; tool calls as ``<tool_call>NAME`` and ``<arg_key>``/``<arg_value>``
    pairs (arguments must be an object). Option ``enable_thinking``: given and false, ``/nothink``
    after each user message and an empty think block in the generation prompt.
    Reference: ``tests/fixtures/families/glm4moe.jinja``.
    """

    name = "glm-4.5"
    summary = "GLM-4.5 as its template renders it (XML-style argument pairs, reasoning after the last user message)"
    parses = True
    renders_spans = True
    renders_incrementally = True
    config_specs: ClassVar[tuple[Option, ...]] = (GUARD_CONFIG,)
    control_tokens = GLM4_CONTROL_TOKENS
    option_specs: ClassVar[tuple[Option, ...]] = _OPTION_SPECS
    options: ClassVar[Mapping[str, str]] = {spec.name: spec.description for spec in _OPTION_SPECS}
    parse_option_specs: ClassVar[tuple[Option, ...]] = _PARSE_SPECS
    parse_options: ClassVar[Mapping[str, str]] = {spec.name: spec.description for spec in _PARSE_SPECS}

    def render(self, messages: Conversation, tools: Tools = None, add_generation_prompt: bool | None = None,
               **options: Any) -> str:
        """Render one conversation to exactly the text GLM-4.5's template renders.

        ``add_generation_prompt`` (``None``: no) ends the prompt with ``<|assistant|>``. Raises
        :class:`~prompt_formats.errors.InvalidInputError` naming the field where the engine itself
        fails (a call's name that is no string, arguments that are no object). ``strict=True``: the
        same text, or InvalidInputError at the first input left out.
        """
        if options and "strict" in options:
            return render_strictly(self, messages, tools, add_generation_prompt, options)
        msgs, tools, no_thinking = self._prepared(messages, tools, options)
        return "".join(walk(msgs, tools_block(tools), add_generation_prompt, no_thinking).out)

    def _render_spans(self, messages: Conversation, tools: Tools, add_generation_prompt: bool | None,
                      policy: GeneratedPolicy, options: dict[str, Any]) -> RenderedPrompt:
        msgs, tools, no_thinking = self._prepared(messages, tools, options)
        return rendered_prompt(msgs, tools, tools_block(tools), add_generation_prompt, no_thinking, policy)

    def _prepared(self, messages: Conversation, tools: Tools, options: dict[str, Any]
                  ) -> tuple[list[dict[str, Any]], Tools, bool]:
        """The messages as dicts and the tools (guarded, if configured: the tools first, then the
        messages), and whether thinking is off; options checked."""
        if options:
            self.check_options(options)
        no_thinking = "enable_thinking" in options and not options["enable_thinking"]
        if self.guard is None:
            return message_dicts(messages), tools, no_thinking
        tools = self.guard.guard_tools(tools)
        msgs = message_dicts(self.guard.guard_messages(messages, GLM4_READING))
        refuse_printed(msgs)
        return msgs, tools, no_thinking

    def _incremental_renderer(self, tools: Tools, options: dict[str, Any]) -> GlmIncremental | None:
        # strict: the full render refuses the losses, which the session's walk does not track.
        if self.guard is not None or "strict" in options:
            return None
        try:
            self.check_options(options)
            block = tools_block(tools)
        except Exception:  # every render raises it: full renders do
            return None
        return GlmIncremental(block, "enable_thinking" in options and not options["enable_thinking"])

    def stream_parser(self, tools: Tools = None, *, id_factory: Callable[[], str] | None = None,
                      **context: Any) -> GlmReplyParser:
        """A new :class:`GlmReplyParser` for one completion (the text after ``<|assistant|>``).

        ``context``: ``render``'s options (no effect: a think block is read wherever the completion
        opens one, so thinking on or off parses alike). ``tools`` type each argument value by its parameter's schema;
        ``id_factory`` makes the call ids. Its events, concatenated over any split of the completion,
        assemble to exactly ``parse(completion)``.
        """
        if context:
            self.check_options(context, self.parse_options)
        offered_names(tools)
        return GlmReplyParser(tools, id_factory)
