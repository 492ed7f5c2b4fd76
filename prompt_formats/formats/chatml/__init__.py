"""The ChatML family: Qwen3.6's chat template as ``chatml-multi-system`` and ``chatml-safety``.

The formats differ only in what happens before :func:`~.render.render_chatml` (system messages
merged, or the guard); they share the reply parser (:mod:`.parse`). Markers and the control-token
set: :mod:`.tokens`; typing parsed values by the tools' schemas: :mod:`.schema`.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any, ClassVar

from ...errors import FormatError, InvalidInputError, type_name
from ...format.chat_format import GUARD_CONFIG, Conversation, Tools, render_strictly
from ...format.continuation import render_continued
from ...format.options import BOOLEAN, Option
from ...format.spans import GeneratedPolicy, RenderedPrompt
from ...guard import ControlTokenGuard, Policy
from .family import ChatMLFamilyFormat
from .incremental import ChatMLIncremental, incremental_renderer
from .lean import lean_prompt
from .options import parse_specs, render_specs, take_serving_options
from .parse import ChatMLReplyParser
from .render import chatml_noted, guarded_noted, render_chatml, tools_block
from .schema import schema_types, typed_parameter_value
from .spans import continued_prompt, rendered_prompt
from .template import MULTI_SYSTEM, QWEN3_5, QWEN3_5_NOTHINK, QWEN3_6, QWEN3_8, UPSTREAM, Template
from .tokens import CONTROL_TOKENS
from .untrusted import CHATML_READING, render_guarded

__all__ = [
    "CONTROL_TOKENS",
    "ChatMLFormat",
    "ChatMLMultiSystemFormat",
    "ChatMLReplyParser",
    "ChatMLSafetyFormat",
    "render_chatml",
    "schema_types",
    "tools_block",
    "typed_parameter_value",
]

class ChatMLFormat(ChatMLFamilyFormat):
    """Base of the ChatML formats whose templates write XML calls (Qwen3.5 on): the Qwen3.6
    template's options and turn rules, read with the format's :class:`~.template.Template`.

    ``guard``: an optional :class:`~prompt_formats.guard.ControlTokenGuard` applied to the messages
    and tools before rendering (off by default: the output is then exactly the template's).
    """

    template: ClassVar[Template] = UPSTREAM

    @staticmethod
    def template_specs(template: Template) -> tuple[tuple[Option, ...], tuple[Option, ...]]:
        """``render``'s options and the parser's under ``template`` (:mod:`.options`)."""
        return render_specs(template), parse_specs(template)

    def _incremental_renderer(self, tools: Tools, options: dict[str, Any]) -> ChatMLIncremental | None:
        return incremental_renderer(self.guard, tools, self.template, options)

    def render(
        self,
        messages: Conversation,
        tools: Tools = None,
        add_generation_prompt: bool = False,
        **options: Any,
    ) -> str:
        """Render ``messages`` byte-identically to the reference template (see :func:`render_chatml`).

        ``decode_tool_arguments=True``: every call's string ``arguments`` holding a JSON object are
        decoded first (:mod:`prompt_formats.model.arguments`), as vLLM and SGLang do.
        ``continue_final_message``: the prompt is cut inside the final message as transformers cuts
        it (:mod:`prompt_formats.format.continuation`), raising :class:`~prompt_formats.errors.FormatError` with
        transformers' text where it raises. With a guard, its policy is applied (after the decoding)
        to every untrusted field (it may raise :class:`~prompt_formats.errors.InjectionError`).
        ``strict=True``: :class:`~prompt_formats.errors.InvalidInputError` at the first input the
        template leaves out (``render_spans(...).dropped``; docs/chatml.md lists them).
        """
        if options and "strict" in options:
            return render_strictly(self, messages, tools, add_generation_prompt, options)
        field = None
        if options:
            messages, options, field = self._serving_options(messages, options, add_generation_prompt)
        guard = self.guard
        if guard is not None:
            tools = guard.guard_tools(tools)
            fast = guard.fast_path(CHATML_READING) if field is None and not self.template.merge_system else None
            if fast is not None:
                # The fast path of the seeds' usual input (.lean), then the guard's (.untrusted): a
                # prompt, or None to step aside.
                prompt = None
                if self.template is UPSTREAM:
                    prompt = lean_prompt(messages, tools, add_generation_prompt, options, False, fast.lead)
                if prompt is None:
                    prompt = render_guarded(fast, partial(render_chatml, template=self.template), messages, tools,
                                            add_generation_prompt, options)
                if prompt is not None:
                    return prompt
            messages = guard.guard_messages(messages, CHATML_READING)
        if field is not None:
            template, template_options = self.template, options
            return render_continued(
                lambda tagged: render_chatml(tagged, tools, False, template, **template_options), messages, field)
        if guard is None and (self.template is MULTI_SYSTEM or self.template is UPSTREAM):
            # The fast path of the seeds' usual input (.lean): its prompt, or None to step aside to
            # the walk.
            prompt = lean_prompt(messages, tools, add_generation_prompt, options, self.template.merge_system)
            if prompt is not None:
                return prompt
        return render_chatml(messages, tools, add_generation_prompt, self.template, **options)

    def _render_spans(self, messages: Conversation, tools: Tools, add_generation_prompt: bool | None,
                      policy: GeneratedPolicy, options: dict[str, Any]) -> RenderedPrompt:
        """:meth:`render_spans` for ChatML (its contract: :meth:`ChatFormat.render_spans`).

        A user, tool or system message's range is its printed content (several system messages
        merged into one turn each keep their own part); an assistant message's range, and what it
        generated, is its turn from right after ``<|im_start|>assistant\n`` up to and including its
        ``<|im_end|>``. The generation prompt is not generated. With a guard, the ranges are those of
        the guarded text. ``decode_tool_arguments`` and ``continue_final_message`` as in :meth:`render`:
        under the latter every range is cut where the prompt ends, so the continued message's runs
        to its end (generated, where it is an assistant's), and ``dropped`` adds what the cut leaves
        out (:func:`.spans.continued_prompt`).
        """
        field = None
        if options:
            messages, options, field = self._serving_options(messages, options, add_generation_prompt)
        guard = self.guard
        if guard is not None:  # the tools first, then the messages (so its errors come in that order)
            tools = guard.guard_tools(tools)
            fast = guard.fast_path(CHATML_READING) if field is None and not self.template.merge_system else None
            # The guard's fast path, as in render:
            # its prompt and ranges, or None to step aside to the checked path.
            if fast is not None:
                done = guarded_noted(fast, messages, tools, add_generation_prompt, self.template, options)
                if done is not None:
                    return rendered_prompt(*done, len(messages), policy)
            messages = guard.guard_messages(messages, CHATML_READING)
        if field is not None:
            template = self.template
            return continued_prompt(
                messages, tools, lambda tagged: chatml_noted(tagged, tools, False, template, options), field, policy)
        text, noted = chatml_noted(messages, tools, add_generation_prompt, self.template, options)
        return rendered_prompt(text, noted, len(messages), policy)

    def _serving_options(
        self, messages: Conversation, options: dict[str, Any], add_generation_prompt: bool | None
    ) -> tuple[Conversation, dict[str, Any], str | None]:
        """``options`` checked, then the serving ones taken out (:func:`.options.take_serving_options`)."""
        self.check_options(options)
        return take_serving_options(messages, options, add_generation_prompt)


class ChatMLMultiSystemFormat(ChatMLFormat):
    """The ``chatml-multi-system`` format: every system message merged into one leading system turn.

    Agent clients send several system messages (a base prompt, then reminders between turns); the
    upstream template raises ``System message must be at the beginning.`` for them. This variant
    renders each system message's content, trims it, drops the empty ones, joins the rest with a
    blank line and renders that as the only system turn; every other message keeps its order.
    Reference: ``tests/fixtures/chatml_multi_system.jinja``.
    """

    name = "chatml-multi-system"
    summary = ("Qwen3.6 ChatML as its Jinja template renders it, every system message merged into one leading "
               "system turn (for agent clients that send several)")
    template = MULTI_SYSTEM


class ChatMLSafetyFormat(ChatMLFormat):
    """The ``chatml-safety`` format: the strict upstream template, untrusted text unable to forge structure.

    On text that holds no control token the prompt is exactly the upstream template's
    (``tests/fixtures/chatml_upstream.jinja``). Before rendering, a
    :class:`~prompt_formats.guard.ControlTokenGuard` applies its policy to every untrusted field (see
    ``docs/safety.md``). ``policy``: ``"escape"`` (default), ``"reject"`` or ``"allow"``; ``tokens``:
    the control tokens (default the family's, ``pf.CHATML_CONTROL_TOKENS``; another set must hold it
    whole, and may add tokens of its own);
    ``trust_assistant``: leave assistant content and reasoning unchecked (default ``True``). Or pass
    a ready ``guard`` instead of those three.
    """

    name = "chatml-safety"
    summary = ("Qwen3.6 ChatML as the strict upstream template renders it, with a guard against control tokens "
               "in untrusted text (--config policy=escape|reject|allow)")
    config_specs = (
        Option("policy", frozenset({"string"}), "escape, reject or allow a control token found in untrusted text"),
        Option("tokens", frozenset({"array"}), "the control tokens: the Qwen3 ChatML set (default), or it extended"),
        Option("trust_assistant", BOOLEAN, "leave assistant content and reasoning unchecked (default true)"),
        GUARD_CONFIG,
    )
    guard: ControlTokenGuard

    def __init__(
        self,
        policy: Policy = "escape",
        *,
        tokens: Iterable[str] = CONTROL_TOKENS,
        trust_assistant: bool = True,
        guard: ControlTokenGuard | None = None,
    ) -> None:
        if not isinstance(trust_assistant, bool):  # a truthy string would leave assistant text unchecked
            raise InvalidInputError("trust_assistant", f"expected a boolean, got {type_name(trust_assistant)}")
        if guard is None:
            guard = ControlTokenGuard(tokens, policy, trust_assistant)
        elif (policy, tuple(tokens), trust_assistant) != ("escape", CONTROL_TOKENS, True):
            raise FormatError("chatml-safety: pass either guard or policy/tokens/trust_assistant, not both")
        super().__init__(guard)

    def __repr__(self) -> str:
        guard = self.guard
        return (
            f"{type(self).__name__}(policy={guard.policy!r}, trust_assistant={guard.trust_assistant!r}"
            + ("" if guard.tokens == CONTROL_TOKENS else f", tokens={guard.tokens!r}")
            + ")"
        )


class Qwen36Format(ChatMLFormat):
    """The ``qwen3.6`` format: Qwen3.6's template as its model repositories ship it.

    It differs from the seeds (``chatml-safety``'s template) in one place: a tool call's ``arguments``
    are iterated as an object (``arguments|items``), so a string (an OpenAI request's JSON text),
    ``null`` or any other non-object is refused where the engine refuses it
    (``decode_tool_arguments=True`` decodes JSON text first, as vLLM does). Reference:
    ``tests/fixtures/families/qwen3_6.jinja``.
    """

    name = "qwen3.6"
    summary = "Qwen3.6 as its model repositories ship the template (XML tool calls, thinking on by default)"
    template = QWEN3_6


class Qwen35Format(ChatMLFormat):
    """The ``qwen3.5`` format: Qwen3.5's template (thinking on by default).

    Qwen3.6's turns, with two differences: no ``preserve_thinking`` (only the assistant turns after
    the last user query keep their think block), and an argument value that is neither an object
    nor an array written as Python prints it (``True``, ``None``, ``1.5``), not as JSON.
    Reference: ``tests/fixtures/families/qwen3_5_think.jinja``.
    """

    name = "qwen3.5"
    summary = "Qwen3.5 as its template renders it (XML tool calls, thinking on by default)"
    template = QWEN3_5


class Qwen35NoThinkFormat(Qwen35Format):
    """The ``qwen3.5-nothink`` format: Qwen3.5's template with thinking off by default (the generation
    prompt closes an empty think block unless ``enable_thinking=True``).
    Reference: ``tests/fixtures/families/qwen3_5_nothink.jinja``.
    """

    name = "qwen3.5-nothink"
    summary = "Qwen3.5 with thinking off by default, as its no-think template renders it (XML tool calls)"
    template = QWEN3_5_NOTHINK


class Qwen38Format(ChatMLFormat):
    """The ``qwen3.8`` format: Qwen3.8's template.

    Qwen3.6's turns (arguments iterated as an object), with Qwen3.8's differences: ``reasoning_effort``
    (``xhigh`` by default, ``medium``, ``low``) writes its instructions first in the system turn while
    thinking is on (``enable_thinking`` not passed, or ``True``); every assistant turn keeps its think
    block unless ``preserve_thinking`` is passed and is not ``True``; the reasoning is read from a
    reasoning field only (an inline ``<think>`` block stays in the content); empty string arguments
    write nothing; a system message without text makes no turn.
    Reference: ``tests/fixtures/families/qwen3_8.jinja``.
    """

    name = "qwen3.8"
    summary = "Qwen3.8 as its template renders it (XML tool calls, reasoning effort, every think block kept)"
    template = QWEN3_8
