"""Plain data: every value as transformers 5.24 hands it to a template (``_plain_template_data``).

transformers rebuilds everything a template sees out of plain JSON types before it renders, so a
value of another Python type is never printed, compared or iterated as itself: a ``str`` subclass or
an enum member is the plain string of its data, any mapping a dict, a dataclass or pydantic model the
dict of its fields, and any other object the text ``"<TypeName>"``. The formats read exact JSON data
on their fast route; this is what they read a value of any other type as.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidInputError

__all__ = ["JSON_TYPES", "NotPlainData", "as_handed", "of_json_type", "plain_data", "plain_scalar", "printed_value",
           "require_plain"]

#: The exact types of decoded JSON values: a value of one of them (its items too, for a list or a
#: dict) is read as it is.
JSON_TYPES = frozenset({str, int, float, bool, type(None), list, dict})


def of_json_type(value: Any) -> bool:
    """Whether ``value``'s type is one of :data:`JSON_TYPES`, told by identity: a membership test of
    the set compares by hash and ``==``, which a metaclass can make say ``str`` of any class."""
    kind = type(value)
    return (kind is str or kind is int or kind is float or kind is bool or value is None or kind is list
            or kind is dict)


class NotPlainData(InvalidInputError):
    """A walk met, where its reading of it differs from transformers', a value of another type than
    JSON's. The format's entry then renders the call again from its input's plain data, on which
    this is never raised: no caller sees it."""


def require_plain(value: Any, path: str) -> None:
    """Raise :class:`NotPlainData` at ``path`` unless ``value`` is plain data (:func:`plain_data`
    gives it back as it is). For a walk's slow route only: it reads the whole value."""
    if plain_data(value) is not value:
        raise NotPlainData(path, "a value of another type than JSON's, read again as its plain data")


def plain_data(value: Any) -> Any:
    """``value`` as transformers 5.24 hands everything to a template (its ``_plain_template_data``):
    exact JSON scalars and ``None`` as they are; a subclass of ``str``, ``int`` or ``float`` as its
    plain value; any mapping as a dict, a list as a list and a tuple as a tuple, their keys and items
    read the same way; a numpy scalar as its Python value; a dataclass instance or a pydantic model
    as the dict of its fields; anything else as the text ``"<TypeName>"``.

    A value already of exact JSON types is returned as it is (the same object): the formats call this
    only on the slow route of a value whose type they did not expect. Raises
    :class:`InvalidInputError` for a mapping key whose plain data is a dict or a list.
    """
    kind = type(value)
    if value is None or kind is str or kind is int or kind is float or kind is bool:
        return value
    if kind is dict or kind is list or kind is tuple:
        return _plain_container(value)
    if isinstance(value, (str, int, float)):
        return plain_scalar(value)
    if isinstance(value, Mapping):
        return _as_dict([(plain_data(key), plain_data(item)) for key, item in value.items()])
    if isinstance(value, (list, tuple)):
        return _plain_container(list(value) if isinstance(value, list) else tuple(value))
    return _plain_object(value)


def as_handed(value: Any) -> Any:
    """``value`` where a template reads a mapping (a message, a part, a call): a mapping other than a
    dict as its plain data, as transformers hands it over (its own ``get``, ``[]`` or ``in`` could show
    what its items do not); a dict, or anything else, as it is."""
    return plain_data(value) if type(value) is not dict and isinstance(value, Mapping) else value


def plain_scalar(value: Any) -> Any:
    """A subclass of ``str``, ``int`` or ``float`` as the plain value of its data (an enum member, a
    numpy-like scalar, a subclass with its own ``__str__``); any other value as it is."""
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    return value


def _plain_container(value: Any) -> Any:
    """A dict, list or tuple with its keys and items plain: itself when they already are."""
    if type(value) is dict:
        items = [(plain_data(key), plain_data(item)) for key, item in value.items()]
        if all(new[0] is key and new[1] is item for new, (key, item) in zip(items, value.items(), strict=True)):
            return value
        return _as_dict(items)
    plain = [plain_data(item) for item in value]
    if all(new is item for new, item in zip(plain, value, strict=True)):
        return value
    return plain if type(value) is list else tuple(plain)


def _as_dict(items: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """A mapping's plain items as a dict; a key whose plain data cannot be a key (a frozen dataclass's
    dict) fails transformers too: then :class:`InvalidInputError`, naming the input it is in."""
    try:
        return dict(items)
    except TypeError:
        raise InvalidInputError("messages or tools", "a mapping key whose plain data is a dict or a list "
                                "(transformers fails on it)") from None


def _plain_object(value: Any) -> Any:
    """An object that is no JSON type, as transformers reads it (numpy scalars, dataclasses, pydantic)."""
    numpy = sys.modules.get("numpy")  # numpy is never imported here: a numpy scalar means it is loaded
    if numpy is not None and isinstance(value, numpy.generic):
        return plain_data(value.item())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: plain_data(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if callable(getattr(value, "model_dump", None)):
        return plain_data(value.model_dump())
    return f"<{type(value).__name__}>"


def printed_value(value: Any, path: str = "messages") -> str:
    """What a template prints for ``value`` (``{{ value }}``, ``~``, ``|string``): a string itself,
    anything else Python's ``str`` of its plain data (:func:`plain_data`), as an exact ``str``.

    Raises :class:`InvalidInputError` at ``path`` where Python cannot print it (an integer of more
    digits than ``sys.get_int_max_str_digits()``): the engine fails there too."""
    if type(value) is str:
        return value
    try:
        return str(plain_data(value))
    except ValueError:
        raise InvalidInputError(path, "holds an integer of more digits than Python prints") from None
