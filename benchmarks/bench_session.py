"""Follow-up agent requests through ``fmt.session`` against a prepared render of the same request, in one run.

The workload is the agent corpus of ``bench_agent.py`` (:func:`corpus.agent_request`: 257 messages,
40 tools, tool loops with reasoning, system reminders, new user queries); for ``gpt-oss`` as
``bench_gpt_oss.py`` adapts it to that template (reminders inline, a tool call's reasoning kept
where it also has a preamble: the template refuses both). A *request* is a prefix of
the session that ends where the model is asked for an assistant turn (the next message is the
assistant's); the follow-ups are the last ``--follow-ups`` requests of each session, in order.

- ``session``: one ``fmt.session(tools, **options)`` per session renders the first of those
  requests (untimed: the server's previous request), then each follow-up (timed);
- ``fresh session``: for each follow-up, a new ``fmt.session(prepared_tools, **options)`` primed
  with the request before it (untimed), then the follow-up (timed): a server that keeps no session
  between requests but meets the conversation's previous request again (a retry, another replica);
- ``prepared``: ``fmt.render(request, prepared_tools, True, **options)`` for the same follow-ups,
  the toolset prepared once before timing (a server that keeps its toolset per session).

Each follow-up is rendered once per pass (a straight pass; passes are repeated and interleaved, the
fastest and the median reported). Every session output is first compared with ``fmt.render``'s, and
for the ChatML formats with Jinja2's, byte for byte (the script stops on a difference).

Usage::

    .venv/bin/python benchmarks/bench_session.py [--seeds 3] [--follow-ups 24] [--rounds 9]
    cd /tmp && /path/to/.venv-compiled/bin/python /path/to/benchmarks/bench_session.py   # the compiled build
"""

from __future__ import annotations

import argparse
import itertools
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The source tree last: an installed package (the compiled build in its own venv) is the one
# imported where there is one; PYTHONPATH=. puts the tree first.
sys.path.append(str(Path(__file__).resolve().parent.parent))

import corpus
import engines
from timing import interleaved, markdown_table

import prompt_formats as pf

OPTIONS: dict[str, dict[str, Any]] = {
    "harmony": {"current_date": "2025-08-05", "reasoning_effort": "medium"},
    "gpt-oss": {"current_date": "2025-08-05", "reasoning_effort": "medium"},
}
CHATML_TEMPLATES = {"chatml-multi-system": "chatml_multi_system.jinja", "chatml-safety": "chatml_upstream.jinja"}


def follow_ups(request: corpus.Request, count: int) -> list[list[Any]]:
    """The session's last ``count + 1`` requests: prefixes ending right before an assistant message."""
    messages = request.messages
    ends = [k for k in range(2, len(messages)) if messages[k]["role"] == "assistant"]
    return [messages[:k] for k in ends[-(count + 1):]]


def agent_requests(name: str, seeds: int) -> list[corpus.Request]:
    """The agent sessions for a format (see the module docstring)."""
    if name == "gpt-oss":
        import bench_gpt_oss

        return bench_gpt_oss.requests(seeds)
    reminders = "inline" if name == "chatml-safety" else "system"
    return [corpus.agent_request(257, 40, seed, reminders=reminders) for seed in range(seeds)]


def session_run(fmt: pf.ChatFormat, sessions: list[tuple[Any, list[list[Any]]]]) -> Callable[[], float]:
    """Self-timed: a new session per agent session, its first request untimed, CPU µs per follow-up."""
    options = OPTIONS.get(fmt.name, {})

    def run() -> float:
        elapsed, items = 0, 0
        for tools, requests in sessions:
            session = fmt.session(tools, **options)
            session.render(requests[0], True)
            start = time.thread_time_ns()
            for messages in requests[1:]:
                session.render(messages, True)
            elapsed += time.thread_time_ns() - start
            items += len(requests) - 1
        return elapsed / items / 1000

    return run


