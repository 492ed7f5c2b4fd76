"""What tells apart the ChatML templates that write JSON tool calls: a :class:`JsonTemplate`, read by their walk.

Qwen2.5, Qwen3, Qwen3-Instruct-2507 and Qwen3-VL write their turns in one order (:mod:`.json_render`) and a
call as a JSON object in ``<tool_call>`` (``{"name": …, "arguments": …}``); they differ in a
handful of places, each a field here.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from ..tokens import QWEN2_5_DEFAULT_SYSTEM

__all__ = ["QWEN2_5", "QWEN3", "QWEN3_INSTRUCT_2507", "QWEN3_VL", "JsonTemplate"]


@attrs.frozen
class JsonTemplate:
    """One template of the JSON-call line, as its differences from Qwen3-Instruct-2507's.

    ``default_system``: the system prompt written when the first message is not a system message
    (empty: none).
    ``prints_content``: a message's ``content`` is written as the engine prints or concatenates it
    (Qwen2.5: a value that is no string is refused where it is concatenated, printed as Python
    prints it where it is printed); else a content that is no string is written as nothing.
    ``reasoning``: the template reads the reasoning (a reasoning field, else the content's inline
    ``<think>`` block) and writes it in the assistant turns after the last user query, and its
    generation prompt closes an empty think block for ``enable_thinking=False``.
    ``quotes_string_arguments``: string ``arguments`` are written as a JSON string (``|tojson``),
    not as they are.
    ``function_if_present``: a call's ``function`` is its body whenever the key is there (else only
    when it is truthy).
    ``vision``: a content that is no string is read as parts (Qwen3-VL): in a user's or tool's
    content, images and videos are written as their markers, numbered under ``add_vision_id``.
    ``writes_later_system``: a system message after the first is a turn (else it is not written).
    ``strings_only``: not the template's but the guard's: a value that is no string is refused where
    the template would print it (Python's printing of it would write its strings unchecked).
    """

    default_system: str = ""
    prints_content: bool = False
    reasoning: bool = False
    quotes_string_arguments: bool = False
    function_if_present: bool = False
    vision: bool = False
    writes_later_system: bool = True
    strings_only: bool = False

    #: The template writes calls in the JSON form (its replies' usual form).
    json_calls: ClassVar[bool] = True

    def thinks(self, enable_thinking: Any) -> bool:
        """Whether the generation prompt opens a think block: never (the model writes its own)."""
        return False

    @property
    def fields_read(self) -> str:
        """Which message fields' names the template's text holds (transformers continues a final
        message's field only if the template's text holds its name, even within another word:
        Qwen3's ``enable_thinking`` holds ``thinking``)."""
        return "content reasoning_content thinking" if self.reasoning else "content"


QWEN3_INSTRUCT_2507 = JsonTemplate()
QWEN3 = JsonTemplate(reasoning=True)
QWEN3_VL = JsonTemplate(vision=True, writes_later_system=False)
QWEN2_5 = JsonTemplate(default_system=QWEN2_5_DEFAULT_SYSTEM, prints_content=True, quotes_string_arguments=True,
                       function_if_present=True)
