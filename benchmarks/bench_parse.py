"""Reply parsing: our parsers against openai-harmony's Rust parser, one-shot and streaming, in one run.

Replies (built here, deterministic): long Harmony and ChatML completions (reasoning, content and a
tool call; about 64 KB and 1 MB), and a short agent-style one (reasoning, preamble, tool call).

- one-shot: MB/s of completion text (UTF-8 bytes). Ours: ``fmt.parse(text)``. openai-harmony:
  ``parse_messages_from_completion_tokens(tokens)`` on the completion already tokenized (its fastest
  path: tokenizing is not counted);
- streaming: cost per token-sized delta. The completion is cut where the o200k tokenizer cuts it
  (gpt-oss's own tokens; ChatML replies are cut the same way), so each delta is one token's text. Ours:
  ``parser.feed(delta)`` for every delta, then ``close()``. openai-harmony: ``StreamableParser.process``
  for every token.

Every measure is the fastest of ``--repeats`` runs (parsers keep no cache, but the repeats warm
the CPU's; the straight-pass headline rows are ``headline.py --only parse``). Before timing, both
Harmony parsers are checked to read the same reasoning, content and tool call from the Harmony
replies (the run stops otherwise).
openai-harmony is the ``oss-harmony`` package (a fork that ships its tokenizer, so it loads offline).
The row "Harmony, agent turn" is the one of formats/harmony/parse.py's fast path (the ``Kind`` members
read as module names on every step).

Usage::

    .venv/bin/python benchmarks/bench_parse.py [--repeats R]
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import openai_harmony as oh  # noqa: E402

import prompt_formats as pf  # noqa: E402

ENCODING = oh.load_harmony_encoding(oh.HarmonyEncodingName.HARMONY_GPT_OSS)

_WORDS = (
    "The user wants the weather in Paris for the next three days. I should call the weather tool with "
    "the city and the number of days, then summarise the forecast in a short table: temperature, rain "
    "and wind, with a note on what to wear. Let me also check whether the request mentions Celsius or "
    "Fahrenheit; it does not, so Celsius is the default. Zürich, 東京 and São Paulo use it too. "
)


def _prose(size: int) -> str:
    return (_WORDS * (size // len(_WORDS) + 1))[:size].rstrip()


def harmony_reply(size: int) -> str:
    """A gpt-oss completion after ``<|start|>assistant``: analysis, preamble, a function call."""
    return (
        "<|channel|>analysis<|message|>" + _prose(size * 7 // 10) + "<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>" + _prose(size * 3 // 10) + "<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
        + json.dumps({"city": "Paris", "days": 3, "units": "metric"}) + "<|call|>"
    )


def chatml_reply(size: int) -> str:
    """A Qwen3.6 completion after ``<think>\\n``: reasoning, content, a tool call, ``<|im_end|>``."""
    return (
        _prose(size * 7 // 10) + "\n</think>\n\n" + _prose(size * 3 // 10) + "\n\n<tool_call>\n"
        "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
        "</function>\n</tool_call><|im_end|>"
    )


TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]


def best(function: Callable[[], Any], repeats: int) -> float:
    """Fastest wall time of ``function()`` over ``repeats`` runs, in seconds."""
    fastest = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        fastest = min(fastest, time.perf_counter() - start)
    return fastest


def token_deltas(text: str) -> tuple[list[int], list[str]]:
    """The completion's o200k tokens and each token's text (concatenating to ``text``)."""
    tokens = ENCODING.encode(text, allowed_special="all")
    pieces = [ENCODING.decode_utf8([t]) for t in tokens]
    if "".join(pieces) != text:  # a token may end inside a multi-byte character: cut on characters instead
        pieces, pos = [], 0
        for t in tokens:
            size = len(ENCODING.decode_bytes([t]))
            chunk = text.encode()[pos:pos + size]
            pos += size
            pieces.append(chunk.decode("utf-8", "ignore"))
        if "".join(pieces) != text:
            raise SystemExit("token pieces do not concatenate to the text")
    return tokens, pieces


def check_harmony_agreement(text: str) -> None:
    ours = pf.get_format("harmony").parse(text)
    theirs = ENCODING.parse_messages_from_completion_tokens(
        ENCODING.encode(text, allowed_special="all"), oh.Role.ASSISTANT
    )
    texts = ["".join(part.text for part in m.content) for m in theirs]
    expected = (texts[1], texts[0], "get_weather", json.loads(texts[2]))
    got = (ours.content, ours.reasoning, ours.tool_calls[0].name, ours.tool_calls[0].arguments)
    if got != expected:
        raise SystemExit(f"the parsers disagree: {got!r} != {expected!r}")


def stream_ours(make: Callable[[], Any], deltas: list[str]) -> None:
    parser = make()
    feed = parser.feed
    for delta in deltas:
        feed(delta)
    parser.close()


def stream_theirs(tokens: list[int]) -> None:
    parser = oh.StreamableParser(ENCODING, oh.Role.ASSISTANT)
    process = parser.process
    for token in tokens:
        process(token)
    parser.process_eos()


def run(repeats: int) -> list[str]:
    harmony = pf.get_format("harmony")
    chatml = pf.get_format("chatml-multi-system")
    rows = [
        "| reply | size | one-shot: ours | one-shot: openai-harmony | ratio | per delta: ours | "
        "per token: openai-harmony | ratio |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    cases = [
        ("Harmony, agent turn", harmony_reply(2_000), "harmony"),
        ("Harmony, long", harmony_reply(64_000), "harmony"),
        ("Harmony, 1 MB", harmony_reply(1_000_000), "harmony"),
        ("ChatML, agent turn", chatml_reply(2_000), "chatml"),
        ("ChatML, long", chatml_reply(64_000), "chatml"),
        ("ChatML, 1 MB", chatml_reply(1_000_000), "chatml"),
    ]
    for label, text, family in cases:
        size = len(text.encode())
        tokens, deltas = token_deltas(text)
        if family == "harmony":
            check_harmony_agreement(text)
            ours_once = best(lambda: harmony.parse(text), repeats)  # noqa: B023
            ours_stream = best(lambda: stream_ours(harmony.stream_parser, deltas), repeats)  # noqa: B023
            completion_tokens = ENCODING.encode(text, allowed_special="all")
            theirs_once = best(
                lambda: ENCODING.parse_messages_from_completion_tokens(completion_tokens, oh.Role.ASSISTANT),  # noqa: B023
                repeats,
            )
            theirs_stream = best(lambda: stream_theirs(tokens), repeats)  # noqa: B023
        else:
            ours_once = best(lambda: chatml.parse(text, TOOLS), repeats)  # noqa: B023
            ours_stream = best(lambda: stream_ours(lambda: chatml.stream_parser(TOOLS), deltas), repeats)  # noqa: B023
            theirs_once = theirs_stream = float("nan")
        mbs = size / 1e6 / ours_once
        per_delta = ours_stream / len(deltas) * 1e6
        if family == "harmony":
            their_mbs = size / 1e6 / theirs_once
            per_token = theirs_stream / len(tokens) * 1e6
            rows.append(
                f"| {label} | {size / 1000:,.0f} KB | {mbs:,.0f} MB/s | {their_mbs:,.1f} MB/s "
                f"| {mbs / their_mbs:,.0f}× | "
                f"{per_delta:.2f} µs | {per_token:.2f} µs | {per_token / per_delta:.1f}× |"
            )
        else:
            rows.append(f"| {label} | {size / 1000:,.0f} KB | {mbs:,.0f} MB/s | – | – | {per_delta:.2f} µs | – | – |")
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--write", type=Path, help="also write the table (markdown) to this file")
    args = parser.parse_args()
    header = (
        f"date: {datetime.date.today()}  machine: {platform.machine()}, Python {platform.python_version()}, "
        f"oss-harmony {oh.__dict__.get('__version__', '0.0.11')}\n"
        f"command: .venv/bin/python benchmarks/bench_parse.py --repeats {args.repeats}\n"
    )
    print(header)
    rows = run(args.repeats)
    if args.write:
        args.write.write_text(header + "\n" + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
