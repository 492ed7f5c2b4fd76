"""Before and after: the working tree against a git revision, or against itself with a fast path stepped aside.

``--against REV``: ``REV``'s ``prompt_formats`` is extracted with ``git archive`` and imported under
another package name (every module it imports is its own), beside the working tree's, in one process.
``--without NAME``: the working tree with the fast path ``NAME`` of :data:`FAST_PATHS` stepped aside
(the benchmark replaces the function the library calls for it with one that steps aside, during that
side's passes only: the pure build, no library switch). Both sides render the same row, straight
passes as in headline.py (a fresh held-out corpus per round, each request decoded just before its
render, CPU time per request), taking turns; each side's median over rounds is shown, and the ratio
is that of paired rounds (:func:`paired_ratio`: the side that runs first in a round can pay twice
the time on large requests, so each pair holds a round of each order); every output of the tree is compared
with the other side's each round (the run stops on a difference). The row: ``--format`` on
``--corpus`` (``everyday``, ``agent`` sessions, ``agent-257`` plain tools, ``agent-257-prepared``),
``--calls render`` and/or ``render_spans``.

``--instructions``: instructions per request counted by valgrind's callgrind instead of time (the
same for the same code and input whatever else the machine does): each side in its own process
(``PYTHONHASHSEED=0``), the corpus of round 0 rendered once (caches filled) then ``--passes`` times;
counted with one pass and with ``--passes``, the difference divided by the extra passes and requests.

``--command``: ``prompt-formats render`` (the headline's command row) of the tree and of ``REV``,
alternating, records per CPU-second, outputs checked byte-equal (they differ across a change of a
default, and the run stops).

``--interpreters TREE_PY OTHER_PY`` (with ``--against REV``, time rows only): each side in its own
process, started with its interpreter from a neutral directory, with the cwd and ``PYTHONPATH`` off
``sys.path`` (``PYTHONSAFEPATH=1``; ``PROMPT_FORMATS_PURE`` dropped), so that each imports the build
installed in its interpreter and never the tree's source: the way to compare the compiled (mypyc)
builds, which cannot be imported twice in one process. ``OTHER_PY``'s build is taken to be ``REV``'s
(``REV`` only names the column). One child per side stays up for the whole row: per round it makes the
round's corpus itself (this directory's corpus.py) and renders it once as :func:`side_work` does,
reporting CPU µs per request and a SHA-256 of its outputs; the sides take turns as above, the hashes
must agree every round (the run stops on a difference), and the row is reported as above, after the
file each side imported ``prompt_formats`` from and whether it is compiled.

``--fast-paths``: the catalogue below: each fast path of the library, the benchmark row it wins and
how its win is measured (the rule: a fast path is deleted when it wins less than 3% on its row).

Usage::

    .venv/bin/python benchmarks/compare.py --against REV [--format chatml-multi-system] [--corpus everyday]
        [--calls render,render_spans] [--rounds 10]
    .venv/bin/python benchmarks/compare.py --without chatml-lean [--format chatml-safety] [--rounds 10]
    .venv/bin/python benchmarks/compare.py --against REV --instructions [--passes 3] [--format harmony]
    .venv/bin/python benchmarks/compare.py --against REV --command [--records 20000] [--rounds 5]
    .venv/bin/python benchmarks/compare.py --against REV --interpreters .venv-compiled/bin/python OTHER_PY
        [--format harmony] [--corpus agent-257-prepared] [--calls render] [--rounds 10]
    .venv/bin/python benchmarks/compare.py --fast-paths
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import hashlib
import importlib
import io
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))  # corpus.py and timing.py; the tree's package (ROOT) is added by main(), if wanted

import corpus  # noqa: E402
from corpus import FLAVOURS, Job  # noqa: E402
from timing import Timing, child_run, markdown_table, straight  # noqa: E402


class FastPath(NamedTuple):
    """A fast path of the library: where it is, the benchmark row it wins, how its win is measured."""

    name: str
    where: str
    row: str
    measure: str


# The fast path -> benchmark row mapping (the library's comments do not name benchmarks). ``--without``
# steps aside those of :data:`STEP_ASIDE`; the others are measured against the revision before them.
FAST_PATHS = [
    FastPath("chatml-lean", "formats/chatml/lean.py (lean_prompt)",
             "headline.py, chatml-multi-system and chatml-safety everyday rows (taken by every agent request too)",
             "compare.py --without chatml-lean [--format chatml-safety]"),
    FastPath("chatml-guard", "formats/chatml/untrusted.py (render_guarded: the guard's fast path)",
             "headline.py, chatml-safety rows and guard rows; bench_guard.py; bench_render.py spans, chatml-safety",
             "compare.py --without chatml-guard --format chatml-safety [--calls render_spans]"),
    FastPath("chatml-one-system", "formats/chatml/read.py (one leading system message with text)",
             "headline.py, chatml everyday rows (the checked path and render_spans)",
             "compare.py --against b4853b1^ --calls render_spans"),
    FastPath("chatml-argument-kinds", "formats/chatml/render.py (_value_json: exact types spelt as tojson)",
             "headline.py, chatml everyday and agent rows (the checked path)",
             "compare.py --against 691d8b2^ --corpus agent-257-prepared --calls render_spans"),
    FastPath("chatml-session", "formats/chatml/incremental.py (the session's window)",
             "bench_render.py session, chatml rows", "the row itself: session against prepared render"),
    FastPath("harmony-session", "formats/harmony/ollama/incremental.py",
             "bench_render.py session, harmony row", "the row itself: session against prepared render"),
    FastPath("harmony-tool-name", "formats/harmony/ollama/render.py (_offers_python: the usual tool dict)",
             "bench_render.py render, harmony agent-257 rows (40 tools)",
             "compare.py --against e513420^ --format harmony --corpus agent-257"),
    FastPath("harmony-text-part", "formats/harmony/ollama/render.py (a {type: text, text: str} part)",
             "headline.py, harmony everyday", "compare.py --against d7a065d^ --format harmony"),
    FastPath("harmony-fields", "formats/harmony/ollama/render.py (the walk reads a plain dict, _plain the rest)",
             "bench_render.py render, every harmony row", "compare.py --against 3297ab6^ --format harmony"),
    FastPath("harmony-date-cache", "formats/harmony/dates.py (date_from_string cached)",
             "bench_render.py render, harmony everyday <= 6 messages",
             "compare.py --against fbd89dd^ --format harmony"),
    FastPath("harmony-plain-keys", "formats/harmony/ollama/drops.py (one keys() test for a plain message)",
             "bench_render.py spans, harmony rows",
             "compare.py --against eb0dd8b^ --format harmony --calls render_spans --instructions"),
    FastPath("harmony-parse-kinds", "formats/harmony/parse.py (the Kind members as module names)",
             "bench_parse.py, Harmony agent turn", "bench_parse.py on 3297ab6^ and after it"),
    FastPath("spans-setters", "format/spans.py (RenderedPrompt built through the slots' setters)",
             "bench_render.py spans, every everyday row",
             "compare.py --against 92ff475^ --calls render_spans"),
    FastPath("history-same-objects", "format/history.py (_same_objects, written per build)",
             "bench_render.py session, harmony rows, each build",
             "bench_render.py session on cbc490c^ and after it, each build"),
    FastPath("gpt-oss-str-json", "formats/harmony/openai/render.py (an exact str's JSON through orjson)",
             "bench_render.py render, gpt-oss agent rows",
             "compare.py --against 3dd8f72^ --format gpt-oss --corpus agent-257-prepared"),
    FastPath("gpt-oss-alias-keys", "formats/harmony/openai/render.py (key tests before the alias call)",
             "headline.py, gpt-oss agent-257 prepared",
             "compare.py --against 435f998^ --format gpt-oss --corpus agent-257-prepared --instructions"),
    FastPath("gpt-oss-noting", "formats/harmony/openai/render.py (LoopState.noting: no losses noted by render)",
             "headline.py, gpt-oss agent rows",
             "compare.py --against 435f998^ --format gpt-oss --corpus agent-257-prepared --instructions"),
    FastPath("gpt-oss-generated", "formats/harmony/openai/spans.py (_generated: ranges already canonical)",
             "bench_render.py spans, gpt-oss agent row",
             "compare.py --against 29b8963^ --format gpt-oss --calls render_spans --corpus agent-257-prepared"),
    FastPath("gpt-oss-session", "formats/harmony/openai/incremental.py", "bench_render.py session, gpt-oss row",
             "the row itself: session against prepared render"),
    FastPath("gpt-oss-namespace", "formats/harmony/openai/typescript_fast.py (functions_namespace_fast)",
             "headline.py, gpt-oss agent-257 plain tools (the namespace built on every request)",
             "compare.py --without gpt-oss-namespace --format gpt-oss --corpus agent-257"),
    FastPath("command-digit-sample", "records/jsonl.py (a sixth of the bytes translated)",
             "headline.py, command row; bench_command.py rate and stages (digit check)",
             "compare.py --command --against d1880a9^"),
    FastPath("segment-recent", "integrations/recent.py (a follow-up's shared part taken from a recent prompt)",
             "bench_render.py masks, SegmentEncoder rows on the agent sessions",
             "bench_render.py masks on 1f379ab^ and after it"),
]


def _step_aside(name: str) -> tuple[Any, str, Any]:
    """``(module, attribute, replacement)``: what ``--without name`` puts in place during its side's passes."""
    if name == "chatml-lean":
        module = importlib.import_module("prompt_formats.formats.chatml")
        return module, "lean_prompt", lambda *args, **kwargs: None
    if name == "chatml-guard":
        module = importlib.import_module("prompt_formats.formats.chatml")
        return module, "render_guarded", lambda *args, **kwargs: None
    if name == "gpt-oss-namespace":
        module = importlib.import_module("prompt_formats.formats.harmony.openai.prompt")
        checked = importlib.import_module("prompt_formats.formats.harmony.openai.typescript").functions_namespace
        return module, "functions_namespace_fast", checked
    raise SystemExit(f"compare: --without {name}: not one of {', '.join(STEP_ASIDE)}")


