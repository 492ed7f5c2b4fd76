"""``-j N`` writes what ``-j 1`` writes: the same output and error files, byte for byte, the same exit
status, on generated inputs with bad lines, blank lines, byte-order marks and ``--fail-fast``,
whatever the block size
(the parent renders some blocks itself and takes the worker processes' others from their spool).

Signals and a worker's death are in test_cli_signals.py and test_cli.py.
"""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prompt_formats.cli import BlockReader, FileRange, main
from tests.support.settings import budget

TOOL = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}

text = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\x85\u2028\u2029"), max_size=30)


@st.composite
def lines(draw: st.DrawFn) -> str:
    """One input line: a good record (with or without an id or tools), a bad one, or a blank line."""
    kind = draw(st.sampled_from(["good", "good", "good", "id", "tools", "not json", "bad message", "blank", "bom"]))
    if kind == "bom":  # skipped at the start of the file, an error anywhere else
        return "\ufeff" + json.dumps({"messages": [{"role": "user", "content": draw(text)}]})
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
    bom_first = bool(records) and records[0].startswith("\ufeff")
    assert one[0] == (1 if any(map(_fails, records[1:] if bom_first else records)) or (
        bom_first and _fails(records[0][1:])) else 0)


def _fails(line: str) -> bool:
    """Whether ``line`` is a generated bad line: not JSON, or a message whose content is a number."""
    if not line.strip():
        return False
    if line.startswith("\ufeff"):
        return True  # (the first line's is skipped: this is a status for records after the first)
    try:
        record = json.loads(line)
    except ValueError:
        return True
    return isinstance(record["messages"][0]["content"], int)


def test_blocks_return_to_the_block_size_after_a_long_line(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    short = b'{"messages": []}\n'
    path.write_bytes(short * 10 + b'{"id": "' + b"x" * 100_000 + b'"}\n' + short * 2000)
    reader = BlockReader(str(path), 1000, ranges=True)
    try:
        ranges = [source for _, source in reader]
    finally:
        reader.close()
    assert all(isinstance(source, FileRange) for source in ranges)
    long = [source.length for source in ranges if isinstance(source, FileRange) and source.length > 1000]
    assert len(long) == 1  # the long line's block alone
    assert sum(source.length for source in ranges if isinstance(source, FileRange)) == path.stat().st_size


def test_a_huge_block_size_costs_no_memory_for_a_small_file(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"messages": []}\n' * 3)
    reader = BlockReader(str(path), 1 << 30, ranges=True)
    tracemalloc.start()
    try:
        assert [line for line, _ in reader] == [1]
        assert tracemalloc.get_traced_memory()[1] < 1 << 20
    finally:
        tracemalloc.stop()
        reader.close()


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="counts open files through /proc")
def test_a_run_in_this_process_leaves_no_input_file_open(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "Hi"}]}) + "\n" * 50, encoding="utf-8")

    def open_on_input() -> int:
        return sum(os.path.realpath(f"/proc/self/fd/{fd}") == str(path.resolve()) for fd in os.listdir("/proc/self/fd"))

    for _ in range(3):
        run(path, tmp_path / "out.jsonl", 2, 20, False)
    assert open_on_input() == 0
