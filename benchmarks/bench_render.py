"""Rendering, row by row: warm render tables, cost scaling, render_spans, sessions, assistant masks.

Modes (one per run):

- ``render``: each format on the fixed everyday corpus (``corpus.realistic_requests(300)``; also its
  requests of at most 6 messages) and on three agent-257 requests (257 messages, 40 tools), ours three
  ways (plain tool dicts with a repeated toolset, plain tool dicts at first sight (the plain-tools
  cache cleared before each render, the clearing timed), a ``PreparedTools`` made before timing)
  against the references (Jinja2 and MiniJinja where installed; Go's ``text/template`` for
  ``harmony``, timed inside Go). **Warm**: each block rendered twice untimed, then once timed
  (``timing.warm_blocks``), the fastest round; a per-row breakdown, not a headline (headline.py).
- ``scaling``: the same agent session at 200 and 1,000 messages, and the 200 five times over (the
  same mix of text): ours, warm; the 1,000-to-200 ratio must stay at most 5.5 (linear cost).
- ``spans``: ``render_spans`` against ``render`` on the same requests (prepared toolsets), warm,
  interleaved; each ``render_spans`` text compared with ``render``'s first (the budget: 1.2×).
- ``session``: the last ``--follow-ups`` requests of agent sessions through one ``fmt.session`` (kept),
  through a fresh session primed with the request before (fresh), and as a prepared render (the
  base); every session output compared with ``fmt.render``'s (and Jinja2's for ChatML) first.
- ``masks``: training data, conversations with assistant masks per second: ``render_spans`` then
  ``encode`` / ``encode_with_tokenizer`` / ``SegmentEncoder`` against transformers'
  ``apply_chat_template(..., return_assistant_tokens_mask=True)`` on the tagged templates, with the
  same byte-level BPE built offline on both sides; floor rows (the tokenizer alone on the round's new
  stretches, on the whole prompts); straight passes on the held-out corpora. Needs ``transformers``.

Every output of ours is compared with its reference before (or, in ``masks``, while) it is timed;
the run stops on a difference. Which fast path a row measures: ``compare.py --fast-paths``.

Usage::

    .venv/bin/python benchmarks/bench_render.py render [--formats chatml-multi-system,harmony] [--rounds 7]
    .venv/bin/python benchmarks/bench_render.py scaling|spans|session [--formats ...] [--rounds N]
    .venv/bin/python benchmarks/bench_render.py masks [--rounds 3] [--formats ...] [--corpus everyday|agent]
    cd /tmp && /path/to/.venv-compiled/bin/python /path/to/benchmarks/bench_render.py MODE   # the compiled build
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
# The source tree last: an installed package (the compiled build in its own venv) is the one
# imported where there is one; PYTHONPATH=. puts the tree first.
sys.path.append(str(HERE.parent))
os.environ["TOKENIZERS_PARALLELISM"] = "false"  # masks: the tokenizer's work on the timed thread, batched or not

import corpus  # noqa: E402
import engines  # noqa: E402
from corpus import FLAVOURS, OPTIONS, Flavour, Job, Request  # noqa: E402
from timing import Contender, Timing, interleaved, markdown_table, straight, warm_blocks  # noqa: E402

import prompt_formats as pf  # noqa: E402
from prompt_formats.model.tools import PLAIN_TOOLS_CACHE  # noqa: E402

Pair = tuple[Any, Any]  # (messages, tools)
#: gpt-oss's Jinja template reads today's date through strftime_now: fixed, as ours is given it.
ENGINE_OPTIONS: dict[str, dict[str, Any]] = {
    "gpt-oss": {"reasoning_effort": "medium", "strftime_now": lambda fmt: OPTIONS["gpt-oss"]["current_date"]},
}


def fixed_requests(name: str, which: str) -> list[Request]:
    """The fixed corpora: ``everyday`` (300 requests, seed 0) or ``agent`` (three agent-257 requests),
    each valid for the format's template (see corpus.py)."""
    flavour = FLAVOURS[name]
    if which == "agent":
        if name == "gpt-oss":
            return corpus.gpt_oss_agent_requests(3)
        return [corpus.agent_request_for(name, seed) for seed in range(3)]
    requests = corpus.realistic_requests(300, 0, single_system=flavour in ("chatml-strict", "gpt-oss"))
    if name == "gpt-oss":
        requests = [Request(corpus.without_call_preambles(r.messages), r.tools) for r in requests]
    if flavour in ("chatml-objects", "nemotron"):  # (their templates take object arguments only)
        requests = [Request(corpus.objects_only(r.messages), r.tools) for r in requests]
    return requests