STEP_ASIDE = ("chatml-lean", "chatml-guard", "gpt-oss-namespace")


@contextlib.contextmanager
def stepped_aside(name: str) -> Iterator[None]:
    module, attribute, replacement = _step_aside(name)
    kept = getattr(module, attribute)
    setattr(module, attribute, replacement)
    try:
        yield
    finally:
        setattr(module, attribute, kept)


# --- A revision's package -------------------------------------------------------------------------------------

def extract(revision: str, into: Path) -> Path:
    """``revision``'s ``prompt_formats`` under ``into``; returns ``into`` (for ``PYTHONPATH``)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", revision, "prompt_formats"],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def load_revision(revision: str, tmp: Path) -> Any:
    """``revision``'s ``prompt_formats``, imported as ``prompt_formats_at_REV`` (its modules its own)."""
    name = "prompt_formats_at_" + "".join(c if c.isalnum() else "_" for c in revision)
    if name not in sys.modules:
        extract(revision, tmp)
        (tmp / "prompt_formats").rename(tmp / name)
        sys.path.insert(0, str(tmp))
        try:
            importlib.import_module(name)
        finally:
            sys.path.remove(str(tmp))
    return sys.modules[name]


def package_format(package: Any, name: str) -> Any:
    """The format ``name`` of ``package``, through its registry, imported from that package (a revision's
    registry names the modules absolutely, which would be the tree's)."""
    try:  # the registry's module, where the revision has it (format/ since the layers, the top level before)
        registry = importlib.import_module(f"{package.__name__}.format.registry")
    except ModuleNotFoundError:
        registry = importlib.import_module(f"{package.__name__}.registry")
    module_name, _, class_name = registry._FORMATS[name].partition(":")
    module = importlib.import_module(package.__name__ + module_name.removeprefix("prompt_formats"))
    return getattr(module, class_name)()


