"""The ChatML formats whose templates write JSON tool calls: ``qwen2.5``, ``qwen3``, ``qwen3-instruct-2507``,
``qwen3-vl``.

Their walk is :func:`~.json_render.render_json_chatml`, read by a :class:`~.json_template.JsonTemplate`;
their replies are read by the family's parser (:mod:`.parse`), for which the JSON form of a call is
the usual one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import attrs

from ....format.chat_format import Conversation, Tools, render_strictly
from ....format.continuation import render_continued
from ....format.options import BOOLEAN, STRICT, STRICT_PARSE, Option
from ....format.spans import GeneratedPolicy, RenderedPrompt
from ....guard import ControlTokenGuard
from ..family import ChatMLFamilyFormat
from ..options import CONTINUES, SAME_AS_RENDER, SERVING_SPECS, take_serving_options
from ..parse import ChatMLReplyParser
from ..spans import continued_prompt, rendered_prompt
from ..untrusted import CHATML_JSON_READING
from .incremental import JsonIncremental, json_incremental_renderer
from .render import json_noted, render_json_chatml
from .template import QWEN2_5, QWEN3, QWEN3_INSTRUCT_2507, QWEN3_VL, JsonTemplate

__all__ = ["JsonChatMLFormat", "Qwen3Format", "Qwen3Instruct2507Format", "Qwen3VLFormat", "Qwen25Format"]


def render_specs(template: JsonTemplate) -> tuple[Option, ...]:
    """``render``'s options under ``template``: its variables, the serving options, ``strict``."""
    thinking = Option("enable_thinking", BOOLEAN,
                      "only exactly False closes an empty think block in the generation prompt")
    vision = Option("add_vision_id", BOOLEAN, "truthy: number images and videos ('Picture 1: ', 'Video 1: ')")
    return (*((thinking,) if template.reasoning else ()), *((vision,) if template.vision else ()), *SERVING_SPECS,
            STRICT)


def parse_specs(template: JsonTemplate) -> tuple[Option, ...]:
    """The parser's options under ``template``: ``render``'s, of which only ``continue_final_message``
    says where the completion starts (the generation prompt opens no think block: the model writes its own)."""
    accepted = (*render_specs(template)[:-1 - len(SERVING_SPECS)], SERVING_SPECS[0])
    return (*(Option(spec.name, spec.kinds, SAME_AS_RENDER) for spec in accepted), STRICT_PARSE, CONTINUES)


def _never(enable_thinking: Any) -> bool:
    """The prompt never opens a think block (the model writes its own)."""
    return False