def renders(fmt: pf.ChatFormat, pair: Pair) -> bool:
    try:
        fmt.render(pair[0], pair[1], True, **OPTIONS.get(fmt.name, {}))
    except pf.FormatError:
        return False
    return True


def calls(call: Callable[..., Any], pairs: Sequence[Pair], options: dict[str, Any],
          clear: Callable[[], None] | None = None) -> Callable[[Sequence[Pair]], None]:
    """Work for ``warm_blocks``: each pair rendered (after ``clear()``, where given: a first sight)."""
    def work(chunk: Sequence[Pair]) -> None:
        for messages, tools in chunk:
            if clear is not None:
                clear()
            call(messages, tools, True, **options)

    return work


# --- render ---------------------------------------------------------------------------------------------------

RENDER_ROWS = ("plain tools, repeated", "plain tools, first sight", "prepared")


def render_mode(args: argparse.Namespace) -> None:
    rows: list[list[str]] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        go = engines.GoHarmony(Path(tmp)) if "harmony" in args.formats else None
        for name in args.formats:
            fmt = pf.get_format(name)
            options = OPTIONS.get(name, {})
            everyday = fixed_requests(name, "everyday")
            corpora = {
                "everyday (300)": everyday,
                "everyday, ≤ 6 messages": [r for r in everyday if len(r.messages) <= 6],
                "agent-257 (3 requests, 40 tools)": fixed_requests(name, "agent"),
            }
            for label, requests in corpora.items():
                plain = [(r.messages, r.tools) for r in requests]
                prepared = [(m, pf.prepare_tools(t) if t else None) for m, t in plain]
                if go is not None and name == "harmony":
                    outputs, _ = go.run([(m, t, options) for m, t in plain])
                    refs: list[tuple[str, Callable[[], float | None]]] = [
                        ("Go text/template", lambda plain=plain, o=options: go.run([(m, t, o) for m, t in plain])[1])]
                else:
                    jinja = engines.jinja2_renderer(engines.TEMPLATES[name])
                    engine_options = ENGINE_OPTIONS.get(name, {})
                    outputs = [jinja(m, t, True, **engine_options) for m, t in plain]
                    refs = [("Jinja2", warm_blocks(calls(jinja, plain, engine_options), plain, args.block))]
                    if engines.has_minijinja():
                        mini = engines.minijinja_renderer(engines.TEMPLATES[name])
                        refs.append(("MiniJinja", warm_blocks(calls(mini, plain, engine_options), plain, args.block)))
                PLAIN_TOOLS_CACHE.clear()
                for pairs in (plain, plain, prepared):  # first sight, from the cache, prepared
                    bad = [i for i, ((m, t), want) in enumerate(zip(pairs, outputs, strict=True))
                           if fmt.render(m, t, True, **options) != want]
                    if bad:
                        raise SystemExit(f"bench_render {name}, {label}: ours differs from the reference: {bad[:10]}")
                ours = [
                    (RENDER_ROWS[0], warm_blocks(calls(fmt.render, plain, options), plain, args.block)),
                    (RENDER_ROWS[1], warm_blocks(calls(fmt.render, plain, options, PLAIN_TOOLS_CACHE.clear), plain,
                                                 args.block)),
                    (RENDER_ROWS[2], warm_blocks(calls(fmt.render, prepared, options), prepared, args.block)),
                ]
                timings = {t.name: t for t in interleaved([*ours, *refs], items=len(plain), rounds=args.rounds)}
                for ref_name, _ in refs:
                    ref = timings[ref_name]
                    row = [f"`{name}`", f"{label}", ref_name, f"{ref.best:.1f}"]
                    for key in RENDER_ROWS:
                        row += [f"{timings[key].best:.1f}", f"**{ref.best / timings[key].best:.1f}×**"]
                    rows.append(row)
                print(f"measured {name}, {label}", file=sys.stderr, flush=True)
        if go is not None:
            go.close()
    print(f"Python {platform.python_version()}; warm, {args.rounds} interleaved rounds, CPU µs per request in the "
          "fastest round (Go: its own wall time).\n")
    print(markdown_table(["format", "corpus", "reference", "reference µs", "ours, plain repeated µs", "speed-up",
                          "ours, first sight µs", "speed-up", "ours, prepared µs", "speed-up"], rows))
    for note in notes:
        print(f"- {note}")


