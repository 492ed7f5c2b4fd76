"""The build backend: setuptools', with mypy and what it reads added to the build environment for a compiled build.

``PROMPT_FORMATS_COMPILE=1 pip install .`` runs ``setup.py`` under mypyc, which comes with mypy.
mypyc type-checks the package first, so it needs the types of the runtime dependencies the package
imports: ``attrs`` and ``orjson`` (which carry their own) and ``types-regex`` (``regex`` has none).
pip builds in an isolated environment holding only what the backend asks for, so the backend asks
for all of these (and ``wheel``, for setuptools releases without their own ``bdist_wheel``) when that
variable is set; a pure build asks for setuptools alone, as before. Everything else is setuptools'.
"""

from __future__ import annotations

import os
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (the backend's hooks, re-exported unchanged)

#: What a compiled build needs beyond setuptools: mypyc ships with mypy, which type-checks the package
#: against the runtime dependencies' types (pyproject.toml's ``dependencies``, stubs for ``regex``).
COMPILE_REQUIRES = ["mypy>=1.10", "wheel", "attrs>=23.1", "orjson>=3.9", "types-regex"]


def _compiling() -> bool:
    return os.environ.get("PROMPT_FORMATS_COMPILE", "") not in ("", "0")


# setuptools finds its requirements by running setup.py, which imports mypyc when compiling: before
# mypy is installed. setup.py declares no setup_requires, so a compiled build's list is ours alone.


def get_requires_for_build_wheel(config_settings: Any = None) -> list[str]:
    """setuptools' requirements for a wheel; ``COMPILE_REQUIRES`` instead when the build compiles."""
    return list(COMPILE_REQUIRES) if _compiling() else _setuptools.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_editable(config_settings: Any = None) -> list[str]:
    """setuptools' requirements for an editable install; ``COMPILE_REQUIRES`` instead when the build compiles."""
    return list(COMPILE_REQUIRES) if _compiling() else _setuptools.get_requires_for_build_editable(config_settings)
