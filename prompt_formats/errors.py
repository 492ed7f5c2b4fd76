"""The exception hierarchy: every error the package raises on bad input is a :class:`FormatError`.

``FormatError`` subclasses :class:`ValueError`, so code that already guards ``apply_chat_template``
with ``except ValueError`` keeps working. Each subclass answers one question about *why* rendering or
parsing refused:

- :class:`InvalidInputError`: the input is not of the documented shape (wrong type, missing field).
  The message starts with a path to the offending value, e.g.
  ``messages[3].tool_calls[0].function.name: expected a string, got int``.
- :class:`TemplateError`: the reference template itself raises for this input; the message is the
  template's own text, byte for byte (``No user query found in messages.``).
- :class:`UnknownOptionError`: a keyword option the format does not define.
- :class:`InjectionError`: the guard found a control token in untrusted text (policy ``reject``).
- :class:`ParseError`: a reply parser was used wrongly (for example fed after ``close()``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, ParamSpec, SupportsIndex, TypeVar

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "FormatError",
    "InjectionError",
    "InvalidInputError",
    "ParseError",
    "TemplateError",
    "UnknownOptionError",
]


class FormatError(ValueError):
    """Base class of every error this package raises for bad input or misuse.

    ``index``: the position of the conversation (or completion) that failed in a batch call
    (``render_batch``, ``parse_batch``, ``iter_render``, ``iter_parse``); ``None`` outside one.
    """

    index: int | None = None


class _PathError(FormatError):
    """An error about the value at ``path``; ``str(error)`` is ``"<path>: <problem>"``.

    It pickles as its class called with the attributes named in ``_constructor_fields``: its
    constructor's arguments, in order.
    """

    _constructor_fields: ClassVar[tuple[str, ...]] = ("path", "problem")

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem

    def __reduce__(self) -> tuple[type[Self], tuple[str, ...]]:
        return (type(self), tuple(getattr(self, name) for name in self._constructor_fields))

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        # What pickle and copy call: a batch's index travels as the instance's state.
        reduced = self.__reduce__()
        return reduced if self.index is None else (*reduced, {"index": self.index})


class InvalidInputError(_PathError):
    """The input does not have the documented shape.

    ``path`` names the offending value (``messages[2].content[0].text``); ``str(error)`` is
    ``"<path>: <what was wrong>"``.
    """


class TemplateError(FormatError):
    """The reference template raises for this input; ``str(error)`` is the template's message exactly."""


class UnknownOptionError(FormatError):
    """An option that the format does not define was passed."""


class InjectionError(_PathError):
    """Untrusted text contains a control token and the guard's policy is ``reject``.

    ``path`` names the field (``messages[1].content``) and ``token`` the control token found.
    """

    _constructor_fields = ("path", "token")

    def __init__(self, path: str, token: str) -> None:
        super().__init__(path, f"contains the control token {token!r}")
        self.token = token


class ParseError(FormatError):
    """A reply parser was used in a way its contract forbids (for example fed after ``close()``)."""


def in_batch(error: FormatError, index: int, items: str, own: str) -> FormatError:
    """``error``, raised for item ``index`` of a batch, as the batch raises it: of the same class, with
    :attr:`FormatError.index` set and the item named first in its text.

    ``items`` names the batch's items (``"conversations"``), ``own`` the field an item is to the
    call that failed (``"messages"``, ``"completion"``). A path inside the item's own field goes on
    from the item (``conversations[1].messages[0].role``, ``completions[2]``); any other error's
    text follows the item's name (``conversations[2]: No user query found in messages.``).
    """
    where = f"{items}[{index}]"
    if isinstance(error, _PathError):
        path = error.path
        if path == own or path.startswith((own + ".", own + "[")):
            path = where + ("." + path if own == "messages" else path[len(own):])
        else:
            path = f"{where}: {path}"
        args = [path if name == "path" else getattr(error, name) for name in error._constructor_fields]
        indexed: FormatError = type(error)(*args)
    else:
        indexed = type(error)(f"{where}: {error}")
    indexed.index = index
    return indexed


def type_name(value: object) -> str:
    """The short type name used in error messages (``None`` reads as ``null``, as in JSON)."""
    if value is None:
        return "null"
    return type(value).__name__


#: The problem of input nested deeper than the stack allows, or of a call made with the stack nearly full.
TOO_DEEP = "the input or the call stack is too deep"


def too_deep(path: str) -> InvalidInputError:
    """The error for input at ``path`` too deep for the stack, or a call made too deep in it (the
    caller's doing, not the input's). Built without calling ``__init__``: the handler that raises it
    may have room for this frame and no other."""
    error = InvalidInputError.__new__(InvalidInputError, f"{path}: {TOO_DEEP}")
    error.path, error.problem = path, TOO_DEEP
    return error


_P = ParamSpec("_P")
_R = TypeVar("_R")


def refusing_deep_stacks(path: str) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """A decorator: the function, with a :class:`RecursionError` raised inside it turned into
    :func:`too_deep`'s error at ``path`` (a caller already deep in its own stack gets a
    :class:`FormatError`, never the standard library's exception).

    The refusal is built in the wrapper's handler; where even that call overflows, an error built
    once here is raised instead, out of the handler and with the call's arguments let go: shared by
    every such call, it holds neither the overflow nor the call's input (only the frames of the
    callers it passes through, until it is raised again)."""
    spare = too_deep(path)

    def decorate(function: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(function)
        def refusing(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                return function(*args, **kwargs)
            except RecursionError:
                try:
                    deep = too_deep(path)
                except RecursionError:  # no room even for that call: the spare, below
                    deep = None
                if deep is not None:
                    raise deep from None
            del args, kwargs
            spare.__traceback__ = None  # (raised again and again: the traceback would grow each time)
            raise spare

        return refusing

    return decorate


def unreadable(path: str, error: BaseException) -> InvalidInputError:
    """The error for input at ``path`` whose own reading raised ``error`` (a mapping that fails when
    iterated): a client object broken in its own way, refused as input, never passed on as it is."""
    return InvalidInputError(path, f"cannot be read as data: reading it raised {type(error).__name__}")
