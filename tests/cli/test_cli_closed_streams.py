"""The command started with a standard stream closed (``<&-``, ``>&-``, ``2>&-``, as a daemon or a job
runner may start it): a stream the run does not need is no obstacle, one it needs is a usage error
naming it, and nothing meant for one stream lands in another.

The command runs under ``sh``, which closes the stream and then executes Python in its place.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import SAFETY_NET

GOOD = (json.dumps({"messages": [{"role": "user", "content": "Hi"}]}) + "\n").encode()
BAD = (json.dumps({"messages": [{"role": 5, "content": "Hi"}]}) + "\n").encode()


def prompts(tmp_path: Path, *lines: bytes) -> list[bytes]:
    """The output lines of ``lines`` rendered with every stream open (what a closed one must not change)."""
    done = subprocess.run([sys.executable, "-m", "prompt_formats", "render", "-f", "chatml-multi-system", "-q", "-"],
                          input=b"".join(lines), capture_output=True, cwd=tmp_path, timeout=SAFETY_NET, check=False)
    assert done.returncode == (1 if BAD in lines else 0), done.stderr
    return done.stdout.splitlines(keepends=True)


def run_closed(redirection: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """``python -m prompt_formats ARGS`` with ``redirection`` (``<&-``, ``>&-``, ``2>&-``) applied by the shell."""
    script = f'exec "$0" -m prompt_formats "$@" {redirection}'
    return subprocess.run(["sh", "-c", script, sys.executable, *args], capture_output=True, cwd=cwd,
                          timeout=SAFETY_NET, check=False)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_closed_standard_input_is_no_obstacle_to_a_named_input(tmp_path: Path, workers: str) -> None:
    (tmp_path / "in.jsonl").write_bytes(GOOD * 3)
    expected = prompts(tmp_path, GOOD, GOOD, GOOD)
    done = run_closed("<&-", "render", "-f", "chatml-multi-system", "-j", workers, "in.jsonl", "-o", "out.jsonl",
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.jsonl").read_bytes() == b"".join(expected)
    assert done.stderr.startswith(b"prompt-formats: 3 of 3 records rendered, 0 failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl"]


def test_a_closed_standard_error_costs_only_the_summary(tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_bytes(GOOD * 2)
    expected = b"".join(prompts(tmp_path, GOOD, GOOD))
    done = run_closed("2>&-", "render", "-f", "chatml-multi-system", "in.jsonl", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, expected)


def test_a_failure_that_cannot_be_reported_makes_the_run_incomplete_and_writes_no_traceback(tmp_path: Path) -> None:
    # Status 1 says every failure was reported: with standard error closed none can be.
    (tmp_path / "in.jsonl").write_bytes(GOOD + BAD + GOOD)
    rendered = b"".join(prompts(tmp_path, GOOD, BAD, GOOD))
    done = run_closed("2>&-", "render", "-f", "chatml-multi-system", "in.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == rendered  # the block's records were streamed before its report; nothing else
    to_file = run_closed("2>&-", "render", "-f", "chatml-multi-system", "in.jsonl", "-o", "out.jsonl", cwd=tmp_path)
    assert (to_file.returncode, to_file.stdout) == (2, b"")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


@pytest.mark.parametrize(("redirection", "args", "problem"), [
    (">&-", ("render", "-f", "chatml-multi-system", "in.jsonl"), "cannot write standard output: it is closed"),
    (">&-", ("formats",), "cannot write standard output: it is closed"),
    ("<&-", ("render", "-f", "chatml-multi-system", "-"), "cannot read standard input: it is closed"),
    ("<&-", ("parse", "-f", "chatml-multi-system", "-", "-o", "out.jsonl"), "cannot read standard input: it is closed"),
])
def test_a_closed_stream_the_run_needs_is_a_usage_error(
    tmp_path: Path, redirection: str, args: tuple[str, ...], problem: str
) -> None:
    (tmp_path / "in.jsonl").write_bytes(GOOD)
    done = run_closed(redirection, *args, cwd=tmp_path)
    assert (done.returncode, done.stderr.decode()) == (2, f"prompt-formats: {problem}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_no_file_the_run_opens_takes_a_closed_standard_descriptor(tmp_path: Path) -> None:
    # Else what is written to that stream's number (by C code, or a child process) would land in the file.
    code = ("import os, sys\n"
            "assert sys.stdin is None and sys.stderr is None\n"
            "from prompt_formats.cli import _fill_closed_standard_descriptors\n"
            "_fill_closed_standard_descriptors()\n"
            "print(os.open(os.devnull, os.O_RDONLY))")
    done = subprocess.run(["sh", "-c", 'exec "$0" -c "$1" <&- 2>&-', sys.executable, code], capture_output=True,
                          cwd=tmp_path, timeout=SAFETY_NET, check=False)
    assert done.returncode == 0
    assert int(done.stdout) > 2


def test_a_stream_whose_descriptor_a_caller_closed_is_not_taken_for_the_null_device(tmp_path: Path) -> None:
    # main() called in-process after the caller closed standard output: the write fails, saying so,
    # rather than the records going to the null device under a status that says they were written.
    (tmp_path / "in.jsonl").write_bytes(GOOD)
    code = ("import os, sys\n"
            "os.close(1)\n"
            "from prompt_formats.cli import main\n"
            "sys.exit(main(['render', '-f', 'chatml-multi-system', '-q', 'in.jsonl']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=tmp_path, timeout=SAFETY_NET,
                          check=False)
    assert done.returncode == 2
    assert done.stderr.decode() == "prompt-formats: cannot write standard output: Bad file descriptor\n"
