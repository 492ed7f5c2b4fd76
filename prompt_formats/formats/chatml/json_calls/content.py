"""How the JSON-call templates read a value they write: concatenated, printed, or a content's parts.

Jinja concatenates only strings (anything else: the engine fails, and the error here names the
field), prints any value as Python prints it, and iterates a content that is no string: Qwen3-VL
writes each text part's text, and in a user's or tool's content each image or video as its marker
(numbered under ``add_vision_id``). Its tests are Jinja's: ``'image' in part`` is a key test on an
object, a substring test on a string (a part that is a string holding ``image`` is an image), and
fails the engine on a number; an object content is iterated as its keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...._text.plain import as_handed, printed_value
from ...._text.tojson import printed as chars  # a string's characters: what a template writes of it
from ....errors import InvalidInputError, type_name
from ....model.reading import part_kind
from ..content import VisionCount, item_kind, vision_text
from ..template import ABSENT

__all__ = ["chars", "concatenated", "printed", "text_parts", "vision_parts"]


def concatenated(value: Any, path: str) -> str:
    """A value the template concatenates with text: a string, else the engine's failure, named."""
    if isinstance(value, str):
        return chars(value)
    raise InvalidInputError(path, f"expected a string, got {type_name(value)}")


def printed(value: Any, path: str, strings_only: bool) -> str:
    """A value the template prints (``{{ value }}``): a string itself, ``ABSENT`` (undefined) as
    nothing, anything else as Python prints its plain data (``None`` too: only a message's own
    ``None``-valued fields are dropped, and their callers pass them as ``ABSENT``). ``strings_only``
    (a guard, which checks a string's characters): the error for anything but a string."""
    if type(value) is str:
        return value
    if value is ABSENT:
        return ""
    if strings_only and not isinstance(value, str):
        raise InvalidInputError(path, f"expected a string, got {type_name(value)} (with a guard, the template's "
                                "printing of it as Python prints it is refused: its text would go unchecked)")
    return printed_value(value, path)


def _items(content: Any, path: str) -> list[Any]:
    """What the template's ``for`` over a content that is no string meets: nothing for none, an
    object's keys, a list's items; the engine fails on anything else."""
    if content is None or content is ABSENT:
        return []
    if isinstance(content, (Mapping, list, tuple)):
        return [as_handed(item) for item in content]
    raise InvalidInputError(path, f"expected a string or a list of content parts, got {type_name(content)}")


def _text_of(item: Any, path: str, strings_only: bool) -> str:
    """A text part's ``.text`` as printed (nothing where it has none: a string or a list part)."""
    return printed(item["text"], path + ".text", strings_only) if isinstance(item, Mapping) else ""


def _unwritten(path: str) -> InvalidInputError:
    """Under a guard, a part the template writes nothing for: the texts around it would join in the
    prompt, which the guard checks as two (it fails closed)."""
    return InvalidInputError(path, "a part this template leaves out (with a guard, refused: the texts on either "
                             "side of it would be written together, unchecked)")


def text_parts(content: Any, path: str, strings_only: bool) -> str:
    """A system's or assistant's content: a string (printed), or its parts' texts (nothing else is
    written); ``strings_only`` (a guard): a part that is no text part is refused."""
    if isinstance(content, str):
        return printed(content, path, strings_only)
    pieces = []
    for j, item in enumerate(_items(content, path)):
        if isinstance(item, Mapping) and "text" in item:
            if strings_only and part_kind(item) != "text":
                raise _unwritten(f"{path}[{j}]")
            pieces.append(_text_of(item, f"{path}[{j}]", strings_only))
        elif not isinstance(item, (Mapping, str, list, tuple)):  # `'text' in item`: the engine fails
            raise InvalidInputError(f"{path}[{j}]", f"expected a content part object, got {type_name(item)}")
        elif strings_only:
            raise _unwritten(f"{path}[{j}]")
    return "".join(pieces)


def vision_parts(content: Any, path: str, strings_only: bool, vision: VisionCount, add_vision_id: Any) -> str:
    """A user's or tool's content: a string, or its parts: images and videos as their markers
    (counted across the conversation in ``vision``), texts as printed; ``strings_only`` (a guard):
    a part written as nothing is refused."""
    if isinstance(content, str):
        return printed(content, path, strings_only)
    pieces = []
    for j, item in enumerate(_items(content, path)):
        kind = item_kind(item, f"{path}[{j}]")
        if kind == "image" or kind == "video":
            pieces.append(vision_text(kind, vision, True, False, add_vision_id))
        elif kind == "text" and (isinstance(item, Mapping) or not strings_only):
            pieces.append(_text_of(item, f"{path}[{j}]", strings_only))
        elif strings_only:
            raise _unwritten(f"{path}[{j}]")
    return "".join(pieces)
