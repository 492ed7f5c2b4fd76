"""The gpt-oss format's options and the system message they make (the template's ``build_system_message``).

The template's own keyword arguments are ``model_identity``, ``reasoning_effort`` and
``builtin_tools``; ``current_date`` stands for the date it takes from ``strftime_now("%Y-%m-%d")``
(transformers: ``datetime.now()``, local time). ``decode_tool_arguments`` is the serving option of
``arguments.py`` (what a server does to the messages before it renders them), read as every format
reads it (:func:`prompt_formats.model.arguments.decode_arguments_option`).
"""

from __future__ import annotations

import datetime
import functools
import time
from collections.abc import Mapping
from typing import Any

from ....errors import InvalidInputError, type_name
from ....format.options import STRICT, Option, describe
from ..dates import date_from_string
from .texts import END, SYSTEM

__all__ = ["OPTIONS", "OPTION_SPECS", "SystemOptions", "system_message"]

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

_BROWSER = (
    "## browser\n\n"
    "// Tool for browsing.\n"
    "// The `cursor` appears in brackets before each browsing display: `[{cursor}]`.\n"
    "// Cite information from the tool using the following format:\n"
    "// `【{cursor}†L{line_start}(-L{line_end})?】`, for example: `【6†L9-L11】` or `【8†L3】`.\n"
    "// Do not quote more than 10 words directly from the tool output.\n"
    "// sources=web (default: web)\n"
    "namespace browser {\n\n"
    "// Searches for information related to `query` and displays `topn` results.\n"
    "type search = (_: {\n"
    "query: string,\n"
    "topn?: number, // default: 10\n"
    "source?: string,\n"
    "}) => any;\n\n"
    "// Opens the link `id` from the page indicated by `cursor` starting at line number `loc`, "
    "showing `num_lines` lines.\n"
    "// Valid link ids are displayed with the formatting: `【{id}†.*】`.\n"
    "// If `cursor` is not provided, the most recent page is implied.\n"
    "// If `id` is a string, it is treated as a fully qualified URL associated with `source`.\n"
    "// If `loc` is not provided, the viewport will be positioned at the beginning of the document or "
    "centered on the most relevant passage, if available.\n"
    "// Use this function without `id` to scroll to a new location of an opened page.\n"
    "type open = (_: {\n"
    "id?: number | string, // default: -1\n"
    "cursor?: number, // default: -1\n"
    "loc?: number, // default: -1\n"
    "num_lines?: number, // default: -1\n"
    "view_source?: boolean, // default: false\n"
    "source?: string,\n"
    "}) => any;\n\n"
    "// Finds exact matches of `pattern` in the current page, or the page given by `cursor`.\n"
    "type find = (_: {\n"
    "pattern: string,\n"
    "cursor?: number, // default: -1\n"
    "}) => any;\n\n"
    "} // namespace browser\n\n"
)
_PYTHON = (
    "## python\n\n"
    "Use this tool to execute Python code in your chain of thought. The code will not be shown to the user. "
    "This tool should be used for internal reasoning, but not for code that is intended to be visible to the "
    "user (e.g. when creating plots, tables, or files).\n\n"
    "When you send a message containing Python code to python, it will be executed in a stateful Jupyter "
    "notebook environment. python will respond with the output of the execution or time out after 120.0 "
    "seconds. The drive at '/mnt/data' can be used to save and persist user files. Internet access for this "
    "session is UNKNOWN. Depends on the cluster.\n\n"
)
_CHANNELS = "# Valid channels: analysis, commentary, final. Channel must be included for every message."
_FUNCTIONS_CHANNEL = "\nCalls to these tools must go to the commentary channel: 'functions'."


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


@functools.lru_cache(maxsize=256)
def _system_message(identity: str, date: str, effort: str, builtin: tuple[bool, bool] | None, functions: bool) -> str:
    pieces = [SYSTEM, identity, "\nKnowledge cutoff: 2024-06\nCurrent date: ", date, "\n\nReasoning: ", effort, "\n\n"]
    if builtin is not None:  # a truthy builtin_tools: the header, even when it names no tool the template knows
        browser, python = builtin
        pieces.append("# Tools\n\n")
        if browser:
            pieces.append(_BROWSER)
        if python:
            pieces.append(_PYTHON)
    pieces.append(_CHANNELS)
    if functions:
        pieces.append(_FUNCTIONS_CHANNEL)
    pieces.append(END)
    return "".join(pieces)


def system_message(options: SystemOptions, functions: bool) -> str:
    """The whole system message, ``<|start|>system<|message|>…<|end|>``; ``functions``: tools are offered."""
    return _system_message(options.identity, options.date, options.effort, options.builtin, functions)
