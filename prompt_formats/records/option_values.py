"""A record's own options: gathered from the top level and ``chat_template_kwargs``, and checked
against the kinds the format declares for them.

A template reads an option by its truth (``enable_thinking`` is off only when exactly ``false``), so
``"enable_thinking": "no"`` or ``0`` would silently render with thinking on. A record is read as
the command line's ``--option`` is: a value of a kind the option does not take fails the record,
naming the field (``chat_template_kwargs.enable_thinking: expected a boolean, got a string``).
``template_option_values=True`` (the command's ``--template-option-values``) passes such values to
the template as they are, which reads them by its own rule, as the Python API does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InjectionError, InvalidInputError
from ..format.options import Option
from ..model.reading import json_type_of
from .jsonl import json_type

__all__ = ["check_kinds", "merge_kwargs", "within"]

_KIND_NAMES = {
    "boolean": "a boolean", "null": "null", "string": "a string", "number": "a number", "array": "an array",
    "object": "an object",
}


def check_kinds(own: Mapping[str, Any], specs: Mapping[str, Option], prefix: str, kwargs: Any) -> None:
    """Raise :class:`InvalidInputError` at the first of a record's options ``own`` whose value is
    not of a kind its declaration (in ``specs``) takes; ``kwargs`` is the record's
    ``chat_template_kwargs``, to name the field where the value was written. An option not declared
    is left to the format, which refuses it."""
    for key, value in own.items():
        spec = specs.get(key)
        if spec is None:
            continue
        kind = json_type_of(value)
        if (kind if kind != "integer" else "number") in spec.kinds:
            continue
        field = f"chat_template_kwargs.{key}" if isinstance(kwargs, Mapping) and key in kwargs else key
        expected = " or ".join(_KIND_NAMES[name] for name in sorted(spec.kinds))
        raise InvalidInputError(prefix + field, f"expected {expected}, got {json_type(value)}")


def within(prefix: str, error: InvalidInputError | InjectionError) -> InvalidInputError | InjectionError:
    """``error`` with its path from the top of the record: ``body.messages[0].role`` in a Batch API line."""
    if not prefix:
        return error
    cls, (path, *rest) = error.__reduce__()
    return cls(prefix + path, *rest)


def merge_kwargs(own: dict[str, Any], kwargs: Any, prefix: str) -> None:
    """Add ``chat_template_kwargs`` to the options given at the top level; an option may not be in both."""
    if not isinstance(kwargs, Mapping):
        raise InvalidInputError(prefix + "chat_template_kwargs", f"expected an object, got {json_type(kwargs)}")
    for key, value in kwargs.items():
        if key in own:
            raise InvalidInputError(
                prefix + "chat_template_kwargs." + key, "also given at the top level of the request"
            )
        own[key] = value