# --- scaling --------------------------------------------------------------------------------------------------

SCALING_LIMIT = 5.5


def scaling_mode(args: argparse.Namespace) -> int:
    rows = []
    for name in args.formats:
        fmt = pf.get_format(name)
        options = OPTIONS.get(name, {})
        reminders = "inline" if name == "chatml-safety" else "system"

        def session(n: int, reminders: str = reminders, name: str = name) -> Request:
            request = corpus.agent_request(n, 40, 0, reminders=reminders)  # type: ignore[arg-type]
            if name == "gpt-oss":
                return Request(corpus.without_call_preambles(request.messages), request.tools)
            return request

        small, large = session(200), session(1000)
        five = Request(small.messages[:1] + small.messages[1:] * 5, small.tools)  # 996 messages, the same mix
        contenders: list[tuple[str, Callable[[], float | None]]] = []
        for size, request in (("200", small), ("1000", large), ("x5", five)):
            pairs = [(request.messages, request.tools)]
            prepared = [(request.messages, pf.prepare_tools(request.tools))]
            contenders += [
                (f"plain tools (cache warm) {size}", warm_blocks(calls(fmt.render, pairs, options), pairs, 1)),
                (f"prepared {size}", warm_blocks(calls(fmt.render, prepared, options), prepared, 1)),
            ]
        timings: dict[str, Timing] = {t.name: t for t in interleaved(contenders, items=1, rounds=args.rounds)}
        for label in ("plain tools (cache warm)", "prepared"):
            a, b, c = (timings[f"{label} {size}"].best for size in ("200", "1000", "x5"))
            rows.append([f"`{name}`", label, f"{a / 1000:.3f}", f"{b / 1000:.3f}", f"{b / a:.2f}", f"{c / 1000:.3f}",
                         f"{c / a:.2f}"])
        print(f"scaled {name}", file=sys.stderr, flush=True)
    print(markdown_table(["format", "ours", "200 messages ms", "1,000 messages ms", "ratio",
                          "200 five times over (996) ms", "ratio"], rows))
    worst = max(float(row[4]) for row in rows)
    print(f"\nWorst ratio, 1,000 to 200 messages: {worst:.2f} (limit {SCALING_LIMIT}): "
          f"{'PASS' if worst <= SCALING_LIMIT else 'FAIL'}")
    return 0 if worst <= SCALING_LIMIT else 1


# --- spans ----------------------------------------------------------------------------------------------------

