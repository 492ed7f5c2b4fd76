"""The date both Harmony templates print: a ``current_date`` string read as a real ``YYYY-MM-DD`` date."""

from __future__ import annotations

import datetime
import functools
import re

from ...errors import InvalidInputError

__all__ = ["date_from_string"]

_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


# Cached: the same date string comes on every render.
@functools.lru_cache(maxsize=256)
def date_from_string(value: str) -> str:
    """``value`` if it is a real ``YYYY-MM-DD`` date; else an :class:`InvalidInputError` at ``current_date``."""
    if _DATE_RE.fullmatch(value):
        try:
            datetime.date.fromisoformat(value)
        except ValueError:
            pass
        else:
            return value
    raise InvalidInputError("current_date", f"expected a 'YYYY-MM-DD' date, got {value!r}")
