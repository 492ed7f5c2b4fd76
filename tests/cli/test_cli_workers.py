"""``-j N`` writes what ``-j 1`` writes: the same output and error files, byte for byte, the same exit
status, on generated inputs with bad lines, blank lines and ``--fail-fast``, whatever the block size
(the parent renders some blocks itself and takes the worker processes' others from their spool).

Signals and a worker's death are in test_cli_signals.py and test_cli.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prompt_formats.cli import main
from tests.support.settings import budget

TOOL = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}

text = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\x85\u2028\u2029"), max_size=30)


@st.composite
def lines(draw: st.DrawFn) -> str:
    """One input line: a good record (with or without an id or tools), a bad one, or a blank line."""
    kind = draw(st.sampled_from(["good", "good", "good", "id", "tools", "not json", "bad message", "blank"]))
    if kind == "not json":
        return "{not json"
    if kind == "blank":
        return draw(st.sampled_from(["", "  ", "\t"]))
    record: dict[str, object] = {"messages": [{"role": "user", "content": draw(text)}]}
    if kind == "bad message":
        record["messages"] = [{"role": "user", "content": draw(st.integers())}]
    elif kind == "id":
        record["id"] = draw(text)
    elif kind == "tools":
        record["tools"] = [TOOL]
    return json.dumps(record, ensure_ascii=draw(st.booleans()))


def run(path: Path, out: Path, workers: int, block_size: int, fail_fast: bool) -> tuple[int, bytes | None, bytes]:
    """The command's exit status, output (``None``: none written) and error report, run in this process."""
    errors = out.with_suffix(".errors")
    argv = ["render", "-f", "chatml-multi-system", "-q", "-j", str(workers), "--block-size", str(block_size),
            "-o", str(out), "--errors", str(errors), str(path)]
    status = main([*argv, "--fail-fast"] if fail_fast else argv)
    return status, out.read_bytes() if out.exists() else None, errors.read_bytes()


@budget(0.05, floor=4)
@given(
    st.lists(lines(), max_size=60),
    st.integers(1, 600),
    st.sampled_from([2, 3]),
    st.booleans(),
)
def test_workers_write_what_one_process_writes(
    tmp_path_factory: pytest.TempPathFactory, records: list[str], block_size: int, workers: int, fail_fast: bool
) -> None:
    folder = tmp_path_factory.mktemp("records")
    path = folder / "in.jsonl"
    path.write_text("".join(line + "\n" for line in records), encoding="utf-8")
    one = run(path, folder / "one.jsonl", 1, block_size, fail_fast)
    several = run(path, folder / "several.jsonl", workers, block_size, fail_fast)
    assert several == one
    assert one[0] == (1 if any(map(_fails, records)) else 0)


def _fails(line: str) -> bool:
    """Whether ``line`` is a generated bad line: not JSON, or a message whose content is a number."""
    if not line.strip():
        return False
    try:
        record = json.loads(line)
    except ValueError:
        return True
    return isinstance(record["messages"][0]["content"], int)
