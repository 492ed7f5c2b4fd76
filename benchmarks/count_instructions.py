"""Instructions per request of a format's ``render`` or ``render_spans``: a revision against the tree.

Time on this machine moves with its load and from one minute to the next; valgrind's ``callgrind``
counts the instructions the interpreter executes, the same for the same code and input whatever else
runs. Each side runs in its own process under callgrind (``PYTHONHASHSEED=0``): it prepares the
corpus (``ab_harmony.py``'s everyday and agent requests, prepared toolsets, ``add_generation_prompt``),
renders it once (the first sight: caches filled), then ``--passes`` more times; the run is counted
twice, with one pass and with ``--passes``, and the difference divided by the extra passes and
requests is the steady cost of a request, the setup and the first pass subtracted. Every output of
the tree is compared with the revision's first (the script stops on a difference).

Usage::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/count_instructions.py --against 6f0653a --format harmony \\
        [--calls render,render_spans] [--corpus everyday,agent] [--passes 3]
    PYTHONPATH=$PWD .venv/bin/python benchmarks/count_instructions.py --against 1edc5d8 --format gpt-oss \\
        --corpus gpt-oss-agent-system --against-corpus gpt-oss-agent-inline

(``gpt-oss-agent-system`` and ``-inline``: ``bench_gpt_oss.py``'s agent requests, its reminders as
later system messages or moved into the next user message, for a revision that refused the former.)
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import corpus
from ab_chatml import load_revision
from timing import markdown_table

#: The options every request is rendered with (Harmony and gpt-oss read today's date otherwise).
OPTIONS: dict[str, dict[str, Any]] = {
    "harmony": {"current_date": "2025-08-05"}, "gpt-oss": {"current_date": "2025-08-05"},
}


def _package(revision: str, tmp: Path) -> Any:
    """The ``prompt_formats`` package of ``revision`` (``tree``: the working tree's)."""
    if revision == "tree":
        import prompt_formats

        return prompt_formats
    load_revision(revision, tmp)
    return importlib.import_module("prompt_formats_at_" + "".join(c if c.isalnum() else "_" for c in revision))


def _format(package: Any, name: str) -> Any:
    """The format ``name`` of ``package``: its registry's class, imported from that package (a
    revision's registry names the modules absolutely, which would be the tree's)."""
    registry = importlib.import_module(f"{package.__name__}.registry")
    module_name, _, class_name = registry._FORMATS[name].partition(":")
    module = importlib.import_module(package.__name__ + module_name.removeprefix("prompt_formats"))
    return getattr(module, class_name)()


def _jobs(package: Any, name: str) -> list[tuple[Any, Any]]:
    if name == "everyday":
        plain = [(r.messages, r.tools) for r in corpus.realistic_requests(300, 0)]
    elif name.startswith("gpt-oss-agent-"):  # bench_gpt_oss.py's requests: reminders as system messages, or inline
        import bench_gpt_oss

        plain = [(r.messages, r.tools) for r in bench_gpt_oss.requests(3, reminders=name.rpartition("-")[2])]
    else:
        plain = [(r.messages, r.tools) for r in (corpus.agent_request(257, 40, seed) for seed in range(3))]
    return [(m, package.prepare_tools(t) if t else None) for m, t in plain]


def _texts(package: Any, fmt_name: str, call: str, jobs: list[tuple[Any, Any]]) -> list[str]:
    method = getattr(_format(package, fmt_name), call)
    options = OPTIONS.get(fmt_name, {})
    out = [method(m, t, True, **options) for m, t in jobs]
    return [o if isinstance(o, str) else o.text for o in out]


def _child(revision: str, fmt_name: str, call: str, corpus_name: str, passes: int) -> None:
    """Under callgrind: prepare, render once, then ``passes - 1`` more times."""
    with tempfile.TemporaryDirectory() as tmp:
        package = _package(revision, Path(tmp))
        jobs = _jobs(package, corpus_name)
        method = getattr(_format(package, fmt_name), call)
        options = OPTIONS.get(fmt_name, {})
        for _ in range(passes):
            for messages, tools in jobs:
                method(messages, tools, True, **options)


def _count(revision: str, fmt_name: str, call: str, corpus_name: str, passes: int, tmp: Path) -> int:
    out = tmp / f"callgrind.{os.getpid()}.{passes}"
    command = [
        "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__,
        "--child", revision, fmt_name, call, corpus_name, str(passes),
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", result.stderr)
    if found is None:
        raise SystemExit(f"count_instructions: no count in callgrind's output:\n{result.stderr[-2000:]}")
    out.unlink(missing_ok=True)
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--against", default="main")
    parser.add_argument("--format", default="harmony")
    parser.add_argument("--calls", default="render")
    parser.add_argument("--corpus", default="everyday,agent")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument(
        "--against-corpus", help="the revision's corpus, when it cannot render the tree's (outputs not compared)"
    )
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        revision, fmt_name, call, corpus_name, passes = args.child
        _child(revision, fmt_name, call, corpus_name, int(passes))
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        old_package = _package(args.against, Path(tmp))
        import prompt_formats as new_package

        for corpus_name in args.corpus.split(","):
            old_corpus = args.against_corpus or corpus_name
            for call in args.calls.split(","):
                old_texts = _texts(old_package, args.format, call, _jobs(old_package, old_corpus))
                new_texts = _texts(new_package, args.format, call, _jobs(new_package, corpus_name))
                if old_corpus == corpus_name and old_texts != new_texts:
                    raise SystemExit(f"count_instructions: the tree's {call} differs on {corpus_name}")
                counts = []
                sides = ((args.against, old_corpus, len(old_texts)), ("tree", corpus_name, len(new_texts)))
                for revision, name, n in sides:
                    more = _count(revision, args.format, call, name, args.passes, Path(tmp))
                    once = _count(revision, args.format, call, name, 1, Path(tmp))
                    counts.append((more - once) / (n * (args.passes - 1)))
                corpus_name = corpus_name if old_corpus == corpus_name else f"{corpus_name} (theirs: {old_corpus})"
                ratio = counts[1] / counts[0]
                rows.append([corpus_name, call, f"{counts[0]:,.0f}", f"{counts[1]:,.0f}", f"{ratio:.3f}"])
    print(markdown_table(["corpus", "call", f"{args.against} instructions", "tree instructions", "ratio"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
