"""Which tests need which oracle: the markers, and the check that keeps them true.

A test that runs a reference engine carries that engine's marker (registered in pyproject.toml):

- ``jinja``: Jinja2 configured as transformers configures it (:mod:`tests.support.oracles`);
- ``transformers``: transformers itself — its tokenizers, its ``apply_chat_template`` (whose Jinja2
  the marker covers too);
- ``go``: Go's ``text/template`` as Ollama runs it (:mod:`tests.support.harmony_oracle`);
- ``openai_harmony``: OpenAI's openai-harmony renderer and parser;
- ``ray``: a local Ray cluster.

Each also gets ``oracle``. The quick tier (``PF_TEST_TIER=quick``, ``scripts/test.sh --quick``)
deselects every ``oracle`` test (``tests/conftest.py``).

The markers are checked where the engines run, in every tier: :func:`install` wraps each engine's
entry points (Jinja2's ``Template.render``/``generate``/``stream``/``module``, a transformers
tokenizer's construction, ``apply_chat_template``, ``__call__``, ``encode`` and ``decode``,
``openai_harmony.load_harmony_encoding``, ``ray.init``), and the Go oracle and
:func:`tests.support.oracles.harmony_encoding` call :func:`require` themselves. Run inside a test
that lacks the marker, an entry point fails that test (``pytest.fail``, which no ``except
Exception`` in a test swallows); ``tests/contract/test_oracle_marks.py`` proves the wrapping is in
place. So the default tier finds a missing marker on every engine call made in the test's own
process, and the quick tier cannot start an engine there. Outside a test (a module run at
collection) an engine may run in the full tiers; in the quick tier it is an error, so a module
cannot hide an engine in its import.

Not checked: an engine a child process runs (the command run as a subprocess, worker processes):
such a test is marked by hand, for the engine its setup uses (a tokenizer built for the command's
``--tokenizer`` is built here, and checked).
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from .tier import TIER

#: The engines, each with what it is (for the failure's message).
ORACLES = {
    "jinja": "Jinja2 as transformers configures it",
    "transformers": "transformers (tokenizers, apply_chat_template)",
    "go": "Go's text/template as Ollama runs it",
    "openai_harmony": "OpenAI's openai-harmony",
    "ray": "a local Ray cluster",
}

#: What each marker allows beyond itself: transformers renders its templates with Jinja2.
_IMPLIES = {"transformers": {"jinja"}}

#: The markers of the test running in this process, or None between tests.
_current: frozenset[str] | None = None


def allowed(markers: Sequence[str]) -> frozenset[str]:
    """The engines a test with ``markers`` may run."""
    names = set(markers)
    for name in markers:
        names |= _IMPLIES.get(name, set())
    return frozenset(names & ORACLES.keys())


def enter(markers: Sequence[str]) -> None:
    """A test starts (its setup, call and teardown follow)."""
    global _current
    _current = allowed(markers)


def leave() -> None:
    """The test has ended."""
    global _current
    _current = None


def require(oracle: str) -> None:
    """Fail the running test unless it is marked for ``oracle``; in the quick tier, refuse any use."""
    if _current is None:
        if TIER == "quick":
            raise RuntimeError(f"the quick tier runs no oracle; {ORACLES[oracle]} ran outside a test (at import?)")
        return
    if oracle not in _current:
        import pytest  # only here: the benchmarks import the oracles' support code without pytest

        pytest.fail(f"this test runs {ORACLES[oracle]} but is not marked @pytest.mark.{oracle}", pytrace=False)


def _guarded(function: Callable[..., Any], oracle: str) -> Callable[..., Any]:
    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        require(oracle)
        return function(*args, **kwargs)

    return checked


def _wrap(owner: Any, names: Sequence[str], oracle: str) -> None:
    for name in names:
        setattr(owner, name, _guarded(getattr(owner, name), oracle))


#: module name -> the entry points wrapped in it (on the class, for the first two).
WRAPPED: dict[str, tuple[str, ...]] = {
    "jinja2.environment": ("render", "generate", "stream", "make_module", "render_async", "generate_async"),
    "transformers.tokenization_utils_base": ("__init__", "apply_chat_template", "__call__", "encode", "decode"),
    "openai_harmony": ("load_harmony_encoding",),
    "ray": ("init",),
}

#: module name -> how its entry points are wrapped once it is imported.
_ENTRY_POINTS: dict[str, Callable[[ModuleType], None]] = {
    "jinja2.environment": lambda m: _wrap(m.Template, WRAPPED["jinja2.environment"], "jinja"),
    "transformers.tokenization_utils_base": lambda m: _wrap(
        m.PreTrainedTokenizerBase, WRAPPED["transformers.tokenization_utils_base"], "transformers"),
    "openai_harmony": lambda m: _wrap(m, WRAPPED["openai_harmony"], "openai_harmony"),
    "ray": lambda m: _wrap(m, WRAPPED["ray"], "ray"),
}


class _Loader(importlib.abc.Loader):
    """Loads a module with its own loader, then wraps its entry points."""

    def __init__(self, inner: importlib.abc.Loader, patch: Callable[[ModuleType], None]) -> None:
        self._inner, self._patch = inner, patch

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._inner.exec_module(module)
        self._patch(module)

    def __getattr__(self, name: str) -> Any:  # the rest of the loader's interface (resources, source)
        if name.startswith("__") or name in ("_inner", "_patch"):  # copy, pickle: not the inner loader's
            raise AttributeError(name)
        return getattr(self._inner, name)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds an engine's module with the other finders and hands it to :class:`_Loader`."""

    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        patch = _ENTRY_POINTS.get(name)
        if patch is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader, patch)
                return spec
        return None


def install() -> None:
    """Wrap the engines' entry points: now for those imported already, on import for the others."""
    if any(isinstance(finder, _Finder) for finder in sys.meta_path):
        return
    for name, patch in _ENTRY_POINTS.items():
        if name in sys.modules:
            patch(sys.modules[name])
    sys.meta_path.insert(0, _Finder())
