"""gpt-oss on agent-shaped requests: ours against Jinja2 and MiniJinja, in one run.

The workload is :func:`corpus.agent_request` (a coding-agent session: long system prompt, 40 tools
with nested schemas, tool loops with reasoning and one to three calls per turn, tool results of
realistic size), for several seeds, with its system reminders as agents send them: later system
messages, which the template drops (``--reminders inline`` moves them into the next user message
instead). One change makes the corpus valid for the template, which raises on an assistant tool
call carrying both content and reasoning: such a turn keeps its reasoning and loses its preamble.

Contenders, all rendering every request with ``add_generation_prompt=True``:

- Jinja2 configured as transformers configures it and MiniJinja (``engines.py``), the template
  compiled once, on the messages as transformers hands them to the template (reasoning aliased to
  ``thinking`` beforehand, untimed: generous to the engines, which would pay for it in transformers);
- ours with the plain tool dicts, repeated (the content-keyed cache of plain tool lists holds the
  rendered ``functions`` namespace, as from the session's previous requests);
- ours with plain tools at first sight (that cache cleared before each render; the clearing is timed);
- ours with a :class:`~prompt_formats.PreparedTools` made once before timing (the namespace cached on it).

Jinja2's output is the reference: every output of ours is compared with it first, byte for byte
(the script stops on a difference); MiniJinja's agreement is reported. Timing: ``timing.interleaved``
with ``timing.in_blocks`` (CPU time, rotating rounds, the fastest round kept; each block rendered
twice untimed, then once timed).

Usage::

    .venv/bin/python benchmarks/bench_gpt_oss.py [--seeds 3] [--rounds 7] [--reminders system|inline]
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

import corpus
import engines
from oracles import alias_reasoning
from timing import in_blocks, interleaved, markdown_table

import prompt_formats as pf
from prompt_formats.tools import PLAIN_TOOLS_CACHE

TEMPLATE = "gpt_oss.jinja"
DAY = "2025-08-05"
OPTIONS: dict[str, Any] = {"current_date": DAY, "reasoning_effort": "medium"}
GOALS = {"plain tools, repeated": 15.0, "prepared": 30.0}


def _fixed_day(fmt: str) -> str:
    return DAY


ENGINE_OPTIONS: dict[str, Any] = {"reasoning_effort": "medium", "strftime_now": _fixed_day}


def _for_gpt_oss(message: dict[str, Any]) -> dict[str, Any]:
    """A tool-call turn with both a preamble and reasoning keeps the reasoning (the template refuses both)."""
    if message.get("tool_calls") and message.get("content") and message.get("reasoning_content"):
        return {key: value for key, value in message.items() if key != "content"}
    return message


def requests(seeds: int, n_messages: int = 257, reminders: str = "system") -> list[corpus.Request]:
    """The agent sessions, adapted to the template (see the module docstring)."""
    out = []
    for seed in range(seeds):
        request = corpus.agent_request(n_messages, 40, seed, reminders="inline" if reminders == "inline" else "system")
        out.append(corpus.Request([_for_gpt_oss(m) for m in request.messages], request.tools))
    return out


def _ours(jobs: list[tuple[Any, Any]], first_sight: bool) -> Callable[[], float]:
    render = pf.get_format("gpt-oss").render
    clear = PLAIN_TOOLS_CACHE.clear

    def run(chunk: Sequence[tuple[Any, Any]]) -> None:
        for messages, tools in chunk:
            render(messages, tools, True, **OPTIONS)

    def run_first_sight(chunk: Sequence[tuple[Any, Any]]) -> None:
        for messages, tools in chunk:
            clear()
            render(messages, tools, True, **OPTIONS)

    return in_blocks(run_first_sight if first_sight else run, jobs, len(jobs))


def _engine(render: engines.Renderer, jobs: list[tuple[Any, Any]]) -> Callable[[], float]:
    def run(chunk: Sequence[tuple[Any, Any]]) -> None:
        for messages, tools in chunk:
            render(messages, tools, True, **ENGINE_OPTIONS)

    return in_blocks(run, jobs, len(jobs))


def _checked(reqs: list[corpus.Request], engine_jobs: list[tuple[Any, Any]]) -> tuple[list[str], str]:
    """Jinja2's outputs, after checking ours against them; and a note on MiniJinja's agreement."""
    fmt = pf.get_format("gpt-oss")
    jinja, mini = engines.jinja2_renderer(TEMPLATE), engines.minijinja_renderer(TEMPLATE)
    want = [jinja(m, t, True, **ENGINE_OPTIONS) for m, t in engine_jobs]
    for label, tools_of in (("plain", lambda r: r.tools), ("prepared", lambda r: pf.prepare_tools(r.tools))):
        PLAIN_TOOLS_CACHE.clear()
        for _ in range(2):  # first sight, then from the cache
            got = [fmt.render(r.messages, tools_of(r), True, **OPTIONS) for r in reqs]
            bad = [i for i, (a, b) in enumerate(zip(got, want, strict=True)) if a != b]
            if bad:
                raise SystemExit(f"bench_gpt_oss: ours ({label} tools) differs from Jinja2 on requests {bad}")
    same = sum(mini(m, t, True, **ENGINE_OPTIONS) == w for (m, t), w in zip(engine_jobs, want, strict=True))
    return want, f"MiniJinja's output equals Jinja2's on {same}/{len(reqs)} requests."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="agent requests (seeds 0..N-1)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--reminders", choices=("system", "inline"), default="system",
                        help="later system messages as sent (default), or moved into the next user message")
    args = parser.parse_args(argv)
    reqs = requests(args.seeds, reminders=args.reminders)
    engine_jobs = [(alias_reasoning(r.messages), r.tools) for r in reqs]
    want, mini_note = _checked(reqs, engine_jobs)
    plain = [(r.messages, r.tools) for r in reqs]
    prepared = [(r.messages, pf.prepare_tools(r.tools)) for r in reqs]
    contenders: list[tuple[str, Callable[[], float | None]]] = [
        ("Jinja2", _engine(engines.jinja2_renderer(TEMPLATE), engine_jobs)),
        ("MiniJinja", _engine(engines.minijinja_renderer(TEMPLATE), engine_jobs)),
        ("plain tools, repeated", _ours(plain, False)),
        ("plain tools, first sight", _ours(plain, True)),
        ("prepared", _ours(prepared, False)),
    ]
    timings = {t.name: t for t in interleaved(contenders, items=len(reqs), rounds=args.rounds)}
    jinja, mini = timings["Jinja2"].best, timings["MiniJinja"].best
    rows = []
    for name, timing in timings.items():
        row = [name, f"{timing.best / 1000:.3f} ({timing.median / 1000:.3f})"]
        row += [f"**{jinja / timing.best:.1f}×**", f"{mini / timing.best:.1f}×"]
        row.append(f"{GOALS[name]:.0f}×" if name in GOALS else "")
        rows.append(row)
    versions = engines.versions()
    tools_kb = sum(len(json.dumps(r.tools, ensure_ascii=False).encode()) for r in reqs) / len(reqs) / 1000
    prompt_kb = sum(len(w.encode()) for w in want) / len(want) / 1000
    print(f"## gpt-oss agent requests, {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}\n")
    print(f"Python {versions['python']}, Jinja2 {versions['jinja2']}, MiniJinja {versions['minijinja']}, "
          f"{platform.machine()}; {len(reqs)} requests of {len(reqs[0].messages)} messages, 40 tools "
          f"({tools_kb:.0f} KB of tool JSON), {prompt_kb:.0f} KB prompt; {args.rounds} interleaved rounds; CPU "
          "ms per request in the fastest round (median of the rounds in parentheses).\n")
    print(markdown_table(["renderer", "ms per request", "vs Jinja2", "vs MiniJinja", "goal vs Jinja2"], rows))
    print(f"\n- {mini_note}")
    failed = [name for name, goal in GOALS.items() if jinja / timings[name].best < goal]
    print(f"- Goals ({', '.join(f'{n}: {g:.0f}×' for n, g in GOALS.items())}): "
          + ("met" if not failed else "missed by " + ", ".join(failed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
