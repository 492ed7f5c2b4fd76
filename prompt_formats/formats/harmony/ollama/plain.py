"""``render``'s fast path: a conversation of plain dicts written in one loop, the writers inlined.

:func:`render_plain` returns exactly what :func:`~.render.render_harmony` returns. Its loop,
:func:`write_plain`, reads what :func:`~.render.write_messages` reads, in the same order, and writes
what its writers write; at the first message it does not take plainly (not a ``dict``, a field of
another type than the usual, an unusual role or content part) it steps aside: what it wrote is taken
back and the checked loop writes every message again, raising there whatever error there is to
raise (:func:`write_messages_fast`, which sessions use too). This module raises none of its own (the
header is written by the checked path's :func:`~.render.prologue`, whose errors come first in both).

Why: on short conversations of plain dicts, the calls to the writers and the per-message tests of
the shared reading are most of what the checked path spends beyond writing the text.
``tests/render/test_harmony_fast_path.py`` checks it against the checked path on generated
conversations, valid and not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ....format.chat_format import Conversation, Tools
from ..tokens import ANALYSIS, END, FINAL, PYTHON_RESULT, USER
from .render import CLOSED, PROLOGUE, _call_names, finish, open_marker, prologue, take_out, write_messages

__all__ = ["render_plain", "write_messages_fast", "write_plain"]


def render_plain(messages: Conversation, tools: Tools, date: str, reasoning_line: str) -> str:
    """``render_harmony(messages, tools, date, reasoning_line)``: the same text or the same error."""
    out = prologue(messages, tools, date, reasoning_line)
    system: list[str] = []
    # write_messages_fast without its call, on the row this module is for.
    written = write_plain(messages, out, system)
    last_role, run = _written_again(messages, out, system, PROLOGUE, 0) if written is None else written
    return finish(out, system, open_marker(out, last_role, run))


def write_messages_fast(messages: Sequence[Any], out: list[str], system: list[str]) -> tuple[Any, int]:
    """``write_messages(messages, out, system, CLOSED)``: the same pieces, last role and run, or the
    same error. The one loop writes them; where it steps aside, :func:`_written_again`."""
    pieces, texts = len(out), len(system)
    written = write_plain(messages, out, system)
    return _written_again(messages, out, system, pieces, texts) if written is None else written


def _written_again(messages: Sequence[Any], out: list[str], system: list[str], pieces: int, texts: int
                   ) -> tuple[Any, int]:
    """What the one loop wrote after ``out[:pieces]`` and ``system[:texts]`` taken back (it writes
    nowhere before), and the messages written by ``write_messages``."""
    del out[pieces:], system[texts:]
    return write_messages(messages, out, system, CLOSED)


def _plain_content(content: Any) -> str | None:
    """A content that is not a string as the checked path reads it, when ``None`` or a list of
    ``{"type": "text", "text": str}`` parts; else ``None``."""
    if content is None:
        return ""
    if type(content) is not list:
        return None
    texts = []
    for part in content:
        text = part.get("text") if type(part) is dict and len(part) == 2 and part.get("type") == "text" else None
        if type(text) is not str:
            return None
        texts.append(text)
    return "\n\n".join(texts)


def write_plain(messages: Sequence[Any], out: list[str], system: list[str]) -> tuple[Any, int] | None:
    """:func:`~.render.write_messages`' pieces, last role and latest run, in its dispatch's order (a
    message of its predecessor's role joins the run as ``merged`` joins it); ``None`` to step aside."""
    analyses: list[int] = []
    previous: Any = None
    run = 0
    names: dict[str, str] | None = None  # tool call id -> name, once a tool result needs it
    for message in messages:
        if type(message) is not dict:
            return None
        role = message.get("role")
        content = message.get("content")
        if type(content) is not str and (content := _plain_content(content)) is None:
            return None
        if role == "assistant":
            thinking = message.get("reasoning_content")  # the first alias not None (reading.reasoning_of)
            if thinking is None and (thinking := message.get("thinking")) is None:
                thinking = message.get("reasoning")
            if thinking is not None and type(thinking) is not str:
                return None
            if previous != "assistant":
                run = len(out)
                if thinking:
                    analyses.append(run)
                    out += (ANALYSIS, thinking, END)
                if content:
                    out += (FINAL, content, END)
            elif len(out) > run and out[-3] is FINAL:
                out[-2] += "\n\n" + content
            else:
                out += (FINAL, "\n\n" + content, END)
        elif role == "user":
            if previous == "user":
                out[-2] += "\n\n" + content
            else:
                if analyses:
                    take_out(out, analyses)
                out += (USER, content, END)
        elif role == "tool":
            name = message.get("tool_name")
            if name is None:
                name = message.get("name")
            if name is not None and type(name) is not str:
                return None
            if not name:
                call_id = message.get("tool_call_id")
                if call_id is not None and type(call_id) is not str:
                    return None
                if call_id:
                    names = _call_names(messages) if names is None else names
                    name = names.get(call_id, name)
            if name == "python":
                out += (PYTHON_RESULT, content, END)
        elif role == "system" or role == "developer":
            system.append(content)
        elif type(role) is not str:
            return None
        previous = role
    return previous, run
