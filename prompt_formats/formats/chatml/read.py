"""How the ChatML renderer reads a conversation: the messages as mappings, their roles, and the
multi-system template's merge of every system message into one leading system message."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import InvalidInputError, TemplateError, type_name
from ...format.chat_format import Conversation
from ...model.messages import message_dict
from ...model.reading import is_list, plain_scalar
from .content import system_text

__all__ = ["Merged", "read_messages"]

# Type sets the C-speed checks of the usual input compare with (``issuperset`` of the types
# themselves: no set is built, and it stops at the first other type).
_DICT_ONLY = frozenset({dict})
_STR_ONLY = frozenset({str})
# An endless "role" (stateless: safe to share between threads), zipped by map() with the messages.
_ROLE_KEY = itertools.repeat("role")

#: ``(input index, length)`` of each system text merged into the leading system message, in order.
Merged = Sequence[tuple[int, int]]


def _as_dict(message: Mapping[str, Any]) -> dict[str, Any]:
    return message if type(message) is dict else dict(message.items())


def _checked_role(message: Mapping[str, Any], index: int) -> str:
    """The message's role as the template reads it: a string, a subclass's as its plain data
    (transformers hands the template the plain string: the subclass's own ``==`` is not read)."""
    role = message.get("role")
    if not isinstance(role, str):
        raise InvalidInputError(f"messages[{index}].role", f"expected a string, got {type_name(role)}")
    return role if type(role) is str else str.__str__(role)


def read_messages(
    messages: Conversation, merge_system: bool, add_vision_id: Any
) -> tuple[Sequence[dict[str, Any]], list[str], Sequence[int | None], Merged]:
    """The messages as mappings, their roles, their indexes in the caller's list (``None``: the merged
    system message) and each merged system text's index and length (``merge_system``: the
    multi-system template's merge of every system message into one leading one)."""
    # The usual input (a list of dicts, string roles) is checked by C-speed passes over the whole
    # list; anything else message by message.
    roles: list[Any] | None
    if type(messages) is list and _DICT_ONLY.issuperset(map(type, messages)):
        msgs: Sequence[dict[str, Any]] = messages
        roles = list(map(dict.get, messages, _ROLE_KEY))  # message.get("role") for each, at C speed
    else:
        if not is_list(messages):
            raise InvalidInputError("messages", f"expected a list of messages, got {type_name(messages)}")
        # As dicts, so that the walk reads every message as the usual one (a mapping's reading is its get).
        msgs = [_as_dict(message_dict(message, i)) for i, message in enumerate(messages)]
        roles = [message.get("role") for message in msgs]
    if not _STR_ONLY.issuperset(map(type, roles)):
        roles = None
    origins: Sequence[int | None]
    merged: Merged = ()
    if merge_system and (roles is None or "system" in roles):
        msgs, roles, origins, merged = _merge_system(msgs, roles, add_vision_id)
    else:
        origins = range(len(msgs))
    if not msgs:
        raise TemplateError("No messages provided.")
    if roles is None:
        roles = [_checked_role(message, i) for i, message in enumerate(msgs)]
    return msgs, roles, origins, merged


def _merge_system(
    msgs: Sequence[dict[str, Any]], roles: list[str] | None, add_vision_id: Any
) -> tuple[Sequence[dict[str, Any]], list[str], Sequence[int | None], Merged]:
    """The multi-system block: (messages, their roles, their indexes in the caller's list, the index
    and length of each system text merged).

    Every system message's content is rendered and trimmed, in message order (so that errors come
    in the order the template meets them); the non-empty ones, joined with a blank line, become the
    one leading system message; the others keep their order.
    """
    if roles is None:
        # A role that is not a string is an error where the template meets it: after the system
        # messages before it.
        read: list[Any] = [plain_scalar(message.get("role")) for message in msgs]  # as _checked_role reads them
        bad = next((i for i, role in enumerate(read) if not isinstance(role, str)), None)
        if bad is not None:
            _system_texts(msgs, read[:bad], add_vision_id)
            _checked_role(msgs[bad], bad)
        roles = read
    if roles[0] == "system" and type(msgs[0].get("content")) is str and roles.count("system") == 1:
        # Fast path for the usual request: one leading system message with
        # text, the usual case, is the merged message itself (its turn trims it), or nothing if blank.
        if msgs[0]["content"].strip():
            return msgs, roles, range(len(msgs)), ()
        return msgs[1:], roles[1:], range(1, len(msgs)), ()
    system_at, texts, merged = _system_texts(msgs, roles, add_vision_id)
    # The other messages, copied run by run between the system ones.
    kept: list[dict[str, Any]] = []
    kept_roles: list[str] = []
    origins: list[int | None] = []
    if texts:
        kept.append({"role": "system", "content": "\n\n".join(texts)})
        kept_roles.append("system")
        origins.append(None)
    at = 0
    for end in (*system_at, len(msgs)):
        kept += msgs[at:end]
        kept_roles += roles[at:end]
        origins += range(at, end)
        at = end + 1
    return kept, kept_roles, origins, merged


def _system_texts(
    msgs: Sequence[dict[str, Any]], roles: list[str], add_vision_id: Any
) -> tuple[list[int], list[str], list[tuple[int, int]]]:
    """The positions of the system messages among ``roles``, their non-empty texts in order, and
    each such text's position and length."""
    system_at: list[int] = []
    texts: list[str] = []
    merged: list[tuple[int, int]] = []
    at = 0
    for _ in range(roles.count("system")):
        at = roles.index("system", at)
        system_at.append(at)
        text = system_text(msgs[at], at, add_vision_id)
        if text:
            texts.append(text)
            merged.append((at, len(text)))
        at += 1
    return system_at, texts, merged
