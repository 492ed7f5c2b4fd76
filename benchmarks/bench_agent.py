"""Issue #7: agent-scale requests in every format, against the reference engines, in one run.

The workload is :func:`corpus.agent_request` (a coding-agent session: long system prompt, 40 tools
with nested schemas, tool loops with reasoning, system reminders), for several seeds. Each format
renders every request with ``add_generation_prompt=True``:

- ``chatml-multi-system`` (reminders as extra system messages) against Jinja2 configured as
  transformers configures it and MiniJinja, both with the template compiled once;
- ``chatml-safety`` (reminders inline, since its template allows one leading system message only;
  no control tokens in the corpus, so the guard changes nothing) against the same two engines;
- ``harmony`` against Go's ``text/template`` (``tests/support/oracle/harmony`` in ``-bench`` mode: it
  collates, builds the data and executes the template per render, timed inside Go).

Ours runs three ways: with the plain tool dicts (what a stateless server passes) and a *repeated
toolset* (the content-keyed cache of plain tool lists holds it, as from the session's previous
requests), the same at *first sight* (that cache cleared before each render; the clearing is timed
too; Harmony does not use the cache), and with a :class:`~prompt_formats.PreparedTools` made once
before timing (what a server that keeps its toolset per session gets). Every output is first
compared with its reference, byte for byte (the script stops on a difference). Every Python
contender renders its requests twice untimed, then once timed (``timing.warm_blocks``: the warm run
meets its toolsets in the cache, checked, whatever ran before it, and all contenders meet their
data equally warm in the CPU caches); Go times itself. Then the scaling check: the same session at
200 and at 1,000 messages; the cost ratio must stay at most 5.5 (linear cost gives at most 5). The
two sessions differ in their mix of text (the share of 2- and 4-byte characters, which sets what
the final join costs per character), so the 200-message session five times over (996 messages,
the same mix) is timed beside them as a second measure of the same property.

Every figure here is **warm** (each request rendered twice untimed before its timed pass): for the
scaling check and the cache's effect, not a headline. The straight-pass headline rows of the
agent corpora are ``run_all.py`` (``docs/performance.md``).

Usage::

    .venv/bin/python benchmarks/bench_agent.py [--seeds 3] [--rounds 9] [--go-renders 20]
"""

from __future__ import annotations

import argparse
import datetime
import platform
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import corpus
import engines
from timing import Timing, interleaved, markdown_table, warm_blocks

import prompt_formats as pf
from prompt_formats.tools import PLAIN_TOOLS_CACHE

HARMONY_OPTIONS: dict[str, Any] = {"current_date": "2025-08-05", "reasoning_effort": "medium"}
CHATML_TEMPLATES = {"chatml-multi-system": "chatml_multi_system.jinja", "chatml-safety": "chatml_upstream.jinja"}
SCALING_LIMIT = 5.5


def _requests(fmt: str, seeds: int, n_messages: int = 257) -> list[corpus.Request]:
    reminders = "inline" if fmt == "chatml-safety" else "system"
    return [corpus.agent_request(n_messages, 40, seed, reminders=reminders) for seed in range(seeds)]


def _go_version() -> str:
    try:
        return subprocess.run(["go", "version"], capture_output=True, text=True, check=True).stdout.split()[2]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "go (unknown version)"


class _Harmony:
    """The Go reference for Harmony: built once, timed inside Go."""

    def __init__(self, tmp: Path) -> None:
        where = str(engines.ROOT / "tests" / "support")
        if where not in sys.path:
            sys.path.insert(0, where)
        from harmony_oracle import HarmonyOracle, build_oracle, to_case

        self.oracle = HarmonyOracle(build_oracle(tmp))
        self.to_case = to_case

    def outputs(self, requests: list[corpus.Request]) -> list[str | None]:
        cases = [self.to_case(r.messages, r.tools, HARMONY_OPTIONS) for r in requests]
        return [result.get("output") for result in self.oracle.render_many(cases)]

    def timer(self, requests: list[corpus.Request], renders: int) -> Callable[[], float]:
        cases = [self.to_case(r.messages, r.tools, HARMONY_OPTIONS) for r in requests]

        def run() -> float:
            results = self.oracle.bench(cases, renders)
            return sum(float(result["ns_per_render"]) for result in results) / len(results) / 1000

        return run


