"""The ChatML formats whose templates write JSON tool calls: ``qwen2.5``, ``qwen3``, ``qwen3-instruct-2507``,
``qwen3-vl``.

Their walk is :func:`~.json_render.render_json_chatml`, read by a :class:`~.json_template.JsonTemplate`;
their replies are read by the family's parser (:mod:`.parse`), for which the JSON form of a call is
the usual one.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ....format.chat_format import Conversation, Tools
from ....format.options import BOOLEAN, STRICT, STRICT_PARSE, Option
from ..family import WalkedChatMLFormat
from ..options import CONTINUES, SAME_AS_RENDER, SERVING_SPECS
from ..render import NotedRender
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


class JsonChatMLFormat(WalkedChatMLFormat):
    """Base of the ChatML formats that write JSON tool calls: its ``template`` says which (its walk:
    :func:`~.render.render_json_chatml`)."""

    template: ClassVar[JsonTemplate] = QWEN3_INSTRUCT_2507
    reading = CHATML_JSON_READING

    @staticmethod
    def template_specs(template: JsonTemplate) -> tuple[tuple[Option, ...], tuple[Option, ...]]:
        """``render``'s options and the parser's under ``template``."""
        return render_specs(template), parse_specs(template)

    def _incremental_renderer(self, tools: Tools, options: dict[str, Any]) -> JsonIncremental | None:
        return json_incremental_renderer(self.guard, tools, self._walk_template, options)

    def _walk(self, messages: Conversation, tools: Tools, add_generation_prompt: Any, options: dict[str, Any]) -> str:
        return render_json_chatml(messages, tools, add_generation_prompt, self._walk_template, **options)

    def _walk_noted(self, messages: Conversation, tools: Tools, add_generation_prompt: Any,
                    options: dict[str, Any]) -> tuple[str, NotedRender]:
        return json_noted(messages, tools, add_generation_prompt, self._walk_template, options)


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
