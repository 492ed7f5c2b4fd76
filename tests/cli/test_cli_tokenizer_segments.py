"""``prompt-formats render --tokenizer`` with a tokenizer the segment encoder is exact for.

Each worker process encodes through one ``SegmentEncoder`` (its stretch cache and recent prompts
shared by the worker's records). Its ids and masks must be what the plain call gives:
``encode`` over a ``PreTrainedTokenizerFast`` of the same ``tokenizer.json``, i.e. what
transformers' ``apply_chat_template`` gives on the tagged template (tests/spans). The records are
an agent session's growing requests, so that later records share most of their text with earlier
ones, in one worker and across two.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_cli import EXAMPLES, records, run
from tests.cli.test_cli_spans import encode_reference, expected_spans
from tests.support.hf_tokenizers import CHATML_ADDED, CHATML_SPECIAL, build_tokenizer

pytestmark = [pytest.mark.transformers]

pytest.importorskip("tokenizers")
pytest.importorskip("transformers")


def follow_ups(example: Path) -> list[dict[str, Any]]:
    """Each record's requests as an agent sends them: its messages up to each user or tool message."""
    out = []
    for record in records(example):
        messages = record["messages"]
        for end, message in enumerate(messages, 1):
            if message["role"] in ("user", "tool"):
                out.append({**record, "id": f"{record.get('id', '')}-{end}", "messages": messages[:end]})
    return out


@pytest.fixture(scope="module")
def exact_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from prompt_formats.integrations.segments import SegmentEncoder

    corpus = [line.decode() for line in (EXAMPLES / "agent_requests.jsonl").read_bytes().splitlines()]
    tokenizer = build_tokenizer(corpus, CHATML_SPECIAL, tuple(CHATML_ADDED), "words", offsets_prefix_space=False)
    assert SegmentEncoder(tokenizer.backend_tokenizer).exact  # the cached path is the one under test
    path = tmp_path_factory.mktemp("tokenizer") / "tokenizer.json"
    tokenizer.backend_tokenizer.save(str(path))
    return path


@pytest.mark.parametrize("workers", ["1", "2"])
def test_segment_encoded_output_equals_the_plain_call(tmp_path: Path, exact_tokenizer: Path, workers: str) -> None:
    inputs = follow_ups(EXAMPLES / "agent_requests.jsonl") + follow_ups(EXAMPLES / "tool_loop.jsonl")
    source, out = tmp_path / "requests.jsonl", tmp_path / "tokens.jsonl"
    source.write_text("".join(json.dumps(record) + "\n" for record in inputs))
    proc = run("render", "-f", "chatml-multi-system", "--tokenizer", str(exact_tokenizer), "--workers", workers,
               "--block-size", "3", str(source), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    outputs = records(out)
    assert len(outputs) == len(inputs) > 10
    for record, output in zip(inputs, outputs, strict=True):
        reference = encode_reference(expected_spans("chatml-multi-system", record, False), exact_tokenizer)
        assert output["input_ids"] == reference["input_ids"], record["id"]
        assert output["assistant_masks"] == reference["assistant_masks"], record["id"]
