"""gpt-oss: OpenAI's published Harmony chat template, exactly as transformers renders it with Jinja2.

The reference is ``tests/fixtures/gpt_oss.jinja``; options, the quirks kept and the differences from
openai-harmony's own renderer are in ``docs/gpt-oss.md``. Replies are parsed by Harmony's parser
(:class:`~prompt_formats.formats.harmony.parse.HarmonyReplyParser`), whose rules are in the Harmony docs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import attrs

from ....errors import InvalidInputError, type_name
from ....format.chat_format import GUARD_CONFIG, Conversation, GuardedFormat, Tools, render_strictly
from ....format.options import Option, describe
from ....format.spans import GeneratedPolicy, RenderedPrompt
from ....model.arguments import decode_arguments_option
from ....model.tools import offered_names
from ..parse import HarmonyReplyParser
from ..tokens import CONTROL_TOKENS
from .arguments import decode_conversation
from .guarding import guard_conversation
from .incremental import GptOssIncremental, incremental_renderer
from .options import OPTION_SPECS, OPTIONS, SystemOptions
from .prompt import prompt_pieces, render_gpt_oss
from .spans import rendered_prompt

__all__ = ["GptOssFormat", "render_gpt_oss"]


#: The recipients of the built-in browser tool the system message describes.
BROWSER_TOOLS = ("browser.search", "browser.open", "browser.find")


class GptOssFormat(GuardedFormat):
    """gpt-oss, byte-identical to OpenAI's chat template rendered by Jinja2 as transformers does.

    Options: :data:`~prompt_formats.formats.harmony.openai.options.OPTIONS`. ``guard``: an optional
    control-token guard (e.g. ``ControlTokenGuard(HARMONY_CONTROL_TOKENS)``) applied to the fields
    the template renders; off by default, so the output is exactly the template's.
    """

    name = "gpt-oss"
    summary = "OpenAI gpt-oss Harmony as OpenAI's published chat template renders it (function tools included)"
    parses = True
    renders_spans = True
    config_specs: ClassVar[tuple[Option, ...]] = (GUARD_CONFIG,)
    control_tokens = CONTROL_TOKENS
    option_specs = OPTION_SPECS
    options: ClassVar[Mapping[str, str]] = OPTIONS
    parse_option_specs = tuple(
        attrs.evolve(spec, description="the built-in tools offered: a call to one of them is not noted as a call "
                     "to a tool not offered" if spec.name == "builtin_tools" else
                     "accepted so render's options can be passed as they are; no effect on parsing")
        for spec in OPTION_SPECS
    )
    parse_options: ClassVar[Mapping[str, str]] = describe(parse_option_specs)

    renders_incrementally = True

    def _incremental_renderer(self, tools: Tools, options: dict[str, Any]) -> GptOssIncremental | None:
        return None if self.guard is not None else incremental_renderer(tools, options)

    def render(self, messages: Conversation, tools: Tools = None, add_generation_prompt: bool | None = False,
               **options: Any) -> str:
        """Render one conversation to exactly the bytes the gpt-oss template renders.

        ``add_generation_prompt=None`` is the default, ``False``, as in transformers.
        ``decode_tool_arguments=True``: a JSON object given as a call's string ``arguments`` is
        decoded first (``prompt_formats.formats.harmony.openai.arguments``), as vLLM and SGLang do.

        Raises :class:`~prompt_formats.errors.TemplateError` with the template's own message where
        the template raises, :class:`~prompt_formats.errors.InvalidInputError` naming the field for
        input outside the documented shape (docs/gpt-oss.md),
        :class:`~prompt_formats.errors.UnknownOptionError` for an option not in :attr:`options`, and
        :class:`~prompt_formats.errors.InjectionError` under a rejecting guard (before any other error
        of the messages).
        """
        if options and "strict" in options:
            return render_strictly(self, messages, tools, add_generation_prompt, options)
        messages, tools, add_generation_prompt, system_options = self._prepared(
            messages, tools, add_generation_prompt, options
        )
        return render_gpt_oss(messages, tools, add_generation_prompt, system_options)

    def _render_spans(self, messages: Conversation, tools: Tools, add_generation_prompt: bool | None,
                      policy: GeneratedPolicy, options: dict[str, Any]) -> RenderedPrompt:
        """:meth:`render_spans` for gpt-oss (its contract: :meth:`ChatFormat.render_spans`).

        ``text`` is exactly :meth:`render`'s text. A message's ranges: each Harmony message it
        produced, from right after ``<|start|>`` and its author up to and including its terminator
        (two ranges for an analysis message and the call or answer after it); the leading system or
        developer message's text in the developer message's instructions. ``generated``: the
        selected assistant messages' ranges (from right after ``<|start|>assistant`` up to and
        including ``<|end|>``, ``<|call|>`` or ``<|return|>``); the generation prompt is not generated.
        """
        messages, tools, add_generation_prompt, system_options = self._prepared(
            messages, tools, add_generation_prompt, options
        )
        prompt = prompt_pieces(messages, tools, add_generation_prompt, system_options)
        return rendered_prompt(prompt, len(messages), policy, system_options.lost)

    def _prepared(
        self, messages: Conversation, tools: Tools, add_generation_prompt: bool | None, options: Mapping[str, Any]
    ) -> tuple[Conversation, Tools, bool, SystemOptions]:
        """The arguments checked, the arguments decoded (if asked) and guarded (if configured)."""
        if add_generation_prompt is None:
            add_generation_prompt = False
        elif type(add_generation_prompt) is not bool:
            raise InvalidInputError(
                "add_generation_prompt", f"expected a bool, got {type_name(add_generation_prompt)}"
            )
        if options:
            self.check_options(options)
        system_options = SystemOptions(options)
        if options and decode_arguments_option(options.get("decode_tool_arguments")):
            messages = decode_conversation(messages)
        if self.guard is not None:
            messages, tools = guard_conversation(self.guard, messages, tools)
        return messages, tools, add_generation_prompt, system_options

    def stream_parser(
        self,
        tools: Tools = None,
        *,
        id_factory: Callable[[], str] | None = None,
        **context: Any,
    ) -> HarmonyReplyParser:
        """A new Harmony reply parser for one completion (the text after ``<|start|>assistant``).

        The generation prompt ends at a message header, so the parser starts at one (no prefill).
        ``context`` takes ``render``'s options (``builtin_tools`` says which built-in tools were
        offered; the others have no effect); a call to a tool not among ``tools`` and those is a call
        all the same (Harmony names its recipients), with a note (none when nothing was offered).
        Events over any split of the completion assemble to exactly ``parse(completion)`` with the
        same ``id_factory`` sequence.
        """
        offered = offered_names(tools)
        if context:
            self.check_options(context, self.parse_options)
            # Read as render reads it (a truthy value; the names the template's loop finds).
            browser, python = SystemOptions({"builtin_tools": context.get("builtin_tools")}).builtin or (False, False)
            builtin = (BROWSER_TOOLS if browser else ()) + (("python",) if python else ())
            if builtin:
                offered = (offered or frozenset()).union(builtin)
        return HarmonyReplyParser(None, id_factory, offered)
