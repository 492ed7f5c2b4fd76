"""The interface every format implements: ``render``, ``render_batch``, ``parse``, ``stream_parser``.

A format object is immutable configuration (for example a guard policy) plus code: it holds no
per-call state, so one instance can be shared by threads and pickled to worker processes. Reply
parsing that spans several calls lives in the separate per-stream object ``stream_parser`` returns.
"""

from __future__ import annotations

import abc
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NoReturn

from .errors import FormatError, InvalidInputError, UnknownOptionError, type_name
from .messages import AssistantReply
from .options import Option, strict_flag
from .spans import GeneratedPolicy, RenderedPrompt, check_generated_policy
from .streaming import StreamParser
from .tools import PreparedTools

if TYPE_CHECKING:
    from .guard import ControlTokenGuard
    from .session import IncrementalRenderer, Session

__all__ = [
    "GUARD_CONFIG", "ChatFormat", "Conversation", "GuardedFormat", "Tools", "checked_guard", "refuse_losses",
    "render_strictly",
]

#: The ``guard`` configuration a format with an optional control-token guard declares.
GUARD_CONFIG = Option("guard", frozenset({"null"}), "a ControlTokenGuard applied to untrusted text, or null")

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

    Every public entry (``render``, ``render_batch``, ``parse``, ``parse_batch``, ``stream_parser``)
    of every subclass refuses a stack too deep to finish on: a :class:`RecursionError` inside it
    becomes an :class:`~prompt_formats.errors.InvalidInputError` at ``messages`` (render) or
    ``completion`` (parse), "the input or the call stack is too deep".
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for method, field in _ENTRY_FIELDS.items():
            function = cls.__dict__.get(method)
            if callable(function) and not getattr(function, "_refuses_deep_stacks", False):
                setattr(cls, method, _refusing_deep_stacks(function, field))
        if "parses" not in cls.__dict__:
            cls.parses = cls.parse is not ChatFormat.parse or cls.stream_parser is not ChatFormat.stream_parser
        if "renders_spans" not in cls.__dict__ and ("render_spans" in cls.__dict__ or "_render_spans" in cls.__dict__):
            cls.renders_spans = True

    name: ClassVar[str]
    summary: ClassVar[str] = ""
    #: Whether the format has a reply parser (``parse``, ``stream_parser``). A subclass that does
    #: not say is taken to parse when it defines ``parse`` or ``stream_parser`` itself.
    parses: ClassVar[bool] = False
    #: Whether the format has :meth:`render_spans` (the package's formats say so; a subclass that
    #: does not say is taken to have it when it defines ``_render_spans`` or ``render_spans`` itself).
    renders_spans: ClassVar[bool] = False
    #: Whether :meth:`session` reuses the work for messages already rendered (the format defines
    #: ``_incremental_renderer``); otherwise a session renders each request in full.
    renders_incrementally: ClassVar[bool] = False
    option_specs: ClassVar[tuple[Option, ...]] = ()
    parse_option_specs: ClassVar[tuple[Option, ...]] = ()
    #: The keyword arguments the constructor takes (``get_format(name, **config)``), in order.
    config_specs: ClassVar[tuple[Option, ...]] = ()
    options: ClassVar[Mapping[str, str]] = {}
    parse_options: ClassVar[Mapping[str, str]] = {}

    @abc.abstractmethod
    def render(self, messages: Conversation, tools: Tools = None, add_generation_prompt: bool = False,
               **options: Any) -> str:
        """Render one conversation to the exact prompt text of the format's reference template.

        ``add_generation_prompt=None`` means unset: the format's default (the batch functions pass
        ``None`` when it is not given).

        Raises a :class:`~prompt_formats.errors.FormatError` subclass, and returns nothing, when the
        input is invalid or the reference template raises for it.
        """

    def render_spans(
        self,
        messages: Conversation,
        tools: Tools = None,
        add_generation_prompt: bool = False,
        generated: object = "all",
        **options: Any,
    ) -> RenderedPrompt:
        """:meth:`render`'s text, with the ranges each input message produced and the ranges the
        model generated under the ``generated=`` policy (``"all"``, ``"last"``, ``"after_last_user"``);
        see :class:`~prompt_formats.spans.RenderedPrompt` and docs/training-data.md.

        Takes :meth:`render`'s arguments and raises its errors, after
        :class:`~prompt_formats.errors.InvalidInputError` at ``generated`` for an unknown policy. A
        format without it (:attr:`renders_spans` false) raises
        :class:`~prompt_formats.errors.FormatError` naming the format, before any other check.
        """
        if not self.renders_spans:
            raise FormatError(
                f"format {self.name!r} has no render_spans: its spans and assistant masks are not available"
            )
        policy = check_generated_policy(generated)
        strict = strict_flag(options.pop("strict", None)) if "strict" in options else False
        rendered = self._render_spans(messages, tools, add_generation_prompt, policy, options)
        if strict and rendered.dropped:
            refuse_losses(rendered.dropped)
        return rendered

    def _render_spans(self, messages: Conversation, tools: Tools, add_generation_prompt: bool | None,
                      policy: GeneratedPolicy, options: dict[str, Any]) -> RenderedPrompt:
        """The format's part of :meth:`render_spans`, ``generated`` already checked (``policy``).

        A format with spans defines this (and is then taken to have :attr:`renders_spans`); the
        arguments are as :meth:`render_spans` got them, ``options`` a fresh dict it may change.
        """
        raise NotImplementedError(f"format {self.name!r} declares renders_spans but defines no _render_spans")

    def session(self, tools: Tools = None, **options: Any) -> Session:
        """A :class:`~prompt_formats.session.Session` for one conversation rendered request after request.

        Its ``render(messages, add_generation_prompt=None)`` returns exactly
        ``self.render(messages, tools, add_generation_prompt, **options)``; it reuses the work for
        messages it rendered before when the new list extends the old one with the same message
        objects, which must not have been mutated (see :mod:`prompt_formats.session`). The tools are
        prepared once; an unknown option raises :class:`UnknownOptionError` here.
        """
        from .session import Session

        return Session(self, tools, options)

    def _incremental_renderer(self, tools: Tools, options: dict[str, Any]) -> IncrementalRenderer | None:
        """A new per-session :class:`~prompt_formats.session.IncrementalRenderer` for these tools and
        options, or ``None`` where every render must be a full one (a format with
        :attr:`renders_incrementally` defines it)."""
        return None

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
        ``errors="raise"`` the first failing conversation raises, its error naming it (``error.index``,
        and ``conversations[1].messages[0].role: …`` in the text); with ``errors="collect"`` its place
        in the result holds :meth:`render`'s :class:`FormatError` instead (``index`` set too) and the
        others are still rendered.
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


