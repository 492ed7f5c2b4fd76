"""Issue #2: ChatML rendering per conversation — this library against Jinja2 and MiniJinja, in one run.

The corpus is :func:`corpus.realistic_requests` (fixed seed): short and long chats, chats with a few
tools and a tool round, agent tool loops, conversations with several system messages. Every
conversation is rendered with its own tool list and ``add_generation_prompt=True`` by:

- ``prompt_formats``: ``get_format(...).render(messages, tools, True)`` with the plain tool dicts
  (what a server does on each request), and again with a :class:`~prompt_formats.PreparedTools`
  per conversation made before timing (what a server that keeps its toolsets gets);
- Jinja2 configured as transformers configures it, the template compiled once;
- MiniJinja configured as close to that as it allows (see ``engines.py``).

Before timing, every conversation's output is compared: ours must equal Jinja2's byte for byte (the
script stops otherwise) and whether MiniJinja's does is printed. Timing is interleaved (see
``timing.py``); the figures are the mean time per conversation in the fastest round.

Usage::

    .venv/bin/python benchmarks/bench_chatml.py [--format chatml-multi-system] [--conversations 300]
        [--seed 0] [--rounds 15]
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import corpus
import engines
from timing import interleaved, markdown_table

import prompt_formats as pf

TEMPLATES = {"chatml-multi-system": "chatml_multi_system.jinja", "chatml-safety": "chatml_upstream.jinja"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--format", default="chatml-multi-system", choices=sorted(TEMPLATES))
    parser.add_argument("--conversations", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)

    # The upstream template raises for a system message after the first: keep one for chatml-safety.
    requests = corpus.realistic_requests(args.conversations, args.seed, single_system=args.format == "chatml-safety")
    fmt = pf.get_format(args.format)
    jinja = engines.jinja2_renderer(TEMPLATES[args.format])
    mini = engines.minijinja_renderer(TEMPLATES[args.format])
    prepared = [(r.messages, pf.prepare_tools(r.tools) if r.tools else None) for r in requests]

    ours_out = [fmt.render(r.messages, r.tools, True) for r in requests]
    jinja_out = [jinja(r.messages, r.tools, True) for r in requests]
    mini_out = [mini(r.messages, r.tools, True) for r in requests]
    prepared_out = [fmt.render(m, t, True) for m, t in prepared]
    ours_diff = sum(a != b for a, b in zip(ours_out, jinja_out, strict=True))
    ours_diff += sum(a != b for a, b in zip(prepared_out, jinja_out, strict=True))
    mini_diff = sum(a != b for a, b in zip(mini_out, jinja_out, strict=True))
    if ours_diff:
        print(f"error: {ours_diff} renders differ from Jinja2; not timing wrong output", file=sys.stderr)
        return 1

    def run_ours() -> None:
        for r in requests:
            fmt.render(r.messages, r.tools, True)

    def run_prepared() -> None:
        for messages, tools in prepared:
            fmt.render(messages, tools, True)

    def run_jinja() -> None:
        for r in requests:
            jinja(r.messages, r.tools, True)

    def run_mini() -> None:
        for r in requests:
            mini(r.messages, r.tools, True)

    n = len(requests)
    timings = interleaved(
        [("prompt_formats", run_ours), ("prompt_formats, prepared toolsets", run_prepared),
         ("Jinja2", run_jinja), ("MiniJinja", run_mini)],
        items=n,
        rounds=args.rounds,
    )
    by_name = {t.name: t for t in timings}
    ours = by_name["prompt_formats"].best

    messages = sum(len(r.messages) for r in requests)
    with_tools = sum(1 for r in requests if r.tools)
    size = sum(len(text.encode()) for text in ours_out)
    versions = engines.versions()
    print(f"## ChatML per conversation ({args.format}), {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}\n")
    print(f"Corpus: `realistic_requests({n}, seed={args.seed})`: {messages / n:.1f} messages and "
          f"{size / n / 1024:.1f} KiB of prompt per conversation on average, {with_tools} of {n} with tools.  ")
    print(f"Python {versions['python']}, Jinja2 {versions['jinja2']}, MiniJinja {versions['minijinja']}, "
          f"{platform.machine()}; {args.rounds} interleaved rounds: fastest round (median of the rounds).  ")
    print(f"Output: ours equals Jinja2 on {n}/{n} (plain and prepared tools); "
          f"MiniJinja equals Jinja2 on {n - mini_diff}/{n}.\n")
    rows = []
    for t in timings:
        ratio = "1" if t.name == "prompt_formats" else f"{t.best / ours:.1f}"
        rows.append([t.name, f"{t.best:.1f} ({t.median:.1f})", ratio])
    print(markdown_table(["renderer", "µs per conversation", "time relative to prompt_formats"], rows))
    jinja_ratio = by_name["Jinja2"].best / ours
    mini_ratio = by_name["MiniJinja"].best / ours
    prepared_best = by_name["prompt_formats, prepared toolsets"].best
    print(f"\nprompt_formats is {jinja_ratio:.1f}× faster than Jinja2 (goal 30×) and {mini_ratio:.1f}× faster "
          f"than MiniJinja (goal 8×) with plain tool dicts; "
          f"{by_name['Jinja2'].best / prepared_best:.1f}× and "
          f"{by_name['MiniJinja'].best / prepared_best:.1f}× "
          "with prepared toolsets.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
