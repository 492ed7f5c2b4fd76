"""Gemma 3 (``gemma-3``): Google's Gemma 3 instruction-tuned models, exactly as their template renders.

The reference is ``tests/fixtures/families/gemma3.jinja``, rendered by Jinja2 as transformers
configures it. The walk is :mod:`.render`; spans :mod:`.spans`; losses :mod:`.drops`; the reply
parser :mod:`.parse`. What surprises users is on docs/gemma.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ....errors import FormatError
from ....format.chat_format import GUARD_CONFIG, Conversation, GuardedFormat, Tools, render_strictly
from ....format.options import STRICT, STRICT_PARSE, Option, bos_token, bos_token_specs
from ....format.spans import GeneratedPolicy, RenderedPrompt
from ....guard import ControlTokenGuard
from ....model.tools import offered_names, require_tool_objects
from ..tokens import BOS, GEMMA3_CONTROL_TOKENS, MODEL_TURN
from ..untrusted import GEMMA3_READING, is_text
from .incremental import Gemma3Incremental
from .parse import Gemma3ReplyParser
from .render import message_dicts, walk
from .spans import rendered_prompt

__all__ = ["Gemma3Format", "Gemma3ReplyParser"]

_BOS_RENDER, _BOS_PARSE = bos_token_specs(BOS)
_OPTION_SPECS = (_BOS_RENDER, STRICT)
_PARSE_SPECS = (_BOS_PARSE, STRICT_PARSE)


def _guarded_system_text(guard: ControlTokenGuard, msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A leading system message's first part is written as its ``text`` whatever its type (the
    content an object too: its ``content[0]``): the guard, which reads the text parts of a list
    alone, checks that text here."""
    first = msgs[0]
    content = first.get("content")
    if first.get("role") != "system" or type(content) not in (list, tuple, dict) or not content:
        return msgs
    part = content.get(0) if type(content) is dict else content[0]
    if type(part) is not dict or type(part.get("text")) is not str or (type(content) is not dict and is_text(part)):
        return msgs
    text = guard.guard_content(part["text"], "messages[0].content[0].text")
    if text is part["text"]:
        return msgs
    written = {**part, "text": text}
    content = {**content, 0: written} if type(content) is dict else [written, *content[1:]]
    return [{**first, "content": content}, *msgs[1:]]


class Gemma3Format(GuardedFormat):
    """The ``gemma-3`` format: Gemma 3's template, byte for byte.

    A leading system message opens the first user turn (its text and a blank line); the other
    messages alternate user / model turns (``assistant`` is written ``model``; any other role at a
    model turn's place as given), each content trimmed, an image part written
    ``<start_of_image>``. No tools, tool calls or reasoning are written: ``render_spans(...).dropped``
    names them, ``strict=True`` refuses them. Option ``bos_token`` (default ``'<bos>'``).
    Reference: ``tests/fixtures/families/gemma3.jinja``.
    """

    name = "gemma-3"
    summary = "Gemma 3 as its template renders it (alternating turns, no tools, system text in the first turn)"
    parses = True
    renders_spans = True
    config_specs: ClassVar[tuple[Option, ...]] = (GUARD_CONFIG,)
    control_tokens = GEMMA3_CONTROL_TOKENS
    option_specs: ClassVar[tuple[Option, ...]] = _OPTION_SPECS
    options: ClassVar[Mapping[str, str]] = {spec.name: spec.description for spec in _OPTION_SPECS}
    parse_option_specs: ClassVar[tuple[Option, ...]] = _PARSE_SPECS
    parse_options: ClassVar[Mapping[str, str]] = {spec.name: spec.description for spec in _PARSE_SPECS}

    def render(self, messages: Conversation, tools: Tools = None, add_generation_prompt: bool | None = None,
               **options: Any) -> str:
        """Render one conversation to exactly the text Gemma 3's template renders.

        ``add_generation_prompt`` (``None``: no) ends the prompt with ``<start_of_turn>model\\n``.
        Raises :class:`~prompt_formats.errors.TemplateError` with the template's message for roles
        out of order or a content of another kind, and
        :class:`~prompt_formats.errors.InvalidInputError` naming the field where the engine itself
        fails (no messages, a leading system message without text, a role that is no string).
        ``strict=True``: the same text, or InvalidInputError at the first input left out.
        """
        if options and "strict" in options:
            return render_strictly(self, messages, tools, add_generation_prompt, options)
        msgs, bos = self._prepared(messages, tools, options)
        out = [bos]
        walk(msgs, out)
        if add_generation_prompt:
            out.append(MODEL_TURN)
        return "".join(out)

    def _render_spans(self, messages: Conversation, tools: Tools, add_generation_prompt: bool | None,
                      policy: GeneratedPolicy, options: dict[str, Any]) -> RenderedPrompt:
        msgs, bos = self._prepared(messages, tools, options)
        return rendered_prompt(msgs, tools, bos, bool(add_generation_prompt), policy)

    def _prepared(self, messages: Conversation, tools: Tools, options: dict[str, Any]
                  ) -> tuple[list[dict[str, Any]], str]:
        """The messages as dicts (guarded, if configured) and the ``bos_token``; the options checked."""
        if options:
            self.check_options(options)
        bos = bos_token(options, BOS)
        require_tool_objects(tools)
        if self.guard is None:
            return message_dicts(messages), bos
        return _guarded_system_text(self.guard, message_dicts(self.guard.guard_messages(messages, GEMMA3_READING))), bos

    renders_incrementally = True

    def _incremental_renderer(self, tools: Tools, options: dict[str, Any]) -> Gemma3Incremental | None:
        # strict: the full render refuses the losses, which the session's pieces do not track.
        if self.guard is not None or "strict" in options:
            return None
        try:
            self.check_options(options)
            require_tool_objects(tools)
            bos = bos_token(options, BOS)
        except FormatError:  # every render raises it: full renders do
            return None
        return Gemma3Incremental(bos)

    def stream_parser(self, tools: Tools = None, *, id_factory: Callable[[], str] | None = None,
                      **context: Any) -> Gemma3ReplyParser:
        """A new :class:`Gemma3ReplyParser` for one completion (the text after ``<start_of_turn>model\\n``).

        ``context``: ``render``'s options (no effect); ``tools`` are checked and otherwise unused (the
        template offers none); ``id_factory`` is unused (no call is ever read). Its events,
        concatenated over any split of the completion, assemble to exactly ``parse(completion)``.
        """
        if context:
            self.check_options(context, self.parse_options)
        offered_names(tools)
        return Gemma3ReplyParser()
