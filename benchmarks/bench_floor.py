"""The floor under the everyday rows: how fast the least Python that writes these prompts is.

``floor_render`` writes the Qwen3.6 template's prompt for the requests of the held-out everyday
corpus (``heldout.everyday_jobs``) and for nothing else: it checks nothing, steps aside for
nothing, raises on whatever the corpus does not hold, keeps no spans, guards nothing, and makes
one pass over the messages with the fewest calls we found. It is a measurement, never a renderer
to use: what any pure-Python renderer of this template must spend at least, whatever its fast paths.
Its tools block is the package's (the same content-keyed cache), so the gap to ours is the turns.

The run: straight passes (``timing.straight``, as ``run_all.py``: a fresh corpus per round, each
request decoded from its JSON just before its render, untimed, the first round counted, the median
of CPU time per request), ours, the floor, Jinja2 and MiniJinja (where installed) side by side.
Every round the floor's output and ours are compared with Jinja2's, byte for byte; the run stops
without a figure on any difference, so the floor is a true renderer of the corpus it is timed on.
``chatml-safety`` is timed on the upstream template's corpus (one leading system message) against
the floor without any guard: a bound for any guarded renderer.

``--format harmony`` times ``floor_harmony.floor_render`` (Ollama's gpt-oss template, the everyday
corpus) against Go's ``text/template``, the harmony oracle timed inside Go as in ``run_all.py``.

``--format gpt-oss`` times ``floor_gpt_oss.floor_render`` on the prepared agent row (below) against
Jinja2 and MiniJinja: that floor is written for that row only.

``--corpus agent`` times the agent row instead (``run_all.py``'s "agent-257, prepared toolset": three
257-message, 40-tool requests a round, each toolset prepared and used once before timing).

``--against REV`` adds the format of a git revision (``ab_chatml.load_revision``), timed in the same run
(the everyday corpus: the agent row's toolsets are prepared by the working tree's package).

``--spans`` (``chatml-multi-system`` and ``harmony``, the everyday corpus) also times ``render_spans``
and the floor's (``floor_render_spans``: the same text, each message's ranges, the generated ranges
and the losses, for that corpus only), each compared with ours whole every round, and reports
``render_spans`` against ``render`` for ours and for the floor: the budget of 1.2× at the floor.

``--floor-from DIR`` takes the floor from a module compiled with mypyc (``floor_chatml.py``,
``floor_harmony.py``, ``floor_gpt_oss.py``), for the floor of the compiled build: run it with the compiled build's
interpreter, outside the source tree.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_floor.py [--rounds 5]
        [--format chatml-multi-system|chatml-safety|harmony|gpt-oss] [--corpus everyday|agent] [--against REV]
        [--spans]
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The source tree last: an installed package (the compiled build in its own venv) is the one
# imported where there is one; PYTHONPATH=. puts the tree first.
sys.path.append(str(Path(__file__).resolve().parent.parent))

import engines
import heldout
import run_all
from run_all import FLAVOURS, TEMPLATES
from timing import Contender, straight

import prompt_formats as pf

#: Each format's family package and class, for ``--against`` (a revision's format).
CLASSES = {
    "chatml-multi-system": ("chatml", "ChatMLMultiSystemFormat"), "chatml-safety": ("chatml", "ChatMLSafetyFormat"),
    "harmony": ("harmony", "HarmonyFormat"), "gpt-oss": ("gpt_oss", "GptOssFormat"),
}
#: The module of each format's floor renderer (``floor_render``).
FLOORS = {
    "chatml-multi-system": "floor_chatml", "chatml-safety": "floor_chatml", "harmony": "floor_harmony",
    "gpt-oss": "floor_gpt_oss",
}
#: The one corpus of a floor written for one row only.
ONLY_CORPUS = {"harmony": "everyday", "gpt-oss": "agent"}
REFERENCES = ("Jinja2", "MiniJinja", "Go text/template")
#: The formats whose floor module has ``floor_render_spans`` (``--spans``).
SPANS_FLOORS = ("chatml-multi-system", "harmony")
OURS_SPANS, FLOOR_SPANS = "ours render_spans", "floor render_spans"


def _check(outputs: dict[str, list[Any]], jobs: Sequence[Any]) -> None:
    reference = next(name for name in REFERENCES if name in outputs)
    for name in outputs.keys() - set(REFERENCES):
        texts = [rendered.text for rendered in outputs[name]] if name.endswith("render_spans") else outputs[name]
        bad = [i for i, (a, b) in enumerate(zip(texts, outputs[reference], strict=True)) if a != b]
        if bad:
            raise SystemExit(f"bench_floor: {name} differs from {reference} on job(s) {bad[:10]}; not reporting")
    if OURS_SPANS in outputs:  # the ranges and the losses too
        bad = [i for i, (a, b) in enumerate(zip(outputs[OURS_SPANS], outputs[FLOOR_SPANS], strict=True)) if a != b]
        if bad:
            raise SystemExit(f"bench_floor: the floor's render_spans differs from ours on job(s) {bad[:10]}")


def _references(name: str, tmp: Path) -> tuple[list[Contender], Callable[[], None]]:
    """The reference engines of a format, and what closes them: Jinja2 and MiniJinja (where
    installed) for ChatML; Go's ``text/template`` (``engines.GoHarmony``, timed inside Go) for harmony."""
    received = heldout.rendered_as_received
    if name == "harmony":
        go = engines.GoHarmony(tmp)
        return [("Go text/template", go.run_wire, True)], go.close
    contenders: list[Contender] = [("Jinja2", received(engines.jinja2_renderer(TEMPLATES[name])), True)]
    if engines.has_minijinja():
        contenders.append(("MiniJinja", received(engines.minijinja_renderer(TEMPLATES[name])), True))
    return contenders, lambda: None


