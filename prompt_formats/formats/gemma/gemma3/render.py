"""The walk of Gemma 3's template (``tests/fixtures/families/gemma3.jinja``), in its order:

1. the ``bos_token``;
2. a first message whose role is ``system`` is no turn of its own: its text (a string as it is, else
   its first part's ``text``) and a blank line open the first turn;
3. every other message is a turn, ``assistant`` written ``model`` and any other role as given. The
   roles must alternate from the first turn: a user's, then any other role's (else the template's
   error). Its content: a string, trimmed; a list of parts, in order, an image part as
   ``<start_of_image>``, a text part's text trimmed and any other item as nothing; left out, nothing;
   any other value is the template's ``Invalid content type``;
4. the generation prompt ``<start_of_turn>model\\n``.

Tools, tool calls and reasoning are not written (``render_spans(...).dropped`` names them). Where
the engine itself fails (no messages, a system message without text, a role that is no string
joined to text), :class:`~prompt_formats.errors.InvalidInputError` names the field.
"""

from __future__ import annotations

from typing import Any

from ...._text.plain import printed_value, require_plain
from ....errors import InvalidInputError, TemplateError, type_name
from ....format.chat_format import Conversation
from ....model.messages import message_dicts as read_messages
from ....model.messages import role_of
from ..tokens import ALTERNATION, END_OF_TURN, IMAGE, INVALID_CONTENT, MODEL, START_OF_TURN, SYSTEM_END, TURN_END

__all__ = ["Note", "message_dicts", "role_of", "walk", "write_turns"]

#: Where the walk wrote a message's text: ``(message index, piece, offset in it, size)``. The size
#: may run on into the pieces after it (an assistant's reaches over its ``<end_of_turn>``).
Note = tuple[int, int, int, int]

_TURN_END_SIZE = len(END_OF_TURN)
#: The opening of the usual turns, spelt once.
_HEADS = {"user": START_OF_TURN + "user\n", "assistant": START_OF_TURN + MODEL + "\n"}
_SCALARS = (int, float, bool)
_PLAIN_ITEMS = frozenset({str, int, float, bool, type(None), list, tuple})


def message_dicts(messages: Conversation) -> list[dict[str, Any]]:
    """The messages as dicts (the template reads ``messages[0]``: there must be one)."""
    msgs = read_messages(messages)
    if not msgs:
        raise InvalidInputError("messages", "expected at least one message: the template reads the first one's role")
    return msgs


def walk(msgs: list[dict[str, Any]], out: list[str], notes: list[Note] | None = None) -> bool:
    """Append the turns of ``msgs`` to ``out``, noting (with ``notes``) where each message's text
    went: a turn's content (an assistant's with its ``<end_of_turn>``), the system message's text.
    Returns whether the first message is the system message, not a turn."""
    system: bool = role_of(msgs[0], 0) == "system"
    prefix = _system_text(msgs[0].get("content")) if system else None
    write_turns(msgs, 1 if system else 0, out, notes, prefix)
    return system


def write_turns(msgs: list[dict[str, Any]], first: int, out: list[str], notes: list[Note] | None = None,
                prefix: str | None = None, start: int | None = None) -> None:
    """Append the turns of ``msgs[start:]`` (default: from ``first``, the first turn) to ``out``;
    ``prefix``, the system message's text, opens the first turn."""
    for i in range(first if start is None else start, len(msgs)):
        message = msgs[i]
        role = message.get("role")
        if type(role) is not str:
            role = role_of(message, i)
        if (role == "user") != ((i - first) % 2 == 0):
            raise TemplateError(ALTERNATION)
        head = _HEADS.get(role) if type(role) is str else None
        out.append(head or START_OF_TURN + _written_role(role, i) + "\n")
        if prefix is not None:
            if notes is not None and prefix:
                notes.append((0, len(out), 0, len(prefix)))
            out.append(prefix)
            out.append(SYSTEM_END)
            prefix = None
        text = message.get("content")
        text = text.strip() if type(text) is str else _content(text, i)
        if notes is not None:
            size = len(text) + _TURN_END_SIZE if role == "assistant" else len(text)
            if size:
                notes.append((i, len(out), 0, size))
        out.append(text)
        out.append(TURN_END)


def _written_role(role: Any, index: int) -> str:
    if role == "assistant":
        return MODEL
    if type(role) is str:
        return role
    problem = "missing" if role is None else f"expected a string, got {type_name(role)}"
    raise InvalidInputError(f"messages[{index}].role", f"{problem}: the template joins it to text")


def _system_text(content: Any) -> str:
    """The system message's text: a string, else its first part's ``text`` (the engine fails
    where there is none)."""
    if type(content) is str:
        return content
    path = "messages[0].content"
    if content is None:
        raise InvalidInputError(path, "missing: the template joins the system message's text to text")
    require_plain(content, path)
    first: Any = None
    if type(content) is list or type(content) is tuple:
        first = content[0] if content else None
    elif type(content) is dict:
        first = content.get(0)
    text = first.get("text") if type(first) is dict else None
    if type(text) is not str:
        raise InvalidInputError(f"{path}[0].text", f"expected a string, got {type_name(text)}: "
                                "the template joins the system message's first part's text to text")
    return text


def _content(content: Any, index: int) -> str:
    """A turn's content as the template writes it."""
    if type(content) is str:
        return content.strip()
    if content is None or type(content) is dict:  # left out: nothing; a dict: its keys, no parts
        return ""
    if type(content) is list or type(content) is tuple:
        return _parts(content, index)
    if type(content) in _SCALARS:
        raise TemplateError(INVALID_CONTENT)
    require_plain(content, f"messages[{index}].content")
    return ""  # unreachable: nothing else is plain data


def _parts(content: list[Any] | tuple[Any, ...], index: int) -> str:
    pieces = []
    for j, item in enumerate(content):
        if type(item) is dict:
            kind = item.get("type")
            if type(kind) is not str and kind is not None:
                require_plain(kind, f"messages[{index}].content[{j}].type")
            if kind == "image":
                pieces.append(IMAGE)
            elif kind == "text":
                text = item.get("text", "")
                if type(text) is not str:
                    text = printed_value(text, f"messages[{index}].content[{j}].text")
                pieces.append(text.strip())
        elif type(item) not in _PLAIN_ITEMS:
            require_plain(item, f"messages[{index}].content[{j}]")
    return "".join(pieces)