def spans_mode(args: argparse.Namespace) -> None:
    rows = []
    for name in args.formats:
        fmt = pf.get_format(name)
        options = OPTIONS.get(name, {})
        for label in ("everyday", "agent"):
            pairs = [(r.messages, pf.prepare_tools(r.tools) if r.tools else None) for r in fixed_requests(name, label)]
            pairs = [pair for pair in pairs if renders(fmt, pair)]
            if not pairs:  # (a corpus not made for this template's shapes: nothing to measure)
                print(f"{name}: no request of the {label} corpus renders; not measured", file=sys.stderr)
                continue
            for messages, tools in pairs:
                text = fmt.render_spans(messages, tools, True, **options).text
                if text != fmt.render(messages, tools, True, **options):
                    raise SystemExit(f"bench_render: {name}: render_spans' text differs on the {label} corpus")
            timings = interleaved(
                [("render", warm_blocks(calls(fmt.render, pairs, options), pairs, args.block)),
                 ("render_spans", warm_blocks(calls(fmt.render_spans, pairs, options), pairs, args.block))],
                items=len(pairs), rounds=args.rounds)
            base = timings[0].best
            for t in timings:
                rows.append([f"`{name}`", f"{label}, {len(pairs)} rendered", t.name, f"{t.best:.1f} ({t.median:.1f})",
                             f"{t.best / base:.2f}"])
            print(f"measured {name} on {label}", file=sys.stderr, flush=True)
    print(f"{'compiled' if pf.compiled else 'pure'} build; warm, {args.rounds} interleaved rounds\n")
    print(markdown_table(["format", "corpus", "call", "µs per request, best (median)", "relative to render"], rows))


# --- session --------------------------------------------------------------------------------------------------

Sessions = list[tuple[Any, list[list[Any]]]]


def _session_timer(fmt: pf.ChatFormat, sessions: Sessions, kind: str) -> Callable[[], float]:
    """Self-timed, CPU µs per follow-up: ``kept`` (one session per agent session, its first request
    untimed), ``fresh`` (a session per follow-up, primed untimed with the request before it),
    ``first`` (a new session's first render of the follow-up, the session made untimed) or
    ``prepared`` (``fmt.render`` with the toolset prepared once)."""
    options = OPTIONS.get(fmt.name, {})
    jobs = [(tools if kind == "kept" else pf.prepare_tools(tools), requests) for tools, requests in sessions]

    def run() -> float:
        elapsed, items = 0, 0
        for tools, requests in jobs:
            if kind in ("fresh", "first"):
                for before, messages in itertools.pairwise(requests):
                    session = fmt.session(tools, **options)
                    if kind == "fresh":
                        session.render(before, True)
                    start = time.thread_time_ns()
                    session.render(messages, True)
                    elapsed += time.thread_time_ns() - start
                continue
            render = fmt.session(tools, **options).render if kind == "kept" else (
                lambda m, g, tools=tools: fmt.render(m, tools, g, **options))
            render(requests[0], True)
            start = time.thread_time_ns()
            for messages in requests[1:]:
                render(messages, True)
            elapsed += time.thread_time_ns() - start
        items = sum(len(requests) - 1 for _, requests in jobs)
        return elapsed / items / 1000

    return run


def _check_sessions(fmt: pf.ChatFormat, sessions: Sessions) -> None:
    options = OPTIONS.get(fmt.name, {})
    jinja = engines.jinja2_renderer(engines.TEMPLATES[fmt.name]) if fmt.name.startswith("chatml") else None
    for tools, requests in sessions:
        session = fmt.session(tools, **options)
        for messages in requests:
            got = session.render(messages, True)
            if got != fmt.render(messages, tools, True, **options) or (
                    jinja is not None and got != jinja(messages, tools, True)):
                raise SystemExit(f"bench_render: {fmt.name}'s session differs at a request of {len(messages)} messages")
        prepared = pf.prepare_tools(tools)
        for before, messages in itertools.pairwise(requests):
            fresh = fmt.session(prepared, **options)
            fresh.render(before, True)
            if fresh.render(messages, True) != fmt.render(messages, tools, True, **options):
                raise SystemExit(f"bench_render: {fmt.name}'s fresh session differs at {len(messages)} messages")


