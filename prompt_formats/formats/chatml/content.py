"""The template's ``render_content`` macro: a message's content as text, images and videos counted."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._text.plain import as_handed
from ..._text.tojson import printed
from ...errors import InvalidInputError, TemplateError, type_name
from ...model.reading import part_kind
from .tokens import IMAGE, VIDEO

__all__ = ["UNCOUNTED", "VisionCount", "content_text", "item_kind", "system_text", "trimmed_text", "vision_text"]


class VisionCount:
    """The template's ``image_count``/``video_count`` namespaces: one per render call."""

    # Class-level starting values: an instance costs nothing until an image or video is counted.
    images = 0
    videos = 0


#: Counters for a reading that counts nothing (the system prompt, the last-query scan): never written.
UNCOUNTED = VisionCount()


# --- Content. ----------------------------------------------------------------------------------------


def item_kind(item: Any, path: str) -> str:
    """A content item's kind by the template's tests (``image``, ``video``, ``text``, or ``""``:
    none): ``'image' in item`` is a key test on an object, a substring or membership test on a
    string or a list, and fails the engine on anything else (the error names ``path``)."""
    if isinstance(item, Mapping):
        kind = part_kind(item)
        return "" if kind == "unknown" else kind
    if isinstance(item, (str, list, tuple)):
        return next((kind for kind, keys in _ITEM_KEYS if any(key in item for key in keys)), "")
    raise InvalidInputError(path, f"expected a content part object, got {type_name(item)}")


_ITEM_KEYS = (("image", ("image", "image_url")), ("video", ("video",)), ("text", ("text",)))

# Per vision kind: the counter it advances, the label numbering it under add_vision_id, its marker.
_VISION_KINDS = {"image": ("images", "Picture", IMAGE), "video": ("videos", "Video", VIDEO)}


def vision_text(kind: str, vision: VisionCount, count: bool, is_system: bool, add_vision_id: Any) -> str:
    """An image or video part as the macro prints it (numbered under ``add_vision_id``)."""
    counter, label, marker = _VISION_KINDS[kind]
    if is_system:
        raise TemplateError(f"System message cannot contain {counter}.")
    if count:
        setattr(vision, counter, getattr(vision, counter) + 1)
    if add_vision_id:
        return f"{label} {getattr(vision, counter)}: {marker}"
    return marker


def content_text(
    content: Any, index: int | None, vision: VisionCount, count: bool, is_system: bool, add_vision_id: Any
) -> str:
    """The template's ``render_content`` macro (untrimmed); ``index`` names the message in errors."""
    if isinstance(content, str):
        return printed(content)
    if content is None:
        return ""
    if type(content) is not list and not isinstance(content, (list, tuple)):
        # A mapping or a scalar: the macro's final ``else`` branch.
        raise TemplateError("Unexpected content type.")
    pieces = []
    for j, item in enumerate(content):
        kind: str
        if type(item) is dict:  # (the usual part: no ABC test)
            kind = part_kind(item)
        else:
            item = as_handed(item)
            kind = item_kind(item, f"messages[{index}].content[{j}]")
            if kind == "text" and not isinstance(item, Mapping):
                continue  # `item.text` of a string or a list: undefined, printed as nothing
        if kind == "text":
            text = item["text"]
            if type(text) is not str:
                if not isinstance(text, str):
                    raise InvalidInputError(
                        f"messages[{index}].content[{j}].text", f"expected a string, got {type_name(text)}"
                    )
                text = printed(text)
            pieces.append(text)
        elif kind == "image" or kind == "video":
            pieces.append(vision_text(kind, vision, count, is_system, add_vision_id))
        else:
            raise TemplateError("Unexpected item type in content.")
    return "".join(pieces)


def trimmed_text(
    message: Mapping[str, Any], index: int | None, vision: VisionCount, count: bool, is_system: bool,
    add_vision_id: Any,
) -> str:
    """A message's content as the template renders it, trimmed (``render_content(...)|trim``)."""
    content = message.get("content")
    if type(content) is str:
        return content.strip()
    return content_text(content, index, vision, count, is_system, add_vision_id).strip()


def system_text(message: Mapping[str, Any], index: int, add_vision_id: Any) -> str:
    content = message.get("content")
    if type(content) is not str:
        # A system message never reaches the image counter: images in it raise first.
        content = content_text(content, index, VisionCount(), False, True, add_vision_id)
    return content.strip()
