"""A UTF-8 byte-order mark at the start of a file the command reads is skipped, as Python's
``utf-8-sig`` does (Windows editors write one); anywhere else it stays a record's error. Run as a
subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import SAFETY_NET

BOM = b"\xef\xbb\xbf"
RECORDS = b"".join(
    (json.dumps({"id": f"r{i}", "messages": [{"role": "user", "content": f"Hi {i}"}]}) + "\n").encode()
    for i in range(5)
)


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "prompt_formats", *args], input=stdin, capture_output=True,
                          timeout=SAFETY_NET, check=False)


def render(source: str, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return run("render", "-f", "chatml-multi-system", "-q", *args, source, stdin=stdin)


@pytest.mark.parametrize("block_size", ["1", "2", "3", "4", "60", "1048576"])
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_bom_at_the_start_of_the_input_file_is_skipped(tmp_path: Path, workers: str, block_size: str) -> None:
    plain, marked = tmp_path / "plain.jsonl", tmp_path / "marked.jsonl"
    plain.write_bytes(RECORDS)
    marked.write_bytes(BOM + RECORDS)
    expected = render(str(plain))
    assert expected.returncode == 0, expected.stderr
    proc = render(str(marked), "-j", workers, "--block-size", block_size)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected.stdout


def test_a_bom_at_the_start_of_standard_input_is_skipped() -> None:
    expected = render("-", stdin=RECORDS)
    proc = render("-", stdin=BOM + RECORDS)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected.stdout


def test_a_file_of_only_a_bom_has_no_records(tmp_path: Path) -> None:
    source = tmp_path / "empty.jsonl"
    source.write_bytes(BOM)
    proc = run("render", "-f", "chatml-multi-system", str(source))
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert "0 of 0 records rendered" in proc.stderr.decode()


def test_a_bom_elsewhere_is_still_the_records_error(tmp_path: Path) -> None:
    lines = RECORDS.splitlines(keepends=True)
    source = tmp_path / "in.jsonl"
    source.write_bytes(BOM + lines[0] + BOM + lines[1])
    proc = render(str(source))
    assert proc.returncode == 1
    assert [json.loads(line)["id"] for line in proc.stdout.splitlines()] == ["r0"]
    assert proc.stderr.decode() == ("line 2: InvalidInputError: record: not valid JSON "
                                    "(UTF-8 byte order mark (BOM) is not supported at column 1)\n")


@pytest.mark.transformers
def test_model_files_that_begin_with_a_bom_are_read(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    pytest.importorskip("transformers")
    from tests.support.hf_tokenizers import CHATML_ADDED, CHATML_SPECIAL, build_tokenizer

    tokenizer = build_tokenizer(["Hi there, how are you?"], CHATML_SPECIAL, tuple(CHATML_ADDED))
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    tokenizer.chat_template = (fixtures / "chatml_multi_system.jinja").read_text("utf-8")
    plain, marked = tmp_path / "plain", tmp_path / "marked"
    # A template in a file of its own is text of every prompt, a BOM included (transformers keeps it):
    # these models keep theirs in tokenizer_config.json, whose JSON a BOM is no part of.
    for directory in (plain, marked):
        tokenizer.save_pretrained(str(directory))
        config = json.loads((directory / "tokenizer_config.json").read_text("utf-8"))
        config["chat_template"] = (directory / "chat_template.jinja").read_text("utf-8")
        (directory / "chat_template.jinja").unlink()
        (directory / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (marked / name).write_bytes(BOM + (marked / name).read_bytes())
    source = tmp_path / "in.jsonl"
    source.write_bytes(RECORDS)
    expected = render(str(source), "--tokenizer", str(plain))
    assert expected.returncode == 0, expected.stderr
    proc = render(str(source), "--tokenizer", str(marked))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected.stdout
