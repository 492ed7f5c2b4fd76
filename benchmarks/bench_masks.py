"""Training data: conversations with assistant masks per second, ours against transformers, one run.

For ``chatml-multi-system``, ``chatml-safety`` and ``gpt-oss``, on the held-out everyday and agent
corpora (``heldout.py``: a fresh corpus per round, each request decoded from its own JSON), with the
same fast tokenizer on both sides:

- transformers: ``tokenizer.apply_chat_template(messages, tools=..., chat_template=<the tagged
  template>, tokenize=True, return_dict=True, return_assistant_tokens_mask=True, **options)``, the
  tagged template being the reference template with ``{% generation %}`` tags
  (``tests/fixtures/*_generation.jinja``, the tests' oracle);
- ours, ``encode``: ``fmt.render_spans(messages, tools, **options)`` then
  ``prompt_formats.integrations.transformers.encode(spans, tokenizer)`` (the same
  ``PreTrainedTokenizerFast``);
- ours, ``encode_with_tokenizer``: the same spans through ``encode_with_tokenizer(spans,
  tokenizer.backend_tokenizer)`` (the ``tokenizers.Tokenizer`` underneath, as the command uses it);
- ours, ``SegmentEncoder``: the same spans through ``SegmentEncoder(tokenizer).encode(spans)``
  (``integrations.segments``: the stretches between added tokens tokenized once and cached). One
  encoder per round, made inside the timed pass and shared by all of that round's conversations, as
  a training-data job shares one across its conversations: each round starts with an empty cache
  on a fresh corpus, so only what repeats within the round (tool blocks, system prompts, an agent
  session's earlier turns) is found in it. The run stops if the encoder is not exact for the
  tokenizer (it would step aside to ``encode``).

Two floor rows, against the same transformers times: the tokenizer alone (``encode_batch_fast``: ids,
no offsets; no render, no masks) on every distinct stretch between added tokens of the round's
prompts, each once (what the segment encoder cannot avoid: text no cache has seen), and on the
whole prompts. The first bounds what a cache of stretches can reach on the corpus.

Beside them, the part before the tokenizer: transformers' ``render_jinja_template(...,
return_assistant_tokens_mask=True)`` (text and generation indices) against ``render_spans`` (text
and generated ranges), compared equal too.

The tokenizer is built offline as ``tests/support/hf_tokenizers.py`` builds one (a byte-level BPE,
GPT-2 pre-tokenization, offsets trimmed alike for every token, the format's control tokens as
special tokens, ChatML's tags as added tokens), trained here on prompts of a corpus seed that is
never timed. Timing: ``timing.straight`` (no warm-up; each contender once per round, in rotating
order; CPU time of the thread, with ``TOKENIZERS_PARALLELISM=false`` so that the tokenizer's batched
calls run on that thread), the figure the median over rounds. Every timed conversation's
``input_ids``, ``attention_mask`` and ``assistant_masks`` of ours are compared with transformers'
(the run stops on a difference).

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_masks.py [--rounds 3] [--formats chatml-multi-system,...]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ["TOKENIZERS_PARALLELISM"] = "false"  # the tokenizer's work on the timed thread, batched or not

import engines
import heldout
import tokenizers
import transformers
from heldout import Flavour, Job
from timing import Contender, markdown_table, straight
from transformers.utils.chat_template_utils import render_jinja_template

import prompt_formats as pf
from prompt_formats.integrations.segments import SegmentEncoder
from prompt_formats.integrations.transformers import encode, encode_with_tokenizer
from prompt_formats.spans import normalize_ranges

TAGGED = {
    "chatml-multi-system": "chatml_multi_system_generation.jinja",
    "chatml-safety": "chatml_upstream_generation.jinja",
    "gpt-oss": "gpt_oss_generation.jinja",
}
FLAVOURS: dict[str, Flavour] = {"chatml-multi-system": "chatml", "chatml-safety": "chatml-strict", "gpt-oss": "gpt-oss"}
CHATML_SPECIAL = ["<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
CHATML_ADDED = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
HARMONY_SPECIAL = ["<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|call|>", "<|return|>", "<|constrain|>"]
KEYS = ("input_ids", "attention_mask", "assistant_masks")
TRAINING_SEED = 10_000  # the tokenizer's training corpus: a seed no round uses
Corpus = Callable[[int], list[Job]]


def corpora(flavour: Flavour) -> dict[str, Corpus]:
    return {
        "everyday (300 conversations)": lambda seed: heldout.everyday_jobs(300, seed, flavour),
        "agent sessions (follow-up requests)": lambda seed: heldout.agent_jobs(2, 2 * seed, flavour),
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
            raise SystemExit(f"bench_masks: SegmentEncoder is not exact for this tokenizer: {encoder.reason}")
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
    out = Round(jobs)
    out.texts = [fmt.render(messages, tools, False, **options) for messages, tools, options in jobs]
    split = SegmentEncoder(tokenizer).split
    out.new_stretches = list(dict.fromkeys(
        text[start:end] for text in out.texts for start, end, added in split(text) if not added))
    return out


def check(name: str) -> Callable[[dict[str, list[Any]], Sequence[Job]], None]:
    def compare(outputs: dict[str, list[Any]], jobs: Sequence[Job]) -> None:
        theirs = outputs["transformers"]
        for contender in ("ours, encode", "ours, encode_with_tokenizer", "ours, SegmentEncoder"):
            bad = [i for i, (a, b) in enumerate(zip(outputs[contender], theirs, strict=True))
                   if any(list(a[key]) != list(b[key]) for key in KEYS)]
            if bad:
                raise SystemExit(f"bench_masks: {name}: {contender} differs from transformers on {bad[:10]}")
        if outputs["ours, render_spans only"] != outputs["transformers, text and generation indices only"]:
            raise SystemExit(f"bench_masks: {name}: render_spans differs from the tagged template's text or indices")
        if not any(1 in out["assistant_masks"] for out in theirs):
            raise SystemExit(f"bench_masks: {name}: no assistant token masked (the tagged template is not used?)")

    return compare


def format_rows(name: str, rounds: int, only: str = "") -> list[list[str]]:
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

        timings = straight(contenders(fmt, tokenizer, template), round_corpus, rounds, check(f"{name}, {label}"))
        pairs = ((timings[1], timings[0]), (timings[2], timings[0]), (timings[3], timings[0]), (timings[5], timings[4]),
                 (timings[6], timings[0]), (timings[7], timings[0]))
        for t, theirs in pairs:
            rows.append([f"`{name}`", f"{label}, {counted[0]} checked per round", t.name, theirs.name,
                         f"{1e6 / t.median:,.0f}", f"{1e6 / theirs.median:,.0f}",
                         f"**{theirs.median / t.median:.1f}×**"])
        print(f"measured {name}, {label}", file=sys.stderr, flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--formats", default="chatml-multi-system,chatml-safety,gpt-oss")
    parser.add_argument("--corpus", default="", choices=["", "everyday", "agent"], help="only this corpus")
    args = parser.parse_args(argv)

    rows = [row for name in args.formats.split(",") for row in format_rows(name, args.rounds, args.corpus)]
    print(f"Python {platform.python_version()}, transformers {transformers.__version__}, tokenizers "
          f"{tokenizers.__version__}; straight passes, {args.rounds} rounds, median CPU time per conversation\n")
    print(markdown_table(["format", "corpus", "ours", "against", "ours conv/s", "theirs conv/s",
                          "ratio (theirs / ours)"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
