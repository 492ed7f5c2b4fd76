"""Every Python block of README.md and docs/*.md runs, and every value a block shows is what the code gives.

Conventions for the documentation's fenced blocks (the collector below enforces them):

- A block opened with ```` ```python ```` is run. The blocks of one file run in order in one namespace
  (a later block uses the names an earlier one defined), in the repository's root directory.
- A value is shown by an expression statement followed, on its last line, by ``# → EXPECTED``.
  EXPECTED must equal ``repr()`` of the value, where ``…`` stands for any text (random ids, the
  middle of a long prompt; spaces next to it do not count). A long EXPECTED goes on over the next
  comment-only lines whose ``#`` is in the same column; they are joined with one space.
- An expression statement whose value is not ``None`` may not carry any other trailing comment: a
  value written in a comment that nothing checks is how snippets drift from the code.
- ```` ```python no-run ```` marks a block that needs what the test suite does not have (a cloud
  bucket); it is compiled, not run. Each one is listed in ``NO_RUN``, so adding one is a decision.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path
from typing import Any

import attrs
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])

#: The blocks that are compiled but not run: (document, the block's first line), with the reason.
NO_RUN = {
    ("docs/guide.md", "import ray"):
        "reads from and writes to an S3 bucket; tests/batch/test_ray.py runs the same calls",
}

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
ARROW = "# →"


@attrs.frozen
class Block:
    document: str  # path relative to the repository root
    first_line: int  # line number, in the document, of the block's first line of code
    info: tuple[str, ...]  # the fence's info string: language, then modifiers
    source: str


def python_blocks(document: str, text: str) -> list[Block]:
    """The ``python`` fenced blocks of a Markdown text, in order."""
    blocks = []
    for match in FENCE.finditer(text):
        info = tuple(match.group(1).split())
        if info and info[0] == "python":
            first_line = text.count("\n", 0, match.start(2)) + 1
            blocks.append(Block(document, first_line, info, match.group(2)))
    return blocks


def expectations(block: Block) -> dict[int, str]:
    """``{document line of a statement's last line: EXPECTED}`` for every ``# →`` comment of ``block``."""
    lines = block.source.splitlines()
    comments = {
        token.start[0]: token
        for token in tokenize.generate_tokens(io.StringIO(block.source).readline)
        if token.type == tokenize.COMMENT
    }
    found = {}
    for row, token in comments.items():
        if not token.string.startswith(ARROW) or lines[row - 1][: token.start[1]].strip() == "":
            continue  # not a shown value, or a continuation line (read below)
        parts = [token.string[len(ARROW):].strip()]
        column, next_row = token.start[1], row + 1
        while next_row in comments and comments[next_row].start[1] == column \
                and lines[next_row - 1][:column].strip() == "":
            parts.append(comments[next_row].string[1:].strip())
            next_row += 1
        found[row + block.first_line - 1] = " ".join(parts)
    return found


def trailing_comments(block: Block) -> dict[int, str]:
    """``{document line: comment}`` for every comment that follows code on its line."""
    lines = block.source.splitlines()
    return {
        token.start[0] + block.first_line - 1: token.string
        for token in tokenize.generate_tokens(io.StringIO(block.source).readline)
        if token.type == tokenize.COMMENT and lines[token.start[0] - 1][: token.start[1]].strip()
    }


def matches(expected: str, actual: str) -> bool:
    pattern = ".*?".join(re.escape(piece) for piece in re.split(r"\s*…\s*", expected))
    return re.fullmatch(pattern, actual, re.S) is not None


def run_block(block: Block, namespace: dict[str, Any]) -> int:
    """Run ``block`` statement by statement in ``namespace``; check its shown values; how many it checked."""
    tree = ast.parse(block.source, filename=block.document)
    ast.increment_lineno(tree, block.first_line - 1)  # tracebacks and messages name the document's lines
    shown = expectations(block)
    comments = trailing_comments(block)
    checked = 0
    for statement in tree.body:
        line = statement.end_lineno or statement.lineno
        where = f"{block.document}:{line}"
        if not isinstance(statement, ast.Expr):
            exec(compile(ast.Module([statement], []), block.document, "exec"), namespace)
            continue
        value = eval(compile(ast.Expression(statement.value), block.document, "eval"), namespace)
        if line in shown:
            expected = shown.pop(line)
            assert matches(expected, repr(value)), f"{where}: shows\n  {expected}\nbut the code gives\n  {value!r}"
            checked += 1
        else:
            assert value is None or line not in comments, (
                f"{where}: the comment {comments[line]!r} follows a value that nothing checks; "
                f"show the value as '{ARROW} {value!r}'"
            )
    assert not shown, f"{block.document}: '{ARROW}' not after an expression statement, lines {sorted(shown)}"
    return checked


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def blocks_of(path: Path) -> list[Block]:
    return python_blocks(relative(path), path.read_text(encoding="utf-8"))


@pytest.mark.transformers
@pytest.mark.parametrize("path", [path for path in DOCUMENTS if blocks_of(path)], ids=relative)
def test_python_blocks_run_and_show_what_the_code_gives(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    document = relative(path)
    blocks = blocks_of(path)
    monkeypatch.chdir(ROOT)
    namespace: dict[str, Any] = {"__name__": f"doc:{document}"}
    for block in blocks:
        key = (document, block.source.splitlines()[0])
        if "no-run" in block.info:
            assert key in NO_RUN, f"{document}:{block.first_line}: a no-run block not listed in NO_RUN"
            compile(block.source, document, "exec")
        else:
            assert set(block.info) == {"python"}, f"{document}:{block.first_line}: unknown modifier {block.info}"
            assert key not in NO_RUN, f"{document}:{block.first_line}: runs now; remove it from NO_RUN"
            run_block(block, namespace)


def test_every_no_run_block_exists() -> None:
    present = {
        (block.document, block.source.splitlines()[0])
        for path in DOCUMENTS for block in blocks_of(path) if "no-run" in block.info
    }
    assert present == set(NO_RUN)


def test_python_is_fenced_only_as_python() -> None:
    # A block fenced as ```py or ```pycon would not be collected, so would not be checked.
    other = {
        (relative(path), match.group(1))
        for path in DOCUMENTS
        for match in FENCE.finditer(path.read_text(encoding="utf-8"))
        if match.group(1).split()[:1] != ["python"] and "py" in match.group(1).lower()
    }
    assert not other


def test_the_docs_show_values_that_are_checked() -> None:
    # Guards the collector itself: if it stopped finding the blocks or their '# →' values, this fails.
    counts = {
        name: sum(len(expectations(block)) for block in blocks_of(ROOT / name))
        for name in ("README.md", "docs/parsing.md", "docs/safety.md")
    }
    assert all(count >= 2 for count in counts.values()), counts


# --- The collector can fail. ------------------------------------------------------------------------

SAMPLE = '''Text.

```python
value = {"a": [1, 2], "id": "call_3f9a"}
value        # → {'a': [1, 2],
             #    'id': 'call_…'}
len(value)   # → 2
```

```sh
echo not python
```

```python
value["a"]   # → [1, 2]
```
'''


def run_sample(text: str) -> int:
    namespace: dict[str, Any] = {}
    return sum(run_block(block, namespace) for block in python_blocks("sample.md", text))


def test_the_collector_checks_shown_values_across_blocks() -> None:
    assert run_sample(SAMPLE) == 3


@pytest.mark.parametrize(("written", "drifted", "message"), [
    ("len(value)   # → 2", "len(value)   # → 3", "sample.md:7: shows"),
    ("'id': 'call_…'}", "'id': 'call_0'}", "sample.md:5: shows"),
    ('value["a"]   # → [1, 2]', 'value["a"]   # [1, 2]', "follows a value that nothing checks"),
    ("len(value)   # → 2", "n = len(value)   # → 2", "not after an expression statement"),
])
def test_the_collector_fails_on_drift(written: str, drifted: str, message: str) -> None:
    assert SAMPLE.count(written) == 1
    with pytest.raises(AssertionError, match=re.escape(message)):
        run_sample(SAMPLE.replace(written, drifted))


def test_a_block_that_raises_fails() -> None:
    with pytest.raises(NameError, match="full_text"):
        run_sample("```python\nfull_text\n```\n")
