"""Typed declarations of a format's options, and the reading of an option's value given as text.

Each format declares its render options (``ChatFormat.option_specs``) and parse options
(``ChatFormat.parse_option_specs``) next to the code that reads them, as :class:`Option` s: a name,
the JSON kinds of value it takes, and a one-line description. ``ChatFormat.options`` and
``parse_options`` (name -> description) are derived from them with :func:`describe`, and the
command-line tool reads the kinds to understand ``--option KEY=VALUE`` (:func:`read_value`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

import attrs

from ..errors import InvalidInputError, type_name

__all__ = [
    "BOOLEAN", "STRICT", "STRICT_PARSE", "Kind", "Option", "bos_token", "bos_token_specs", "describe", "read_value",
    "strict_flag",
]

#: The kinds of JSON value an option can take.
Kind = Literal["boolean", "null", "string", "number", "array", "object"]
BOOLEAN: frozenset[Kind] = frozenset({"boolean"})

_KIND_NAMES: dict[str, str] = {
    "boolean": "a boolean", "null": "null", "string": "a string", "number": "a number", "array": "an array",
    "object": "an object",
}
# Words a shell user types for the JSON constants (Python's spelling, any case).
_WORDS: dict[str, Any] = {"true": True, "false": False, "none": None}


@attrs.frozen
class Option:
    """One option of a format: its ``name``, the JSON ``kinds`` of value it takes, and what it does."""

    name: str
    kinds: frozenset[Kind]
    description: str


#: The option every format declares: ``strict=True`` refuses what the template would leave out.
STRICT = Option(
    "strict", frozenset({"boolean", "null"}),
    "true: refuse (InvalidInputError naming the field) any input the template would leave out of the prompt "
    "(default: render it as the template does; render_spans reports the losses in 'dropped')",
)
#: ``strict`` as a parse option: accepted so render's options can be passed as they are.
STRICT_PARSE = Option(
    "strict", frozenset({"boolean", "null"}),
    "accepted so render's options can be passed as they are; no effect on parsing",
)


def strict_flag(value: object) -> bool:
    """``strict``'s value read: ``True`` or ``False`` (``None``: unset, ``False``).

    Raises :class:`InvalidInputError` at ``strict`` for any other value: a refusal asked for must
    not be lost to a typo (``"yes"``, ``1``).
    """
    if value is None or value is False:
        return False
    if value is True:
        return True
    raise InvalidInputError("strict", f"expected a boolean or null, got {type(value).__name__}")


def bos_token_specs(default: str) -> tuple[Option, Option]:
    """``bos_token``, the tokenizer variable a template starts with, as a render option (the
    tokenizer's value, ``default``, unless given) and as a parse option (accepted, no effect)."""
    kinds: frozenset[Kind] = frozenset({"string"})
    written = f"the text the prompt starts with (the tokenizer's bos_token; default {default!r})"
    return (Option("bos_token", kinds, written),
            Option("bos_token", kinds, "accepted so render's options can be passed as they are; no effect on parsing"))


def bos_token(options: dict[str, Any], default: str) -> str:
    """The ``bos_token`` option's value, ``default`` unless given; :class:`InvalidInputError` at
    ``bos_token`` for a value that is no string."""
    bos = options.get("bos_token", default)
    if type(bos) is not str:
        raise InvalidInputError("bos_token", f"expected a string, got {type_name(bos)}")
    return bos


def describe(options: Iterable[Option]) -> dict[str, str]:
    """``{name: description}`` of ``options``, in their order: the ``ChatFormat.options`` mapping."""
    return {option.name: option.description for option in options}


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_value(option: Option | None, text: str) -> Any:
    """The value of ``option`` written as ``text`` on a command line.

    JSON first (``false``, ``3``, ``"x"``, ``[1]``); then ``True``, ``False``, ``None`` in any case as
    the booleans and null; any other text is the string itself only when the option takes strings
    (or is not declared: its kinds are unknown). Otherwise raises :class:`InvalidInputError`: a
    misspelt ``fasle`` must not become a string that the template reads as true.
    """
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except ValueError:
        pass
    word = text.lower()
    if word in _WORDS:
        return _WORDS[word]
    if option is None or "string" in option.kinds:
        return text
    kinds = " or ".join(_KIND_NAMES[kind] for kind in sorted(option.kinds))
    problem = f"not JSON, nor true/false/none, and {option.name} takes {kinds}, not a string"
    raise InvalidInputError(option.name, problem)
