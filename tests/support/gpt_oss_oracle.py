"""The gpt-oss template rendered by Jinja2 with what transformers' ``apply_chat_template`` feeds it.

transformers drops each message's keys whose value is ``None`` (``_normalize_chat_messages``), then
aliases the reasoning fields (``alias_reasoning``), and the template takes the date from
``strftime_now``; here that is patched to the ``current_date`` option's day, so a rendering is
reproducible. Options left at ``None`` are not passed (the template's own defaults apply).
"""

from __future__ import annotations

import datetime
from typing import Any

from tests.support.oracles import Outcome, render_jinja, takes, without_nones

TEMPLATE = "gpt_oss.jinja"


def fixed_strftime_now(day: datetime.date | str) -> Any:
    """A ``strftime_now`` that writes ``day`` (a 'YYYY-MM-DD' string is the date text itself)."""
    if isinstance(day, str):
        return lambda fmt: day
    return lambda fmt: day.strftime(fmt)


def render_gpt_oss_jinja(
    messages: list[Any], tools: Any = None, add_generation_prompt: bool = False, **options: Any
) -> Outcome:
    """The oracle's outcome for the format's arguments (``current_date`` becomes ``strftime_now``)."""
    kwargs = {key: value for key, value in options.items() if value is not None and key != "current_date"}
    instruments = {}
    if options.get("current_date") is not None:
        instruments["strftime_now"] = fixed_strftime_now(options["current_date"])
    messages = without_nones(messages)
    if not takes(messages, tools):
        raise TypeError("transformers takes no such messages or tools")
    return render_jinja(TEMPLATE, messages, tools, add_generation_prompt, instruments=instruments, **kwargs)
