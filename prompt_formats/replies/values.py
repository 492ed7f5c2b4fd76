"""Reading the values a model wrote: JSON argument text, and the limits met on the way.

Shared by the ChatML and Harmony reply parsers (typing a value by its JSON schema is ChatML's:
:mod:`prompt_formats.formats.chatml.schema`). Nothing here raises for any text: a value Python
cannot convert or hold is reported back (:data:`TOO_MANY_DIGITS`, :data:`NUMBER_TOO_LARGE`), so
the parser can keep it as text and say why. Two limits of the interpreter are met without raising:

- an integer of more decimal digits than ``sys.get_int_max_str_digits()`` (4,300 by default) is not
  converted; the process-wide limit is left as it is (changing it would change every thread);
- JSON nested deeper than the stack allows is not read (as text that is not JSON).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ..model.reading import NonFiniteJSONError, NumberTooLargeError, loads_strict

__all__ = [
    "JSON_INVALID",
    "JSON_TOO_DEEP",
    "NUMBER_TOO_LARGE",
    "TOO_MANY_DIGITS",
    "digits_note",
    "read_json",
]

#: Why :func:`read_json` or :func:`typed_value` could not give a value.
JSON_INVALID = "invalid"
JSON_TOO_DEEP = "too deep"
TOO_MANY_DIGITS = "too many digits"
NUMBER_TOO_LARGE = "number too large"


def read_json(text: str) -> tuple[Any, str | None]:
    """``(value, None)`` for strict JSON text (no ``NaN``/``Infinity``), else ``(None, why)``.

    ``why`` is :data:`JSON_INVALID`, :data:`TOO_MANY_DIGITS` (valid JSON holding an integer Python
    will not convert), :data:`NUMBER_TOO_LARGE` (valid JSON holding a number beyond a double's range,
    which Python reads as infinity and no JSON text writes back) or :data:`JSON_TOO_DEEP` (nested
    deeper than the stack allows).
    """
    try:
        return loads_strict(text), None
    except NumberTooLargeError:
        return None, NUMBER_TOO_LARGE
    except (json.JSONDecodeError, NonFiniteJSONError):
        return None, JSON_INVALID
    except ValueError:  # the only other ValueError the decoder raises: int()'s digit limit
        return None, TOO_MANY_DIGITS
    except RecursionError:
        return None, JSON_TOO_DEEP


def digits_note() -> str:
    """How a note names the integers :data:`TOO_MANY_DIGITS` is about (the limit of this process)."""
    limit = getattr(sys, "get_int_max_str_digits", int)()  # (absent before 3.10.7: no limit)
    return f"an integer of more than {limit:,} digits" if limit else "an integer too long to convert"
