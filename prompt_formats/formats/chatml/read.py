"""How the ChatML renderer reads a conversation: the messages as mappings, their roles, and the
multi-system template's merge of every system message into one leading system message."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import InvalidInputError, TemplateError, type_name
from ...format.chat_format import Conversation
from ...model.messages import message_dict
from ...model.reading import is_list, plain_scalar
from .content import system_text

__all__ = ["Merged", "read_messages"]


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


def _read_any(messages: Conversation) -> tuple[list[dict[str, Any]], list[str] | None]:
    """Any other input than a list of dicts with string roles: the messages as dicts (so that the
    walk reads every message as the usual one: a mapping's reading is its get), and their roles if
    every one is a string."""
    if not is_list(messages):
        raise InvalidInputError("messages", f"expected a list of messages, got {type_name(messages)}")
    msgs = [_as_dict(message_dict(message, i)) for i, message in enumerate(messages)]
    roles: list[Any] = [message.get("role") for message in msgs]
    return msgs, roles if all(type(role) is str for role in roles) else None


def _systems(roles: list[str]) -> list[int]:
    return [i for i, role in enumerate(roles) if role == "system"]


def read_messages(
    messages: Conversation, merge_system: bool, add_vision_id: Any
) -> tuple[Sequence[dict[str, Any]], list[str], Sequence[int | None], Merged]:
    """The messages as mappings, their roles, their indexes in the caller's list (``None``: the merged
    system message) and each merged system text's index and length (``merge_system``: the
    multi-system template's merge of every system message into one leading one)."""
    msgs: Sequence[dict[str, Any]] = messages
    roles: list[str] | None = []
    system_at: list[int] = []  # the system messages' positions
    usual = type(messages) is list
    if usual:  # the usual input, read in one pass: a list of dicts with string roles
        read: list[str] = []
        append = read.append
        for message in messages:
            if type(message) is not dict or type(role := message.get("role")) is not str:
                usual = False
                break
            if role == "system":
                system_at.append(len(read))
            append(role)
        roles = read
    if not usual:
        msgs, roles = _read_any(messages)
        system_at = [] if roles is None else _systems(roles)
    merged: Merged = ()
    origins: Sequence[int | None] = range(len(msgs))
    if merge_system and (system_at or roles is None):
        if roles is not None and len(system_at) == 1 and not system_at[0] and type(msgs[0].get("content")) is str:
            # The usual request: one leading system message with text is the merged message itself
            # (its turn trims it), or nothing if blank.
            if not msgs[0]["content"].strip():
                msgs, roles, origins = msgs[1:], roles[1:], range(1, len(msgs))
        else:
            msgs, roles, origins, merged = _merge_system(msgs, roles, system_at, add_vision_id)
    if not msgs:
        raise TemplateError("No messages provided.")
    if roles is None:
        roles = [_checked_role(message, i) for i, message in enumerate(msgs)]
    return msgs, roles, origins, merged


def _merge_system(
    msgs: Sequence[dict[str, Any]], roles: list[str] | None, system_at: list[int], add_vision_id: Any
) -> tuple[Sequence[dict[str, Any]], list[str], Sequence[int | None], Merged]:
    """The multi-system block: (messages, their roles, their indexes in the caller's list, the index
    and length of each system text merged). ``system_at``: the system messages' positions (when
    every role is a string).

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
            _system_texts(msgs, _systems(read[:bad]), add_vision_id)
            _checked_role(msgs[bad], bad)
        roles = read
        system_at = _systems(read)
    texts, merged = _system_texts(msgs, system_at, add_vision_id)
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
    msgs: Sequence[dict[str, Any]], system_at: list[int], add_vision_id: Any
) -> tuple[list[str], list[tuple[int, int]]]:
    """The non-empty texts of the system messages at ``system_at``, in order, and each such text's
    position and length."""
    texts: list[str] = []
    merged: list[tuple[int, int]] = []
    for at in system_at:
        text = system_text(msgs[at], at, add_vision_id)
        if text:
            texts.append(text)
            merged.append((at, len(text)))
    return texts, merged