_TOO_DEEP = "the input or the call stack is too deep"

# The public entries, and the field a too-deep stack is reported at.
_ENTRY_FIELDS = {
    "render": "messages", "render_batch": "messages", "render_spans": "messages",
    "parse": "completion", "parse_batch": "completion", "stream_parser": "completion",
}


def _refusing_deep_stacks(method: Callable[..., Any], field: str) -> Callable[..., Any]:
    """``method``, with a :class:`RecursionError` raised inside it turned into an :class:`InvalidInputError`.

    No stdlib exception leaks from the interface: a caller already deep in its own stack, or input
    deep enough to exhaust it, gets a :class:`FormatError` (nothing has been returned yet).
    """

    message = f"{field}: {_TOO_DEEP}"

    @functools.wraps(method)
    def entry(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except RecursionError:
            # Built without a Python-level call: the stack may have room for no further frame.
            error = InvalidInputError.__new__(InvalidInputError, message)
            error.path, error.problem = field, _TOO_DEEP
            raise error from None

    entry._refuses_deep_stacks = True  # type: ignore[attr-defined]
    return entry


for _method in ("render_spans", "render_batch", "parse", "parse_batch", "stream_parser"):  # render is abstract
    setattr(ChatFormat, _method, _refusing_deep_stacks(getattr(ChatFormat, _method), _ENTRY_FIELDS[_method]))


def refuse_losses(dropped: Sequence[str]) -> NoReturn:
    """Raise the :class:`InvalidInputError` of ``strict=True`` for the losses ``dropped`` (not empty)."""
    more = f" (and {len(dropped) - 1} more: {', '.join(dropped[1:])})" if len(dropped) > 1 else ""
    problem = f"the template leaves it out of the prompt, and strict=True refuses a loss{more}"
    raise InvalidInputError(dropped[0], problem)


def render_strictly(fmt: ChatFormat, messages: Conversation, tools: Tools, add_generation_prompt: Any,
                    options: dict[str, Any]) -> str:
    """``render`` under the ``strict`` option (which ``options`` holds; it is taken out).

    ``strict`` false or null: exactly ``fmt.render`` without it. True: the same text, from
    ``render_spans``, or :class:`InvalidInputError` at the first input the template leaves out
    (``RenderedPrompt.dropped``). Every format's ``render`` hands a call with ``strict`` here.
    """
    if not strict_flag(options.pop("strict")):
        return fmt.render(messages, tools, add_generation_prompt, **options)
    rendered = fmt.render_spans(messages, tools, add_generation_prompt, **options)
    if rendered.dropped:
        refuse_losses(rendered.dropped)
    return rendered.text


def checked_guard(guard: object) -> ControlTokenGuard | None:
    """``guard`` if it is a :class:`~prompt_formats.guard.ControlTokenGuard` or ``None``; else a :class:`FormatError`.

    For the formats' constructors: a wrong value is refused when the format is made, not at the
    first render (``get_format(name, guard=True)``).
    """
    from .guard import ControlTokenGuard

    if guard is not None and not isinstance(guard, ControlTokenGuard):
        raise InvalidInputError("guard", f"expected a ControlTokenGuard or null, got {type_name(guard)}")
    return guard


class GuardedFormat(ChatFormat):
    """A format made with an optional control-token guard (its ``config_specs`` declare :data:`GUARD_CONFIG`).

    ``guard`` is checked when the format is made (:func:`checked_guard`); the format's renderer
    applies it to the fields the template renders. ``None``, the default: exactly the template's text.
    """

    guard: ControlTokenGuard | None

    def __init__(self, guard: ControlTokenGuard | None = None) -> None:
        self.guard = checked_guard(guard)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()" if self.guard is None else f"{type(self).__name__}(guard={self.guard!r})"
