"""``PROMPT_FORMATS_PURE=1``: the package's ``.py`` sources loaded instead of its compiled modules.

The compiled build (``PROMPT_FORMATS_COMPILE=1 pip install .``) places each compiled module's C
extension beside its ``.py`` source, and the import system prefers the extension. For comparing the
two builds in one installation, :func:`install` puts a finder first on ``sys.meta_path`` that
loads every module of the package from its source file. This module and the package's
``__init__.py`` are never compiled, so the choice is made before any compiled code is loaded.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["install", "is_compiled"]

_PACKAGE = __name__.rpartition(".")[0]


class SourceFinder(importlib.abc.MetaPathFinder):
    """Finds the package's modules as ``.py`` files only, never as extension modules."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """The spec of ``fullname``'s source file, for a module of the package; ``None`` for any other."""
        if not fullname.startswith(_PACKAGE + ".") or path is None:
            return None
        leaf = fullname.rpartition(".")[2]
        for entry in path:
            package_init = os.path.join(entry, leaf, "__init__.py")
            if os.path.isfile(package_init):
                return importlib.util.spec_from_file_location(
                    fullname, package_init, submodule_search_locations=[os.path.join(entry, leaf)]
                )
            module = os.path.join(entry, leaf + ".py")
            if os.path.isfile(module):
                return importlib.util.spec_from_file_location(fullname, module)
        return None


def install() -> None:
    """Load the package's modules from their sources from now on (idempotent)."""
    if not any(isinstance(finder, SourceFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, SourceFinder())


def is_compiled(package_path: Sequence[str]) -> bool:
    """Whether the package's hottest module would be loaded as a compiled extension."""
    if any(isinstance(finder, SourceFinder) for finder in sys.meta_path):
        return False
    text_path = [os.path.join(entry, "_text") for entry in package_path]
    spec = importlib.machinery.PathFinder.find_spec(_PACKAGE + "._text.tojson", text_path)
    return spec is not None and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader)
