"""``mypyc_attr`` for the compiled build's classes, without making mypy a runtime dependency.

mypyc reads the decorator where it compiles a class (``allow_interpreted_subclasses=True`` lets a
format written in plain Python subclass a compiled base); where ``mypy_extensions`` is missing, the
decorator changes nothing. This module is never compiled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["mypyc_attr"]

_C = TypeVar("_C")

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover - the pure build without mypy installed

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Callable[[_C], _C]:  # type: ignore[misc,unused-ignore]
        """The class unchanged."""
        del attrs, kwattrs

        def unchanged(cls: _C) -> _C:
            return cls

        return unchanged
