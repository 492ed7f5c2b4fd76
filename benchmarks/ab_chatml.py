"""Before/after: the ChatML renderer of a git revision against the working tree's, in one process.

The revision's ``prompt_formats`` is loaded from ``git archive`` under another package name (with
its own ``_json``, ``tools`` and the rest), so the rendering path of that revision is compared with
the working tree's. Both render the same corpora with ``chatml-multi-system`` and
``add_generation_prompt=True``; every output of the working tree is first compared with the
revision's (the script stops on a difference). Timing as in the other benchmarks (``timing.py``):
interleaved rounds, CPU time of the thread, fastest round; the everyday corpus in blocks
(``timing.in_blocks``).

Rows, each for the revision and the working tree: plain tool dicts at first sight (the plain-tools
cache cleared before each render; a revision without that cache renders every call so), plain
tool dicts with a repeated toolset (cache warm), and prepared toolsets. Each row of the working
tree is given relative to the revision's row of the same kind.

Usage::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/ab_chatml.py [--against 6f0653a] [--rounds 11]
"""

from __future__ import annotations

import argparse
import importlib
import io
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import corpus
from timing import in_blocks, interleaved, markdown_table

import prompt_formats as pf
from prompt_formats.formats import chatml as current
from prompt_formats.tools import PLAIN_TOOLS_CACHE

ROOT = Path(__file__).resolve().parent.parent


def load_revision(revision: str, tmp: Path) -> tuple[ModuleType, Callable[[Any], Any], Callable[[], None]]:
    """The ChatML family of ``revision`` (``prompt_formats.formats.chatml``, a module or a package)
    that revision's ``prepare_tools`` (a toolset is prepared by the library that renders it) and
    the ``clear`` of its plain-tools cache.

    The revision's whole ``prompt_formats`` is extracted and imported under another name, so the
    modules it imports are its own (a name the working tree has moved or removed still resolves).
    """
    name = "prompt_formats_at_" + "".join(c if c.isalnum() else "_" for c in revision)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", revision, "prompt_formats"],
        capture_output=True, check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tmp, filter="data")
    (tmp / "prompt_formats").rename(tmp / name)
    sys.path.insert(0, str(tmp))
    try:
        package = importlib.import_module(name)
        cache = getattr(importlib.import_module(f"{name}.tools"), "PLAIN_TOOLS_CACHE", None)
        clear = cache.clear if cache is not None else lambda: None  # no cache: every call is a first sight
        return importlib.import_module(f"{name}.formats.chatml"), package.prepare_tools, clear
    finally:
        sys.path.remove(str(tmp))


def multi_system(module: ModuleType) -> pf.ChatFormat:
    cls = type("MultiSystem", (module.ChatMLFormat,), {"name": "chatml-multi-system", "merge_system": True})
    return cls()  # type: ignore[no-any-return]


Job = tuple[Any, Any]


def worker(fmt: pf.ChatFormat, clear: Callable[[], None] | None = None) -> Callable[[Sequence[Job]], None]:
    """Render each job; with ``clear``, after calling it (the plain-tools cache at first sight)."""
    render = fmt.render
    clear_first = clear is not None

    def work(jobs: Sequence[Job]) -> None:
        for messages, tools in jobs:
            if clear_first:
                clear()
            render(messages, tools, True)

    return work


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--against", default="4d42462", help="the git revision to compare with")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--block", type=int, default=32)
    args = parser.parse_args(argv)

    # Kept until the end: the revision's modules import from it lazily.
    tmp = tempfile.TemporaryDirectory()
    revision_chatml, revision_prepare_tools, revision_clear = load_revision(args.against, Path(tmp.name))
    before = multi_system(revision_chatml)
    after = multi_system(current)
    corpora = {
        "everyday (300 conversations)": [(r.messages, r.tools) for r in corpus.realistic_requests(300, 0)],
        "agent (257 messages, 40 tools)": [(r.messages, r.tools) for r in (corpus.agent_request(257, 40, s)
                                                                          for s in range(3))],
    }
    rows = []
    for name, plain in corpora.items():
        prepared = [(m, pf.prepare_tools(t) if t else None) for m, t in plain]
        prepared_before = [(m, revision_prepare_tools(t) if t else None) for m, t in plain]
        for jobs_before, jobs in ((plain, plain), (prepared_before, prepared)):
            for (messages, tools_before), (_, tools) in zip(jobs_before, jobs, strict=True):
                if before.render(messages, tools_before, True) != after.render(messages, tools, True):
                    raise SystemExit(f"ab_chatml: outputs differ on the {name} corpus; not timing")
        block = args.block if name.startswith("everyday") else len(plain)
        contenders: list[tuple[str, Callable[[], float | None]]] = [
            (f"{args.against}, plain tool dicts, first sight", in_blocks(worker(before, revision_clear), plain, block)),
            ("now, plain tool dicts, first sight", in_blocks(worker(after, PLAIN_TOOLS_CACHE.clear), plain, block)),
            (f"{args.against}, plain tool dicts, repeated toolset", in_blocks(worker(before), plain, block)),
            ("now, plain tool dicts, repeated toolset", in_blocks(worker(after), plain, block)),
            (f"{args.against}, prepared toolsets", in_blocks(worker(before), prepared_before, block)),
            ("now, prepared toolsets", in_blocks(worker(after), prepared, block)),
        ]
        timings = interleaved(contenders, items=len(plain), rounds=args.rounds)
        # Each row of the working tree against the revision's row of the same kind.
        bases = {t.name.split(", ", 1)[1]: t.best for t in timings if t.name.startswith(args.against)}
        for t in timings:
            base = bases[t.name.split(", ", 1)[1]]
            rows.append([name, t.name, f"{t.best:.1f} ({t.median:.1f})", f"{t.best / base:.2f}"])
        print(f"measured {name}", file=sys.stderr)
    print(markdown_table(["corpus", "renderer", "µs per request", f"time relative to {args.against}"], rows))
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
