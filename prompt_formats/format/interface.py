"""The interface every format implements: ``render``, ``render_spans``, ``parse``, ``stream_parser``.

:class:`FormatInterface` is what batches (:mod:`prompt_formats.format.batch`) and sessions
(:mod:`prompt_formats.format.session`) are built on, and it imports neither: the public class
:class:`~prompt_formats.format.chat_format.ChatFormat` adds ``render_batch``, ``parse_batch`` and ``session`` on
top of it. A format object is immutable configuration (for example a guard policy) plus code: it holds no
per-call state, so one instance can be shared by threads and pickled to worker processes. Reply
parsing that spans several calls lives in the separate per-stream object ``stream_parser`` returns.
"""

from __future__ import annotations

import abc
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, NoReturn, Protocol

from .._text.plain import of_json_type, plain_data
from ..errors import TOO_DEEP, FormatError, InvalidInputError, UnknownOptionError, type_name, unreadable
from ..model.messages import AssistantReply, Message, message_dict
from ..model.tools import PreparedTools
from ..replies.streaming import StreamParser
from .options import Option, strict_flag
from .spans import GeneratedPolicy, RenderedPrompt, check_generated_policy

__all__ = ["Conversation", "FormatInterface", "IncrementalRenderer", "Tools", "refuse_losses", "render_strictly"]

#: A conversation: OpenAI-style message dicts or :class:`~prompt_formats.model.messages.Message` objects.
Conversation = Sequence[Any]
#: Tools: a list of OpenAI-style tool dicts, or a :class:`~prompt_formats.model.tools.PreparedTools`.
Tools = Sequence[Mapping[str, Any]] | PreparedTools | None


class IncrementalRenderer(Protocol):
    """A format's per-session state for rendering a growing conversation (see :mod:`prompt_formats.format.session`).

    :meth:`render` returns exactly ``fmt.render(messages, tools, add_generation_prompt, **options)``
    for the session's tools and options, or ``None`` to step aside (the session then renders in full):
    it never raises.
    """

    def render(self, messages: Conversation, add_generation_prompt: bool | None) -> str | None:
        """The prompt, reusing what earlier calls rendered; ``None`` when it cannot say."""