# --- The row, each side with its own prepared toolsets ----------------------------------------------------------

CORPORA = ("everyday", "agent", "agent-257", "agent-257-prepared")


def jobs_for(fmt_name: str, corpus_name: str, r: int) -> list[Job]:
    """Round ``r``'s plain jobs of a row (the prepared row's toolsets are prepared per side)."""
    flavour = FLAVOURS[fmt_name]
    if corpus_name == "everyday":
        return corpus.everyday_jobs(300, r, flavour)
    if corpus_name == "agent":
        return corpus.agent_jobs(2, 2 * r, flavour)
    return corpus.agent_257(fmt_name, False)(r)


class Side(NamedTuple):
    name: str
    package: Any
    fmt: Any
    context: Callable[[], contextlib.AbstractContextManager[None]]


def side_work(side: Side, call: str, prepared: bool) -> Callable[[Sequence[Any]], tuple[list[Any], float]]:
    """A self-timed straight pass of one side, in the headline's scheme: each request decoded just
    before its render (untimed), so that each side meets it fresh from the decoder; with
    ``prepared``, each toolset prepared by the side's package and used once, untimed, before the pass."""
    method = getattr(side.fmt, call)

    def work(wires: Sequence[Any]) -> tuple[list[Any], float]:
        with side.context():
            toolsets = []
            for text, _, options in wires:
                tools = json.loads(text)["t"]
                if prepared and tools:
                    tools = side.package.prepare_tools(tools)
                    side.fmt.render([{"role": "user", "content": "hello"}], tools, True, **options)
                toolsets.append(tools if prepared else None)
            outputs, total = [], 0
            clock = time.thread_time_ns
            for (text, _, options), tools in zip(wires, toolsets, strict=True):
                request = json.loads(text)
                start = clock()
                outputs.append(method(request["m"], tools if prepared else request["t"], True, **options))
                total += clock() - start
        return outputs, total / len(wires) / 1000

    return work