def _corpus(name: str, corpus: str) -> tuple[Callable[[int], Sequence[Any]], str]:
    if corpus == "agent":
        return run_all.agent_257(name, True), "agent-257, prepared toolset"
    return (lambda r: heldout.everyday_jobs(300, r, FLAVOURS[name])), "everyday (300 requests)"


def _report(name: str, label: str, rounds: int, median: dict[str, float], against: str | None) -> None:
    print(f"{name}, {label}, {rounds} rounds, median CPU µs per request:")
    for contender, us in median.items():
        print(f"  {contender:16} {us:8.1f}")
    for reference in REFERENCES:
        if reference in median:
            print(f"  {reference}: ours {median[reference] / median['ours']:.1f}×, "
                  f"floor {median[reference] / median['floor']:.1f}×")
    print(f"  floor / ours time: {median['floor'] / median['ours']:.2f}")
    if against:
        print(f"  ours / {against} time: {median['ours'] / median[against]:.2f}")
    if OURS_SPANS in median:
        print(f"  render_spans / render time: ours {median[OURS_SPANS] / median['ours']:.2f}, "
              f"floor {median[FLOOR_SPANS] / median['floor']:.2f}; "
              f"the floor's render_spans / our render: {median[FLOOR_SPANS] / median['ours']:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--format", choices=sorted(FLOORS), default="chatml-multi-system")
    parser.add_argument("--corpus", choices=("everyday", "agent"), default="everyday",
                        help="the everyday corpus (300 requests a round) or the prepared agent row's")
    parser.add_argument("--against", metavar="REV", help="also time the format at this git revision")
    parser.add_argument("--floor-from", metavar="DIR", type=Path,
                        help="import the floor's module from DIR (where it was compiled with mypyc)")
    parser.add_argument("--spans", action="store_true",
                        help="also render_spans and the floor's (chatml-multi-system, harmony; the everyday corpus)")
    args = parser.parse_args(argv)
    if args.format in ONLY_CORPUS:
        args.corpus = ONLY_CORPUS[args.format]
    if args.against and args.corpus == "agent":  # its toolsets are prepared by the working tree's package
        parser.error("--against: the everyday corpus only")
    if args.spans and (args.format not in SPANS_FLOORS or args.corpus != "everyday"):
        parser.error(f"--spans: the everyday corpus of {' or '.join(SPANS_FLOORS)} only")
    if args.floor_from is not None:
        sys.path.insert(0, str(args.floor_from.resolve()))
    floor = importlib.import_module(FLOORS[args.format])
    print(f"package: {'compiled' if pf.compiled else 'pure'} ({Path(pf.__file__).parent}); "
          f"floor: {'pure' if floor.__file__.endswith('.py') else 'compiled'} ({floor.__file__})")
    received = heldout.rendered_as_received
    tmp = tempfile.TemporaryDirectory()
    references, close = _references(args.format, Path(tmp.name))
    contenders: list[Contender] = [
        ("ours", received(pf.get_format(args.format).render), True),
        ("floor", received(floor.floor_render), True),
        *references,
    ]
    if args.spans:
        contenders[2:2] = [(OURS_SPANS, received(pf.get_format(args.format).render_spans), True),
                           (FLOOR_SPANS, received(floor.floor_render_spans), True)]
    if args.against:
        import ab_chatml  # (it puts the source tree first on sys.path: imported after the package)

        chatml = ab_chatml.load_revision(args.against, Path(tmp.name))[0]
        family, class_name = CLASSES[args.format]
        module = importlib.import_module(chatml.__name__.replace(".chatml", "." + family))
        contenders.insert(1, (args.against, received(getattr(module, class_name)().render), True))
    jobs_for_round, label = _corpus(args.format, args.corpus)
    try:
        timings = straight(contenders, lambda r: heldout.to_wire(jobs_for_round(r)), args.rounds, _check)
    finally:
        close()
    _report(args.format, label, args.rounds, {t.name: t.median for t in timings}, args.against)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
