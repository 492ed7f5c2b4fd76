"""The Nemotron 3 formats: ``nemotron-3-nano``, ``nemotron-3-super``, ``nemotron-3-ultra``, ``nemotron-3.5``.

Their walk is :func:`~.render.render_nemotron`, read by a :class:`~.template.NemotronTemplate`;
their replies are read by the family's parser (:mod:`..parse`): calls in the XML form, reasoning
in a think block the generation prompt opens unless thinking is off.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ....format.chat_format import Conversation, Tools
from ....format.options import BOOLEAN, STRICT, STRICT_PARSE, Option
from ....guard import ControlTokenGuard
from ..family import WalkedChatMLFormat
from ..options import CONTINUES, SAME_AS_RENDER, SERVING_SPECS
from ..render import NotedRender
from ..tokens import NEMOTRON_CONTROL_TOKENS
from ..untrusted import NEMOTRON_READING
from .incremental import NemotronIncremental, nemotron_incremental_renderer
from .render import nemotron_noted, render_nemotron, walk_options
from .template import NEMOTRON_3_5, NEMOTRON_3_NANO, NEMOTRON_3_SUPER, NemotronTemplate
from .tool_spec import check_written_keys

__all__ = [
    "Nemotron3NanoFormat",
    "Nemotron3SuperFormat",
    "Nemotron3UltraFormat",
    "Nemotron35Format",
    "NemotronFormat",
]


def _template_options(template: NemotronTemplate) -> tuple[Option, ...]:
    """The template's own variables, as it reads them."""
    effort = template.effort_note.strip()
    return (
        Option("enable_thinking", BOOLEAN, "truthy (the default): the generation prompt opens a think block; "
               "falsy: it closes an empty one"),
        Option("truncate_history_thinking", BOOLEAN, "truthy (the default): the assistant turns before the last "
               "user message lose what a think block closes"),
        *((Option(template.effort_flag, BOOLEAN, f"truthy: '{effort}' follows the last user message"),)
          if template.effort_flag else ()),
    )


def render_specs(template: NemotronTemplate) -> tuple[Option, ...]:
    """``render``'s options under ``template``: its variables, the serving options, ``strict``."""
    return (*_template_options(template), *SERVING_SPECS, STRICT)


def parse_specs(template: NemotronTemplate) -> tuple[Option, ...]:
    """The parser's options under ``template``: ``render``'s, of which ``enable_thinking`` and
    ``continue_final_message`` say where the completion starts."""
    own = _template_options(template)
    return (Option("enable_thinking", BOOLEAN, "as in render: falsy means the prompt closed the think block"),
            *(Option(spec.name, spec.kinds, SAME_AS_RENDER) for spec in (*own[1:], SERVING_SPECS[0])),
            STRICT_PARSE, CONTINUES)


class NemotronFormat(WalkedChatMLFormat):
    """Base of the Nemotron 3 formats: its ``template`` says which (its walk:
    :func:`~.render.render_nemotron`). With a guard, a tool-schema key the template would print
    unchecked, or with its brackets as a control token, is refused too (:func:`.check_written_keys`)."""

    template: ClassVar[NemotronTemplate] = NEMOTRON_3_NANO
    control_tokens = NEMOTRON_CONTROL_TOKENS
    reading = NEMOTRON_READING

    @staticmethod
    def template_specs(template: NemotronTemplate) -> tuple[tuple[Option, ...], tuple[Option, ...]]:
        """``render``'s options and the parser's under ``template``."""
        return render_specs(template), parse_specs(template)

    def _incremental_renderer(self, tools: Tools, options: dict[str, Any]) -> NemotronIncremental | None:
        return nemotron_incremental_renderer(self.guard, tools, self._walk_template, options)

    def _guarded_tools(self, guard: ControlTokenGuard, tools: Tools) -> Tools:
        tools = guard.guard_tools(tools)
        check_written_keys(tools, guard)
        return tools

    def _walk(self, messages: Conversation, tools: Tools, add_generation_prompt: Any, options: dict[str, Any]) -> str:
        template = self._walk_template
        return render_nemotron(messages, tools, add_generation_prompt, template, **walk_options(template, options))

    def _walk_noted(self, messages: Conversation, tools: Tools, add_generation_prompt: Any,
                    options: dict[str, Any]) -> tuple[str, NotedRender]:
        return nemotron_noted(messages, tools, add_generation_prompt, self._walk_template, options)


class Nemotron3NanoFormat(NemotronFormat):
    """The ``nemotron-3-nano`` format: NVIDIA Nemotron 3 Nano's template.

    The system turn is always written; the assistant turns before the last user message lose their
    reasoning (``truncate_history_thinking``, on by default); calls in the XML form; the tools spelt
    as XML. Reference: ``tests/fixtures/families/nemotron_3_nano.jinja``.
    """

    name = "nemotron-3-nano"
    summary = "NVIDIA Nemotron 3 Nano as its template renders it (XML tool calls, history reasoning cut)"
    template = NEMOTRON_3_NANO


class Nemotron3SuperFormat(NemotronFormat):
    """The ``nemotron-3-super`` format: NVIDIA Nemotron 3 Super's template (Nano's, with ``low_effort``
    noted after the last user message). Reference: ``tests/fixtures/families/nemotron_3_super.jinja``.
    """

    name = "nemotron-3-super"
    summary = "NVIDIA Nemotron 3 Super as its template renders it (Nano's, with low_effort)"
    template = NEMOTRON_3_SUPER


class Nemotron35Format(NemotronFormat):
    """The ``nemotron-3.5`` format: NVIDIA Nemotron 3.5's template (Nano's, with ``medium_effort``, the
    reasoning closed right before the content, and what a cut leaves of a content untrimmed).
    Reference: ``tests/fixtures/families/nemotron_3_5.jinja``.
    """

    name = "nemotron-3.5"
    summary = "NVIDIA Nemotron 3.5 as its template renders it (XML tool calls, medium_effort)"
    template = NEMOTRON_3_5


class Nemotron3UltraFormat(Nemotron35Format):
    """The ``nemotron-3-ultra`` format: NVIDIA Nemotron 3 Ultra's template, the same text as Nemotron
    3.5's. Reference: ``tests/fixtures/families/nemotron_3_ultra.jinja``.
    """

    name = "nemotron-3-ultra"
    summary = "NVIDIA Nemotron 3 Ultra as its template renders it (Nemotron 3.5's template)"
