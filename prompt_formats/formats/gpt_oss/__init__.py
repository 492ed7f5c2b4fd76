"""gpt-oss: OpenAI's published Harmony chat template, exactly as transformers renders it with Jinja2.

The reference is ``tests/fixtures/gpt_oss.jinja``; options, the quirks kept and the differences from
openai-harmony's own renderer are in ``docs/gpt-oss.md``. Replies are parsed by Harmony's parser
(:class:`~prompt_formats.formats.harmony.HarmonyReplyParser`), whose rules are in the Harmony docs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from ...errors import InvalidInputError, type_name
from ...format import ChatFormat, Conversation, Tools
from ...options import describe
from ...tools import PreparedTools, rendered_tools
from ..harmony import HarmonyReplyParser
from .guarding import guard_conversation
from .options import OPTION_SPECS, OPTIONS, SystemOptions, system_message
from .render import as_mapping, checked_messages, developer_instructions, developer_message, render_messages
from .typescript import functions_namespace

if TYPE_CHECKING:
    from ...guard import ControlTokenGuard

__all__ = ["GptOssFormat", "render_gpt_oss"]

_FUNCTIONS_KEY = "gpt-oss.functions"
_OPTION_NAMES = frozenset(OPTIONS)


def _functions_text(tools: Tools) -> str:
    """The ``functions`` namespace of ``tools`` ('' for none), built once per toolset."""
    if not tools:
        return ""
    plain = not isinstance(tools, PreparedTools)
    if plain and (isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence)):
        raise InvalidInputError("tools", f"expected a list of tool objects, got {type_name(tools)}")
    return rendered_tools(tools, _FUNCTIONS_KEY, functions_namespace)


def render_gpt_oss(messages: Conversation, tools: Tools, add_generation_prompt: bool, options: SystemOptions) -> str:
    """The template's text for one conversation, given the validated system options.

    Raises :class:`~prompt_formats.errors.TemplateError` with the template's message where it raises
    and :class:`~prompt_formats.errors.InvalidInputError` naming the field for input outside the
    documented shape; returns nothing half-rendered.
    """
    messages = checked_messages(messages)
    functions = _functions_text(tools)
    instructions, taken = developer_instructions(as_mapping(messages[0], 0))
    out = [system_message(options, bool(tools)), *developer_message(instructions, functions)]
    render_messages(out, messages, 1 if taken else 0, add_generation_prompt)
    return "".join(out)


class GptOssFormat(ChatFormat):
    """gpt-oss, byte-identical to OpenAI's chat template rendered by Jinja2 as transformers does.

    Options: :data:`~prompt_formats.formats.gpt_oss.options.OPTIONS`. ``guard``: an optional
    control-token guard (e.g. ``ControlTokenGuard(HARMONY_CONTROL_TOKENS)``) applied to the fields
    the template renders; off by default, so the output is exactly the template's.
    """

    name = "gpt-oss"
    summary = "OpenAI gpt-oss Harmony as OpenAI's published chat template renders it (function tools included)"
    option_specs = OPTION_SPECS
    options: ClassVar[Mapping[str, str]] = OPTIONS
    parse_option_specs = tuple(
        attrs.evolve(spec, description="accepted so render's options can be passed as they are; no effect on parsing")
        for spec in OPTION_SPECS
    )
    parse_options: ClassVar[Mapping[str, str]] = describe(parse_option_specs)

    def __init__(self, guard: ControlTokenGuard | None = None) -> None:
        self.guard = guard

    def render(
        self,
        messages: Conversation,
        tools: Tools = None,
        add_generation_prompt: bool | None = False,
        **options: Any,
    ) -> str:
        """Render one conversation to exactly the bytes the gpt-oss template renders.

        ``add_generation_prompt=None`` is the default, ``False``, as in transformers.

        Raises :class:`~prompt_formats.errors.TemplateError` with the template's own message where
        the template raises, :class:`~prompt_formats.errors.InvalidInputError` naming the field for
        input outside the documented shape (docs/gpt-oss.md),
        :class:`~prompt_formats.errors.UnknownOptionError` for an option not in :attr:`options`, and
        :class:`~prompt_formats.errors.InjectionError` under a rejecting guard (before any other error
        of the messages).
        """
        if add_generation_prompt is None:
            add_generation_prompt = False
        elif type(add_generation_prompt) is not bool:
            raise InvalidInputError(
                "add_generation_prompt", f"expected a bool, got {type_name(add_generation_prompt)}"
            )
        if options and not _OPTION_NAMES.issuperset(options):
            self.check_options(options)
        system_options = SystemOptions(options)
        if self.guard is not None:
            messages, tools = guard_conversation(self.guard, messages, tools)
        return render_gpt_oss(messages, tools, add_generation_prompt, system_options)

    def stream_parser(
        self,
        tools: Tools = None,
        *,
        id_factory: Callable[[], str] | None = None,
        **context: Any,
    ) -> HarmonyReplyParser:
        """A new Harmony reply parser for one completion (the text after ``<|start|>assistant``).

        The generation prompt ends at a message header, so the parser starts at one (no prefill).
        ``context`` takes ``render``'s options (no effect); ``tools`` are accepted for symmetry
        (Harmony names its recipients). Events over any split of the completion assemble to exactly
        ``parse(completion)`` with the same ``id_factory`` sequence.
        """
        if context:
            self.check_options(context, self.parse_options)
        return HarmonyReplyParser(None, id_factory)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(guard={self.guard!r})" if self.guard is not None else "GptOssFormat()"
