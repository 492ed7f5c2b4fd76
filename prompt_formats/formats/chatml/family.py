"""What every ChatML format shares, whichever walk writes its template: :class:`ChatMLFamilyFormat`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ...format.chat_format import GUARD_CONFIG, GuardedFormat, Tools
from ...format.continuation import continued_field
from ...format.options import Option, describe
from .parse import ChatMLReplyParser
from .schema import tool_schemas
from .tokens import CONTROL_TOKENS

__all__ = ["ChatMLFamilyFormat"]


class ChatMLFamilyFormat(GuardedFormat):
    """Base of the ChatML formats: the family's control tokens (a guard is an option), its reply
    parser, ``render_spans`` and sessions; a subclass that names its ``template`` takes the options
    that template reads (:meth:`template_specs`)."""

    parses = True
    renders_spans = True
    renders_incrementally = True
    config_specs: ClassVar[tuple[Option, ...]] = (GUARD_CONFIG,)
    control_tokens = CONTROL_TOKENS
    parse_options: ClassVar[Mapping[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A format that names its template takes that template's options (what it reads)."""
        super().__init_subclass__(**kwargs)
        if "template" in cls.__dict__:
            cls.option_specs, cls.parse_option_specs = cls.template_specs(cls.__dict__["template"])
            cls.options = describe(cls.option_specs)
            cls.parse_options = describe(cls.parse_option_specs)

    @staticmethod
    def template_specs(template: Any) -> tuple[tuple[Option, ...], tuple[Option, ...]]:
        """``render``'s options and the parser's under ``template``."""
        raise NotImplementedError

    def _parser(self, tools: Tools, id_factory: Callable[[], str] | None, context: Mapping[str, Any],
                thinking: Callable[[Any], bool], json_calls: bool) -> ChatMLReplyParser:
        """The reply parser for ``stream_parser``: ``context`` checked against the parse options;
        ``thinking(enable_thinking)``: whether the prompt opened a think block; ``json_calls``: the
        template writes calls in the JSON form."""
        continued = None
        if context:
            self.check_options(context, self.parse_options)
            continued = continued_field(context.get("continue_final_message"), False)
        return ChatMLReplyParser(tool_schemas(tools), thinking(context.get("enable_thinking")), id_factory, continued,
                                 json_calls=json_calls)
