"""The one reading of the ChatML formats' serving options, for ``render``, ``render_spans`` and sessions.

``decode_tool_arguments`` and ``continue_final_message`` are not the template's variables but what a
server or transformers does around it; ``strict`` asks for a refusal of what the template leaves
out. ``render`` reads them here, and a session asks here whether it may reuse earlier work, so the
two read a value (``0``, ``""``, ``[]``) the same way: a session steps aside to the full render for
any value that is not plainly off, and the full render accepts it or raises its error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import FormatError
from ...format.continuation import continued_field
from ...format.options import strict_flag
from ...model.arguments import decode_arguments_option

__all__ = ["renders_in_full", "serving_options"]


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
