"""The one reading of the ChatML formats' serving options, for ``render``, ``render_spans`` and sessions.

``decode_tool_arguments`` and ``continue_final_message`` are not the template's variables but what a
server or transformers does around it; ``strict`` asks for a refusal of what the template leaves
out. ``render`` reads them here, and a session asks here whether it may reuse earlier work, so the
two read a value (``0``, ``""``, ``[]``) the same way: a session steps aside to the full render for
any value that is not plainly off, and the full render accepts it or raises its error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...errors import FormatError
from ...format.continuation import continued_field
from ...format.options import BOOLEAN, STRICT, STRICT_PARSE, Option, strict_flag
from ...model.arguments import decode_arguments_option, decode_every_call
from .template import Template

if TYPE_CHECKING:
    from ...guard import ControlTokenGuard

__all__ = [
    "CONTINUES", "SAME_AS_RENDER", "SERVING_SPECS", "parse_specs", "render_specs", "renders_in_full", "serving_options",
    "session_tools", "take_serving_options",
]

# Not the template's variables: what a server or transformers does around the template.
SERVING_SPECS = (
    Option("decode_tool_arguments", frozenset({"boolean", "null"}),
           "true: a tool call's string arguments holding a JSON object are decoded before rendering, as vLLM "
           "does (default: false, rendered as the template renders a string)"),
    Option("continue_final_message", frozenset({"boolean", "null", "string"}),
           "true (or 'content', or a reasoning field's name): the prompt ends inside the final message's text, "
           "so the model continues it, as transformers does (not with add_generation_prompt)"),
)
_SERVING_NAMES = frozenset(spec.name for spec in SERVING_SPECS)
CONTINUES = Option(SERVING_SPECS[1].name, SERVING_SPECS[1].kinds,
                   "as in render: the completion continues the final message's content (true, 'content') or its "
                   "reasoning (a reasoning field's name), its leading whitespace kept")
SAME_AS_RENDER = "accepted so render's options can be passed as they are; no effect on parsing"


def _template_specs(template: Template) -> tuple[Option, ...]:
    """The template's own variables, as it reads them."""
    thinking = ("only exactly False disables thinking in the generation prompt (empty think block)"
                if template.thinking_by_default else
                "only exactly True enables thinking in the generation prompt (else an empty think block)")
    preserving = ("every assistant turn keeps its <think> block unless this is passed and is not exactly True"
                  if template.preserving_by_default else
                  "only exactly True keeps the <think> block of every assistant turn")
    effort = Option("reasoning_effort", frozenset({"string", "null"}),
                    "xhigh (default), medium or low: the instructions written first in the system turn while thinking")
    return (
        Option("enable_thinking", BOOLEAN, thinking),
        *((Option("preserve_thinking", BOOLEAN, preserving),) if template.preserve_thinking else ()),
        *((effort,) if template.reasoning_effort else ()),
        Option("add_vision_id", BOOLEAN, "truthy: number images and videos ('Picture 1: ', 'Video 1: ')"),
    )


def render_specs(template: Template) -> tuple[Option, ...]:
    """``render``'s options under ``template``: its variables, the serving options, ``strict``."""
    return (*_template_specs(template), *SERVING_SPECS, STRICT)


def parse_specs(template: Template) -> tuple[Option, ...]:
    """The parser's options under ``template``: ``render``'s, of which ``enable_thinking`` and
    ``continue_final_message`` say where the completion starts."""
    decode = SERVING_SPECS[0]
    thinking = ("as in render: only exactly False means the prompt closed the think block"
                if template.thinking_by_default else
                "as in render: only exactly True means the prompt opened a think block")
    return (
        Option("enable_thinking", BOOLEAN, thinking),
        *(Option(spec.name, spec.kinds, SAME_AS_RENDER) for spec in (*_template_specs(template)[1:], decode)),
        STRICT_PARSE,
        CONTINUES,
    )


def serving_options(options: Mapping[str, Any], add_generation_prompt: Any) -> tuple[bool, str | None]:
    """Whether the calls' arguments are decoded, and the field ``continue_final_message`` continues
    (``None``: none); raises :class:`~prompt_formats.errors.InvalidInputError` naming the option
    for a value of neither's kinds, and transformers' error for a continuation with a generation prompt."""
    decode = decode_arguments_option(options.get("decode_tool_arguments"))
    return decode, continued_field(options.get("continue_final_message"), add_generation_prompt)


def renders_in_full(options: Mapping[str, Any]) -> bool:
    """Whether every render under ``options`` must be a full one: ``strict``, a serving option or
    ``add_vision_id`` (images numbered across the conversation) on, or a value ``render`` refuses
    (which every full render then raises)."""
    try:
        decode, field = serving_options(options, False)
        strict = strict_flag(options.get("strict"))
    except FormatError:
        return True
    return decode or field is not None or strict or bool(options.get("add_vision_id"))


def take_serving_options(messages: Any, options: dict[str, Any], add_generation_prompt: Any
                         ) -> tuple[Any, dict[str, Any], str | None]:
    """``options`` (checked by the caller) with the serving ones taken out: the messages (their call
    arguments decoded under ``decode_tool_arguments``), the template's options, and the field
    ``continue_final_message`` cuts the prompt in (``None``: not cut)."""
    if _SERVING_NAMES.isdisjoint(options):
        return messages, options, None
    decode, field = serving_options(options, add_generation_prompt)
    options = {name: value for name, value in options.items() if name not in _SERVING_NAMES}
    return decode_every_call(messages) if decode else messages, options, field


def session_tools(guard: ControlTokenGuard | None, tools: Any, options: Mapping[str, Any]) -> tuple[bool, Any]:
    """Whether a session may reuse earlier work under ``options`` (not when every render must be a
    full one, :func:`renders_in_full`, or the guard refuses the tools, which every render then
    raises), and the tools as its renders read them (guarded once)."""
    if renders_in_full(options):
        return False, tools
    if guard is not None:
        try:
            tools = guard.guard_tools(tools)
        except Exception:  # every render raises it: full renders do
            return False, tools
    return True, tools
