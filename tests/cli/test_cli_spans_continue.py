"""``prompt-formats render --spans``, ``--tokenizer`` and ``--strict`` with ``continue_final_message``
(issue #38, item 14), run as a real subprocess.

The option comes from the record (top level or ``extra_body``, as a server reads it) or from
``--option``. The prompt is transformers' own (``render_jinja_template(continue_final_message=...)``
on the tagged reference template), the generated ranges its generation indices cut where the prompt
ends; the ids and masks are ``encode``'s of ``fmt.render_spans`` of the same record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prompt_formats import get_format
from prompt_formats.format.spans import normalize_ranges
from tests.cli.test_cli import run
from tests.support.hf_tokenizers import CHATML_ADDED, CHATML_SPECIAL, build_tokenizer
from tests.support.spans_oracle import render_with_generation

pytest.importorskip("tokenizers")
pytest.importorskip("transformers")

CALL = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}
MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    {"role": "assistant", "content": "It is ", "reasoning_content": "Say it."},
]
RECORDS = [
    {"id": "top", "messages": MESSAGES, "continue_final_message": True},
    {"id": "extra", "messages": MESSAGES, "extra_body": {"continue_final_message": "reasoning_content"}},
    {"id": "off", "messages": MESSAGES[:3]},
]


def expected(record: dict[str, Any]) -> tuple[str, list[list[int]]]:
    """transformers' prompt and generation indices (of the tagged text), cut where the prompt ends."""
    field = record.get("continue_final_message", record.get("extra_body", {}).get("continue_final_message", False))
    decoded = json.loads(json.dumps(record["messages"]))
    for message in decoded:  # the command decodes the calls' JSON arguments, as servers do
        for call in message.get("tool_calls", ()):
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    text, indices = render_with_generation("chatml_multi_system_generation.jinja", decoded, None, False,
                                           continue_final_message=field)
    cut = [(start, min(end, len(text))) for start, end in indices if start < len(text)]
    return text, [[start, end] for start, end in normalize_ranges(cut)]


def option_of(record: dict[str, Any]) -> dict[str, Any]:
    if "continue_final_message" in record:
        return {"continue_final_message": record["continue_final_message"]}
    return dict(record.get("extra_body", {}))


@pytest.mark.transformers
@pytest.mark.parametrize("workers", ["1", "2"])
def test_spans_and_tokens_of_a_continued_message(tmp_path: Path, workers: str) -> None:
    lines = "".join(json.dumps(record) + "\n" for record in RECORDS).encode()
    path = tmp_path / "tokenizer.json"
    build_tokenizer([lines.decode()], CHATML_SPECIAL, tuple(CHATML_ADDED), kind="merged").backend_tokenizer.save(
        str(path))
    proc = run("render", "-f", "chatml-multi-system", "--tokenizer", str(path), "--workers", workers,
               "--block-size", "1", "-", stdin=lines)
    assert proc.returncode == 0, proc.stderr
    outputs = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [output["id"] for output in outputs] == [record["id"] for record in RECORDS]
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    from prompt_formats.integrations.transformers import encode

    tokenizer = PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_file(str(path)))
    for record, output in zip(RECORDS, outputs, strict=True):
        text, generated = expected(record)
        assert output["prompt"] == text
        assert output["generated"] == generated
        spans = get_format("chatml-multi-system").render_spans(
            record["messages"], decode_tool_arguments=True, **option_of(record))
        assert output["messages"] == [[list(pair) for pair in ranges] for ranges in spans.messages]
        reference = encode(spans, tokenizer)
        assert output["input_ids"] == reference["input_ids"]
        assert output["assistant_masks"] == reference["assistant_masks"]
    continued = outputs[0]
    assert continued["generated"][-1][1] == len(continued["prompt"])  # the continued turn, to the end
    assert continued["assistant_masks"][-1] == 1


def test_option_and_strict(tmp_path: Path) -> None:
    """``--option continue_final_message=true`` as the record's own; ``--strict`` fails the record
    whose cut leaves out its final message's tool calls, naming the field."""
    lines = json.dumps({"id": "r", "messages": [
        {"role": "user", "content": "Q"}, {"role": "assistant", "content": "A", "tool_calls": [CALL]}]}) + "\n"
    spans = run("render", "-f", "chatml-safety", "--spans", "--option", "continue_final_message=true", "-",
                stdin=lines.encode())
    assert spans.returncode == 0, spans.stderr
    (output,) = [json.loads(line) for line in spans.stdout.splitlines()]
    assert output["prompt"].endswith("<|im_start|>assistant\n<think>\n\n</think>\n\nA")
    errors = tmp_path / "errors.jsonl"
    strict = run("render", "-f", "chatml-safety", "--spans", "--strict", "--option", "continue_final_message=true",
                 "--errors", str(errors), "-", stdin=lines.encode())
    assert strict.stdout == b""
    (error,) = [json.loads(line) for line in errors.read_text().splitlines()]
    assert "messages[1].tool_calls" in json.dumps(error), error
