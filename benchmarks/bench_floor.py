"""Floors: the least Python that writes a template's everyday prompts, beside ours and Jinja2.

A floor is a renderer of one template for the everyday corpus alone: no checks, no errors, no spans,
no guard, plain dicts of the corpus's shape only; a tool list's text is cached as the library caches
it (by ``marshal.dumps`` of the list). Each floor's output is checked byte-identical to Jinja2's on
every job it is timed on, so it writes the same prompts. What a floor does against Jinja2 bounds what
any renderer of that template in Python can do on this corpus: a goal above it is beyond reach.

Floors here: ``qwen2.5`` (a JSON-call Qwen template, against which a goal asked for
``chatml-multi-system``'s ratio), ``deepseek-v3``, ``gemma-3`` and ``harmony`` (Ollama's gpt-oss Go
template, checked against and compared with Go's ``text/template``, timed inside Go as in the headline;
its header's date and reasoning line are the package's). ``chatml-multi-system`` may be named too: it
runs without a floor, for its ratio in the same run.

Timing: the headline's scheme (``timing.straight``, ``corpus.rendered_as_received``): per round a new
everyday corpus of 300 requests, each request decoded from JSON just before it is rendered, each
contender once, CPU time per request, the median over rounds.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_floor.py [--rounds R] [FORMAT ...]
"""

from __future__ import annotations

import argparse
import json
import marshal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402
import engines  # noqa: E402
from timing import Contender, straight  # noqa: E402

import prompt_formats as pf  # noqa: E402
from prompt_formats.formats.harmony import tokens as H  # noqa: E402
from prompt_formats.formats.harmony.ollama.options import date_text, reasoning_line_for  # noqa: E402

Message = dict[str, Any]
_json = json.JSONEncoder(ensure_ascii=False).encode  # transformers' tojson
_tool_blocks: dict[bytes, str] = {}

_QWEN_DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
_QWEN_TOOLS_HEAD = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
_QWEN_TOOLS_TAIL = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
    "<args-json-object>}\n</tool_call><|im_end|>\n"
)


def qwen25(messages: list[Message], tools: Any, add_generation_prompt: bool) -> str:
    """Qwen2.5's template, for the everyday corpus."""
    first = messages[0]
    system = first["content"] if first["role"] == "system" else _QWEN_DEFAULT_SYSTEM
    if tools:
        key = marshal.dumps(tools)
        block = _tool_blocks.get(key)
        if block is None:
            block = _tool_blocks[key] = _QWEN_TOOLS_HEAD + "".join(["\n" + _json(t) for t in tools]) + _QWEN_TOOLS_TAIL
        out = ["<|im_start|>system\n", system, block]
    else:
        out = ["<|im_start|>system\n" + system + "<|im_end|>\n"]
    last = len(messages) - 1
    for i, m in enumerate(messages):
        role = m["role"]
        calls = m.get("tool_calls")
        if role == "user" or (role == "system" and i) or (role == "assistant" and not calls):
            out.append("<|im_start|>" + role + "\n" + m["content"] + "<|im_end|>\n")
        elif role == "assistant":
            out.append("<|im_start|>assistant\n" + m["content"] if m.get("content") else "<|im_start|>assistant")
            for call in calls:
                f = call.get("function", call)
                out.append('\n<tool_call>\n{"name": "' + f["name"] + '", "arguments": ' + _json(f["arguments"])
                           + "}\n</tool_call>")
            out.append("<|im_end|>\n")
        elif role == "tool":
            if i == 0 or messages[i - 1]["role"] != "tool":
                out.append("<|im_start|>user")
            out.append("\n<tool_response>\n" + m["content"] + "\n</tool_response>")
            if i == last or messages[i + 1]["role"] != "tool":
                out.append("<|im_end|>\n")
    if add_generation_prompt:
        out.append("<|im_start|>assistant\n")
    return "".join(out)


