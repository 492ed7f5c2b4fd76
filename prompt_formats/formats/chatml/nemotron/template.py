"""What tells the Nemotron 3 templates apart: a :class:`NemotronTemplate`, read by their walk.

Nemotron 3 Nano, Super, Ultra and 3.5 write their turns in one order (:mod:`.render`); Super adds
a ``low_effort`` flag to Nano, and 3.5 (whose template Ultra shares) a ``medium_effort`` flag, a
tighter think block and an untrimmed content where an earlier turn's reasoning is cut.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from ....errors import InvalidInputError, type_name
from ..template import ABSENT
from ..tokens import LOW_EFFORT_NOTE, MEDIUM_EFFORT_NOTE, THINK_CLOSE

__all__ = ["NEMOTRON_3_5", "NEMOTRON_3_NANO", "NEMOTRON_3_SUPER", "NemotronTemplate", "truthy"]


def truthy(value: Any, name: str) -> bool:
    """``value``'s truth, as the template's ``if`` reads it; the error naming ``name`` where Python's fails."""
    try:
        return bool(value)
    except Exception:
        raise InvalidInputError(name, f"a {type_name(value)} whose truth cannot be read") from None


@attrs.frozen
class NemotronTemplate:
    """One Nemotron 3 template, as its differences from Nano's.

    ``effort_flag``: the option that appends ``effort_note`` to the last user message (``""``: none).
    ``think_end``: what follows the reasoning in an assistant turn (``<think>\\n`` comes before it),
    up to the content.
    ``trims_cut_content``: where an earlier turn with calls loses its reasoning, what is left of the
    content is trimmed.
    ``strings_only``: not the template's but the guard's: a value that is no string is refused where
    the template would print it (Python's printing of it would write its strings unchecked).
    """

    effort_flag: str = ""
    effort_note: str = ""
    think_end: str = "\n" + THINK_CLOSE + "\n"
    trims_cut_content: bool = True
    strings_only: bool = False

    #: The template writes calls in the JSON form (its replies' usual form): no, the XML form.
    json_calls: ClassVar[bool] = False

    def thinks(self, enable_thinking: Any) -> bool:
        """Whether the generation prompt opens a think block: unless ``enable_thinking`` is passed falsy."""
        return enable_thinking is ABSENT or truthy(enable_thinking, "enable_thinking")

    #: Which message fields' names the template's text holds (transformers continues a final
    #: message's field only if the template's text holds its name: ``truncate_history_thinking``
    #: holds ``thinking``, ``reasoning_content`` holds ``reasoning``).
    fields_read = "content reasoning_content thinking reasoning"


NEMOTRON_3_NANO = NemotronTemplate()
NEMOTRON_3_SUPER = NemotronTemplate(effort_flag="low_effort", effort_note=LOW_EFFORT_NOTE)
NEMOTRON_3_5 = NemotronTemplate(effort_flag="medium_effort", effort_note=MEDIUM_EFFORT_NOTE, think_end=THINK_CLOSE,
                                trims_cut_content=False)
