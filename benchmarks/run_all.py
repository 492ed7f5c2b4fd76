"""The headline benchmarks in one run: us against the reference engines, straight passes, ratios.

Every rendering row builds a fresh held-out corpus per round (``heldout.py``, seed = the round;
each request decoded from its own JSON, as a server holds it), then each contender renders it
once (``timing.straight``; each request decoded from its JSON just before its render, untimed,
as a server receives it: ``heldout.rendered_as_received``): no warm-up pass, the first round
counted, the figure the median over rounds of CPU time per request. Every timed output of ours is
compared with the reference's, byte for byte (the run stops on a difference). References: Jinja2
configured as transformers configures it, MiniJinja where installed (``pip install .[bench]``),
Go's ``text/template`` for ``harmony`` (``tests/support/oracle/harmony``, timed inside Go). ``--warm`` adds
the warm figure of the everyday ChatML rows beside the headline (each block rendered twice untimed
first), labelled.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/run_all.py [--rounds 5] [--only chatml harmony ...] [--warm]

Both builds, pure and compiled, side by side: ``benchmarks/run_builds.py``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The source tree last: an installed package (the compiled build in its own venv) is the one
# imported where there is one; PYTHONPATH=. puts the tree first.
sys.path.append(str(Path(__file__).resolve().parent.parent))

import corpus
import engines
import heldout
import run_all_extra
from heldout import Flavour, Job
from timing import Contender, Timing, interleaved, markdown_table, straight, warm_blocks

import prompt_formats as pf

TEMPLATES = {
    "chatml-multi-system": "chatml_multi_system.jinja",
    "chatml-safety": "chatml_upstream.jinja",
    "gpt-oss": "gpt_oss.jinja",
}
FLAVOURS: dict[str, Flavour] = {
    "chatml-multi-system": "chatml", "chatml-safety": "chatml-strict", "harmony": "harmony", "gpt-oss": "gpt-oss",
}
HEADER = ["format", "corpus", "reference", "ours ms", "reference ms", "ratio (reference / ours)"]
Row = list[str]


def _checker(name: str, against: str, notes: list[str]) -> Callable[[dict[str, list[Any]], Sequence[Job]], None]:
    same_mini: list[int] = []

    def check(outputs: dict[str, list[Any]], jobs: Sequence[Job]) -> None:
        bad = [i for i, (a, b) in enumerate(zip(outputs["ours"], outputs[against], strict=True)) if a != b]
        if bad:
            raise SystemExit(f"run_all: {name}: ours differs from {against} on job(s) {bad[:10]}; not reporting")
        if "MiniJinja" in outputs:
            same_mini.append(sum(a == b for a, b in zip(outputs["MiniJinja"], outputs[against], strict=True)))
            if len(same_mini) == 1:
                notes.append(f"{name}: MiniJinja's output equals Jinja2's on {same_mini[0]}/{len(jobs)} jobs.")

    return check


def _ms(t: Timing) -> str:
    return f"{t.median / 1000:.3f}"


def render_rows(
    name: str, label: str, corpus_for_round: Callable[[int], Sequence[Job]], rounds: int, notes: list[str],
    go: engines.GoHarmony | None = None,
) -> list[Row]:
    """Rows for one format on one corpus: ours against each reference engine, straight passes."""
    received = heldout.rendered_as_received
    contenders: list[Contender] = [("ours", received(pf.get_format(name).render), True)]
    if name == "harmony":
        if go is None:
            return [[f"`{name}`", label, "Go text/template", "–", "–", "Go unavailable"]]
        contenders.append(("Go text/template", go.run_wire, True))
    else:
        contenders.append(("Jinja2", received(engines.jinja2_renderer(TEMPLATES[name])), True))
        if engines.has_minijinja():
            contenders.append(("MiniJinja", received(engines.minijinja_renderer(TEMPLATES[name])), True))
    check = _checker(f"{name}, {label}", contenders[1][0], notes)
    timings = straight(contenders, lambda r: heldout.to_wire(corpus_for_round(r)), rounds, check)
    ours = timings[0]
    print(f"measured {name}, {label}", file=sys.stderr, flush=True)
    return [[f"`{name}`", label, t.name, _ms(ours), _ms(t), f"**{t.median / ours.median:.1f}×**"]
            for t in timings[1:]]


def warm_rows(name: str, rounds: int, block: int = 32) -> list[Row]:
    """The warm figure of the everyday corpus (each block rendered twice untimed first), for contrast."""
    jobs = heldout.everyday_jobs(300, 0, FLAVOURS[name])
    fmt = pf.get_format(name)
    jinja = engines.jinja2_renderer(TEMPLATES[name])

    def passes(render: engines.Renderer) -> Callable[[Sequence[Job]], None]:
        def work(chunk: Sequence[Job]) -> None:
            for messages, tools, options in chunk:
                render(messages, tools, True, **options)

        return work

    timings = interleaved(
        [("ours", warm_blocks(passes(fmt.render), jobs, block)), ("Jinja2", warm_blocks(passes(jinja), jobs, block))],
        items=len(jobs), rounds=rounds,
    )
    ours, ref = timings
    return [[f"`{name}`", "everyday, **warm** (not the headline)", "Jinja2", f"{ours.best / 1000:.3f}",
             f"{ref.best / 1000:.3f}", f"{ref.best / ours.best:.1f}× (warm)"]]


def agent_257(name: str, prepared: bool) -> Callable[[int], list[Job]]:
    """The existing agent row: three 257-message, 40-tool requests per round (fresh seeds each round).

    ``prepared``: each toolset is prepared and used once by the format before timing (on a
    one-message request), as a server that keeps a session's ``PreparedTools`` has it; plain: each
    tool list is at its first sight."""
    flavour = FLAVOURS[name]
    # The strict ChatML template raises on a later system message; gpt-oss drops it, as agents send it.
    reminders = "inline" if flavour == "chatml-strict" else "system"

    def make(r: int) -> list[Job]:
        options = {"current_date": "2025-08-05", "reasoning_effort": "medium"} if flavour == "harmony" else {}
        jobs = []
        for seed in range(3 * r, 3 * r + 3):
            request = corpus.agent_request(257, 40, seed, reminders=reminders)
            tools: Any = request.tools
            if prepared:
                tools = pf.prepare_tools(request.tools)
                pf.get_format(name).render([{"role": "user", "content": "hello"}], tools, True, **options)
            messages = heldout.without_call_preambles(request.messages) if flavour == "gpt-oss" else request.messages
            jobs.append(Job(messages, tools, options))
        return heldout.as_received(jobs)

    return make


def format_rows(name: str, rounds: int, notes: list[str], go: engines.GoHarmony | None) -> list[Row]:
    """Every corpus row of one format."""
    flavour = FLAVOURS[name]
    rows = render_rows(name, "everyday (300 requests)", lambda r: heldout.everyday_jobs(300, r, flavour),
                       rounds, notes, go)
    rows += render_rows(name, "agent sessions (follow-up requests)", lambda r: heldout.agent_jobs(2, 2 * r, flavour),
                        rounds, notes, go)
    rows += render_rows(name, "agent-257 (257 messages, 40 tools), plain tools", agent_257(name, False),
                        rounds, notes, go)
    rows += render_rows(name, "agent-257, prepared toolset", agent_257(name, True), rounds, notes, go)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=None,
                        help="row groups: chatml-multi-system chatml-safety harmony gpt-oss guard parse command")
    parser.add_argument("--records", type=int, default=20_000, help="records of the command's row")
    parser.add_argument("--warm", action="store_true", help="add the warm figure of the everyday ChatML rows")
    parser.add_argument("--json", type=Path, default=None,
                        help="also write the rows, the notes and the build measured to this file (run_builds.py)")
    args = parser.parse_args(argv)
    groups = args.only or ["chatml-multi-system", "chatml-safety", "harmony", "gpt-oss", "guard", "parse", "command"]
    rows: list[Row] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        go = _go(Path(tmp), notes) if "harmony" in groups else None
        for name in [g for g in groups if g in FLAVOURS]:
            if name not in pf.available_formats():
                notes.append(f"{name}: not a registered format here; no row.")
                continue
            rows += format_rows(name, args.rounds, notes, go)
            if args.warm and name.startswith("chatml"):
                rows += warm_rows(name, args.rounds)
        if go is not None:
            go.close()
        if "guard" in groups:
            rows += run_all_extra.guard_rows(args.rounds)
        if "parse" in groups:
            rows += run_all_extra.parse_rows(args.rounds)
        if "command" in groups:
            rows += run_all_extra.command_rows(args.records, max(3, args.rounds // 2), Path(tmp))
    _print(rows, notes, args.rounds)
    if args.json is not None:
        measured = {"build": "compiled" if pf.compiled else "pure", "package": str(Path(pf.__file__).parent),
                    "versions": engines.versions(), "rows": rows, "notes": notes}
        args.json.write_text(json.dumps(measured, indent=1), encoding="utf-8")
    return 0


def _go(build_dir: Path, notes: list[str]) -> engines.GoHarmony | None:
    try:
        return engines.GoHarmony(build_dir)
    except Exception as exc:  # the Go toolchain may be missing: the Harmony rows say so
        notes.append(f"harmony: Go's text/template unavailable ({exc}).")
        return None


def _print(rows: list[Row], notes: list[str], rounds: int) -> None:
    versions = engines.versions()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"## Headline figures, {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}\n")
    print(f"Python {versions['python']}, Jinja2 {versions['jinja2']}, MiniJinja {versions['minijinja']}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs, load average {load:.1f} at the end; straight passes, "
          f"{rounds} rounds, a fresh corpus each round, median CPU time per request (Go: its own time).\n")
    print(markdown_table(HEADER, rows))
    if notes:
        print()
        for note in notes:
            print(f"- {note}")


if __name__ == "__main__":
    sys.exit(main())
