"""The floor under the everyday ChatML rows: how fast the least Python that writes these prompts is.

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

``--against REV`` adds the format of a git revision (``ab_chatml.load_revision``), timed in the same run.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_floor.py [--rounds 5] [--format chatml-multi-system] [--against REV]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ab_chatml
import engines
import heldout
from timing import Contender, straight

import prompt_formats as pf
from prompt_formats._json import tojson
from prompt_formats.formats.chatml.render import tools_block
from prompt_formats.formats.chatml.tokens import (
    ASSISTANT_THINKING,
    ASSISTANT_TURN,
    CALL_AFTER_CONTENT,
    CALL_FIRST,
    CALL_NEXT,
    CALLS_END,
    GENERATION_PROMPT,
    GENERATION_PROMPT_NO_THINKING,
    IMAGE,
    SYSTEM_TURN,
    THINK_BLOCK_END,
    THINK_CLOSE,
    THINK_OPEN,
    TOOL_RESPONSE_CLOSE,
    TOOL_RESPONSE_FIRST,
    TOOL_RESPONSE_LAST,
    TOOL_RESPONSE_MORE,
    TOOL_RESPONSE_NEXT,
    TOOL_RESPONSE_OPEN,
    TURN_END,
    USER_TURN,
)

CLASSES = {"chatml-multi-system": "ChatMLMultiSystemFormat", "chatml-safety": "ChatMLSafetyFormat"}
TEMPLATES = {"chatml-multi-system": "chatml_multi_system.jinja", "chatml-safety": "chatml_upstream.jinja"}
FLAVOURS: dict[str, heldout.Flavour] = {"chatml-multi-system": "chatml", "chatml-safety": "chatml-strict"}
Message = dict[str, Any]


def _text(content: Any, images: list[int], numbered: Any) -> str:
    """A content's text: a string, or text and image parts (the corpus has no others)."""
    if type(content) is str:
        return content
    if content is None:
        return ""
    pieces = []
    for part in content:
        if "image" in part or "image_url" in part or part.get("type") == "image":
            images[0] += 1
            pieces.append(f"Picture {images[0]}: {IMAGE}" if numbered else IMAGE)
        else:
            pieces.append(part["text"])
    return "".join(pieces)


def _merged(messages: list[Message]) -> list[Message]:
    """Every system message's trimmed text, the empty ones dropped, joined into one leading one."""
    texts = [_text(m["content"], [0], None).strip() for m in messages if m["role"] == "system"]
    rest = [m for m in messages if m["role"] != "system"]
    texts = [text for text in texts if text]
    return [{"role": "system", "content": "\n\n".join(texts)}, *rest] if texts else rest


def _last_query(msgs: list[Message]) -> int:
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i]["role"] == "user":
            query = _text(msgs[i]["content"], [0], None).strip()
            if not (query.startswith(TOOL_RESPONSE_OPEN) and query.endswith(TOOL_RESPONSE_CLOSE)):
                return i
    raise ValueError("no user query")


def _prologue(msgs: list[Message], tools: Any) -> list[str]:
    block = tools_block(tools) if tools else ""
    system = msgs[0]["content"] if msgs[0]["role"] == "system" else None
    if block:
        return [block, "\n\n" + system, TURN_END] if system else [block, TURN_END]
    return [SYSTEM_TURN + system + TURN_END] if system is not None else []