def _deepseek_calls(message: Message, out: list[str], first_call_written: bool) -> bool:
    for call in message["tool_calls"]:
        f = call["function"]
        body = (call["type"] + "<｜tool▁sep｜>" + f["name"] + "\n```json\n" + f["arguments"]
                + "\n```<｜tool▁call▁end｜>")
        if first_call_written:
            out.append("\n<｜tool▁call▁begin｜>" + body)
            continue
        content = message.get("content")
        head = "<｜Assistant｜>" if content is None else "<｜Assistant｜>" + content
        out.append(head + "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>" + body)
        first_call_written = True
    out.append("<｜tool▁calls▁end｜><｜end▁of▁sentence｜>")
    return first_call_written


def deepseek(messages: list[Message], tools: Any, add_generation_prompt: bool,
             bos_token: str = "<｜begin▁of▁sentence｜>") -> str:
    """DeepSeek-V3's template, for the everyday corpus (string contents, JSON-text arguments)."""
    out = [bos_token, "\n\n".join([m["content"] for m in messages if m["role"] == "system"])]
    first_call_written = in_outputs = False
    first_output = True
    for m in messages:
        role = m["role"]
        if role == "user":
            in_outputs = False
            out.append("<｜User｜>" + m["content"])
        elif role == "assistant" and "tool_calls" in m:
            in_outputs = False
            first_call_written = _deepseek_calls(m, out, first_call_written)
        elif role == "assistant":
            if in_outputs:
                out.append("<｜tool▁outputs▁end｜>" + m["content"] + "<｜end▁of▁sentence｜>")
                in_outputs = False
            else:
                out.append("<｜Assistant｜>" + m["content"].split("</think>")[-1] + "<｜end▁of▁sentence｜>")
        elif role == "tool":
            in_outputs = True
            head = "<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>" if first_output else "<｜tool▁output▁begin｜>"
            out.append(head + m["content"] + "<｜tool▁output▁end｜>")
            first_output = False
    if in_outputs:
        out.append("<｜tool▁outputs▁end｜>")
    elif add_generation_prompt:
        out.append("<｜Assistant｜><think>\n")
    return "".join(out)


def _gemma3_parts(content: list[Message]) -> str:
    return "".join(["<start_of_image>" if p.get("type") == "image"
                    else p["text"].strip() if p.get("type") == "text" else "" for p in content])


def gemma3(messages: list[Message], tools: Any, add_generation_prompt: bool, bos_token: str = "<bos>") -> str:
    """Gemma 3's template, for the everyday corpus (alternating turns, text and image parts)."""
    out = [bos_token]
    prefix = None
    turns = messages
    if messages[0]["role"] == "system":
        content = messages[0]["content"]
        prefix = (content if isinstance(content, str) else content[0]["text"]) + "\n\n"
        turns = messages[1:]
    for m in turns:
        role = m["role"]
        out.append("<start_of_turn>model\n" if role == "assistant" else "<start_of_turn>" + role + "\n")
        if prefix is not None:
            out.append(prefix)
            prefix = None
        content = m.get("content")
        out.append(content.strip() if isinstance(content, str) else _gemma3_parts(content) if content else "")
        out.append("<end_of_turn>\n")
    if add_generation_prompt:
        out.append("<start_of_turn>model\n")
    return "".join(out)