def _comparable(output: Any) -> Any:
    """A render's text, or a ``RenderedPrompt``'s text, ranges and losses (a revision's class is its own)."""
    if isinstance(output, str):
        return output
    return output.text, output.messages, output.generated, getattr(output, "dropped", None)


def paired_ratio(mine: Sequence[float], theirs: Sequence[float]) -> float:
    """The median, over pairs of consecutive rounds, of each pair's geometric mean of ``mine / theirs``.

    ``straight`` alternates which side runs first, and on large requests the first side of a round
    pays for memory the second then reuses (each side's time doubles in some rows): a pair holds one
    round of each order, so that the order's effect cancels (exactly for a cost proportional to each
    side's time; a fixed one is pulled toward 1). An odd last round is left out."""
    ratios = [a / b for a, b in zip(mine, theirs, strict=True)]
    if len(ratios) < 2:  # (one round: no pair, its own ratio)
        return ratios[0]
    return statistics.median(math.sqrt(ratios[i] * ratios[i + 1]) for i in range(0, len(ratios) - 1, 2))


def time_row(args: argparse.Namespace, sides: list[Side]) -> list[list[str]]:
    rows = []
    prepared = args.corpus == "agent-257-prepared"
    for call in args.calls.split(","):
        contenders = [(side.name, side_work(side, call, prepared), True) for side in sides]

        def check(outputs: dict[str, list[Any]], jobs: Sequence[Any], call: str = call) -> None:
            mine, theirs = ([_comparable(o) for o in outputs[side.name]] for side in sides)
            bad = [i for i, (a, b) in enumerate(zip(mine, theirs, strict=True)) if a != b]
            if bad:
                raise SystemExit(f"compare: {call} of {sides[0].name} differs from {sides[1].name} on {bad[:10]}")

        timings = straight(contenders, lambda r: corpus.to_wire(jobs_for(args.format, args.corpus, r)),
                           args.rounds, check)
        rows.append(time_cells(args, call, *timings))
    return rows


def time_cells(args: argparse.Namespace, call: str, tree: Timing, other: Timing) -> list[str]:
    """A time row's cells: each side's median, the ratio of paired rounds (:func:`paired_ratio`)."""
    print(f"measured {call}", file=sys.stderr, flush=True)
    return [f"`{args.format}` {call}", args.corpus, f"{other.median:.1f}", f"{tree.median:.1f}",
            f"**{paired_ratio(tree.per_item_us, other.per_item_us):.3f}**"]


# --- Each side in its own interpreter (the compiled builds) --------------------------------------------------------

