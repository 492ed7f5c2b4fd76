"""JSON text exactly as the reference templates produce it.

transformers' ``tojson`` filter is ``json.dumps(x, ensure_ascii=False)``: separators ``", "`` and
``": "``, non-ASCII kept, ``NaN``/``Infinity`` allowed, integer and float keys turned into strings,
lone surrogates passed through. A faster encoder (orjson) differs on several of these, so the
rendering path uses the standard library's C encoder, built once with exactly the options that
``json.dumps`` would build it with on each call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .errors import InvalidInputError

__all__ = ["tojson", "tojson_at"]

#: ``tojson(x) == json.dumps(x, ensure_ascii=False)`` for every ``x`` that ``json.dumps`` accepts.
tojson: Callable[[Any], str] = json.JSONEncoder(ensure_ascii=False).encode


def tojson_at(value: Any, path: str) -> str:
    """``tojson(value)``, raising ``InvalidInputError`` at ``path`` for a value JSON cannot encode."""
    try:
        return tojson(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInputError(path, f"not serialisable as JSON ({exc})") from None
