"""Sessions: one conversation rendered request after request, the work for its earlier messages reused.

``fmt.session(tools, **options)`` returns a :class:`Session`. Its :meth:`~Session.render` returns
exactly what ``fmt.render(messages, tools, add_generation_prompt, **options)`` returns (the prompt, or
the same error), whatever the sequence of calls. What it saves:

- every format: the tools are prepared once (:func:`~prompt_formats.model.tools.prepare_tools`, when it
  takes them) and the options are checked once, when the session is made;
- a format that declares incremental rendering
  (:attr:`~prompt_formats.format.chat_format.ChatFormat.renders_incrementally`;
  every registered format): when the new list *extends* the one rendered before (the same message
  objects, by identity, then more), only the messages whose text can have changed are rendered again.

The caller's side of the contract: a message already rendered is not mutated afterwards (append new
messages, or build a new list holding the same objects). Identity is checked, because it is cheap;
a changed value inside a rendered message cannot be detected cheaply, and equality is no substitute
(``1 == True == 1.0``, and they render differently). Any other list (shorter, a message replaced,
not a list) is rendered in full, which is always correct. Details and the per-format rules:
docs/serving.md, "Sessions".
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import refusing_deep_stacks, unreadable
from ..model.tools import prepare_tools
from .interface import IncrementalRenderer

if TYPE_CHECKING:
    from .interface import Conversation, FormatInterface, Tools

__all__ = ["IncrementalRenderer", "Session", "shared_tools"]


def shared_tools(tools: Tools | Iterator[Any]) -> Tools:
    """Tools to be rendered many times: prepared once when ``prepare_tools`` takes them, else as they are.

    Preparing is a speed-up here, never a check: ``prepare_tools`` refuses some lists that a format
    renders (ChatML writes each tool as JSON, so a tool without a name renders), and every render
    must get what ``render`` gives with these tools, its prompt or its error.
    """
    if isinstance(tools, Iterator):
        try:
            tools = list(tools)  # read once: it is needed again if preparing refuses it
        except Exception as error:
            raise unreadable("tools", error) from None
    try:
        if not tools:  # none, or an empty list as it is (Llama 3's templates write the tools' header for one)
            return tools
    except Exception:  # a client's sequence whose truth value raises: as it is, as render reads it
        return tools
    if type(tools) is not list and type(tools) is not tuple:
        return tools  # (prepared already, or another object: as it is, which render refuses or reads)
    try:
        return prepare_tools(tools)
    except Exception:
        return tools


def _incremental_renderer(fmt: FormatInterface, tools: Tools, options: dict[str, Any]) -> IncrementalRenderer | None:
    """The format's renderer of a growing conversation for a session, or ``None``: every render a
    full one, which gives the error of tools or options a renderer cannot be made for."""
    if not fmt.renders_incrementally:
        return None
    try:
        return fmt._incremental_renderer(tools, options)
    except Exception:  # the full render raises it (or renders what this could not read)
        return None


class Session:
    """One conversation's renders with fixed tools and options; see :mod:`prompt_formats.format.session`.

    Thread-safe: renders of one session are serialised by a lock (a session belongs to one
    conversation; share the format, not the session, between concurrent conversations). Picklable:
    the copy has the format, tools and options, not the reused work (its first render is a full one).
    """

    __slots__ = ("_incremental", "_lock", "fmt", "options", "tools")

    def __init__(self, fmt: FormatInterface, tools: Tools = None, options: Mapping[str, Any] | None = None) -> None:
        options = dict(options or {})
        fmt.check_options(options)
        self.fmt = fmt
        self.tools = shared_tools(tools)
        self.options = options
        self._lock = threading.Lock()
        self._incremental = _incremental_renderer(fmt, self.tools, options)

    @refusing_deep_stacks("messages")  # (called with the stack nearly full)
    def render(self, messages: Conversation, add_generation_prompt: bool | None = None) -> str:
        """Exactly ``fmt.render(messages, tools, add_generation_prompt, **options)``: the prompt or its error.

        ``add_generation_prompt=None`` is the format's default, as for ``render``; a stack too deep to
        finish on is refused as ``render`` refuses it.
        """
        incremental = self._incremental
        if incremental is not None:
            with self._lock:
                try:
                    text = incremental.render(messages, add_generation_prompt)
                except Exception:  # a renderer that could not read its input: the full render's answer stands
                    text = None
                    # (and a new renderer: this one may have been stopped halfway through changing its state)
                    self._incremental = _incremental_renderer(self.fmt, self.tools, self.options)
            if text is not None:
                return text
        unset_or_given: Any = add_generation_prompt  # None is every format's "unset", as in the batch functions
        return self.fmt.render(messages, self.tools, unset_or_given, **self.options)

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.fmt, self.tools, self.options)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.fmt, self.tools, self.options = state
        self._lock = threading.Lock()
        self._incremental = _incremental_renderer(self.fmt, self.tools, self.options)

    def __repr__(self) -> str:
        return f"Session({self.fmt!r}, options={self.options!r})"
