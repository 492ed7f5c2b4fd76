"""The DeepSeek family: DeepSeek-V3 (``deepseek-v3``), exactly as its template renders, and its replies.

The reference is ``tests/fixtures/families/deepseekv3.jinja``, rendered by Jinja2 as transformers
configures it. The walk is :mod:`.render`; spans :mod:`.spans`; losses :mod:`.drops`; the reply
parser :mod:`.parse`; every marker :mod:`.tokens`. What surprises users is on docs/deepseek.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ...errors import FormatError
from ...format.chat_format import GUARD_CONFIG, Conversation, GuardedFormat, Tools, render_strictly
from ...format.options import STRICT, STRICT_PARSE, Option, bos_token, bos_token_specs
from ...format.spans import GeneratedPolicy, RenderedPrompt
from ...guard import ControlTokenGuard
from ...model.tools import offered_names, require_tool_objects
from .incremental import DeepSeekIncremental
from .parse import DeepSeekReplyParser
from .render import message_dicts, walk
from .spans import rendered_prompt
from .tokens import BOS, DEEPSEEK_V3_CONTROL_TOKENS
from .untrusted import DEEPSEEK_V3_READING

__all__ = ["DEEPSEEK_V3_CONTROL_TOKENS", "DEEPSEEK_V3_READING", "DeepSeekReplyParser", "DeepSeekV3Format"]

_BOS_RENDER, _BOS_PARSE = bos_token_specs(BOS)
_OPTION_SPECS = (_BOS_RENDER, STRICT)
_PARSE_SPECS = (_BOS_PARSE, STRICT_PARSE)


def _guarded_call_types(guard: ControlTokenGuard, msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A call's ``type`` is written before ``<｜tool▁sep｜>``: checked here (the guard reads names and
    arguments alone), and a changed one passed on."""
    out = msgs
    for i, message in enumerate(msgs):
        calls = message.get("tool_calls")
        if type(calls) not in (list, tuple) or message.get("role") != "assistant":
            continue
        for k, call in enumerate(calls or ()):
            kind = call.get("type") if type(call) is dict else None
            if type(kind) is not str:
                continue
            checked = guard.guard_content(kind, f"messages[{i}].tool_calls[{k}].type")
            if checked is not kind:
                if out is msgs:
                    out = list(msgs)
                new_calls = list(out[i]["tool_calls"])
                new_calls[k] = {**call, "type": checked}
                out[i] = {**out[i], "tool_calls": new_calls}
    return out


class DeepSeekV3Format(GuardedFormat):
    """The ``deepseek-v3`` format: DeepSeek-V3's template, byte for byte.

    Every system message's text at the top; user turns after ``<｜User｜>``, assistant turns after
    ``<｜Assistant｜>`` (only what follows the last ``</think>``), tool calls with string arguments in
    json code blocks (the first turn of calls with its content, later ones without), tool results;
    the generation prompt opens the reasoning. No tools are written; every text must be a string
    (the engine fails on anything else, ``None`` and dict arguments included). Option ``bos_token``
    (default ``'<｜begin▁of▁sentence｜>'``). Reference: ``tests/fixtures/families/deepseekv3.jinja``.
    """

    name = "deepseek-v3"
    summary = "DeepSeek-V3 as its template renders it (system texts at the top, calls in json code blocks)"
    parses = True
    renders_spans = True
    config_specs: ClassVar[tuple[Option, ...]] = (GUARD_CONFIG,)
    control_tokens = DEEPSEEK_V3_CONTROL_TOKENS
    option_specs: ClassVar[tuple[Option, ...]] = _OPTION_SPECS
    options: ClassVar[Mapping[str, str]] = {spec.name: spec.description for spec in _OPTION_SPECS}
    parse_option_specs: ClassVar[tuple[Option, ...]] = _PARSE_SPECS
    parse_options: ClassVar[Mapping[str, str]] = {spec.name: spec.description for spec in _PARSE_SPECS}

    def render(self, messages: Conversation, tools: Tools = None, add_generation_prompt: bool | None = None,
               **options: Any) -> str:
        """Render one conversation to exactly the text DeepSeek-V3's template renders.

        ``add_generation_prompt`` (``None``: no) ends the prompt with ``<｜Assistant｜><think>\\n``
        unless the last message is a tool result. Raises
        :class:`~prompt_formats.errors.InvalidInputError` naming the field where the engine itself
        fails (a text that is no string). ``strict=True``: the same text, or InvalidInputError at
        the first input left out.
        """
        if options and "strict" in options:
            return render_strictly(self, messages, tools, add_generation_prompt, options)
        msgs, bos = self._prepared(messages, tools, options)
        return "".join(walk(msgs, bos, add_generation_prompt).out)

    def _render_spans(self, messages: Conversation, tools: Tools, add_generation_prompt: bool | None,
                      policy: GeneratedPolicy, options: dict[str, Any]) -> RenderedPrompt:
        msgs, bos = self._prepared(messages, tools, options)
        return rendered_prompt(msgs, tools, bos, add_generation_prompt, policy)

    def _prepared(self, messages: Conversation, tools: Tools, options: dict[str, Any]
                  ) -> tuple[list[dict[str, Any]], str]:
        """The messages as dicts (guarded, if configured) and the ``bos_token``; the options checked."""
        if options:
            self.check_options(options)
        bos = bos_token(options, BOS)
        require_tool_objects(tools)
        if self.guard is None:
            return message_dicts(messages), bos
        guarded = message_dicts(self.guard.guard_messages(messages, DEEPSEEK_V3_READING))
        return _guarded_call_types(self.guard, guarded), bos

    renders_incrementally = True

    def _incremental_renderer(self, tools: Tools, options: dict[str, Any]) -> DeepSeekIncremental | None:
        # strict: the full render refuses the losses, which the session's walk does not track.
        if self.guard is not None or "strict" in options:
            return None
        try:
            self.check_options(options)
            require_tool_objects(tools)
            bos = bos_token(options, BOS)
        except FormatError:  # every render raises it: full renders do
            return None
        return DeepSeekIncremental(bos)

    def stream_parser(self, tools: Tools = None, *, id_factory: Callable[[], str] | None = None,
                      **context: Any) -> DeepSeekReplyParser:
        """A new :class:`DeepSeekReplyParser` for one completion (the text after ``<｜Assistant｜><think>\\n``).

        ``context``: ``render``'s options (no effect); ``tools`` are checked (a call to any tool is
        read: the arguments are the JSON the model wrote, not typed by a schema); ``id_factory``
        makes the call ids. Its events, concatenated over any split of the completion, assemble to
        exactly ``parse(completion)``.
        """
        if context:
            self.check_options(context, self.parse_options)
        offered_names(tools)
        return DeepSeekReplyParser(id_factory)