def session_mode(args: argparse.Namespace) -> None:
    rows = []
    for name in args.formats:
        fmt = pf.get_format(name)
        if name == "gpt-oss":
            requests = corpus.gpt_oss_agent_requests(args.seeds)
        else:  # (in the shape each template takes: reminders inline where a later system message is refused…)
            requests = [corpus.agent_request_for(name, seed) for seed in range(args.seeds)]
        sessions = [(r.tools, corpus.follow_ups(r, args.follow_ups)) for r in requests]
        _check_sessions(fmt, sessions)
        items = sum(len(prefixes) - 1 for _, prefixes in sessions)
        timings = {t.name: t for t in interleaved(
            [(kind, _session_timer(fmt, sessions, kind)) for kind in ("kept", "fresh", "first", "prepared")],
            items=items, rounds=args.rounds)}
        kept, fresh, first, base = timings["kept"], timings["fresh"], timings["first"], timings["prepared"]
        rows.append([f"`{name}`", "yes" if fmt.renders_incrementally else "no (full renders)", str(items),
                     f"{base.best:.0f} ({base.median:.0f})", f"{kept.best:.0f} ({kept.median:.0f})",
                     f"**{base.best / kept.best:.1f}×**", f"{fresh.best:.0f} ({fresh.median:.0f})",
                     f"**{base.best / fresh.best:.1f}×**", f"**{first.best / base.best:.2f}×**"])
        print(f"measured {name}", file=sys.stderr, flush=True)
    print(f"{'compiled' if pf.compiled else 'pure'} build; Python {platform.python_version()}; {args.rounds} "
          "interleaved rounds; CPU µs per follow-up request in the fastest round (median in parentheses).\n")
    print(markdown_table(["format", "incremental", "follow-ups", "prepared render µs", "kept session µs",
                          "kept cheaper by (goal ≥ 3×)", "fresh session µs", "fresh cheaper by (goal ≥ 2×)",
                          "a new session's first render / prepared (goal ≤ 1.05×)"], rows))


# --- masks ----------------------------------------------------------------------------------------------------

