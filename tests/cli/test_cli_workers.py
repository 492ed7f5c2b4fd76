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

from prompt_formats.cli import BlockReader, FileRange, _count_lines, main
from tests.support.settings import budget

TOOL = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}

text = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\x85\u2028\u2029"), max_size=30)


@st.composite
def lines(draw: st.DrawFn) -> str:
    """One input line: a good record (with or without an id or tools), a bad one, or a blank line."""
    kind = draw(st.sampled_from(["good", "good", "good", "id", "tools", "not json", "bad message", "blank", "bom",
                                 "long", "long"]))
    if kind == "bom":  # skipped at the start of the file, an error anywhere else
        return "\ufeff" + json.dumps({"messages": [{"role": "user", "content": draw(text)}]})
    if kind == "not json":
        return "{not json"
    if kind == "blank":
        return draw(st.sampled_from(["", "  ", "\t"]))
    record: dict[str, object] = {"messages": [{"role": "user", "content": draw(text)}]}
    if kind == "long":  # a block of such lines has its lines found one by one, not counted (cli._count_lines)
        record["messages"] = [{"role": "user", "content": draw(text) + "y" * draw(st.integers(1_000, 2_500))}]
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
    st.one_of(st.integers(1, 600), st.integers(8_000, 40_000)),
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


short_lines = st.lists(st.integers(0, 60), max_size=40)
long_lines = st.lists(st.integers(1_100, 3_000), min_size=9, max_size=30)  # found one by one


@budget(0.2, floor=30)
@given(st.one_of(short_lines, long_lines, st.lists(st.integers(0, 3_000), max_size=40), st.tuples(
    long_lines, short_lines).map(lambda pair: pair[0] + pair[1])), st.data())
def test_the_lines_of_a_block_are_counted_as_bytes_count_counts_them(lengths: list[int], data: st.DataObject) -> None:
    buffer = bytearray(b"".join(b"x" * n + b"\n" for n in lengths) + b"no newline")
    for end in (len(buffer), data.draw(st.integers(0, len(buffer)))):
        assert _count_lines(buffer, end) == bytes(buffer).count(b"\n", 0, end)


def test_records_numbered_by_their_line_in_blocks_of_long_lines_are_numbered_as_by_one_process(tmp_path: Path) -> None:
    # Records without an id are named by their line number, and so are failures: the workers' blocks
    # must start at the line -j 1 counts, where the lines of a block are found one by one.
    records = [json.dumps({"messages": [{"role": "user", "content": "y" * (1_000 + 37 * k)}]}) for k in range(120)]
    records[77] = "{not json"
    path = tmp_path / "in.jsonl"
    path.write_text("".join(line + "\n" + "\n" * (k % 3 == 0) for k, line in enumerate(records)), encoding="utf-8")
    one = run(path, tmp_path / "one.jsonl", 1, 20_000, False)
    several = run(path, tmp_path / "several.jsonl", 2, 20_000, False)
    assert several == one
    assert one[1] is not None and json.loads(one[1].splitlines()[-1])["id"] == 120 + 40  # (40 blank lines)


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
