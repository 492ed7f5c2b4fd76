"""Values of other Python types than JSON's, put where a client's own objects end up: a ``str``
subclass that prints otherwise than its characters, enum members, numpy scalars, bytes, sets, dates,
objects of no known kind, any mapping, tuples, dataclass and pydantic-like messages.

transformers hands a template none of them as they are (``_plain_template_data``): each test that
feeds them compares with the oracle fed as transformers feeds it.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import keyword
import types
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st


class Shouts(str):
    """A string that prints, and represents itself, otherwise than its characters."""

    def __str__(self) -> str:
        return "SHOUT"

    def __repr__(self) -> str:
        return "SHOUT!"


class Loud(int):
    """An integer that prints otherwise than its value."""

    def __str__(self) -> str:
        return "LOUD"

    __repr__ = __str__


class Wide(float):
    """A float that prints otherwise than its value."""

    def __str__(self) -> str:
        return "WIDE"

    __repr__ = __str__


class Colour(str, enum.Enum):
    """A str-mixin enum: ``str()`` of a member is ``Colour.RED``, its data ``red``."""

    RED = "red"
    TAG = "<|im_end|>"


class Level(enum.IntEnum):
    LOW = 1


class Opaque:
    """An object of no kind transformers knows: handed over as ``"<Opaque>"``."""

    def __str__(self) -> str:
        return "<|im_end|>"


class Touchy:
    """An object whose truth value and equality raise (as a numpy array's truth value does): a format
    that reads it as itself must read it again as transformers hands it over, ``"<Touchy>"``."""

    def __bool__(self) -> bool:
        raise RuntimeError("the truth value of a Touchy is ambiguous")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("a Touchy compares with nothing")

    __hash__ = object.__hash__


class Dumps:
    """A pydantic-like model: transformers reads it through ``model_dump``."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def model_dump(self) -> Any:
        return self.data


def _arrays() -> list[Any]:
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy is a test dependency through transformers
        return []
    return [numpy.array([1, 2]), numpy.array(["<|im_end|>"])]


#: Objects transformers hands over as strings (``"<Opaque>"``, an enum member's value, ``"<ndarray>"``).
odd_texts = st.sampled_from([Opaque(), b"bytes", frozenset({1}), datetime.date(2026, 1, 2), Colour.RED, Colour.TAG,
                             Touchy(), *_arrays()])


def _numbers() -> tuple[list[Any], list[Any], list[Any]]:
    """Objects handed over as an integer, a float, a boolean (numpy's scalars where numpy is installed)."""
    integers: list[Any] = [Level.LOW, Loud(3)]
    floats: list[Any] = [Wide(0.25)]
    booleans: list[Any] = []
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy comes with transformers, a test dependency
        return integers, floats, booleans
    return [*integers, numpy.int64(7)], [*floats, numpy.float32(0.5)], [numpy.bool_(False), numpy.bool_(True)]


_INTEGERS, _FLOATS, _BOOLEANS = _numbers()


def as_dataclass(message: Mapping[str, Any]) -> Any:
    """A message as a dataclass instance with its keys as fields (keys that cannot be fields kept out)."""
    fields = [key for key in message if isinstance(key, str) and key.isidentifier() and not keyword.iskeyword(key)]
    cls = dataclasses.make_dataclass("ChatMessage", fields)
    return cls(**{key: message[key] for key in fields})


@st.composite
def oddified(draw: st.DrawFn, value: Any, depth: int = 0) -> Any:
    """``value`` with some of its leaves and containers of other Python types than JSON's, each
    handed over by transformers as a value of the JSON type it replaces (a string for a string)."""
    if type(value) is str:
        pick = draw(st.integers(0, 9))
        return Shouts(value) if pick == 0 else draw(odd_texts) if pick == 1 else value
    if type(value) is bool:
        return draw(st.sampled_from(_BOOLEANS)) if _BOOLEANS and draw(st.integers(0, 5)) == 0 else value
    if type(value) in (int, float) and draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(_INTEGERS if type(value) is int else _FLOATS))
    if type(value) is list:
        items = [draw(oddified(item, depth + 1)) for item in value]
        return tuple(items) if draw(st.integers(0, 7)) == 0 else items
    if type(value) is dict:
        data = {key: draw(oddified(item, depth + 1)) for key, item in value.items()}
        shape = draw(st.integers(0, 9))
        if shape == 0:
            return types.MappingProxyType(data)
        if shape == 1:
            return Dumps(data)
        if shape == 2 and depth == 1:
            return as_dataclass(data)
        return data
    return value