def floor_render(messages: list[Message], tools: Any, add_generation_prompt: bool, enable_thinking: Any = None,
                 preserve_thinking: Any = None, add_vision_id: Any = None) -> str:
    """The template's prompt for a request of the everyday corpus (anything else: wrong or a raise).

    One function for the turns: a call per assistant turn or per tool call costs more than a tenth of
    the floor, so the floor makes none (the package's house rule of short functions is not the floor's).
    """
    msgs = _merged(messages) if any(m["role"] == "system" for m in messages) else messages
    out = _prologue(msgs, tools)
    thinking_after = -1 if preserve_thinking is True else _last_query(msgs)
    images = [0]
    last = len(msgs) - 1
    append, extend = out.append, out.extend
    for pos, message in enumerate(msgs):
        role = message["role"]
        content = message.get("content")
        content = (content if type(content) is str else _text(content, images, add_vision_id)).strip()
        if role == "tool":
            extend((TOOL_RESPONSE_FIRST if msgs[pos - 1]["role"] != "tool" else TOOL_RESPONSE_NEXT, content,
                    TOOL_RESPONSE_LAST if pos == last or msgs[pos + 1]["role"] != "tool" else TOOL_RESPONSE_MORE))
        elif role == "assistant":
            reasoning = message.get("reasoning_content")
            if reasoning is None:
                reasoning = ""
                if THINK_CLOSE in content:
                    reasoning = content.split(THINK_CLOSE)[0].rstrip("\n").split(THINK_OPEN)[-1].lstrip("\n")
                    content = content.split(THINK_CLOSE)[-1].lstrip("\n")
            if pos > thinking_after:
                extend((ASSISTANT_THINKING, reasoning.strip(), THINK_BLOCK_END, content))
            else:
                extend((ASSISTANT_TURN, content))
            calls = message.get("tool_calls")
            if not calls:
                append(TURN_END)
                continue
            opening = CALL_AFTER_CONTENT if content else CALL_FIRST
            for call in calls:
                function = call["function"]
                arguments = function["arguments"]
                if type(arguments) is str:
                    append(f"{opening}{function['name']}>\n<parameter=arguments>\n{arguments}\n</parameter>\n")
                else:
                    append(f"{opening}{function['name']}>\n")
                    for key, value in arguments.items():
                        append(f"<parameter={key}>\n{value if type(value) is str else tojson(value)}\n</parameter>\n")
                opening = CALL_NEXT
            append(CALLS_END)
        elif role == "user":
            extend((USER_TURN, content, TURN_END))
    if add_generation_prompt:
        append(GENERATION_PROMPT_NO_THINKING if enable_thinking is False else GENERATION_PROMPT)
    return "".join(out)


def _check(outputs: dict[str, list[Any]], jobs: Sequence[Any]) -> None:
    for name in outputs.keys() - {"Jinja2", "MiniJinja"}:
        bad = [i for i, (a, b) in enumerate(zip(outputs[name], outputs["Jinja2"], strict=True)) if a != b]
        if bad:
            raise SystemExit(f"bench_floor: {name} differs from Jinja2 on job(s) {bad[:10]}; not reporting")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--format", choices=sorted(TEMPLATES), default="chatml-multi-system")
    parser.add_argument("--against", metavar="REV", help="also time the format at this git revision")
    args = parser.parse_args(argv)
    received = heldout.rendered_as_received
    template = TEMPLATES[args.format]
    contenders: list[Contender] = [
        ("ours", received(pf.get_format(args.format).render), True),
        ("floor", received(floor_render), True),
        ("Jinja2", received(engines.jinja2_renderer(template)), True),
    ]
    if engines.has_minijinja():
        contenders.append(("MiniJinja", received(engines.minijinja_renderer(template)), True))
    tmp = tempfile.TemporaryDirectory()
    if args.against:
        module = ab_chatml.load_revision(args.against, Path(tmp.name))[0]
        contenders.insert(1, (args.against, received(getattr(module, CLASSES[args.format])().render), True))
    flavour = FLAVOURS[args.format]
    timings = straight(contenders, lambda r: heldout.to_wire(heldout.everyday_jobs(300, r, flavour)),
                       args.rounds, _check)
    median = {t.name: t.median for t in timings}
    print(f"{args.format}, everyday (300 requests), {args.rounds} rounds, median CPU µs per request:")
    for name, us in median.items():
        print(f"  {name:10} {us:8.1f}")
    for reference in ("Jinja2", "MiniJinja"):
        if reference in median:
            print(f"  {reference}: ours {median[reference] / median['ours']:.1f}×, "
                  f"floor {median[reference] / median['floor']:.1f}×")
    print(f"  floor / ours time: {median['floor'] / median['ours']:.2f}")
    if args.against:
        print(f"  ours / {args.against} time: {median['ours'] / median[args.against]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
