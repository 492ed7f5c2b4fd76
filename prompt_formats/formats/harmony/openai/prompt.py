"""One conversation's prompt: the system message, the developer message, the loop messages.

:func:`prompt_pieces` is shared by ``render`` (which joins the pieces) and ``render_spans`` (which
also reads where each message's pieces are), so that both write the very same text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ....errors import InvalidInputError, type_name
from ....format.chat_format import Conversation, Tools
from ....model.tools import PreparedTools, rendered_tools
from .options import SystemOptions
from .render import (
    FirstRender,
    as_mapping,
    checked_messages,
    developer_instructions,
    developer_message,
    render_messages,
    system_message,
)
from .typescript_fast import functions_namespace_fast

__all__ = ["PromptPieces", "prompt_pieces", "render_gpt_oss"]

_FUNCTIONS_KEY = "gpt-oss.functions"


def _functions_text(tools: Tools) -> str:
    """The ``functions`` namespace of ``tools`` ('' for none), built once per toolset."""
    if not tools:
        return ""
    plain = not isinstance(tools, PreparedTools)
    if plain and (isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence)):
        raise InvalidInputError("tools", f"expected a list of tool objects, got {type_name(tools)}")
    return rendered_tools(tools, _FUNCTIONS_KEY, functions_namespace_fast)


class PromptPieces:
    """The prompt as the list of pieces whose join is its text, and where the messages are in it.

    ``start``: the index of the first loop message (1 when the first message gave the developer
    message's instructions, else 0); ``instructions``: those instructions ('' for none), which are
    ``pieces[3]`` when not empty; ``loop_at``: the index of the first loop message's first piece;
    ``lost``: what the template left out of the loop messages, ``(message index, field)`` in message
    order (field ``""``: the whole message, which then has no pieces; ``None``: a whole message that
    holds nothing, which has no pieces either and is no loss).
    """

    __slots__ = ("instructions", "loop_at", "lost", "pieces", "start")

    def __init__(
        self, pieces: list[str], start: int, instructions: str, loop_at: int, lost: list[tuple[int, str | None]]
    ) -> None:
        self.pieces = pieces
        self.start = start
        self.instructions = instructions
        self.loop_at = loop_at
        self.lost = lost


def prompt_pieces(
    messages: Conversation, tools: Tools, add_generation_prompt: bool, options: SystemOptions, noting: bool = True,
    first: FirstRender | None = None,
) -> PromptPieces:
    """The template's pieces for one conversation, given the validated system options (see
    :func:`render_gpt_oss` for the errors); ``lost`` only when ``noting``; ``first`` as
    :func:`~.render.render_messages` fills it."""
    messages = checked_messages(messages)
    functions = _functions_text(tools)
    instructions, taken = developer_instructions(as_mapping(messages[0], 0))
    out = [system_message(options, bool(tools)), *developer_message(instructions, functions)]
    loop_at = len(out)
    start = 1 if taken else 0
    lost = render_messages(out, messages, start, add_generation_prompt, noting, first)
    return PromptPieces(out, start, instructions, loop_at, lost)


def render_gpt_oss(messages: Conversation, tools: Tools, add_generation_prompt: bool, options: SystemOptions) -> str:
    """The template's text for one conversation, given the validated system options.

    Raises :class:`~prompt_formats.errors.TemplateError` with the template's message where it raises
    and :class:`~prompt_formats.errors.InvalidInputError` naming the field for input outside the
    documented shape; returns nothing half-rendered.
    """
    return "".join(prompt_pieces(messages, tools, add_generation_prompt, options, noting=False).pieces)
