"""The spool where worker processes leave their blocks, and how the parent moves a block into the output.

Each way of moving the bytes is checked on its own — the kernel's copy between files, the kernel's
copy to a pipe, reading and writing — with a block written before it and one after it, so that the
order of buffered and copied bytes is checked too.
"""

from __future__ import annotations

import errno
import os
import pickle
import threading
from pathlib import Path

import pytest

from prompt_formats.cli import files
from prompt_formats.cli.files import OutputFile, UsageError
from prompt_formats.cli.spool import Spool, Spooled

BLOCK = bytes(range(256)) * 5000  # more than one read of the fallback's megabyte


def made_spool() -> Spool:
    spool = Spool()
    spool.make()
    return spool


def no_kernel_copy(source: int, target: int, length: int) -> int:
    raise OSError(errno.EXDEV, "Invalid cross-device link")


@pytest.fixture(params=["kernel", "read and write"])
def copies(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "read and write":
        monkeypatch.setattr(files, "_KERNEL_COPIES", [no_kernel_copy])
    return str(request.param)


def test_a_block_moves_into_a_regular_output_in_its_place(tmp_path: Path, copies: str) -> None:
    spool = made_spool()
    try:
        block = spool.put(BLOCK)
        assert block == Spooled(block.name, len(BLOCK))
        out = OutputFile(str(tmp_path / "out.jsonl"))
        out.write(b"before\n")
        spool.take_into(block, out)
        out.write(b"after\n")
        out.finish()
        out.publish()
        assert (tmp_path / "out.jsonl").read_bytes() == b"before\n" + BLOCK + b"after\n"
        assert os.listdir(spool.path) == []  # the block's file is removed once moved
    finally:
        spool.remove()
    assert not os.path.exists(spool.path)


def test_a_block_moves_into_a_fifo(tmp_path: Path, copies: str) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    spool = made_spool()
    try:
        out = OutputFile(str(fifo))
        assert out.direct
        out.write(b"before\n")
        spool.take_into(spool.put(BLOCK), out)
        out.write(b"after\n")
        out.finish()
    finally:
        spool.remove()
        reader.join()
    assert received == [b"before\n" + BLOCK + b"after\n"]


def test_a_block_shorter_than_its_worker_said_is_an_error_naming_the_output(tmp_path: Path, copies: str) -> None:
    spool = made_spool()
    try:
        block = spool.put(BLOCK)
        out = OutputFile(str(tmp_path / "out.jsonl"))
        with pytest.raises(UsageError, match=r"cannot write .*out\.jsonl: 10 bytes of a block were missing"):
            spool.take_into(block._replace(length=len(BLOCK) + 10), out)
        out.discard()
    finally:
        spool.remove()
    assert os.listdir(tmp_path) == []


def test_a_failed_kernel_copy_is_an_error_naming_the_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(source: int, target: int, length: int) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files, "_KERNEL_COPIES", [full])
    spool = made_spool()
    try:
        out = OutputFile(str(tmp_path / "out.jsonl"))
        with pytest.raises(UsageError, match=r"cannot write .*out\.jsonl: No space left on device"):
            spool.take_into(spool.put(BLOCK), out)
        out.discard()
    finally:
        spool.remove()


def test_a_spool_that_cannot_be_written_is_named_in_the_error() -> None:
    spool = made_spool()
    spool.remove()
    with pytest.raises(OSError, match=r"cannot write the workers' spool in .*prompt-formats-[0-9a-f]+: No such file"):
        spool.put(b"x\n")


def test_the_spool_travels_to_a_worker_by_its_path() -> None:
    spool = made_spool()
    try:
        copy = pickle.loads(pickle.dumps(spool))
        block = copy.put(b"x\n")
        assert spool.take(block) == b"x\n"
        assert os.listdir(spool.path) == []
    finally:
        spool.remove()