def fresh_run(fmt: pf.ChatFormat, sessions: list[tuple[Any, list[list[Any]]]]) -> Callable[[], float]:
    """Self-timed: a new session per follow-up, primed untimed with the request before it, CPU µs per follow-up."""
    options = OPTIONS.get(fmt.name, {})
    jobs = [(pf.prepare_tools(tools), requests) for tools, requests in sessions]

    def run() -> float:
        elapsed, items = 0, 0
        for prepared, requests in jobs:
            for before, messages in itertools.pairwise(requests):
                session = fmt.session(prepared, **options)
                session.render(before, True)
                start = time.thread_time_ns()
                session.render(messages, True)
                elapsed += time.thread_time_ns() - start
                items += 1
        return elapsed / items / 1000

    return run


def prepared_run(fmt: pf.ChatFormat, sessions: list[tuple[Any, list[list[Any]]]]) -> Callable[[], float]:
    """Self-timed: each follow-up rendered with the session's toolset prepared once, CPU µs per follow-up."""
    options = OPTIONS.get(fmt.name, {})
    jobs = [(pf.prepare_tools(tools), requests) for tools, requests in sessions]
    render = fmt.render

    def run() -> float:
        elapsed, items = 0, 0
        for prepared, requests in jobs:
            render(requests[0], prepared, True, **options)
            start = time.thread_time_ns()
            for messages in requests[1:]:
                render(messages, prepared, True, **options)
            elapsed += time.thread_time_ns() - start
            items += len(requests) - 1
        return elapsed / items / 1000

    return run


def check(fmt: pf.ChatFormat, sessions: list[tuple[Any, list[list[Any]]]]) -> None:
    """Stop unless every follow-up through a session, kept or fresh, is ``fmt.render``'s (Jinja2's for ChatML)."""
    options = OPTIONS.get(fmt.name, {})
    jinja = engines.jinja2_renderer(CHATML_TEMPLATES[fmt.name]) if fmt.name in CHATML_TEMPLATES else None
    for tools, requests in sessions:
        session = fmt.session(tools, **options)
        for messages in requests:
            got = session.render(messages, True)
            if got != fmt.render(messages, tools, True, **options) or (
                    jinja is not None and got != jinja(messages, tools, True)):
                raise SystemExit(f"bench_session: {fmt.name} differs at a request of {len(messages)} messages")
        prepared = pf.prepare_tools(tools)
        for before, messages in itertools.pairwise(requests):
            fresh = fmt.session(prepared, **options)
            fresh.render(before, True)
            if fresh.render(messages, True) != fmt.render(messages, tools, True, **options):
                raise SystemExit(f"bench_session: {fmt.name}'s fresh session differs at {len(messages)} messages")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="agent sessions per format (seeds 0..N-1)")
    parser.add_argument("--follow-ups", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--formats", nargs="*", default=None,
                        help="default: every registered format")
    args = parser.parse_args(argv)
    rows = []
    for name in args.formats or pf.available_formats():
        fmt = pf.get_format(name)
        requests = agent_requests(name, args.seeds)
        sessions = [(r.tools, follow_ups(r, args.follow_ups)) for r in requests]
        check(fmt, sessions)
        items = sum(len(prefixes) - 1 for _, prefixes in sessions)
        timings = {t.name: t for t in interleaved(
            [("session", session_run(fmt, sessions)), ("fresh", fresh_run(fmt, sessions)),
             ("prepared", prepared_run(fmt, sessions))],
            items=items, rounds=args.rounds)}
        mine, fresh, base = timings["session"], timings["fresh"], timings["prepared"]
        mean_messages = sum(len(p) for _, prefixes in sessions for p in prefixes[1:]) / items
        rows.append([f"`{name}`", "yes" if fmt.renders_incrementally else "no (full renders)",
                     f"{items} ({mean_messages:.0f} messages on average)",
                     f"{base.best:.0f} ({base.median:.0f})", f"{mine.best:.0f} ({mine.median:.0f})",
                     f"**{base.best / mine.best:.1f}×**", f"{fresh.best:.0f} ({fresh.median:.0f})",
                     f"**{base.best / fresh.best:.1f}×**"])
        print(f"measured {name}", file=sys.stderr)
    print(f"{'compiled' if pf.compiled else 'pure'} build; "
          f"Python {platform.python_version()}, {platform.machine()}; {args.rounds} interleaved rounds; CPU µs per "
          "follow-up request in the fastest round (median in parentheses).\n")
    print(markdown_table(["format", "incremental", "follow-ups", "prepared render µs", "session µs",
                          "session cheaper by", "fresh session µs", "fresh session cheaper by"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