def _ours(fmt: pf.ChatFormat, requests: list[corpus.Request], tools: str) -> Callable[[], float]:
    """A run of ours; ``tools``: "warm" (plain dicts, cache warm), "first" (cache cleared), "prepared".

    Self-timed (``timing.warm_blocks``): the requests are rendered twice untimed, then once timed, so
    that the warm run meets its toolsets in the cache whatever ran before it.
    """
    options = HARMONY_OPTIONS if fmt.name == "harmony" else {}
    jobs = [(r.messages, pf.prepare_tools(r.tools) if tools == "prepared" else r.tools) for r in requests]
    render = fmt.render
    clear = PLAIN_TOOLS_CACHE.clear

    def run(chunk: Sequence[tuple[Any, Any]]) -> None:
        for messages, tool_list in chunk:
            render(messages, tool_list, True, **options)

    def run_first_sight(chunk: Sequence[tuple[Any, Any]]) -> None:
        for messages, tool_list in chunk:
            clear()
            render(messages, tool_list, True, **options)

    return warm_blocks(run_first_sight if tools == "first" else run, jobs, len(jobs))


def _reference_runner(render: engines.Renderer, requests: list[corpus.Request]) -> Callable[[], float]:
    def run(chunk: Sequence[corpus.Request]) -> None:
        for r in chunk:
            render(r.messages, r.tools, True)

    return warm_blocks(run, requests, len(requests))


def _check(name: str, got: list[str], want: list[str | None]) -> None:
    bad = [i for i, (a, b) in enumerate(zip(got, want, strict=True)) if a != b]
    if bad:
        raise SystemExit(f"bench_agent: {name} differs from its reference on request(s) {bad}; not timing")


def _describe(requests: list[corpus.Request], fmt: pf.ChatFormat) -> str:
    import json

    options = HARMONY_OPTIONS if fmt.name == "harmony" else {}
    tools_kb = sum(len(json.dumps(r.tools, ensure_ascii=False).encode()) for r in requests) / len(requests) / 1000
    prompt_kb = sum(len(fmt.render(r.messages, r.tools, True, **options).encode()) for r in requests)
    return (f"{len(requests[0].messages)} messages, {len(requests[0].tools or [])} tools ({tools_kb:.0f} KB of "
            f"tool JSON), {prompt_kb / len(requests) / 1000:.0f} KB prompt")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="agent requests per format (seeds 0..N-1)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--go-renders", type=int, default=20, help="renders per Go measurement")
    parser.add_argument("--formats", nargs="*", default=None,
                        help="default: the ChatML formats and harmony (gpt-oss: benchmarks/bench_gpt_oss.py)")
    args = parser.parse_args(argv)
    names = args.formats or [n for n in pf.available_formats() if n in CHATML_TEMPLATES or n == "harmony"]

    rows: list[list[str]] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        harmony = _Harmony(Path(tmp)) if "harmony" in names else None
        for name in names:
            fmt = pf.get_format(name)
            options = HARMONY_OPTIONS if name == "harmony" else {}
            requests = _requests(name, args.seeds)
            PLAIN_TOOLS_CACHE.clear()
            ours_first = [fmt.render(r.messages, r.tools, True, **options) for r in requests]
            ours = [fmt.render(r.messages, r.tools, True, **options) for r in requests]  # from the cache
            ours_prepared = [fmt.render(r.messages, pf.prepare_tools(r.tools), True, **options) for r in requests]
            contenders: list[tuple[str, Callable[[], float | None]]] = [
                ("warm", _ours(fmt, requests, "warm")),
                ("first", _ours(fmt, requests, "first")),
                ("prepared", _ours(fmt, requests, "prepared")),
            ]
            if name == "harmony":
                assert harmony is not None
                want = harmony.outputs(requests)
                contenders.append(("Go text/template", harmony.timer(requests, args.go_renders)))
            else:
                template = CHATML_TEMPLATES[name]
                jinja = engines.jinja2_renderer(template)
                mini = engines.minijinja_renderer(template)
                want = [jinja(r.messages, r.tools, True) for r in requests]
                mini_same = sum(mini(r.messages, r.tools, True) == w for r, w in zip(requests, want, strict=True))
                notes.append(f"{name}: MiniJinja's output equals Jinja2's on {mini_same}/{len(requests)} requests.")
                contenders.append(("Jinja2", _reference_runner(jinja, requests)))
                contenders.append(("MiniJinja", _reference_runner(mini, requests)))
            _check(f"{name} (plain tools, first sight)", ours_first, want)
            _check(f"{name} (plain tools, from the cache)", ours, want)
            _check(f"{name} (prepared tools)", ours_prepared, want)
            timings = {t.name: t for t in interleaved(contenders, items=len(requests), rounds=args.rounds)}
            mine = [timings[key] for key in ("warm", "first", "prepared")]
            for ref in [t for key, t in timings.items() if key not in ("warm", "first", "prepared")]:
                row = [f"`{name}`", ref.name, f"{ref.best / 1000:.2f} ({ref.median / 1000:.2f})"]
                for t in mine:
                    row += [f"{t.best / 1000:.3f} ({t.median / 1000:.3f})", f"**{ref.best / t.best:.1f}×**"]
                rows.append(row)
            notes.append(f"{name}: {_describe(requests, fmt)} (mean over {len(requests)} requests).")
            print(f"measured {name}", file=sys.stderr)

        scaling_rows = _scaling(names, args.rounds, harmony, args.go_renders)

    versions = engines.versions()
    now = datetime.datetime.now().astimezone()
    print(f"## Agent requests, warm (not the headline: see run_all.py), {now:%Y-%m-%d %H:%M %Z}\n")
    print(f"Python {versions['python']}, Jinja2 {versions['jinja2']}, MiniJinja {versions['minijinja']}, "
          f"{_go_version()}, {platform.machine()}; {args.rounds} interleaved rounds; CPU time per request in the "
          "fastest round (median of the rounds in parentheses; Go: its own wall time); speed-ups from the "
          "fastest rounds.\n")
    print(markdown_table(
        ["format", "reference", "reference ms", "ours ms, plain tools, repeated (cache warm)", "speed-up",
         "ours ms, plain tools, first sight", "speed-up", "ours ms, prepared", "speed-up"],
        rows,
    ))
    print()
    for note in notes:
        print(f"- {note}")
    print("\n### Scaling: the same session at 200 and 1,000 messages\n")
    print(markdown_table(["format", "renderer", "200 messages ms", "1,000 messages ms", "ratio",
                          "200 messages five times over (996) ms", "ratio"], scaling_rows))
    worst = max(float(row[4]) for row in scaling_rows if row[1].startswith("ours"))
    verdict = "PASS" if worst <= SCALING_LIMIT else "FAIL"
    print(f"\nWorst ratio of ours, 1,000 to 200 messages: {worst:.2f} (limit {SCALING_LIMIT}): {verdict}")
    same_mix = max(float(row[6]) for row in scaling_rows if row[1].startswith("ours"))
    print(f"The same mix (the 200-message session five times over, 4.98 times its messages): {same_mix:.2f}")
    return 0 if worst <= SCALING_LIMIT else 1


