"""The public format class: :class:`ChatFormat`, the interface every format implements
(:class:`~prompt_formats.format.interface.FormatInterface`) with batches and sessions on top of it.

Batches (:mod:`prompt_formats.format.batch`) and sessions (:mod:`prompt_formats.format.session`) are built on the
interface alone; this module joins them to it, so that every format has ``fmt.render_batch``,
``fmt.parse_batch`` and ``fmt.session`` and the interface imports neither. A format derives from
:class:`ChatFormat`, or from :class:`GuardedFormat` when it is made with an optional guard.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar, Literal

from ..errors import FormatError, InvalidInputError, type_name
from ..guard import ControlTokenGuard
from ..model.messages import AssistantReply
from .interface import Conversation, FormatInterface, IncrementalRenderer, Tools, refuse_losses, render_strictly
from .options import Option
from .session import Session

__all__ = [
    "GUARD_CONFIG", "ChatFormat", "Conversation", "GuardedFormat", "IncrementalRenderer", "Tools", "checked_guard",
    "refuse_losses", "render_strictly",
]

#: The ``guard`` configuration a format with an optional control-token guard declares.
GUARD_CONFIG = Option("guard", frozenset({"null"}), "a ControlTokenGuard applied to untrusted text, or null")


class ChatFormat(FormatInterface):
    """A prompt format: renders conversations to prompt text and parses the model's replies.

    Everything :class:`~prompt_formats.format.interface.FormatInterface` declares (``render``,
    ``render_spans``, ``parse``, ``stream_parser``, the options and capabilities), plus many inputs
    at a time (:meth:`render_batch`, :meth:`parse_batch`) and one conversation request after request
    (:meth:`session`). Subclasses implement the interface; these three come with it.
    """

    def session(self, tools: Tools = None, **options: Any) -> Session:
        """A :class:`~prompt_formats.format.session.Session` for one conversation rendered request after request.

        Its ``render(messages, add_generation_prompt=None)`` returns exactly
        ``self.render(messages, tools, add_generation_prompt, **options)``; it reuses the work for
        messages it rendered before when the new list extends the old one with the same message
        objects, which must not have been mutated (see :mod:`prompt_formats.format.session`). The tools are
        prepared once; an unknown option raises :class:`UnknownOptionError` here.
        """
        return Session(self, tools, options)

    def render_batch(
        self,
        conversations: Iterable[Conversation],
        tools: Tools = None,
        add_generation_prompt: bool | None = None,
        *,
        workers: int | None = None,
        errors: Literal["raise", "collect"] = "raise",
        **options: Any,
    ) -> list[str | FormatError]:
        """Render many conversations with the same tools and options; the result keeps their order.

        Each result is what :meth:`render` gives for that conversation (prompt or error), with
        ``add_generation_prompt`` passed to it as given (``None``, unset: the format's default); ``tools``
        are prepared once for the whole batch where ``prepare_tools`` takes them. With
        ``errors="raise"`` the first failing conversation raises; with ``errors="collect"`` its
        place in the result holds the :class:`FormatError` instead and the others are still rendered.
        ``workers > 1`` spreads the conversations over that many processes (0: one per CPU) and
        returns the same list; see :mod:`prompt_formats.format.batch` (and
        :func:`~prompt_formats.format.batch.iter_render` for the streaming form).
        """
        from .batch import render_batch

        return render_batch(
            self, conversations, tools, add_generation_prompt, workers=workers, errors=errors, **options
        )

    def parse_batch(
        self,
        completions: Iterable[str],
        tools: Tools = None,
        *,
        workers: int | None = None,
        errors: Literal["raise", "collect"] = "raise",
        id_factory: Callable[[], str] | None = None,
        **context: Any,
    ) -> list[AssistantReply | FormatError]:
        """Parse many completions with the same tools and context, as :meth:`render_batch` renders.

        ``id_factory`` is passed to every :meth:`parse` call (see :func:`~prompt_formats.format.batch.iter_parse`).
        """
        from .batch import parse_batch

        return parse_batch(
            self, completions, tools, workers=workers, errors=errors, id_factory=id_factory, **context
        )


def checked_guard(guard: object, tokens: Sequence[str] = ()) -> ControlTokenGuard | None:
    """``guard`` if it is ``None`` or a :class:`~prompt_formats.guard.ControlTokenGuard` covering every
    token of ``tokens`` (the format's set) and every range the set declares; else a :class:`FormatError`.

    For the formats' constructors: a wrong value is refused when the format is made, not at the
    first render (``get_format(name, guard=True)``); so is a guard over another family's tokens or
    a narrower set, which would leave structure the template writes forgeable.
    """
    if guard is None:
        return None
    if not isinstance(guard, ControlTokenGuard):
        raise InvalidInputError("guard", f"expected a ControlTokenGuard or null, got {type_name(guard)}")
    missing = [token for token in tokens if token not in guard.tokens]
    missing += [f"{f.prefix}N{f.suffix}" for f in getattr(tokens, "families", ()) if f not in guard.families]
    if missing:
        raise InvalidInputError(
            "guard", f"does not cover the format's control tokens: {', '.join(missing[:5])}"
            + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            + " (give it the format's set, which your own tokens may extend)",
        )
    return guard


class GuardedFormat(ChatFormat):
    """A format made with an optional control-token guard (its ``config_specs`` declare :data:`GUARD_CONFIG`).

    ``guard`` is checked when the format is made (:func:`checked_guard`); the format's renderer
    applies it to the fields the template renders. ``None``, the default: exactly the template's text.
    """

    guard: ControlTokenGuard | None
    #: The family's control tokens (its ``tokens.py``): a guard must cover them all.
    control_tokens: ClassVar[Sequence[str]] = ()

    def __init__(self, guard: ControlTokenGuard | None = None) -> None:
        self.guard = checked_guard(guard, self.control_tokens)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()" if self.guard is None else f"{type(self).__name__}(guard={self.guard!r})"
