"""The gpt-oss format's options, read into what the system message is made of (:class:`SystemOptions`).

The template's own keyword arguments are ``model_identity``, ``reasoning_effort`` and
``builtin_tools``; ``current_date`` stands for the date it takes from ``strftime_now("%Y-%m-%d")``
(transformers: ``datetime.now()``, local time). ``decode_tool_arguments`` is the serving option of
``arguments.py`` (what a server does to the messages before it renders them), read as every format
reads it (:func:`prompt_formats.model.arguments.decode_arguments_option`).
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Mapping
from typing import Any

from ....errors import InvalidInputError, type_name
from ....format.options import STRICT, Option, describe
from ..dates import date_from_string

__all__ = ["OPTIONS", "OPTION_SPECS", "SystemOptions"]

OPTION_SPECS: tuple[Option, ...] = (
    Option("reasoning_effort", frozenset({"string", "null"}),
           "the text after 'Reasoning:': gpt-oss knows 'low', 'medium' and 'high'; any string is written, as the "
           "template writes it (default: 'medium', as the template)"),
    Option("model_identity", frozenset({"string", "null"}),
           "the system message's first line (default: the template's 'You are ChatGPT, ...' line)"),
    Option("builtin_tools", frozenset({"array", "null"}),
           "a list naming 'browser' and/or 'python': the built-in tools the system message describes (the "
           "template ignores other entries: render_spans reports them dropped)"),
    Option("current_date", frozenset({"string", "null"}),
           "datetime.date or 'YYYY-MM-DD' string for 'Current date:' (default: today, local time)"),
    Option("decode_tool_arguments", frozenset({"boolean", "null"}),
           "true: a tool call's string arguments holding a JSON object are decoded before rendering, as vLLM "
           "does (default: false, rendered as a JSON string as the template does)"),
    STRICT,
)
OPTIONS: Mapping[str, str] = describe(OPTION_SPECS)

_DEFAULT_IDENTITY = "You are ChatGPT, a large language model trained by OpenAI."
_BUILTIN_TOOLS = ("browser", "python")

class SystemOptions:
    """The validated options that shape the system message: identity, date, effort, built-in tools."""

    __slots__ = ("builtin", "date", "effort", "identity", "lost")

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.identity = _identity(options.get("model_identity"))
        self.date = date_text(options.get("current_date"))
        self.effort = _effort(options.get("reasoning_effort"))
        #: ``builtin_tools``' entries the template ignores, as paths (``builtin_tools[2]``).
        self.lost: tuple[str, ...] = ()
        builtin = options.get("builtin_tools")
        #: ``(browser, python)`` for a truthy ``builtin_tools`` (the template then writes its tools
        #: header), ``None`` for none.
        self.builtin = self._builtin_tools(builtin) if builtin else None

    def _builtin_tools(self, value: Any) -> tuple[bool, bool]:
        """``(browser, python)``: which built-in tools ``value`` names, as the template's loop reads it
        (``tool == "browser"``, over a list's items, a mapping's keys or a string's characters); the
        entries it ignores are noted in :attr:`lost`."""
        if isinstance(value, str):
            self.lost = ("builtin_tools",)  # its characters are no tool's name
            return (False, False)
        if not isinstance(value, (list, tuple, Mapping)):
            raise InvalidInputError(
                "builtin_tools", f"expected a list of tool names (the template loops over it), got {type_name(value)}"
            )
        names = list(value)
        browser, python = "browser" in names, "python" in names
        self.lost = tuple(f"builtin_tools[{i}]" for i, name in enumerate(names) if name not in _BUILTIN_TOOLS)
        return (browser, python)


def _identity(value: Any) -> str:
    if value is None:
        return _DEFAULT_IDENTITY
    if isinstance(value, str):
        return value
    raise InvalidInputError("model_identity", f"expected a string or null, got {type_name(value)}")


def _effort(value: Any) -> str:
    if value is None:
        return "medium"
    if isinstance(value, str):
        return value
    raise InvalidInputError("reasoning_effort", f"expected a string or null, got {type_name(value)}")


def date_text(value: Any) -> str:
    """The ``Current date:`` text: a ``'YYYY-MM-DD'`` string as given, a date as ``strftime("%Y-%m-%d")``
    writes it, and for ``None`` today's local date as transformers' ``strftime_now`` writes it."""
    if value is None:  # datetime.now().strftime's own call, without the datetime object
        return time.strftime("%Y-%m-%d")
    if isinstance(value, str):
        return date_from_string(value)
    if isinstance(value, datetime.date):  # a datetime is a date too: its calendar date is used
        return value.strftime("%Y-%m-%d")
    raise InvalidInputError(
        "current_date", f"expected a datetime.date or a 'YYYY-MM-DD' string, got {type_name(value)}"
    )
