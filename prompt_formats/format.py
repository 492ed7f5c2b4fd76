"""The interface every format implements: ``render``, ``render_batch``, ``parse``, ``stream_parser``.

A format object is immutable configuration (for example a guard policy) plus code: it holds no
per-call state, so one instance can be shared by threads and pickled to worker processes. Reply
parsing that spans several calls lives in the separate per-stream object ``stream_parser`` returns.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from .errors import FormatError, InvalidInputError, UnknownOptionError, type_name
from .messages import AssistantReply
from .options import Option
from .streaming import StreamParser
from .tools import PreparedTools

if TYPE_CHECKING:
    from .guard import ControlTokenGuard

__all__ = ["ChatFormat", "Conversation", "Tools", "checked_guard"]

#: A conversation: OpenAI-style message dicts or :class:`~prompt_formats.messages.Message` objects.
Conversation = Sequence[Any]
#: Tools: a list of OpenAI-style tool dicts, or a :class:`~prompt_formats.tools.PreparedTools`.
Tools = Sequence[Mapping[str, Any]] | PreparedTools | None


class ChatFormat(abc.ABC):
    """A prompt format: renders conversations to prompt text and parses the model's replies.

    Subclasses set ``name`` (the registry name), ``summary`` (one plain-text line saying what the
    format is), ``option_specs`` (every keyword option ``render`` accepts beyond ``tools`` and
    ``add_generation_prompt``: its name, the JSON kinds of value it takes, a one-line description;
    see :mod:`prompt_formats.options`), ``parse_option_specs`` (the same for ``parse``), and
    ``options`` / ``parse_options``, their ``{name: description}`` mappings.
    """

    name: ClassVar[str]
    summary: ClassVar[str] = ""
    option_specs: ClassVar[tuple[Option, ...]] = ()
    parse_option_specs: ClassVar[tuple[Option, ...]] = ()
    options: ClassVar[Mapping[str, str]] = {}
    parse_options: ClassVar[Mapping[str, str]] = {}

    @abc.abstractmethod
    def render(
        self,
        messages: Conversation,
        tools: Tools = None,
        add_generation_prompt: bool = False,
        **options: Any,
    ) -> str:
        """Render one conversation to the exact prompt text of the format's reference template.

        ``add_generation_prompt=None`` means unset: the format's default (the batch functions pass
        ``None`` when it is not given).

        Raises a :class:`~prompt_formats.errors.FormatError` subclass, and returns nothing, when the
        input is invalid or the reference template raises for it.
        """

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
        returns the same list; see :mod:`prompt_formats.batch` (and
        :func:`~prompt_formats.batch.iter_render` for the streaming form).
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

        ``id_factory`` is passed to every :meth:`parse` call (see :func:`~prompt_formats.batch.iter_parse`).
        """
        from .batch import parse_batch

        return parse_batch(
            self, completions, tools, workers=workers, errors=errors, id_factory=id_factory, **context
        )

    def parse(
        self,
        completion: str,
        tools: Tools = None,
        *,
        id_factory: Callable[[], str] | None = None,
        **context: Any,
    ) -> AssistantReply:
        """Parse a whole completion (the text after the generation prompt) into an :class:`AssistantReply`.

        It is the format's stream parser fed the whole text at once, so it equals the assembled
        events of any split of the same text into deltas. ``tools``, ``id_factory`` and ``context``
        are as for :meth:`stream_parser`. Never raises for any completion text; raises
        :class:`FormatError` only for bad arguments (a non-string completion, malformed tools, an
        unknown option).
        """
        return self.stream_parser(tools, id_factory=id_factory, **context).parse_all(completion)

    def stream_parser(
        self,
        tools: Tools = None,
        *,
        id_factory: Callable[[], str] | None = None,
        **context: Any,
    ) -> StreamParser:
        """A new parser for one completion: ``feed(delta)`` any number of times, then ``close()``.

        ``context`` takes ``render``'s options (they say where the prompt left the model);
        ``id_factory`` makes tool-call ids (default ``call_`` + 24 random hex digits).
        """
        raise NotImplementedError(f"format {self.name!r} has no reply parser")

    def check_options(self, options: Mapping[str, Any], allowed: Mapping[str, str] | None = None) -> None:
        """Raise :class:`UnknownOptionError` naming every option not in ``allowed`` (default ``self.options``)."""
        allowed = self.options if allowed is None else allowed
        unknown = [key for key in options if key not in allowed]
        if unknown:
            known = ", ".join(sorted(allowed)) or "none"
            raise UnknownOptionError(
                f"unknown option{'s' if len(unknown) > 1 else ''} for format {self.name!r}: "
                f"{', '.join(sorted(unknown))} (known: {known})"
            )

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def checked_guard(guard: object) -> ControlTokenGuard | None:
    """``guard`` if it is a :class:`~prompt_formats.guard.ControlTokenGuard` or ``None``; else a :class:`FormatError`.

    For the formats' constructors: a wrong value is refused when the format is made, not at the
    first render (``get_format(name, guard=True)``).
    """
    from .guard import ControlTokenGuard

    if guard is not None and not isinstance(guard, ControlTokenGuard):
        raise InvalidInputError("guard", f"expected a ControlTokenGuard or null, got {type_name(guard)}")
    return guard