def _five_times(request: corpus.Request) -> corpus.Request:
    """The session five times over, its leading system message once: 5n - 4 messages, the same mix."""
    messages = request.messages
    return corpus.Request(messages[:1] + messages[1:] * 5, request.tools)


def _scaling(names: list[str], rounds: int, harmony: _Harmony | None, go_renders: int) -> list[list[str]]:
    """Rows: format, renderer, ms at 200, at 1,000, ratio, ms for the 200 five times over, its ratio."""
    rows = []
    for name in names:
        fmt = pf.get_format(name)
        small, large = _requests(name, 1, 200), _requests(name, 1, 1000)
        repeated = [_five_times(small[0])]
        sizes = {"200": small, "1000": large, "x5": repeated}
        jinja = engines.jinja2_renderer(CHATML_TEMPLATES[name]) if name != "harmony" else None
        contenders: list[tuple[str, Callable[[], float | None]]] = []
        for size, requests in sizes.items():
            contenders += [(f"ours, plain tools (cache warm) {size}", _ours(fmt, requests, "warm")),
                           (f"ours, prepared {size}", _ours(fmt, requests, "prepared"))]
            if name == "harmony" and harmony is not None:
                contenders.append((f"Go {size}", harmony.timer(requests, go_renders)))
            elif jinja is not None:
                contenders.append((f"Jinja2 {size}", _reference_runner(jinja, requests)))
        timings: dict[str, Timing] = {t.name: t for t in interleaved(contenders, items=1, rounds=rounds)}
        for label in dict.fromkeys(key.rsplit(" ", 1)[0] for key in timings):
            a, b, c = (timings[f"{label} {size}"].best for size in sizes)
            rows.append([f"`{name}`", label, f"{a / 1000:.3f}", f"{b / 1000:.3f}", f"{b / a:.2f}",
                         f"{c / 1000:.3f}", f"{c / a:.2f}"])
        print(f"scaled {name}", file=sys.stderr)
    return rows


if __name__ == "__main__":
    sys.exit(main())