def harmony(messages: list[Message], tools: Any, add_generation_prompt: bool, current_date: Any = None,
            reasoning_effort: Any = None) -> str:
    """Ollama's gpt-oss template, for the everyday corpus (a tool result named by ``name``, reasoning
    as ``reasoning_content``, no prefill): the header, then each message; one of its predecessor's
    role joins that one's text after a blank line, a user message takes out the reasoning before it."""
    offers_python = False
    for tool in tools or ():
        if tool["function"]["name"] == "python":
            offers_python = True
    out = [H.SYSTEM_START, "", H.DATE, date_text(current_date), reasoning_line_for(None, reasoning_effort),
           H.PYTHON_TOOL if offers_python else "", H.SYSTEM_END]
    system: list[str] = []
    analyses: list[int] = []
    previous: Any = None
    run = 0
    for message in messages:
        role = message["role"]
        content = message["content"]
        if type(content) is not str:
            content = "\n\n".join([part["text"] for part in content])
        if role == previous and role != "tool" and role != "system":
            if role == "user" or (len(out) > run and out[-3] is H.FINAL):
                out[-2] += "\n\n" + content
            else:
                out += (H.FINAL, "\n\n" + content, H.END)
        elif role == "user":
            for at in analyses:
                out[at] = out[at + 1] = out[at + 2] = ""
            analyses = []
            out += (H.USER, content, H.END)
        elif role == "assistant":
            run = len(out)
            thinking = message.get("reasoning_content")
            if thinking:
                analyses.append(run)
                out += (H.ANALYSIS, thinking, H.END)
            if content:
                out += (H.FINAL, content, H.END)
        elif role == "tool":
            if message["name"] == "python":
                out += (H.PYTHON_RESULT, content, H.END)
        else:
            system.append(content)
        previous = role
    out[1] = "\n\n".join(system)
    out.append(H.GENERATION)
    return "".join(out)


FLOORS: dict[str, Callable[..., str]] = {
    "qwen2.5": qwen25, "deepseek-v3": deepseek, "gemma-3": gemma3, "harmony": harmony,
}


def _check(name: str, reference: str) -> Callable[[dict[str, list[Any]], Any], None]:
    def check(outputs: dict[str, list[Any]], jobs: Any) -> None:
        for who in ("ours", "floor"):
            if who in outputs and outputs[who] != outputs[reference]:
                bad = [i for i, (a, b) in enumerate(zip(outputs[who], outputs[reference], strict=True)) if a != b]
                raise SystemExit(f"bench_floor: {name}: {who} differs from {reference} on job(s) {bad[:10]}")
    return check


def measure(name: str, rounds: int, tmp: Path) -> str:
    """One format's line: ours, its floor (if it has one) and the reference engine (Jinja2; Go's
    ``text/template`` for ``harmony``), as µs and ratios."""
    received = corpus.rendered_as_received
    contenders: list[Contender] = [("ours", received(pf.get_format(name).render), True)]
    if name in FLOORS:
        contenders.append(("floor", received(FLOORS[name]), True))
    go = engines.GoHarmony(tmp) if name == "harmony" else None
    if go is not None:
        contenders.append(("Go", go.run_wire, True))
    else:
        contenders.append(("Jinja2", received(engines.jinja2_renderer(engines.TEMPLATES[name])), True))
    reference = contenders[-1][0]
    flavour = corpus.FLAVOURS[name]
    try:
        timings = {t.name: t.median for t in straight(
            contenders, lambda r: corpus.to_wire(corpus.everyday_jobs(300, r, flavour)), rounds,
            _check(name, reference))}
    finally:
        if go is not None:
            go.close()
    ref = timings[reference]
    line = f"| `{name}` | {timings['ours']:.1f} | {ref / timings['ours']:.1f}× |"
    if "floor" in timings:
        floor = timings["floor"]
        return line + f" {floor:.1f} | {ref / floor:.1f}× | {timings['ours'] / floor:.2f} | {reference} {ref:.1f} |"
    return line + f" – | – | – | {reference} {ref:.1f} |"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("formats", nargs="*", default=["chatml-multi-system", *FLOORS],
                        help="formats (default: chatml-multi-system and every floor)")
    parser.add_argument("--rounds", type=int, default=5, help="straight-pass rounds (default 5)")
    args = parser.parse_args(argv)
    unknown = [name for name in args.formats if name not in FLOORS and name != "chatml-multi-system"]
    if unknown:
        parser.error(f"no floor for {', '.join(unknown)} (floors: {', '.join(FLOORS)})")
    print("| format | ours µs | ours / reference | floor µs | floor / reference | ours / floor (time) | reference µs |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.formats:
            print(measure(name, args.rounds, Path(tmp)), flush=True)


if __name__ == "__main__":
    main()
