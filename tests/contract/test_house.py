"""The house rules the package keeps as it grows: sizes, and the import paths its documents promise.

Every function in ``prompt_formats/`` is at most 60 lines, and a module past 800 is a smell to explain (read from
the AST, so a docstring counts and a blank line after the function does not); every import path
README.md, docs/guide.md and CHANGELOG.md mention (``from prompt_formats… import …`` and dotted
``prompt_formats.x.y`` names) imports. The command (``prompt_formats/cli/``) is imported by nothing
outside it and imports the library only through its public modules (docs/contributing.md, "The
command"); imports are read from the AST, function-level ones included. No module names a
benchmark script. Each template's role openers are written by one module of its package, its walk.
The package imports its own modules at the top, but for the listed lazy imports that keep startup light.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "prompt_formats"
MAX_FUNCTION_LINES = 60
#: One concept a module: this is where a module becomes a smell; it is not a target to split at.
MAX_MODULE_LINES = 800
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
def test_modules_are_at_most_800_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{_relative(path)}: {lines} lines"


# A benchmark script's name in the library goes stale when the benchmarks change; the benchmark
# names the fast path its row measures, the library says why the fast path exists.
_BENCHMARK_NAME = re.compile(r"benchmarks/|\b(?:bench|ab|floor)_\w+\.py|\brun_all\b")


def test_the_benchmark_name_check_can_fail() -> None:
    assert _BENCHMARK_NAME.search("# wins the agent rows of bench_gpt_oss.py")
    assert _BENCHMARK_NAME.search("(``benchmarks/run.py``)")
    assert not _BENCHMARK_NAME.search("# the guard's fast path, as in render")


@pytest.mark.parametrize("path", [*MODULES, ROOT / "setup.py"], ids=_relative)
def test_no_module_names_a_benchmark_script(path: Path) -> None:
    found = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if _BENCHMARK_NAME.search(line)]
    assert found == [], _relative(path)


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
    text = "```python\nfrom prompt_formats.model.tools import (\n    prepare_tools,\n" \
           "    PreparedTools as P,\n)\n```\n" \
           "see `prompt_formats.format.batch.iter_render` and prompt_formats/format/chat_format.py"
    assert documented_imports(text) == {
        ("prompt_formats.model.tools", "prepare_tools"), ("prompt_formats.model.tools", "PreparedTools"),
        ("prompt_formats.model.tools", None), ("prompt_formats.format.batch.iter_render", None),
    }
    with pytest.raises(AttributeError):
        resolve("prompt_formats.format.batch.no_such_name", None)


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


# ---------------------------------------------------------------------------------------------------
# The import graph, read statically: every ``import`` and ``from … import`` of every module, at any
# depth (a function-level import is a dependency all the same).

COMMAND = "prompt_formats.cli"
#: What the command reaches through the registry and never imports: the formats' and the guard's code.
NOT_FOR_THE_COMMAND = ("prompt_formats.formats", "prompt_formats.guard")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported_by(nodes: Iterable[ast.AST], module: str, is_package: bool) -> set[str]:
    """The ``prompt_formats`` modules the import statements among ``nodes`` (of the module ``module``) name.

    ``from X import name`` counts as ``X.name`` when that is a module of the package, else as ``X``.
    """
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.update(f"{target}.{alias.name}" if f"{target}.{alias.name}" in MODULE_NAMES else target
                         for alias in node.names)
    return {name for name in found if name == "prompt_formats" or name.startswith("prompt_formats.")}


def imported_modules(source: str, module: str, is_package: bool) -> set[str]:
    """The ``prompt_formats`` modules that ``source`` (the module ``module``) imports, anywhere in it."""
    return _imported_by(ast.walk(ast.parse(source)), module, is_package)


MODULE_NAMES = {module_name(path) for path in MODULES}
IMPORTS = {module_name(path): imported_modules(path.read_text("utf-8"), module_name(path), path.name == "__init__.py")
           for path in MODULES}


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_the_import_reader_sees_every_form() -> None:
    source = ("import prompt_formats.errors\nfrom . import tools\nfrom .records import decode_record\n"
              "def f():\n    from ..format.spans import RenderedPrompt\n    import json\n")
    assert imported_modules(source, "prompt_formats.cli.spans", False) == {
        "prompt_formats.errors", "prompt_formats.cli", "prompt_formats.cli.records", "prompt_formats.format.spans",
    }
    assert imported_modules("from .model import tools", "prompt_formats", True) == {"prompt_formats.model.tools"}
    assert imported_modules("from .jsonl import x", "prompt_formats.records", True) == {"prompt_formats.records.jsonl"}


def test_nothing_outside_the_command_imports_it() -> None:
    assert COMMAND in MODULE_NAMES
    offenders = sorted(f"{module} imports {name}" for module, names in IMPORTS.items()
                       if not _within(module, COMMAND) for name in names if _within(name, COMMAND))
    # The one exception: ``python -m prompt_formats`` runs the command.
    assert offenders == ["prompt_formats.__main__ imports prompt_formats.cli"]


def test_the_command_imports_only_the_public_library() -> None:
    reached = {name for module, names in IMPORTS.items() if _within(module, COMMAND)
               for name in names if not _within(name, COMMAND)}
    private = sorted(name for name in reached if any(part.startswith("_") for part in name.split(".")))
    internal = sorted(name for name in reached if any(_within(name, package) for package in NOT_FOR_THE_COMMAND))
    assert "prompt_formats.records" in reached  # the scan did read the command
    assert (private, internal) == ([], [])


def test_the_guard_knows_no_format() -> None:
    # A lower layer: each format hands it its tokens and its reading (prompt_formats.guard.vocabulary).
    guard = {module: names for module, names in IMPORTS.items() if _within(module, "prompt_formats.guard")}
    assert guard.get("prompt_formats.guard.core")  # the scan read it
    reached = sorted(f"{module} imports {name}" for module, names in guard.items() for name in names
                     if _within(name, "prompt_formats.formats") or _within(name, "prompt_formats.format.chat_format"))
    assert reached == []


#: The package's layers, in order: a module imports only from its own layer or those before it
#: (docs/contributing.md, "The layout"). ``errors`` and the package's own ``__init__`` and ``_pure``
#: stand apart: every layer may raise the errors; the public face imports any layer lazily.
LAYERS = ("errors", "_text", "model", "replies", "serving", "guard", "format", "formats", "records",
          "integrations", "cli", "__main__")


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_import_goes_up_the_layers() -> None:
    assert {_layer(module) for module in IMPORTS} - {"__init__", "_pure"} == set(LAYERS)
    back = sorted(f"{module} imports {name}" for module, names in IMPORTS.items() if _layer(module) in LAYERS
                  for name in names if _layer(name) in LAYERS
                  and LAYERS.index(_layer(name)) > LAYERS.index(_layer(module)))
    assert back == []


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of two or more modules (or one importing itself), sorted: the loops."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(start: str) -> None:
        # Tarjan's algorithm with an explicit stack of (module, its remaining imports).
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1 or node in graph.get(node, ()):
                        groups.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(groups)


def test_the_cycle_finder_finds_loops() -> None:
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_cycles({"a": {"a"}, "b": set()}) == [["a"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_the_package_imports_itself_back() -> None:
    # Every import counts, at module level, in a function or under TYPE_CHECKING: a loop is a loop.
    # the scan sees function-level imports
    assert "prompt_formats.format.batch" in IMPORTS["prompt_formats.format.chat_format"]
    assert import_cycles(IMPORTS) == []
    assert not IMPORTS["prompt_formats.format.interface"] & {
        "prompt_formats.format.batch", "prompt_formats.format.session"}


# One walk per template: the markers that open a role's text are written by one module of each
# template's package (its walk); elsewhere they are only compared with (a piece recognised by its
# marker) or measured (``len``). tokens.py and texts.py spell them (docs/contributing.md, "One walk
# per template").
ROLE_OPENERS = {
    "formats/chatml": {"SYSTEM_TURN", "USER_TURN", "ASSISTANT_TURN", "ASSISTANT_THINKING", "TOOL_RESPONSE_FIRST",
                       "TOOL_RESPONSE_NEXT", "TOOLS_HEADER"},
    "formats/chatml/json_calls": {"SYSTEM_TURN", "ASSISTANT_TURN", "ASSISTANT_THINKING", "JSON_TOOL_RUN_OPEN"},
    "formats/harmony/ollama": {"SYSTEM_START", "USER", "ANALYSIS", "FINAL", "PYTHON_RESULT"},
    "formats/harmony/openai": {"SYSTEM", "DEVELOPER", "USER", "ANALYSIS", "FINAL", "CALL_HEAD", "RESULT_HEAD"},
}
#: Each template's walk, and the second writers not yet folded into it (each must still be one, so
#: that an entry cannot outlive its reason).
WALKS = {"formats/chatml": "render.py", "formats/chatml/json_calls": "render.py", "formats/harmony/ollama": "render.py",
         "formats/harmony/openai": "render.py"}
SECOND_WRITERS = {
    "formats/chatml/lean.py": "the fast path of the seeds' usual input, a second writer of their template",
}
_SPELLERS = {"tokens.py", "texts.py"}


def written_markers(source: str, markers: set[str]) -> set[str]:
    """The ``markers`` (names, or attributes such as ``t.USER``) ``source`` uses otherwise than in a
    comparison, in ``len(...)`` or as an assignment's target: those it writes."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = set()
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name not in markers or isinstance(getattr(node, "ctx", None), ast.Store):
            continue
        parent = parents.get(node)
        measured = isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len"
        if not isinstance(parent, ast.Compare) and not measured:
            found.add(name)
    return found


