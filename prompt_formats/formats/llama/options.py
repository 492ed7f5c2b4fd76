"""The options of the Llama 3 templates, their two variants, and their reading into a :class:`~.render.Setup`.

The templates read variables the tokenizer or the caller may define (``bos_token``, ``custom_tools``,
``tools_in_user_message``, ``date_string``, and 3.1's ``builtin_tools``): each is a render option,
defaulting to what the template does when it is not defined. The variants differ in two places,
declared here (:class:`Variant`): 3.1 reads ``builtin_tools``; 3.2 writes today's date where none is
given, as transformers' ``strftime_now`` tells it (the local date, ``%d %b %Y``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from ..._text.plain import plain_data
from ...errors import InvalidInputError, too_deep, type_name
from ...format.chat_format import Tools
from ...format.options import STRICT, STRICT_PARSE, Option, bos_token, bos_token_specs
from ...model.tools import require_tool_objects
from .render import Setup
from .tokens import BOS, DATE_FORMAT, DEFAULT_DATE

__all__ = ["LLAMA_3_1", "LLAMA_3_2", "Variant", "setup", "today"]


class Variant(NamedTuple):
    """How a Llama 3 template differs from the family's walk."""

    #: The template reads ``builtin_tools`` (3.1): the ``Tools:`` line, ``.call`` calls, ``<|eom_id|>``.
    builtin_tools: bool
    #: With no ``date_string``, the template writes today's date (3.2), not the fixed one.
    dated_today: bool
    option_specs: tuple[Option, ...]
    parse_option_specs: tuple[Option, ...]


def today() -> str:
    """Today's date as 3.2's template writes it (transformers' ``strftime_now("%d %b %Y")``: local time)."""
    return datetime.now().strftime(DATE_FORMAT)


_BOS_RENDER, _BOS_PARSE = bos_token_specs(BOS)
_CUSTOM = Option("custom_tools", frozenset({"array", "null"}),
                 "the tools the template writes in place of the request's (null: none offered)")
_IN_USER = Option("tools_in_user_message", frozenset({"boolean", "null"}),
                  "true (default): the tools are listed in the first user message, which must exist; "
                  "false or null: in the system turn")
_BUILTIN = Option("builtin_tools", frozenset({"array", "null"}),
                  "the built-in tools named (e.g. [\"brave_search\", \"wolfram_alpha\"]): a 'Tools:' line, calls to "
                  "them as <|python_tag|>NAME.call(...), and <|eom_id|> after every call")


_DECODE = Option("decode_tool_arguments", frozenset({"boolean", "null"}),
                 "true: a tool call's string arguments holding a JSON object are decoded before rendering, as an "
                 "OpenAI client sends them and vLLM decodes them (default: false, written as a JSON string as the "
                 "template does)")


def _date(default: str) -> Option:
    return Option("date_string", frozenset({"string"}), f"the date written as today's (default: {default})")


def _parse_specs(*render: Option) -> tuple[Option, ...]:
    said = "accepted so render's options can be passed as they are; no effect on parsing"
    return (*(Option(spec.name, spec.kinds, said) for spec in render), STRICT_PARSE)


_COMMON = (_BOS_RENDER, _CUSTOM, _IN_USER, _DECODE)
LLAMA_3_1 = Variant(True, False, (*_COMMON, _date(repr(DEFAULT_DATE)), _BUILTIN, STRICT),
                    _parse_specs(*_COMMON, _date(repr(DEFAULT_DATE)), _BUILTIN))
LLAMA_3_2 = Variant(False, True, (*_COMMON, _date("today's, as '05 Dec 2026'"), STRICT),
                    _parse_specs(*_COMMON, _date("today's")))


def _array_or_null(options: dict[str, Any], name: str) -> tuple[Any, ...] | None:
    value = options[name]
    if value is None:
        return None
    if not isinstance(value, (list, tuple)):
        raise InvalidInputError(name, f"expected an array or null, got {type_name(value)}")
    items = []
    for k, item in enumerate(value):
        try:
            items.append(plain_data(item))
        except RecursionError:  # (an item nested deeper than the stack reads: named, as the tools are)
            raise too_deep(f"{name}[{k}]") from None
    return tuple(items)


def setup(options: dict[str, Any], tools: Tools, variant: Variant) -> Setup:
    """The :class:`Setup` ``options`` (already checked for names) and ``tools`` give; raises
    :class:`InvalidInputError` naming the option (or the tools) whose value the template cannot use."""
    bos = bos_token(options, BOS)
    require_tool_objects(tools)  # (transformers takes tool objects only, whatever the template writes)
    tools_path = "tools"
    written: Any = tools
    if "custom_tools" in options:  # (the template writes them in place of the request's)
        written = _array_or_null(options, "custom_tools")
        tools_path = "custom_tools"
    in_user = bool(plain_data(options.get("tools_in_user_message", True)))
    if "date_string" in options:
        date = plain_data(options["date_string"])
        if type(date) is not str:
            raise InvalidInputError("date_string", f"expected a string, got {type_name(date)}")
    else:
        date = today() if variant.dated_today else DEFAULT_DATE
    if variant.builtin_tools and "builtin_tools" in options:
        return Setup(bos, written, in_user, date, _array_or_null(options, "builtin_tools"), True, tools_path)
    return Setup(bos, written, in_user, date, tools_path=tools_path)
