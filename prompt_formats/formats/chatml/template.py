"""What tells the ChatML family's templates apart: a :class:`Template`, read by the one walk.

Every Qwen3.5–3.6 template writes the same turns in the same order (:mod:`.render`); they differ in
a handful of places, each declared here as a field, so that a format is its template's differences
and nothing else. The walk reads them once per render.
"""

from __future__ import annotations

from collections.abc import Callable
from math import isfinite
from typing import Any, ClassVar, cast

import attrs

from ..._text.plain import plain_data
from ..._text.tojson import json_chunks, text_or_json, tojson
from ...errors import InvalidInputError, TemplateError, type_name
from .tokens import (
    GENERATION_PROMPT,
    GENERATION_PROMPT_NO_THINKING,
    REASONING_EFFORTS,
    REASONING_LOW,
    REASONING_XHIGH,
)

__all__ = ["ABSENT", "MULTI_SYSTEM", "QWEN3_5", "QWEN3_5_NOTHINK", "QWEN3_6", "QWEN3_8", "UPSTREAM", "Template",
           "json_value", "string_value"]


class _Absent:
    """An option the caller did not pass: the template reads it as undefined (which a template may
    read otherwise than ``None``)."""

    def __repr__(self) -> str:
        return "ABSENT"

    def __reduce__(self) -> str:
        return "ABSENT"  # one object, also after pickling


ABSENT: Any = _Absent()


def json_value(value: Any) -> str:
    """A tool-call argument value that is not an exact ``str``, as ``value|string if value is string
    else value|tojson`` writes it (Qwen3.6); raises what ``tojson`` raises."""
    kind = type(value)
    # The usual kinds spelt here as tojson spells them (exact types only), saving text_or_json's
    # and tojson's dispatch.
    if kind is dict or kind is list:
        return "".join(json_chunks(value, 0))
    if kind is int:
        return int.__repr__(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is float and isfinite(value):
        return float.__repr__(value)
    return text_or_json(value)


def string_value(value: Any) -> str:
    """A tool-call argument value that is not an exact ``str``, as ``value|tojson if value is mapping
    or (value is sequence and value is not string) else value|string`` writes it (Qwen3.5) from its
    plain data: an object or array as JSON, anything else as Python prints it (``True``, ``None``,
    ``1.5``); raises what ``tojson`` raises."""
    kind = type(value)
    if kind is dict or kind is list:
        return "".join(json_chunks(value, 0))
    if kind is int or kind is float or kind is bool or value is None:
        return repr(value)
    if kind is str:
        return cast(str, value)
    plain = plain_data(value)
    if plain is not value:
        return string_value(plain)
    return tojson(value)  # a tuple of plain data: a sequence


@attrs.frozen
class Template:
    """One ChatML template, as its differences from the Qwen3.6 template the walk writes.

    ``merge_system``: every system message merged into one leading system turn (the multi-system
    seed) instead of refusing a system message anywhere but first.
    ``string_arguments``: a tool call's string ``arguments`` are written as one ``arguments``
    parameter and any other non-object as nothing (the seeds); ``False``: the model's own template
    iterates them as an object (``arguments|items``), which the engine refuses for anything else
    (absent, they write nothing).
    ``value_text``: how an argument value that is no string is written (:func:`json_value`,
    :func:`string_value`).
    ``preserve_thinking``: the template reads the ``preserve_thinking`` option;
    ``preserving_by_default``: every think block is kept unless the option is passed and not ``True``.
    ``thinking_by_default``: the generation prompt opens a think block unless ``enable_thinking``
    is ``False`` (else only when it is ``True``).
    ``split_inline_think``: an assistant content without a reasoning field gives up its inline
    ``<think>`` block as the reasoning (else it is written as it is).
    ``skips_empty_arguments``: an empty string ``arguments`` writes nothing (under ``|items``).
    ``reasoning_effort``: the template reads ``reasoning_effort`` and writes its instructions first
    in the system turn; ``empty_system_turn``: a system message with no text still makes a turn.
    """

    merge_system: bool = False
    string_arguments: bool = True
    value_text: Callable[[Any], str] = json_value
    preserve_thinking: bool = True
    preserving_by_default: bool = False
    thinking_by_default: bool = True
    split_inline_think: bool = True
    skips_empty_arguments: bool = False
    reasoning_effort: bool = False
    empty_system_turn: bool = True

    #: The template writes calls in the JSON form (its replies' usual form).
    json_calls: ClassVar[bool] = False

    def thinks(self, enable_thinking: Any) -> bool:
        """Whether the generation prompt opens a think block under ``enable_thinking``."""
        return enable_thinking is not False if self.thinking_by_default else enable_thinking is True

    def generation_prompt(self, enable_thinking: Any) -> str:
        """The generation prompt: a think block opened, or an empty one closed."""
        return GENERATION_PROMPT if self.thinks(enable_thinking) else GENERATION_PROMPT_NO_THINKING

    def keeps_every_think_block(self, preserve_thinking: Any) -> bool:
        """Whether every assistant turn keeps its think block (else only those after the last query)."""
        if self.preserving_by_default:
            return preserve_thinking is ABSENT or preserve_thinking is True
        return self.preserve_thinking and preserve_thinking is True

    def reasoning_instructions(self, enable_thinking: Any, reasoning_effort: Any) -> str:
        """The instructions the template writes first in the system turn for ``reasoning_effort``
        (default ``xhigh``; none with thinking off or passed other than ``True``, or ``medium``);
        raises the template's error for another effort."""
        if not self.reasoning_effort or not (enable_thinking is ABSENT or enable_thinking is True):
            return ""
        effort = "xhigh" if reasoning_effort is ABSENT else reasoning_effort
        if effort not in REASONING_EFFORTS:
            unprintable = f"expected xhigh, medium or low, got a {type_name(reasoning_effort)} that cannot be printed"
            try:
                shown = str.__str__(reasoning_effort) if isinstance(reasoning_effort, str) else str(reasoning_effort)
            except Exception:  # the engine fails where the template prints it: the error names the option
                raise InvalidInputError("reasoning_effort", unprintable) from None
            if type(shown) is not str:
                raise InvalidInputError("reasoning_effort", unprintable)
            raise TemplateError(f"Unexpected reasoning effort {shown}. Supported types are xhigh (default), "
                                "medium, and low.")
        return REASONING_XHIGH if effort == "xhigh" else REASONING_LOW if effort == "low" else ""

    def arguments_refused(self, arguments: Any, path: str) -> InvalidInputError:
        """The engine's refusal of ``arguments|items`` for a value that is no object."""
        hint = " (decode_tool_arguments=true decodes JSON text first)" if isinstance(arguments, str) else ""
        return InvalidInputError(path, f"expected an object, got {type_name(arguments)}{hint}")


#: The seeds: Qwen3.6's template as the project first took it (string arguments one parameter).
UPSTREAM = Template()
MULTI_SYSTEM = Template(merge_system=True)
#: The models' own templates.
QWEN3_6 = Template(string_arguments=False)
QWEN3_5 = Template(string_arguments=False, value_text=string_value, preserve_thinking=False)
QWEN3_5_NOTHINK = attrs.evolve(QWEN3_5, thinking_by_default=False)
QWEN3_8 = Template(string_arguments=False, preserving_by_default=True, split_inline_think=False,
                   skips_empty_arguments=True, reasoning_effort=True, empty_system_turn=False)