class FormatInterface(abc.ABC):
    """A prompt format: renders conversations to prompt text and parses the model's replies.

    Subclasses set ``name`` (the registry name), ``summary`` (one plain-text line saying what the
    format is), ``option_specs`` (every keyword option ``render`` accepts beyond ``tools`` and
    ``add_generation_prompt``: its name, the JSON kinds of value it takes, a one-line description;
    see :mod:`prompt_formats.format.options`), ``parse_option_specs`` (the same for ``parse``), and
    ``options`` / ``parse_options``, their ``{name: description}`` mappings.

    Every public entry (``render``, ``render_batch``, ``parse``, ``parse_batch``, ``stream_parser``,
    ``session``) of every subclass refuses a stack too deep to finish on: a :class:`RecursionError`
    inside it becomes an :class:`~prompt_formats.errors.InvalidInputError` at ``messages`` (render),
    ``completion`` (parse) or ``tools`` (session), "the input or the call stack is too deep". And ``render`` and
    ``render_spans`` read their messages and tools as transformers hands them to a template: a format
    reads exact JSON data, and where it refuses input that holds values of other types (or such a
    value raised where it was read as itself), the call is made again with the messages and tools as
    plain data (:func:`~prompt_formats._text.plain.plain_data`; message objects of exact types and
    prepared tools as they are; options are the format's and stay as given). The other entries read
    their input once, as it is (a batch's iterator, a parse's ``id_factory``). Input whose own
    reading raises is an ``InvalidInputError`` naming it; so is an option (or
    ``add_generation_prompt``) whose truth value or equality raises (a numpy array, where the
    template fails too).
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for method in _ENTRY_FIELDS:
            function = cls.__dict__.get(method)
            if callable(function) and not getattr(function, "_refuses_deep_stacks", False):
                setattr(cls, method, _refusing_deep_stacks(function, method))
        if "parses" not in cls.__dict__:
            base = FormatInterface
            cls.parses = cls.parse is not base.parse or cls.stream_parser is not base.stream_parser
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
        see :class:`~prompt_formats.format.spans.RenderedPrompt` and docs/training-data.md.

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

    def _incremental_renderer(self, tools: Tools, options: dict[str, Any]) -> IncrementalRenderer | None:
        """A new per-session :class:`IncrementalRenderer` for these tools and
        options, or ``None`` where every render must be a full one (a format with
        :attr:`renders_incrementally` defines it)."""
        return None

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
        if options.keys() <= allowed.keys():  # every one known: one set test, in C
            return
        unknown = [key for key in options if key not in allowed]
        if unknown:
            known = ", ".join(sorted(allowed)) or "none"
            raise UnknownOptionError(
                f"unknown option{'s' if len(unknown) > 1 else ''} for format {self.name!r}: "
                f"{', '.join(sorted(unknown))} (known: {known})"
            )

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


# The public entries, and the field a too-deep stack is reported at.
_ENTRY_FIELDS = {
    "render": "messages", "render_batch": "messages", "render_spans": "messages",
    "parse": "completion", "parse_batch": "completion", "stream_parser": "completion", "session": "tools",
}


def _refusing_deep_stacks(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``method``, the entry ``name``, with a :class:`RecursionError` raised inside it turned into an
    :class:`InvalidInputError`, and input of other types than JSON's read again (:func:`_second_reading`).

    No stdlib exception leaks from the interface: a caller already deep in its own stack, or input
    deep enough to exhaust it, gets a :class:`FormatError` (nothing has been returned yet); so does
    input whose own reading raises (a mapping that fails when iterated).
    """

    field = _ENTRY_FIELDS[name]
    message = f"{field}: {TOO_DEEP}"
    spare = InvalidInputError(field, TOO_DEEP)  # where even building one overflows (a caller near the limit)

    @functools.wraps(method)
    def entry(*args: Any, **kwargs: Any) -> Any:
        first: FormatError | None = None  # the first try's refusal, when a second reading follows
        try:
            kwargs = _plain_options(name, args, kwargs) if kwargs else kwargs  # (in the try: it may overflow)
            try:
                return method(*args, **kwargs)
            except RecursionError:
                raise
            except Exception as error:
                # The formats' one reading of values of other types than JSON's is transformers':
                # only when such input failed (refused, or raised where it was read as itself: a
                # numpy array's truth value) is it read so (a scan of every value costs a render).
                plain = _second_reading(name, args, kwargs, error)
                if plain is None:
                    raise
                if isinstance(error, FormatError):
                    first = error
            return _read_again(method, plain, name, args, kwargs)
        except FormatError:
            raise
        except RecursionError:
            # (No call here, isinstance included: the stack may have room for no further frame.)
            if first is not None:  # too deep to render again on this stack: the first error stands
                raise first from None
            try:
                # Built without a Python-level call: the stack may have room for no further frame.
                deep = InvalidInputError.__new__(InvalidInputError, message)
                deep.path, deep.problem = field, TOO_DEEP
            except RecursionError:  # no room even for that: the spare, below
                deep = None
            if deep is not None:
                raise deep from None
        except Exception as error:
            odd = _unreadable_option(args, kwargs, error)
            if odd is None:
                raise
            raise odd from None
        # Shared by every call that gets here: raised out of the handler, with the call's input let
        # go, it holds neither the overflow nor the input (nor, cleared, an earlier call's frames).
        del args, kwargs
        plain = None  # (the input read again, if it was)
        spare.__traceback__ = None
        raise spare

    entry._refuses_deep_stacks = True  # type: ignore[attr-defined]
    return entry


#: The entries whose options a template reads: each read as transformers hands a template its keyword
#: arguments (:func:`_plain_options`).
_OPTIONS_READ = frozenset({"render", "render_spans", "session"})


