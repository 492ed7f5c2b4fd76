"""The house rules the package keeps as it grows: sizes, and the import paths its documents promise.

Every function in ``prompt_formats/`` is at most 60 lines and every module at most 450 (read from
the AST, so a docstring counts and a blank line after the function does not); every import path
README.md, docs/guide.md and CHANGELOG.md mention (``from prompt_formats… import …`` and dotted
``prompt_formats.x.y`` names) imports.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "prompt_formats"
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 450
DOCUMENTS = ("README.md", "docs/guide.md", "CHANGELOG.md")

MODULES = sorted(PACKAGE.rglob("*.py"))

_FROM_IMPORT = re.compile(r"from\s+(prompt_formats(?:\.\w+)*)\s+import\s+(\([^)]*\)|[\w ,]+)")
_DOTTED = re.compile(r"(?<![\w./])prompt_formats(?:\.\w+)+")


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """``name (N lines)`` for every function or method in ``source`` longer than ``limit`` lines."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - first + 1
            if length > limit:
                found.append(f"{node.name} ({length} lines)")
    return found


def test_the_size_check_can_fail() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    assert long_functions(f"def f():\n{body}\n") == [f"f ({MAX_FUNCTION_LINES + 1} lines)"]
    assert long_functions(f"class C:\n  @staticmethod\n  def g():\n{body}\n") == [f"g ({MAX_FUNCTION_LINES + 2} lines)"]
    assert long_functions("def f():\n    return 1\n") == []


@pytest.mark.parametrize("path", MODULES, ids=_relative)
def test_functions_are_at_most_60_lines(path: Path) -> None:
    assert long_functions(path.read_text(encoding="utf-8")) == [], _relative(path)


@pytest.mark.parametrize("path", MODULES, ids=_relative)
def test_modules_are_at_most_450_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{_relative(path)}: {lines} lines"


def documented_imports(text: str) -> set[tuple[str, str | None]]:
    """``(module, name)`` for each ``from module import name``; ``(dotted, None)`` for each dotted name."""
    found: set[tuple[str, str | None]] = set()
    for module, names in _FROM_IMPORT.findall(text):
        for name in names.strip("()").replace("\n", " ").split(","):
            name = name.split(" as ")[0].strip()
            if name and not name.startswith("#"):
                found.add((module, name))
    for dotted in _DOTTED.findall(text):
        found.add((dotted, None))
    return found


def resolve(module: str, name: str | None) -> object:
    """The object ``from module import name`` binds, or the one a dotted ``module`` names (module or attribute)."""
    if name is not None:
        return getattr(importlib.import_module(module), name)
    parts = module.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            target = getattr(target, attribute)
        return target
    raise ModuleNotFoundError(module)


def test_the_document_scan_finds_both_forms() -> None:
    text = "```python\nfrom prompt_formats.tools import (\n    prepare_tools,\n    PreparedTools as P,\n)\n```\n" \
           "see `prompt_formats.batch.iter_render` and prompt_formats/format.py"
    assert documented_imports(text) == {
        ("prompt_formats.tools", "prepare_tools"), ("prompt_formats.tools", "PreparedTools"),
        ("prompt_formats.tools", None), ("prompt_formats.batch.iter_render", None),
    }
    with pytest.raises(AttributeError):
        resolve("prompt_formats.batch.no_such_name", None)


DOCUMENTED = sorted(
    {(document, *found) for document in DOCUMENTS
     for found in documented_imports((ROOT / document).read_text("utf-8"))},
    key=str,
)


def test_the_documents_mention_import_paths() -> None:
    assert {document for document, _, _ in DOCUMENTED} == set(DOCUMENTS)


@pytest.mark.parametrize(("document", "module", "name"), DOCUMENTED, ids=lambda value: str(value))
def test_documented_import_paths_import(document: str, module: str, name: str | None) -> None:
    assert resolve(module, name) is not None, (document, module, name)