def installed_build() -> tuple[Any, dict[str, Any]]:
    """This interpreter's ``prompt_formats`` and what it is: the file imported, whether compiled.

    Refuses when the tree (or the cwd) is on ``sys.path``: what is imported is then the build
    installed in the interpreter (an editable install of the tree is flagged, not refused).
    ``compiled`` is the package's attribute, or, where a revision has none, whether any of its
    module files is an extension (``.so``/``.pyd``)."""
    if "" in sys.path or os.getcwd() in sys.path or any(
            Path(entry or ".").resolve() == ROOT for entry in sys.path) or "prompt_formats" in sys.modules:
        raise SystemExit(f"compare: the child's sys.path holds the tree or the cwd: {sys.path}")
    package = importlib.import_module("prompt_formats")
    where = Path(package.__file__).resolve().parent
    compiled = getattr(package, "compiled", None)
    if compiled is None:
        compiled = any(where.rglob("*.so")) or any(where.rglob("*.pyd"))
    return package, {"file": package.__file__, "compiled": bool(compiled), "python": sys.version.split()[0],
                     "executable": sys.executable, "tree_editable": where == ROOT / "prompt_formats"}


def _digest(outputs: Sequence[Any]) -> str:
    """SHA-256 of the outputs as :func:`_comparable` sees them (the same for equal outputs of any build)."""
    digest = hashlib.sha256()
    for output in outputs:
        digest.update(json.dumps(_comparable(output), ensure_ascii=False).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def serve(fmt_name: str, call: str, corpus_name: str) -> int:
    """The child of ``--interpreters``: a JSON line describing its build, then, for each round number
    read from stdin, a JSON line ``{"us", "sha256", "requests"}`` for that round's corpus, rendered
    once by :func:`side_work` (collected first, as ``straight`` does); ends with stdin."""
    package, build = installed_build()
    side = Side("child", package, package_format(package, fmt_name), contextlib.nullcontext)
    work = side_work(side, call, corpus_name == "agent-257-prepared")
    print(json.dumps(build), flush=True)
    for line in sys.stdin:
        wires = corpus.to_wire(jobs_for(fmt_name, corpus_name, int(line)))
        gc.collect()
        outputs, us = work(wires)
        print(json.dumps({"us": us, "sha256": _digest(outputs), "requests": len(outputs)}), flush=True)
    return 0


def start_child(python: str, args: argparse.Namespace, call: str) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    """A :func:`serve` child under ``python``, from a neutral directory, with the cwd and
    ``PYTHONPATH`` off its ``sys.path`` (``PYTHONSAFEPATH``, ignored before Python 3.11, where the
    cwd is no entry of a script's path anyway) and the build as installed (``PROMPT_FORMATS_PURE``
    dropped); and the build it describes."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PROMPT_FORMATS_PURE")}
    env["PYTHONSAFEPATH"] = "1"
    python = os.path.abspath(python) if os.sep in python else python  # (not resolved: a venv's python is a link)
    child = subprocess.Popen([python, str(Path(__file__).resolve()), "--serve", args.format, call, args.corpus],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1, env=env,
                             cwd=tempfile.gettempdir())
    return child, _reply(child, python)


def _reply(child: subprocess.Popen[str], python: str) -> dict[str, Any]:
    """The child's next JSON line; stops the run when the child has ended instead."""
    assert child.stdout is not None
    line = child.stdout.readline()
    if not line:
        raise SystemExit(f"compare: the child under {python} ended (exit {child.wait()}); its stderr is above")
    reply: dict[str, Any] = json.loads(line)
    return reply


def child_work(child: subprocess.Popen[str], python: str) -> Callable[[Sequence[int]], tuple[list[str], float]]:
    """A self-timed pass for ``straight`` whose corpus is ``[r]``: the child renders round ``r``;
    its outputs' hash and its CPU µs per request."""
    def work(rounds: Sequence[int]) -> tuple[list[str], float]:
        assert child.stdin is not None
        (r,) = rounds
        child.stdin.write(f"{r}\n")
        child.stdin.flush()
        reply = _reply(child, python)
        return [f"{reply['sha256']} ({reply['requests']} requests)"], reply["us"]

    return work


def interpreters_row(args: argparse.Namespace) -> tuple[list[list[str]], list[str]]:
    """The time rows of ``--interpreters``, and a line per side naming the build it imported."""
    rows, builds = [], []
    names = ("tree", args.against)
    for call in args.calls.split(","):
        with contextlib.ExitStack() as stack:
            contenders = []
            for name, python in zip(names, args.interpreters, strict=True):
                child, build = start_child(python, args, call)
                assert child.stdin is not None
                stack.callback(child.wait)  # (after its stdin is closed: the child ends with it)
                stack.callback(child.stdin.close)
                builds.append(f"{call}, {name}: {build['executable']} (Python {build['python']}) imported "
                              f"{build['file']}, compiled {build['compiled']}"
                              + (" (an editable install of the tree)" if build["tree_editable"] else ""))
                contenders.append((name, child_work(child, python), True))

            def check(outputs: dict[str, list[Any]], rounds: Sequence[int], call: str = call) -> None:
                if outputs[names[0]] != outputs[names[1]]:
                    raise SystemExit(f"compare: round {rounds[0]}: {call} of the tree differs from {names[1]}'s: "
                                     f"{outputs[names[0]][0]} against {outputs[names[1]][0]}")

            tree, other = straight(contenders, lambda r: [r], args.rounds, check)
        rows.append(time_cells(args, call, tree, other))
    return rows, builds


# --- Counted instructions ----------------------------------------------------------------------------------------

def _child(revision: str, fmt_name: str, call: str, corpus_name: str, passes: int) -> None:
    """Under callgrind: prepare round 0's corpus, render it once, then ``passes - 1`` more times."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = revision == "tree"
        package = importlib.import_module("prompt_formats") if tree else load_revision(revision, Path(tmp))
        fmt = package_format(package, fmt_name)
        method = getattr(fmt, call)
        jobs = []
        for messages, tools, options in jobs_for(fmt_name, corpus_name, 0):
            if corpus_name == "agent-257-prepared" and tools:
                tools = package.prepare_tools(tools)
            jobs.append((messages, tools, options))
        for _ in range(passes):
            for messages, tools, options in jobs:
                method(messages, tools, True, **options)


def _count(revision: str, args: argparse.Namespace, call: str, passes: int, tmp: Path) -> int:
    out = tmp / f"callgrind.{os.getpid()}.{passes}"
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__,
               "--child", revision, args.format, call, args.corpus, str(passes)]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", result.stderr)
    if found is None:
        raise SystemExit(f"compare: no count in callgrind's output:\n{result.stderr[-2000:]}")
    out.unlink(missing_ok=True)
    return int(found.group(1))


def count_row(args: argparse.Namespace, sides: list[Side]) -> list[list[str]]:
    rows = []
    n = len(jobs_for(args.format, args.corpus, 0))
    with tempfile.TemporaryDirectory() as tmp:
        for call in args.calls.split(","):
            first = [[_comparable(o) for o in side_work(side, call, args.corpus.endswith("prepared"))(
                corpus.to_wire(jobs_for(args.format, args.corpus, 0)))[0]] for side in sides]
            if first[0] != first[1]:
                raise SystemExit(f"compare: {call} of the tree differs from {args.against}'s")
            counts = []
            for revision in ("tree", args.against):
                more = _count(revision, args, call, args.passes, Path(tmp))
                once = _count(revision, args, call, 1, Path(tmp))
                counts.append((more - once) / (n * (args.passes - 1)))
            rows.append([f"`{args.format}` {call}", args.corpus, f"{counts[1]:,.0f}", f"{counts[0]:,.0f}",
                         f"**{counts[0] / counts[1]:.3f}**"])
    return rows


# --- The command ---------------------------------------------------------------------------------------------------

def command_row(args: argparse.Namespace) -> list[list[str]]:
    import bench_command

    with tempfile.TemporaryDirectory(prefix="pf-compare-") as tmp_name:
        tmp = Path(tmp_name)
        paths = {"tree": ROOT, args.against: extract(args.against, tmp / "revision")}
        records = tmp / "records.jsonl"
        bench_command.write_records(records, args.records)
        cpu: dict[str, list[float]] = {side: [] for side in paths}
        envs = {side: bench_command.environment(path, tmp) for side, path in paths.items()}
        first: bytes | None = None
        for r in range(args.rounds):
            for side in (list(paths) if r % 2 == 0 else list(paths)[::-1]):
                output, errors = tmp / "out.jsonl", tmp / "err.jsonl"
                seconds, _, _ = child_run(bench_command.command(records, output, errors),
                                          envs[side], str(tmp))
                cpu[side].append(seconds)
                got = output.read_bytes() + errors.read_bytes()
                first = first or got
                if got != first:
                    raise SystemExit(f"compare: {side}'s output differs from the other's; not reporting")
    tree, other = (args.records / statistics.median(cpu[side]) for side in paths)
    return [["`prompt-formats render` (records per CPU-second)", f"{args.records:,} everyday records",
             f"{other:,.0f}", f"{tree:,.0f}", f"**{other / tree:.3f}**"]]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--against", metavar="REV", help="a git revision")
    which.add_argument("--without", metavar="NAME", choices=STEP_ASIDE, help="a fast path stepped aside")
    which.add_argument("--fast-paths", action="store_true", help="the fast paths and their rows, and stop")
    parser.add_argument("--format", choices=sorted(FLAVOURS), default="chatml-multi-system")
    parser.add_argument("--corpus", choices=CORPORA, default="everyday")
    parser.add_argument("--calls", default="render", help="render, render_spans or both (comma-separated)")
    parser.add_argument("--rounds", type=int, default=10, help="rounds (an even number: see paired_ratio)")
    parser.add_argument("--instructions", action="store_true", help="count instructions (callgrind) instead")
    parser.add_argument("--passes", type=int, default=3, help="--instructions: passes counted")
    parser.add_argument("--command", action="store_true", help="the command's row (records per CPU-second)")
    parser.add_argument("--records", type=int, default=20_000, help="--command: records")
    parser.add_argument("--interpreters", nargs=2, metavar=("TREE_PY", "OTHER_PY"),
                        help="--against: each side in a child process of its interpreter (its installed build)")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--serve", nargs=3, help=argparse.SUPPRESS)
    return parser


def _in_process_rows(args: argparse.Namespace, parser: argparse.ArgumentParser) -> tuple[list[list[str]], str]:
    """The rows of ``--against`` and ``--without`` in this process (time or instructions), and the other side's name."""
    import prompt_formats as pf

    tree = Side("tree", pf, pf.get_format(args.format), contextlib.nullcontext)
    if args.against:
        tmp = tempfile.TemporaryDirectory()  # kept to the end: a revision's modules may import lazily
        package = load_revision(args.against, Path(tmp.name))
        other_side = Side(args.against, package, package_format(package, args.format), contextlib.nullcontext)
        other = args.against
    else:
        if pf.compiled:
            raise SystemExit("compare: --without: the pure build only (PYTHONPATH=. PROMPT_FORMATS_PURE=1)")
        other = f"tree without {args.without}"
        other_side = Side(other, pf, tree.fmt, lambda: stepped_aside(args.without))
    if args.instructions:
        if not args.against:
            parser.error("--instructions: with --against")
        return count_row(args, [tree, other_side]), other
    return time_row(args, [tree, other_side]), other


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.serve:  # the child of --interpreters: its interpreter's build, never the tree's package
        return serve(*args.serve)
    sys.path.insert(0, str(ROOT))  # the tree's package, for every other mode
    if args.child:
        revision, fmt_name, call, corpus_name, passes = args.child
        _child(revision, fmt_name, call, corpus_name, int(passes))
        return 0
    if args.fast_paths:
        print(markdown_table(["fast path", "in prompt_formats/", "the row it wins", "its win"],
                             [list(fp) for fp in FAST_PATHS]))
        return 0
    if not (args.against or args.without):
        parser.error("--against REV or --without NAME (or --fast-paths)")
    if args.interpreters and not (args.against and not args.instructions and not args.command):
        parser.error("--interpreters: with --against, time rows only (not --instructions or --command)")
    builds: list[str] = []
    if args.command:
        if not args.against:
            parser.error("--command: with --against")
        rows = command_row(args)
        other = args.against
    elif args.interpreters:
        rows, builds = interpreters_row(args)
        other = args.against
    else:
        rows, other = _in_process_rows(args, parser)
    unit = "instructions per request" if args.instructions else (
        "records per CPU-second" if args.command else "CPU µs per request (median)")
    print(f"{args.rounds if not args.instructions else args.passes} "
          f"{'rounds' if not args.instructions else 'passes'}; {unit}\n")
    if builds:
        print("\n".join(builds) + "\n")
    print(markdown_table(["row", "corpus", other, "tree", "tree / other (time, or instructions)"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