TAGGED = {
    "chatml-multi-system": "chatml_multi_system_generation.jinja",
    "chatml-safety": "chatml_upstream_generation.jinja",
    "gpt-oss": "gpt_oss_generation.jinja",
}
CHATML_SPECIAL = ["<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
CHATML_ADDED = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
HARMONY_SPECIAL = ["<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|call|>", "<|return|>", "<|constrain|>"]
KEYS = ("input_ids", "attention_mask", "assistant_masks")
TRAINING_SEED = 10_000  # the tokenizer's training corpus: a seed no round uses
Corpus = Callable[[int], list[Job]]


def corpora(flavour: Flavour) -> dict[str, Corpus]:
    return {
        "everyday (300 conversations)": lambda seed: corpus.everyday_jobs(300, seed, flavour),
        "agent sessions (follow-up requests)": lambda seed: corpus.agent_jobs(2, 2 * seed, flavour),
    }


def build_tokenizer(name: str, texts: list[str]) -> Any:
    """A ``PreTrainedTokenizerFast``: byte-level BPE trained on ``texts``, as the tests build theirs."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    special, added = (HARMONY_SPECIAL, []) if name == "gpt-oss" else (CHATML_SPECIAL, CHATML_ADDED)
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=True)
    trainer = trainers.BpeTrainer(vocab_size=4000, special_tokens=special,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer)
    fast.add_special_tokens({"additional_special_tokens": special})
    fast.add_tokens(added)
    return fast


def usable(fmt: pf.ChatFormat, jobs: list[Job]) -> list[Job]:
    """The jobs the format renders (chatml-safety refuses what its template refuses)."""
    out = []
    for job in jobs:
        try:
            fmt.render_spans(job.messages, job.tools, False, **job.options)
        except pf.FormatError:
            continue
        out.append(job)
    return out


def contenders(fmt: pf.ChatFormat, tokenizer: Any, template: str) -> list[Contender]:
    from transformers.utils.chat_template_utils import render_jinja_template

    from prompt_formats.format.spans import normalize_ranges
    from prompt_formats.integrations.segments import SegmentEncoder
    from prompt_formats.integrations.transformers import encode, encode_with_tokenizer

    backend = tokenizer.backend_tokenizer

    def transformers_pass(jobs: Sequence[Job]) -> list[dict[str, Any]]:
        return [dict(tokenizer.apply_chat_template(
            messages, tools=tools, chat_template=template, add_generation_prompt=False, tokenize=True,
            return_dict=True, return_assistant_tokens_mask=True, **options,
        )) for messages, tools, options in jobs]

    def encode_pass(jobs: Sequence[Job]) -> list[dict[str, Any]]:
        return [encode(fmt.render_spans(messages, tools, False, **options), tokenizer)
                for messages, tools, options in jobs]

    def backend_pass(jobs: Sequence[Job]) -> list[dict[str, Any]]:
        return [encode_with_tokenizer(fmt.render_spans(messages, tools, False, **options), backend)
                for messages, tools, options in jobs]

    def segment_pass(jobs: Sequence[Job]) -> list[dict[str, Any]]:
        encoder = SegmentEncoder(tokenizer)  # one cache for the round's conversations
        if not encoder.exact:
            raise SystemExit(f"masks: SegmentEncoder is not exact for this tokenizer: {encoder.reason}")
        return [encoder.encode(fmt.render_spans(messages, tools, False, **options))
                for messages, tools, options in jobs]

    def jinja_spans_pass(jobs: Sequence[Job]) -> list[tuple[str, Any]]:
        out = []
        for messages, tools, options in jobs:
            texts, indices = render_jinja_template(
                conversations=[messages], tools=tools, chat_template=template, add_generation_prompt=False,
                return_assistant_tokens_mask=True, **options,
            )
            out.append((texts[0], normalize_ranges(indices[0])))
        return out

    def spans_pass(jobs: Sequence[Job]) -> list[tuple[str, Any]]:
        out = []
        for messages, tools, options in jobs:
            spans = fmt.render_spans(messages, tools, False, **options)
            out.append((spans.text, spans.generated))
        return out

    def new_text_floor(jobs: Sequence[Job]) -> list[Any]:
        return list(backend.encode_batch_fast(jobs.new_stretches, add_special_tokens=False))

    def whole_text_floor(jobs: Sequence[Job]) -> list[Any]:
        return list(backend.encode_batch_fast(jobs.texts, add_special_tokens=False))

    return [("transformers", transformers_pass, False), ("ours, encode", encode_pass, False),
            ("ours, encode_with_tokenizer", backend_pass, False), ("ours, SegmentEncoder", segment_pass, False),
            ("transformers, text and generation indices only", jinja_spans_pass, False),
            ("ours, render_spans only", spans_pass, False),
            ("floor: the tokenizer on the round's new stretches only", new_text_floor, False),
            ("floor: the tokenizer on the whole prompts, no offsets", whole_text_floor, False)]


class Round(list[Job]):
    """A round's jobs, with what the floor rows tokenize (made untimed): the prompts' texts and the
    distinct stretches between added tokens over the whole round (what a cache cannot have seen)."""

    texts: list[str]
    new_stretches: list[str]


def round_of(fmt: pf.ChatFormat, tokenizer: Any, jobs: list[Job]) -> Round:
    from prompt_formats.integrations.segments import SegmentEncoder

    out = Round(jobs)
    out.texts = [fmt.render(messages, tools, False, **options) for messages, tools, options in jobs]
    split = SegmentEncoder(tokenizer).split
    out.new_stretches = list(dict.fromkeys(
        text[start:end] for text in out.texts for start, end, added in split(text) if not added))
    return out


def check_masks(name: str) -> Callable[[dict[str, list[Any]], Sequence[Job]], None]:
    def compare(outputs: dict[str, list[Any]], jobs: Sequence[Job]) -> None:
        theirs = outputs["transformers"]
        for contender in ("ours, encode", "ours, encode_with_tokenizer", "ours, SegmentEncoder"):
            bad = [i for i, (a, b) in enumerate(zip(outputs[contender], theirs, strict=True))
                   if any(list(a[key]) != list(b[key]) for key in KEYS)]
            if bad:
                raise SystemExit(f"masks: {name}: {contender} differs from transformers on {bad[:10]}")
        if outputs["ours, render_spans only"] != outputs["transformers, text and generation indices only"]:
            raise SystemExit(f"masks: {name}: render_spans differs from the tagged template's text or indices")
        if not any(1 in out["assistant_masks"] for out in theirs):
            raise SystemExit(f"masks: {name}: no assistant token masked (the tagged template is not used?)")

    return compare


def mask_rows(name: str, rounds: int, only: str = "") -> list[list[str]]:
    fmt = pf.get_format(name)
    if name == "chatml-safety":
        fmt = pf.get_format(name, policy="allow")  # as the template renders every input (integrations.transformers)
    template = engines.fixture_text(TAGGED[name])
    rows = []
    for label, make in corpora(FLAVOURS[name]).items():
        if not label.startswith(only):
            continue
        texts = [fmt.render(m, t, False, **o) for m, t, o in usable(fmt, make(TRAINING_SEED))]
        tokenizer = build_tokenizer(name, texts)
        counted: list[int] = []

        def round_corpus(r: int, make: Corpus = make, counted: list[int] = counted, tok: Any = tokenizer) -> Round:
            jobs = usable(fmt, make(r))
            counted.append(len(jobs))
            return round_of(fmt, tok, jobs)

        timings = straight(contenders(fmt, tokenizer, template), round_corpus, rounds, check_masks(f"{name}, {label}"))
        pairs = ((timings[1], timings[0]), (timings[2], timings[0]), (timings[3], timings[0]), (timings[5], timings[4]),
                 (timings[6], timings[0]), (timings[7], timings[0]))
        for t, theirs in pairs:
            rows.append([f"`{name}`", f"{label}, {counted[0]} checked per round", t.name, theirs.name,
                         f"{1e6 / t.median:,.0f}", f"{1e6 / theirs.median:,.0f}",
                         f"**{theirs.median / t.median:.1f}×**"])
        print(f"measured {name}, {label}", file=sys.stderr, flush=True)
    return rows


def masks_mode(args: argparse.Namespace) -> None:
    import tokenizers
    import transformers

    rows = [row for name in args.formats for row in mask_rows(name, args.rounds, args.corpus)]
    print(f"Python {platform.python_version()}, transformers {transformers.__version__}, tokenizers "
          f"{tokenizers.__version__}; straight passes, {args.rounds} rounds, median CPU time per conversation\n")
    print(markdown_table(["format", "corpus", "ours", "against", "ours conv/s", "theirs conv/s",
                          "ratio (theirs / ours)"], rows))


# --------------------------------------------------------------------------------------------------------------

MODES = ("render", "scaling", "spans", "session", "masks")
DEFAULT_FORMATS = {"masks": "chatml-multi-system,chatml-safety,gpt-oss"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--formats", default=None, help="comma-separated; default: every registered format")
    parser.add_argument("--rounds", type=int, default=None, help="default: 3 for masks, 9 otherwise")
    parser.add_argument("--block", type=int, default=32, help="render, spans: requests per warm block")
    parser.add_argument("--seeds", type=int, default=3, help="session: agent sessions per format")
    parser.add_argument("--follow-ups", type=int, default=24, help="session: follow-up requests per session")
    parser.add_argument("--corpus", default="", choices=["", "everyday", "agent"], help="masks: only this corpus")
    args = parser.parse_args(argv)
    formats = args.formats or DEFAULT_FORMATS.get(args.mode, ",".join(pf.available_formats()))
    args.formats = [name for name in formats.split(",") if name]
    args.rounds = args.rounds or (3 if args.mode == "masks" else 9)
    if args.mode == "render":
        render_mode(args)
    elif args.mode == "scaling":
        return scaling_mode(args)
    elif args.mode == "spans":
        spans_mode(args)
    elif args.mode == "session":
        session_mode(args)
    else:
        masks_mode(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
