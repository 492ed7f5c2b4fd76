"""Issue #2: ChatML rendering per conversation — this library against Jinja2 and MiniJinja, in one run.

The corpus is :func:`corpus.realistic_requests` (fixed seed): short and long chats, chats with a few
tools and a tool round, agent tool loops, conversations with several system messages. Every
conversation is rendered with its own tool list and ``add_generation_prompt=True`` by:

- ``prompt_formats`` with the plain tool dicts, three ways: with a *repeated toolset* (each
  conversation's tool list was rendered before, as on the previous turn of its session, so the
  content-keyed cache of plain tool lists holds it: see ``docs/prepared-tools.md``), at *first
  sight* (that cache cleared before each render; the clearing is timed too), and with a
  :class:`~prompt_formats.PreparedTools` per conversation made before timing (what a server that
  keeps its toolsets gets);
- Jinja2 configured as transformers configures it, the template compiled once;
- MiniJinja configured as close to that as it allows (see ``engines.py``).

Before timing, every conversation's output is compared: ours must equal Jinja2's byte for byte (the
script stops otherwise) and whether MiniJinja's does is printed.

The headline is a straight pass (``timing.straight``): per round a fresh corpus (seed + round),
rendered once by ours (plain tool dicts), Jinja2 and MiniJinja, no warm-up, the first round
counted, the median over rounds. The second table is *warm*, for contrast only: interleaved, in
blocks of ``--block`` conversations, each block rendered twice untimed (which fills the cache of
plain tool lists and the CPU caches) then once timed (``timing.warm_blocks``), the fastest round.
The held-out corpus of the headline rows in ``docs/performance.md`` is ``run_all.py``'s.

Usage::

    .venv/bin/python benchmarks/bench_chatml.py [--format chatml-multi-system] [--conversations 300]
        [--seed 0] [--rounds 15]
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import corpus
import engines
from heldout import Job
from timing import Timing, interleaved, markdown_table, straight, warm_blocks

import prompt_formats as pf
from prompt_formats.tools import PLAIN_TOOLS_CACHE

TEMPLATES = {"chatml-multi-system": "chatml_multi_system.jinja", "chatml-safety": "chatml_upstream.jinja"}


WARM = "prompt_formats, plain tool dicts, repeated toolset (cache warm)"
FIRST = "prompt_formats, plain tool dicts, first sight (cache cleared before each render)"
PREPARED = "prompt_formats, prepared toolsets"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--format", default="chatml-multi-system", choices=sorted(TEMPLATES))
    parser.add_argument("--conversations", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--block", type=int, default=32, help="conversations per block of the repeated-toolset run")
    args = parser.parse_args(argv)

    # The upstream template raises for a system message after the first: keep one for chatml-safety.
    requests = corpus.realistic_requests(args.conversations, args.seed, single_system=args.format == "chatml-safety")
    fmt = pf.get_format(args.format)
    jinja = engines.jinja2_renderer(TEMPLATES[args.format])
    mini = engines.minijinja_renderer(TEMPLATES[args.format])
    prepared = [(r.messages, pf.prepare_tools(r.tools) if r.tools else None) for r in requests]

    first_out, ours_out = [], []
    for r in requests:
        PLAIN_TOOLS_CACHE.clear()
        first_out.append(fmt.render(r.messages, r.tools, True))
        ours_out.append(fmt.render(r.messages, r.tools, True))  # from the cache
    jinja_out = [jinja(r.messages, r.tools, True) for r in requests]
    mini_out = [mini(r.messages, r.tools, True) for r in requests]
    prepared_out = [fmt.render(m, t, True) for m, t in prepared]
    ours_diff = sum(a != b for a, b in zip(ours_out, jinja_out, strict=True))
    ours_diff += sum(a != b for a, b in zip(first_out, jinja_out, strict=True))
    ours_diff += sum(a != b for a, b in zip(prepared_out, jinja_out, strict=True))
    mini_diff = sum(a != b for a, b in zip(mini_out, jinja_out, strict=True))
    if ours_diff:
        print(f"error: {ours_diff} renders differ from Jinja2; not timing wrong output", file=sys.stderr)
        return 1

    headline = _straight(fmt, args, jinja, mini)
    render = fmt.render
    clear = PLAIN_TOOLS_CACHE.clear

    def ours(chunk: Sequence[corpus.Request]) -> None:
        for r in chunk:
            render(r.messages, r.tools, True)

    def ours_first_sight(chunk: Sequence[corpus.Request]) -> None:
        for r in chunk:
            clear()
            render(r.messages, r.tools, True)

    def ours_prepared(chunk: Sequence[tuple[Any, Any]]) -> None:
        for messages, tools in chunk:
            render(messages, tools, True)

    def reference(engine: engines.Renderer) -> Callable[[Sequence[corpus.Request]], None]:
        def work(chunk: Sequence[corpus.Request]) -> None:
            for r in chunk:
                engine(r.messages, r.tools, True)

        return work

    n = len(requests)
    timings = interleaved(
        [
            (WARM, warm_blocks(ours, requests, args.block)),
            (FIRST, warm_blocks(ours_first_sight, requests, args.block)),
            (PREPARED, warm_blocks(ours_prepared, prepared, args.block)),
            ("Jinja2", warm_blocks(reference(jinja), requests, args.block)),
            ("MiniJinja", warm_blocks(reference(mini), requests, args.block)),
        ],
        items=n,
        rounds=args.rounds,
    )
    by_name = {t.name: t for t in timings}
    ours = by_name[WARM].best

    messages = sum(len(r.messages) for r in requests)
    with_tools = sum(1 for r in requests if r.tools)
    size = sum(len(text.encode()) for text in ours_out)
    versions = engines.versions()
    print(f"## ChatML per conversation ({args.format}), {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}\n")
    print(f"Corpus: `realistic_requests({n}, seed={args.seed})`: {messages / n:.1f} messages and "
          f"{size / n / 1024:.1f} KiB of prompt per conversation on average, {with_tools} of {n} with tools.  ")
    print(f"Python {versions['python']}, Jinja2 {versions['jinja2']}, MiniJinja {versions['minijinja']}, "
          f"{platform.machine()}; {args.rounds} interleaved rounds, CPU time: fastest round (median of the rounds); "
          f"every run in blocks of {args.block} conversations.  ")
    print(f"Output: ours equals Jinja2 on {n}/{n} (plain tools from the cache and at first sight, prepared tools); "
          f"MiniJinja equals Jinja2 on {n - mini_diff}/{n}.\n")
    rows = []
    for t in timings:
        ratio = "1" if t.name == WARM else f"{t.best / ours:.2f}"
        rows.append([t.name, f"{t.best:.1f} ({t.median:.1f})", ratio])
    print("Straight pass (the headline: a fresh corpus per round, rendered once, median of the rounds):\n")
    ours_straight = headline[0].median
    print(markdown_table(["renderer", "µs per conversation", "speed-up of ours"],
                         [[t.name, f"{t.median:.1f}", f"{t.median / ours_straight:.1f}×"] for t in headline]))
    print("\n**Warm** (each block rendered twice untimed first; fastest round; not a headline figure):\n")
    print(markdown_table(["renderer", "µs per conversation", "time relative to the first row"], rows))
    print()
    for name in (WARM, FIRST, PREPARED):
        mine = by_name[name].best
        print(f"- warm, {name}: {by_name['Jinja2'].best / mine:.1f}× faster than Jinja2, "
              f"{by_name['MiniJinja'].best / mine:.1f}× faster than MiniJinja")
    return 0


def _straight(fmt: pf.ChatFormat, args: argparse.Namespace, jinja: engines.Renderer,
              mini: engines.Renderer) -> list[Timing]:
    """The headline: straight passes over a fresh corpus per round (``timing.straight``)."""
    def make(r: int) -> list[Job]:
        requests = corpus.realistic_requests(args.conversations, args.seed + r,
                                             single_system=args.format == "chatml-safety")
        return [Job(q.messages, q.tools, {}) for q in requests]

    def run(render: engines.Renderer) -> Callable[[Sequence[Job]], list[str]]:
        return lambda jobs: [render(m, t, True) for m, t, _ in jobs]

    def check(outputs: dict[str, list[Any]], jobs: Sequence[Job]) -> None:
        if outputs["ours, plain tool dicts"] != outputs["Jinja2"]:
            raise SystemExit("bench_chatml: ours differs from Jinja2 in a straight pass")

    return straight([("ours, plain tool dicts", run(fmt.render), False), ("Jinja2", run(jinja), False),
                     ("MiniJinja", run(mini), False)], make, args.rounds, check)


if __name__ == "__main__":
    sys.exit(main())
