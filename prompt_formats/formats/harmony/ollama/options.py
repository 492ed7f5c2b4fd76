"""Harmony's render options: ``think`` / ``reasoning_effort`` (the header's reasoning line) and
``current_date`` (its date text), read as Ollama reads them; and their declarations.
"""

from __future__ import annotations

import datetime
import time
from typing import Any, Literal

from ....errors import FormatError, InvalidInputError, type_name
from ....format.options import STRICT, STRICT_PARSE, Option, describe
from ..dates import date_from_string
from ..tokens import REASONING

__all__ = [
    "OPTIONS",
    "OPTION_SPECS",
    "PARSE_OPTIONS",
    "PARSE_OPTION_SPECS",
    "PREFILLS",
    "REASONING_LINE",
    "ThinkValue",
    "date_from_string",
    "date_text",
    "reasoning_line_for",
    "refuse_generation_prompt",
    "shown",
    "today_text",
]

OPTION_SPECS = (
    Option("current_date", frozenset({"string", "null"}),
           "datetime.date or 'YYYY-MM-DD' string for 'Current date:' (default: today, local time)"),
    Option("think", frozenset({"boolean", "null", "string"}),
           "Ollama's think value: None (unset), True, False, 'low', 'medium', 'high' or 'max'"),
    Option("reasoning_effort", frozenset({"string", "null"}),
           "OpenAI's reasoning effort: 'none', 'minimal', 'low', 'medium', 'high' or 'xhigh'"),
    # Accepted so a server can pass every format the same options: the template renders no tool
    # call's arguments (it reads calls only to name a python result), so decoding changes nothing.
    Option("decode_tool_arguments", frozenset({"boolean", "null"}),
           "accepted, no effect: the template renders no tool call (see docs/harmony.md)"),
    STRICT,
)
OPTIONS = describe(OPTION_SPECS)

#: Where the prompt may have left the model: inside a message of one of these channels.
PREFILLS = ("analysis", "final", "commentary")
PARSE_OPTION_SPECS = (
    Option("prefill", frozenset({"string", "null"}),
           "None, or 'analysis'/'final'/'commentary' when the prompt ended inside such a message"),
    *(Option(spec.name, spec.kinds, "accepted so render's options can be passed as they are; no effect on parsing")
      for spec in OPTION_SPECS if spec is not STRICT),
    STRICT_PARSE,
)
PARSE_OPTIONS = describe(PARSE_OPTION_SPECS)

ThinkValue = bool | Literal["low", "medium", "high", "max"] | None


def _ollama_think(value: ThinkValue) -> tuple[bool, str, bool]:
    """``(Think, ThinkLevel, IsThinkSet)`` as Ollama derives them from a think value for gpt-oss."""
    if value is None:
        return False, "", False
    if value is True:
        return True, "medium", True
    if value is False:
        return False, "", True
    return True, "high" if value == "max" else value, True


def _reasoning_line(think: bool, level: str, is_set: bool) -> str:
    """The template's reasoning-level branch, transcribed."""
    if is_set and think and level != "":
        return REASONING + level
    if not is_set or (is_set and think):
        return REASONING + "medium"
    return ""


_THINK_VALUES: tuple[ThinkValue, ...] = (None, True, False, "low", "medium", "high", "max")
#: think value -> the header's reasoning line. Keys are checked by type first (True == 1 in a dict).
REASONING_LINE: dict[ThinkValue, str] = {v: _reasoning_line(*_ollama_think(v)) for v in _THINK_VALUES}
#: OpenAI reasoning_effort -> the equivalent Ollama think value.
_EFFORT_TO_THINK: dict[str, ThinkValue] = {
    "none": False,
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
}


def reasoning_line_for(think: Any, effort: Any) -> str:
    """The header's reasoning line for a ``think`` or a ``reasoning_effort`` value (not both).

    Raises :class:`FormatError` for both given, :class:`InvalidInputError` naming the option for a
    value Ollama does not take.
    """
    if effort is not None:
        if think is not None:
            raise FormatError("harmony: pass either think or reasoning_effort, not both")
        if not isinstance(effort, str) or effort not in _EFFORT_TO_THINK:
            raise InvalidInputError(
                "reasoning_effort",
                "expected null or one of 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', "
                f"got {shown(effort)}",
            )
        return REASONING_LINE[_EFFORT_TO_THINK[effort]]
    if think is None or type(think) is bool or (isinstance(think, str) and think in REASONING_LINE):
        return REASONING_LINE[think]
    raise InvalidInputError(
        "think", f"expected null, a bool or one of 'low', 'medium', 'high', 'max', got {shown(think)}"
    )


def shown(value: Any) -> str:
    """A bad option value as an error message shows it: a string quoted, anything else by its type."""
    return repr(value) if isinstance(value, str) else type_name(value)


#: (today's local date as text, the time.time() at which it stops being today)
_today: tuple[str, float] = ("", 0.0)


def today_text() -> str:
    """Today's local date as ``YYYY-MM-DD`` (Go's ``time.Now().Format("2006-01-02")``), cached until midnight."""
    global _today
    text, until = _today
    if time.time() < until:
        return text
    today = datetime.date.today()
    midnight = datetime.datetime.combine(today + datetime.timedelta(days=1), datetime.time())
    text = f"{today.year:04d}-{today.month:02d}-{today.day:02d}"
    _today = (text, midnight.timestamp())
    return text


def date_text(value: Any) -> str:
    """The ``currentDate`` text: Go's ``Format("2006-01-02")`` of the given or today's local date."""
    if value is None:
        return today_text()
    if isinstance(value, str):
        return date_from_string(value)
    if isinstance(value, datetime.date):  # a datetime is a date too: its calendar date is used
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    raise InvalidInputError(
        "current_date", f"expected a datetime.date or a 'YYYY-MM-DD' string, got {type_name(value)}"
    )


def refuse_generation_prompt(add_generation_prompt: Any) -> None:
    """Raise for an ``add_generation_prompt`` other than ``None`` or ``True``, which the template cannot honour."""
    if add_generation_prompt is False:
        raise FormatError(
            "harmony: add_generation_prompt=False is not supported: the template always ends with "
            "'<|start|>assistant' (except after an assistant prefill); pass True or leave it out"
        )
    raise InvalidInputError("add_generation_prompt", f"expected a bool or null, got {type_name(add_generation_prompt)}")