class JsonChatMLFormat(ChatMLFamilyFormat):
    """Base of the ChatML formats that write JSON tool calls: its ``template`` says which.

    ``guard``: an optional :class:`~prompt_formats.guard.ControlTokenGuard` applied to the messages
    and tools before rendering (off by default: the output is then exactly the template's); with
    it, a value that is no string where the template prints one is refused.
    """

    template: ClassVar[JsonTemplate] = QWEN3_INSTRUCT_2507

    @staticmethod
    def template_specs(template: JsonTemplate) -> tuple[tuple[Option, ...], tuple[Option, ...]]:
        """``render``'s options and the parser's under ``template``."""
        return render_specs(template), parse_specs(template)

    def stream_parser(
        self,
        tools: Tools = None,
        *,
        id_factory: Callable[[], str] | None = None,
        **context: Any,
    ) -> ChatMLReplyParser:
        """A new :class:`~.parse.ChatMLReplyParser` for one completion (the text after the generation
        prompt), which reads a call in the JSON form as the usual one. ``tools`` types nothing (JSON
        has types) but notes a call to a tool not offered; ``context`` takes ``render``'s options
        (``continue_final_message`` as render took it); ``id_factory`` makes the call ids.

        Its events, concatenated over any split of the completion into deltas, assemble to exactly
        ``parse(completion)`` (with the same ``id_factory`` sequence).
        """
        return self._parser(tools, id_factory, context, _never, True)

    def _incremental_renderer(self, tools: Tools, options: dict[str, Any]) -> JsonIncremental | None:
        return json_incremental_renderer(self.guard, tools, self._walk_template, options)

    def __init__(self, guard: ControlTokenGuard | None = None) -> None:
        super().__init__(guard)
        # The template as this instance renders it, made once: with a guard, strings only where it prints.
        self._walk_template = self.template if self.guard is None else attrs.evolve(self.template, strings_only=True)

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
            tools = guard.guard_tools(tools)
            messages = guard.guard_messages(messages, CHATML_JSON_READING)
        return messages, tools, options, field

    def render(
        self,
        messages: Conversation,
        tools: Tools = None,
        add_generation_prompt: bool = False,
        **options: Any,
    ) -> str:
        """Render ``messages`` byte-identically to the reference template (see
        :func:`~.json_render.render_json_chatml`). ``decode_tool_arguments``, ``continue_final_message``
        and ``strict`` as for every ChatML format (:meth:`ChatMLFormat.render <.ChatMLFormat.render>`).
        """
        if options and "strict" in options:
            return render_strictly(self, messages, tools, add_generation_prompt, options)
        messages, tools, options, field = self._prepared(messages, tools, add_generation_prompt, options)
        template = self._walk_template
        if field is not None:
            return render_continued(lambda tagged: render_json_chatml(tagged, tools, False, template, **options),
                                    messages, field, template.fields_read)
        return render_json_chatml(messages, tools, add_generation_prompt, template, **options)

    def _render_spans(self, messages: Conversation, tools: Tools, add_generation_prompt: bool | None,
                      policy: GeneratedPolicy, options: dict[str, Any]) -> RenderedPrompt:
        """:meth:`render_spans` (its contract: :meth:`ChatFormat.render_spans`): a user, tool or system
        message's range is its printed content; an assistant's, and what it generated, its turn from
        right after ``<|im_start|>assistant\\n`` up to and including its ``<|im_end|>``."""
        messages, tools, options, field = self._prepared(messages, tools, add_generation_prompt, options)
        template = self._walk_template
        if field is not None:
            return continued_prompt(messages, tools, lambda tagged: json_noted(tagged, tools, False, template, options),
                                    field, policy, template.fields_read)
        text, noted = json_noted(messages, tools, add_generation_prompt, template, options)
        return rendered_prompt(text, noted, len(messages), policy)


class Qwen3Format(JsonChatMLFormat):
    """The ``qwen3`` format: Qwen3's template (thinking models; JSON tool calls).

    The assistant turns after the last user query keep their reasoning in a think block; the
    generation prompt opens none (the model writes it), and closes an empty one for
    ``enable_thinking=False``. Reference: ``tests/fixtures/families/qwen3.jinja``.
    """

    name = "qwen3"
    summary = "Qwen3 as its template renders it (JSON tool calls, reasoning kept after the last query)"
    template = QWEN3


class Qwen3Instruct2507Format(JsonChatMLFormat):
    """The ``qwen3-instruct-2507`` format: Qwen3-Instruct-2507's template (no reasoning: a reasoning
    field is left out). Reference: ``tests/fixtures/families/qwen3_instruct_2507.jinja``.
    """

    name = "qwen3-instruct-2507"
    summary = "Qwen3-Instruct-2507 as its template renders it (JSON tool calls, no reasoning)"
    template = QWEN3_INSTRUCT_2507


class Qwen3VLFormat(JsonChatMLFormat):
    """The ``qwen3-vl`` format: Qwen3-VL's template (no reasoning; images and videos).

    A content that is no string is read as parts: a user's or tool's images and videos as their
    markers (numbered under ``add_vision_id``), text parts' texts; a system's or assistant's text
    parts only. A system message after the first is not written. Reference:
    ``tests/fixtures/families/qwen3_vl.jinja``.
    """

    name = "qwen3-vl"
    summary = "Qwen3-VL as its template renders it (JSON tool calls, images and videos, no reasoning)"
    template = QWEN3_VL


class Qwen25Format(JsonChatMLFormat):
    """The ``qwen2.5`` format: Qwen2.5's template.

    A default system prompt when the conversation has none; content concatenated, so a content that
    is no string is refused where the engine refuses it, and printed as Python prints it in a tool
    result; string ``arguments`` written as a JSON string. Reference:
    ``tests/fixtures/families/qwen2_5.jinja``.
    """

    name = "qwen2.5"
    summary = "Qwen2.5 as its template renders it (JSON tool calls, default system prompt)"
    template = QWEN2_5