def _plain_options(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """For entry ``name`` (:data:`_OPTIONS_READ`; any other: ``kwargs`` as given), ``kwargs`` with each
    of the format's template options (``args[0]``'s) whose value is of another type than
    JSON's as its plain data (:func:`~prompt_formats._text.plain.plain_data`: a numpy boolean as
    ``bool``, a ``str`` subclass as its text, any other object as ``"<TypeName>"``), as transformers
    hands a template its keyword arguments: else the template's ``is true`` and ``is false`` tests, and
    the text it prints, read the object itself. ``kwargs`` itself when every value is of a JSON type
    (a list or dict as given: scanning each item would cost every render)."""
    if name not in _OPTIONS_READ:
        return kwargs
    for value in kwargs.values():
        kind = type(value)
        if kind is not bool and kind is not str and value is not None and not of_json_type(value):
            break
    else:
        return kwargs
    fmt = args[0] if args else None
    declared = fmt.options.keys() - _OWN_OPTIONS if isinstance(fmt, FormatInterface) else set()
    return {key: plain_data(value) if key in declared and not of_json_type(value) else value
            for key, value in kwargs.items()}


#: The options that are no template variable, read as given: the library's own (``strict``,
#: ``decode_tool_arguments``, ``current_date``, which takes a ``datetime.date``) and transformers'
#: ``continue_final_message``, a parameter of ``apply_chat_template``.
_OWN_OPTIONS = frozenset({"strict", "decode_tool_arguments", "continue_final_message", "current_date"})


#: The entries whose input is read again as plain data when it fails (the others read theirs once).
_READ_AGAIN = frozenset({"render", "render_spans"})
#: Where an entry's inputs are among its arguments (``self`` first), by the entry's name.
_INPUTS: dict[str, tuple[tuple[str, int], ...]] = {
    "render": (("messages", 1), ("tools", 2)), "render_spans": (("messages", 1), ("tools", 2)),
    "render_batch": (), "parse": (("tools", 2),), "parse_batch": (), "stream_parser": (("tools", 1),),
    "session": (("tools", 1),),
}


def _second_reading(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], error: Exception
                    ) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    """For entry ``name`` that raised ``error``: the arguments of ``render`` and ``render_spans`` with
    their input as plain data, for a second try; ``None`` where ``error`` stands (the input is plain
    already; another entry, which reads its input as it is and may have used up an iterator or called
    the client's ``id_factory``).

    Input that cannot be read as data at all (a mapping whose iteration raises), where the entry
    raised no :class:`FormatError` of its own: :class:`InvalidInputError` naming it (transformers
    fails reading it too)."""
    if isinstance(error, FormatError) and name not in _READ_AGAIN:
        return None
    inputs = _INPUTS[name]
    try:
        plain = _plain_call(args, kwargs, inputs)
    except RecursionError:
        return None
    except Exception as unreadable:
        if isinstance(error, FormatError):
            return None
        if isinstance(unreadable, FormatError):
            raise unreadable from None
        raise _unreadable(args, kwargs, inputs) from None
    return plain if name in _READ_AGAIN else None


def _unreadable_option(args: tuple[Any, ...], kwargs: dict[str, Any], error: Exception
                       ) -> InvalidInputError | None:
    """The error for an option whose reading raised ``error`` (a numpy array read as a truth value, as
    the template reads ``add_generation_prompt``; the template fails on it too): the first option the
    format declares, or ``add_generation_prompt``, whose truth value or equality raises. ``None``
    when none does (``error`` then stands: it is not the options')."""
    fmt = args[0] if args else None
    if not isinstance(fmt, FormatInterface):
        return None
    declared = {**fmt.options, **fmt.parse_options}
    given = dict(kwargs)
    if len(args) > 3 and "add_generation_prompt" not in given:  # render, render_spans, render_batch
        given["add_generation_prompt"] = args[3]
    for key, value in given.items():
        if (key in declared or key == "add_generation_prompt") and not _readable(value):
            return unreadable(key, error)
    return None


def _readable(value: Any, depth: int = 0) -> bool:
    """Whether a value reads as a template reads an option: its truth value and its equality, and
    those of the items and keys of a list or dict (an exact JSON scalar always does; a numpy boolean
    too, a numpy array not). Items deeper than a few levels are taken as readable."""
    kind = type(value)
    if (kind is list or kind is tuple) and depth < 8:
        return all(_readable(item, depth + 1) for item in value)
    if kind is dict and depth < 8:
        return all(_readable(key, depth + 1) and _readable(item, depth + 1) for key, item in value.items())
    if of_json_type(value) or kind is tuple:
        return True
    try:
        bool(value)
        value == ""  # noqa: B015 - only whether it raises
    except Exception:
        return False
    return True


