"""The headline benchmarks for both builds in one run: pure and compiled, each beside the references.

For every row group of ``run_all.py`` this runs ``run_all.py --only GROUP`` twice, once on the
pure package (this interpreter, the source tree first on its path, ``PROMPT_FORMATS_PURE=1``) and
once on the compiled build (``--compiled-python``, an interpreter whose environment holds the
mypyc build, run outside the source tree so the installed package is imported), the two taking
turns group by group, the first of each pair alternating. Each run times ours and the reference
engines side by side, as ``run_all.py`` does; the table puts the two runs' figures in one row.
A ratio is taken within one process (ours against the reference timed beside it), so the two
columns of ratios are comparable even when the machine's speed moves between runs; the two
columns of milliseconds are comparable only as far as it did not.

Usage::

    bash scripts/test.sh --compiled -q          # builds .venv-compiled (or any venv with the build)
    .venv-compiled/bin/python -m pip install minijinja   # the MiniJinja rows, when wanted
    .venv/bin/python benchmarks/run_builds.py [--compiled-python .venv-compiled/bin/python] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import markdown_table

ROOT = Path(__file__).resolve().parent.parent
GROUPS = ["chatml-multi-system", "chatml-safety", "harmony", "gpt-oss", "guard", "parse", "command"]
HEADER = ["format", "corpus", "reference", "pure ms", "compiled ms", "reference ms (pure's run, compiled's run)",
          "ratio, pure", "ratio, compiled"]


def run_group(build: str, python: str, group: str, rounds: int, records: int, out: Path) -> dict[str, Any]:
    """One ``run_all.py --only group`` on one build; its JSON, checked to be of that build."""
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PROMPT_FORMATS_PURE")}
    if build == "pure":
        env["PYTHONPATH"] = str(ROOT)
        env["PROMPT_FORMATS_PURE"] = "1"
    command = [python, str(ROOT / "benchmarks" / "run_all.py"), "--only", group, "--rounds", str(rounds),
               "--records", str(records), "--json", str(out)]
    # Outside the tree, so that only PYTHONPATH (pure) or the environment (compiled) decides the package.
    done = subprocess.run(command, env=env, cwd=out.parent, stdout=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SystemExit(f"run_builds: {group} on the {build} build failed (exit {done.returncode})")
    measured: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    if measured["build"] != build:
        raise SystemExit(f"run_builds: {python} ran the {measured['build']} build ({measured['package']}), "
                         f"not the {build} one")
    return measured


def merged_rows(pure: list[list[str]], compiled: list[list[str]]) -> list[list[str]]:
    """One row per (format, corpus, reference) of the pure run, the compiled run's figures beside its own."""
    theirs = {tuple(row[:3]): row for row in compiled}
    rows = []
    for row in pure:
        other = theirs.get(tuple(row[:3]), ["–"] * 6)
        rows.append([*row[:3], row[3], other[3], f"{row[4]}, {other[4]}", row[5], other[5]])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--compiled-python", default=str(ROOT / ".venv-compiled" / "bin" / "python"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--records", type=int, default=20_000, help="records of the command's row")
    parser.add_argument("--only", nargs="*", default=None, help="row groups, as run_all.py's")
    args = parser.parse_args(argv)
    pythons = {"pure": sys.executable, "compiled": args.compiled_python}
    rows: list[list[str]] = []
    notes: list[str] = []
    versions: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for turn, group in enumerate(args.only or GROUPS):
            order = ["pure", "compiled"] if turn % 2 == 0 else ["compiled", "pure"]
            runs = {build: run_group(build, pythons[build], group, args.rounds, args.records,
                                     Path(tmp) / f"{group}-{build}.json") for build in order}
            print(f"measured {group} on both builds ({' then '.join(order)})", file=sys.stderr, flush=True)
            rows += merged_rows(runs["pure"]["rows"], runs["compiled"]["rows"])
            notes += [f"{build}: {note}" for build in order for note in runs[build]["notes"]]
            versions = runs["compiled"]["versions"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"## Both builds, Python {versions.get('python')}, Jinja2 {versions.get('jinja2')}, "
          f"MiniJinja {versions.get('minijinja')}; {args.rounds} rounds a group and build, "
          f"load average {load:.1f} at the end\n")
    print(markdown_table(HEADER, rows))
    for note in notes:
        print(f"- {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
