"""Before/after: the ChatML renderer of a git revision against the working tree's, in one process.

The revision's ``prompt_formats/formats/chatml.py`` is loaded from ``git show`` as a sibling module
of the current package (it imports the current ``_json``, ``tools`` and the rest), so only the
renderer differs. Both render the same corpora with ``chatml-multi-system`` and
``add_generation_prompt=True``; every output of the working tree is first compared with the
revision's (the script stops on a difference). Timing as in the other benchmarks (``timing.py``):
interleaved rounds, CPU time of the thread, fastest round; the everyday corpus in blocks
(``timing.in_blocks``).

Rows: the revision with plain tool dicts (before the content-keyed cache existed, this is every
call), the working tree with plain tool dicts at first sight (cache cleared before each render)
and with a repeated toolset (cache warm), and both with prepared toolsets.

Usage::

    .venv/bin/python benchmarks/ab_chatml.py [--against 4d42462] [--rounds 11]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
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


def load_revision(revision: str, tmp: Path) -> ModuleType:
    """``prompt_formats/formats/chatml.py`` as of ``revision``, as a module of the current package."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{revision}:prompt_formats/formats/chatml.py"],
        capture_output=True, text=True, check=True,
    ).stdout
    path = tmp / "chatml_at_revision.py"
    path.write_text(source)
    name = "prompt_formats.formats._chatml_at_revision"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def multi_system(module: ModuleType) -> pf.ChatFormat:
    cls = type("MultiSystem", (module.ChatMLFormat,), {"name": "chatml-multi-system", "merge_system": True})
    return cls()  # type: ignore[no-any-return]


Job = tuple[Any, Any]


def worker(fmt: pf.ChatFormat, clear_first: bool = False) -> Callable[[Sequence[Job]], None]:
    render = fmt.render
    clear = PLAIN_TOOLS_CACHE.clear

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

    with tempfile.TemporaryDirectory() as tmp:
        before = multi_system(load_revision(args.against, Path(tmp)))
    after = multi_system(current)
    corpora = {
        "everyday (300 conversations)": [(r.messages, r.tools) for r in corpus.realistic_requests(300, 0)],
        "agent (257 messages, 40 tools)": [(r.messages, r.tools) for r in (corpus.agent_request(257, 40, s)
                                                                          for s in range(3))],
    }
    rows = []
    for name, plain in corpora.items():
        prepared = [(m, pf.prepare_tools(t) if t else None) for m, t in plain]
        for jobs in (plain, prepared):
            for (messages, tools) in jobs:
                if before.render(messages, tools, True) != after.render(messages, tools, True):
                    raise SystemExit(f"ab_chatml: outputs differ on the {name} corpus; not timing")
        block = args.block if name.startswith("everyday") else len(plain)
        contenders: list[tuple[str, Callable[[], float | None]]] = [
            (f"{args.against}, plain tool dicts", in_blocks(worker(before), plain, block)),
            ("now, plain tool dicts, first sight", in_blocks(worker(after, clear_first=True), plain, block)),
            ("now, plain tool dicts, repeated toolset", in_blocks(worker(after), plain, block)),
            (f"{args.against}, prepared toolsets", in_blocks(worker(before), prepared, block)),
            ("now, prepared toolsets", in_blocks(worker(after), prepared, block)),
        ]
        timings = interleaved(contenders, items=len(plain), rounds=args.rounds)
        base_plain, base_prepared = timings[0].best, timings[3].best
        for t in timings:
            base = base_prepared if "prepared" in t.name else base_plain
            rows.append([name, t.name, f"{t.best:.1f} ({t.median:.1f})", f"{t.best / base:.2f}"])
        print(f"measured {name}", file=sys.stderr)
    print(markdown_table(["corpus", "renderer", "µs per request", f"time relative to {args.against}"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