def test_the_writer_check_can_fail() -> None:
    markers = {"USER", "FINAL"}
    assert written_markers("out += (USER, text, END)\nx = t.FINAL + 'x'\n", markers) == {"USER", "FINAL"}
    assert written_markers("if out[0] is USER or len(FINAL) > 2:\n    pass\nUSER = 'u'\n", markers) == set()


@pytest.mark.parametrize("package", sorted(ROLE_OPENERS))
def test_one_module_of_a_template_writes_its_roles(package: str) -> None:
    writers = sorted(
        path.name for path in (PACKAGE / package).glob("*.py")
        if path.name not in _SPELLERS and written_markers(path.read_text(encoding="utf-8"), ROLE_OPENERS[package])
        and f"{package}/{path.name}" not in SECOND_WRITERS
    )
    assert writers == [WALKS[package]]


@pytest.mark.parametrize("module", sorted(SECOND_WRITERS))
def test_each_known_second_writer_still_writes(module: str) -> None:
    package = module.rsplit("/", 1)[0]
    assert written_markers((PACKAGE / module).read_text(encoding="utf-8"), ROLE_OPENERS[package])


# A module of the package imports the package's modules at its top, as lower layers: no import inside
# a function to dodge a cycle. The exceptions keep heavy modules out of what a caller that does not
# need them imports (the command's startup: tests/cli/test_command_imports.py); each must still be
# there, so the list cannot outlive its reasons.
LAZY_IMPORTS = {
    ("prompt_formats.cli", "prompt_formats.format.batch"): "worker processes: only with -j",
    ("prompt_formats.cli.settings", "prompt_formats.cli.tokenizer"): "--tokenizer only",
    ("prompt_formats.cli.settings", "prompt_formats.cli.spans"): "--spans only",
    ("prompt_formats.cli.spans", "prompt_formats.integrations.segments"): "--tokenizer's encoder only",
    ("prompt_formats.cli.tokenizer", "prompt_formats.format.detect"): "a format found by its template only",
    ("prompt_formats.format.chat_format", "prompt_formats.format.batch"): "render_batch and parse_batch only",
    ("prompt_formats.integrations.transformers", "prompt_formats.format.detect"): "a format found by its template",
    ("prompt_formats.records.toolsets", "prompt_formats.model.tools"): "a toolset cache only where one is made",
}


def function_level_imports(source: str, module: str, is_package: bool) -> set[str]:
    """The ``prompt_formats`` modules ``source`` imports inside a function (or method)."""
    functions = [node for node in ast.walk(ast.parse(source))
                 if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    return _imported_by((node for function in functions for node in ast.walk(function)), module, is_package)


def test_the_function_level_reader_sees_only_functions() -> None:
    source = "from .tools import x\ndef f():\n    if x:\n        from ..format import batch\n"
    assert function_level_imports(source, "prompt_formats.cli.spans", False) == {"prompt_formats.format.batch"}


def test_the_package_imports_its_modules_at_the_top() -> None:
    found = {(module_name(path), name) for path in MODULES
             for name in function_level_imports(path.read_text("utf-8"), module_name(path), path.name == "__init__.py")}
    assert sorted(found - set(LAZY_IMPORTS)) == []
    assert sorted(set(LAZY_IMPORTS) - found) == []