def _read_again(method: Callable[..., Any], plain: tuple[tuple[Any, ...], dict[str, Any]], name: str,
                args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Entry ``name``'s second try, on its input as plain data (``plain``); its refusal of a value
    the client gave as another type names that type too (a numpy array, read as ``"<ndarray>"``,
    is not "a string")."""
    try:
        return method(*plain[0], **plain[1])
    except InvalidInputError as error:
        where, given = _at_path(error.path, args, kwargs, _INPUTS[name])
        # Said of a value read as another (a numpy array as "<ndarray>") only: a mapping or a list is
        # read as one, the package's own objects (a Message) by their fields; and said in a plain
        # InvalidInputError only, whose subclasses (UnsupportedContentError) keep their class.
        if (type(error) is not InvalidInputError or where is None or of_json_type(given)
                or isinstance(given, (Mapping, list, tuple)) or type(given).__module__.startswith("prompt_formats.")):
            raise
        try:
            read = plain_data(given)
        except Exception:
            raise error from None
        if read is given:
            raise
        named = "" if where == error.path else f" at {where}"
        note = f"{error.problem} (given {type_name(given)}{named}, read as {_shown(read)})"
        raise InvalidInputError(error.path, note) from None


_STEP = re.compile(r"\.?([A-Za-z_]\w*)|\[(\d+)\]")


def _at_path(path: str, args: tuple[Any, ...], kwargs: dict[str, Any], inputs: tuple[tuple[str, int], ...]
             ) -> tuple[str | None, Any]:
    """The value at an error's ``path`` (``messages[1].tool_calls``) in the entry's input as the client
    gave it, read through lists and mappings only, or the value nearest it on the way there: ``(its
    path, it)``; ``(None, None)`` where the path names no input."""
    steps = _STEP.findall(path)
    positions = dict(inputs)
    if not steps or steps[0][0] not in positions:
        return None, None
    where, value = steps[0][0], _given(args, kwargs, steps[0][0], positions[steps[0][0]])
    try:
        for key, index in steps[1:]:
            if index and isinstance(value, (list, tuple)) and int(index) < len(value):
                where, value = f"{where}[{index}]", value[int(index)]
            elif key and isinstance(value, Mapping) and key in value:
                where, value = f"{where}.{key}", value[key]
            else:
                break
    except Exception:
        return None, None
    return where, value


def _shown(read: Any) -> str:
    """A plain value as an error shows it: a short text as itself, anything else by its type."""
    return repr(read) if type(read) is str and len(read) <= 40 else type_name(read)


def _given(args: tuple[Any, ...], kwargs: dict[str, Any], name: str, position: int) -> Any:
    return kwargs[name] if name in kwargs else args[position] if len(args) > position else None


def _unreadable(args: tuple[Any, ...], kwargs: dict[str, Any], inputs: tuple[tuple[str, int], ...]
                ) -> InvalidInputError:
    """The error for an entry's input that cannot be read as data, at the first message or tool (or
    the whole argument) whose reading raises."""
    for name, position in inputs:
        value = _given(args, kwargs, name, position)
        listed = type(value) in (list, tuple)
        for index, item in enumerate(value if listed else [value]):
            try:
                _plain_argument([item])
            except Exception as exc:
                return unreadable(f"{name}[{index}]" if listed else name, exc)
    return InvalidInputError(inputs[0][0], "cannot be read as data")


def _plain_call(args: tuple[Any, ...], kwargs: dict[str, Any], inputs: tuple[tuple[str, int], ...]
                ) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    """An entry's arguments with its ``inputs`` (messages, tools) as plain data, or ``None`` when
    they already are. Options stay as given: they are the format's, checked by it."""
    plain_args, plain_kwargs = list(args), dict(kwargs)
    changed = False
    for name, position in inputs:
        if name in kwargs:
            plain_kwargs[name] = _plain_argument(kwargs[name])
            changed |= plain_kwargs[name] is not kwargs[name]
        elif len(args) > position:
            plain_args[position] = _plain_argument(args[position])
            changed |= plain_args[position] is not args[position]
    return (tuple(plain_args), plain_kwargs) if changed else None


def _plain_argument(value: Any) -> Any:
    """An argument as plain data: prepared tools as they are, a message object (the package's own) as
    it is when its fields are plain data, else as the plain data of its dict."""
    if isinstance(value, PreparedTools):
        return value
    if type(value) in (list, tuple) and any(isinstance(item, Message) for item in value):
        items = [_plain_message(item, i) if isinstance(item, Message) else plain_data(item)
                 for i, item in enumerate(value)]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items if type(value) is list else tuple(items)
    return plain_data(value)


def _plain_message(message: Message, index: int) -> Any:
    """A message object itself when it holds what its class declares, of exact types (the formats
    read it as it is: its losses are named by its own fields, ``reasoning`` for one), else the plain
    data of its dict."""
    fields = message_dict(message, index)
    plain = plain_data(fields)
    if (plain is fields and type(message.role) is str and type(message.content) in _CONTENTS
            and type(message.tool_calls) is tuple
            and all(type(value) in _TEXTS for value in (message.reasoning, message.tool_call_id, message.name))):
        return message
    return plain


_CONTENTS = frozenset({str, tuple, type(None)})
_TEXTS = frozenset({str, type(None)})


for _method in ("render_spans", "parse", "stream_parser"):  # render is abstract; the batch methods are ChatFormat's
    setattr(FormatInterface, _method, _refusing_deep_stacks(getattr(FormatInterface, _method), _method))


def refuse_losses(dropped: Sequence[str]) -> NoReturn:
    """Raise the :class:`InvalidInputError` of ``strict=True`` for the losses ``dropped`` (not empty)."""
    more = f" (and {len(dropped) - 1} more: {', '.join(dropped[1:])})" if len(dropped) > 1 else ""
    problem = f"the template leaves it out of the prompt, and strict=True refuses a loss{more}"
    raise InvalidInputError(dropped[0], problem)


def render_strictly(fmt: FormatInterface, messages: Conversation, tools: Tools, add_generation_prompt: Any,
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
