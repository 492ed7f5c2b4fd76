"""``prompt-formats render --spans`` and ``--tokenizer``, run as a real subprocess.

The prompt is compared with transformers' render of the tagged reference template and the generated
ranges with its generation indices (the oracle of tests/support/spans_oracle.py); the ranges with
``fmt.render_spans`` of the same record, and the ids and masks with ``encode`` over a
``PreTrainedTokenizerFast`` of the same ``tokenizer.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from prompt_formats import get_format
from prompt_formats.format.spans import normalize_ranges
from tests.cli.test_cli import CHATML_OPTIONS, EXAMPLES, record_options, records, run
from tests.support.hf_tokenizers import CHATML_ADDED, CHATML_SPECIAL, HARMONY_SPECIAL, build_tokenizer
from tests.support.oracles import without_nones
from tests.support.processes import SAFETY_NET
from tests.support.serving_reference import decode_every_call
from tests.support.spans_oracle import fixed_today, render_with_generation

pytest.importorskip("tokenizers")
pytest.importorskip("transformers")

CHATML_EXAMPLES = ["agent_requests.jsonl", "tool_loop.jsonl"]
# A gpt-oss conversation with a tool call, a tool result and a final answer (the fixed date keeps
# the oracle's render and the command's equal).
GPT_OSS_RECORD: dict[str, Any] = {
    "id": "oss-1",
    "current_date": "2026-01-02",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "thinking": "Call the tool.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "assistant", "content": "Sunny."},
    ],
    "tools": [{"type": "function", "function": {
        "name": "weather", "description": "The weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }}],
}


def expected_spans(fmt_name: str, record: dict[str, Any], gen: bool) -> Any:
    """``fmt.render_spans`` of a record as the command reads it (tool arguments decoded, as servers do)."""
    options = record_options(record, CHATML_OPTIONS if fmt_name.startswith("chatml") else ("current_date",))
    return get_format(fmt_name).render_spans(
        record["messages"], record.get("tools"), gen, decode_tool_arguments=True, **options
    )


def as_lists(ranges: Any) -> list[list[int]]:
    return [[start, end] for start, end in ranges]


@pytest.mark.jinja
@pytest.mark.parametrize("example", CHATML_EXAMPLES)
@pytest.mark.parametrize("workers", ["1", "2"])
def test_spans_equal_render_spans_and_the_tagged_template(tmp_path: Path, example: str, workers: str) -> None:
    out = tmp_path / "spans.jsonl"
    proc = run("render", "-f", "chatml-multi-system", "--spans", "--workers", workers,
               str(EXAMPLES / example), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    inputs, outputs = records(EXAMPLES / example), records(out)
    assert len(outputs) == len(inputs)
    for record, output in zip(inputs, outputs, strict=True):
        assert set(output) == {"id", "prompt", "generated", "messages"}
        spans = expected_spans("chatml-multi-system", record, False)
        assert output["generated"] == as_lists(spans.generated)
        assert output["messages"] == [as_lists(ranges) for ranges in spans.messages]
        # The oracle: transformers on the tagged reference template, on the messages a server decodes.
        text, indices = render_with_generation(
            "chatml_multi_system_generation.jinja", decode_every_call(record["messages"]), record.get("tools"),
            False, **record_options(record, CHATML_OPTIONS),
        )
        assert output["prompt"] == text
        assert output["generated"] == as_lists(normalize_ranges(indices))
        # Each generated slice is one assistant turn: after its header, through its end marker.
        turns = [text[start:end] for start, end in output["generated"]]
        assert len(turns) == sum(message["role"] == "assistant" for message in record["messages"])
        for (start, _), turn in zip(output["generated"], turns, strict=True):
            assert text[:start].endswith("<|im_start|>assistant\n")
            assert turn.endswith("<|im_end|>") and "<|im_start|>" not in turn


@pytest.fixture(scope="module")
def chatml_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    corpus = [line.decode() for example in CHATML_EXAMPLES for line in (EXAMPLES / example).read_bytes().splitlines()]
    path = tmp_path_factory.mktemp("tokenizer") / "tokenizer.json"
    build_tokenizer(corpus, CHATML_SPECIAL, tuple(CHATML_ADDED), kind="merged").backend_tokenizer.save(str(path))
    return path


def encode_reference(spans: Any, path: Path) -> dict[str, Any]:
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    from prompt_formats.integrations.transformers import encode

    return encode(spans, PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_file(str(path))))


@pytest.mark.transformers
@pytest.mark.parametrize("workers", ["1", "2"])
def test_tokenizer_ids_and_masks_equal_encode(tmp_path: Path, chatml_tokenizer: Path, workers: str) -> None:
    out = tmp_path / "tokens.jsonl"
    # Small blocks: with two workers, each record goes through the pickled job in a worker process.
    proc = run("render", "-f", "chatml-multi-system", "--tokenizer", str(chatml_tokenizer), "--workers", workers,
               "--block-size", "1", str(EXAMPLES / "tool_loop.jsonl"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    for record, output in zip(records(EXAMPLES / "tool_loop.jsonl"), records(out), strict=True):
        assert set(output) == {"id", "prompt", "generated", "messages", "input_ids", "assistant_masks"}
        spans = expected_spans("chatml-multi-system", record, False)
        assert output["generated"] == as_lists(spans.generated)
        reference = encode_reference(spans, chatml_tokenizer)
        assert output["input_ids"] == reference["input_ids"]
        assert output["assistant_masks"] == reference["assistant_masks"]
        assert 0 < sum(output["assistant_masks"]) < len(output["assistant_masks"])


@pytest.mark.transformers
def test_gpt_oss_tokenizer_output_equals_encode_and_the_tagged_template(tmp_path: Path) -> None:
    line = json.dumps(GPT_OSS_RECORD)
    path = tmp_path / "tokenizer.json"
    build_tokenizer([line], HARMONY_SPECIAL).backend_tokenizer.save(str(path))
    proc = run("render", "-f", "gpt-oss", "--tokenizer", str(path), "-", stdin=line.encode() + b"\n")
    assert proc.returncode == 0, proc.stderr
    (output,) = [json.loads(text) for text in proc.stdout.splitlines()]
    spans = expected_spans("gpt-oss", GPT_OSS_RECORD, False)
    assert output["messages"] == [as_lists(ranges) for ranges in spans.messages]
    with fixed_today():
        text, indices = render_with_generation(
            "gpt_oss_generation.jinja", without_nones(decode_every_call(GPT_OSS_RECORD["messages"])),
            GPT_OSS_RECORD["tools"], False,
        )
    assert output["prompt"] == spans.text == text
    assert output["generated"] == as_lists(spans.generated) == as_lists(normalize_ranges(indices))
    reference = encode_reference(spans, path)
    assert output["input_ids"] == reference["input_ids"]
    assert output["assistant_masks"] == reference["assistant_masks"]
    turns = [output["prompt"][start:end] for start, end in output["generated"]]
    assert len(turns) == 2 and turns[0].endswith("<|call|>") and turns[1].endswith("<|return|>")


def run_usage(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "prompt_formats", *args], input=b"", capture_output=True,
                          timeout=SAFETY_NET, check=False, env=env)


def assert_usage_error(proc: subprocess.CompletedProcess[bytes], words: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == b""
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and words in lines[0], lines


# A Harmony conversation (Ollama's Go template): a merged user run, reasoning after the last user
# message, a python result (a conversation ending with an assistant message would be a prefill).
HARMONY_RECORD: dict[str, Any] = {
    "id": "harmony-1",
    "current_date": "2026-01-02",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Compute"},
        {"role": "user", "content": "2 + 2"},
        {"role": "assistant", "thinking": "Use python.", "content": "Running it."},
        {"role": "tool", "tool_name": "python", "content": "4"},
    ],
    "tools": [{"type": "function", "function": {"name": "python"}}],
}


@pytest.fixture(scope="module")
def harmony_oracles(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The Go oracle on the Harmony template's tagged copy (fails, does not skip, without Go)."""
    from tests.support.harmony_oracle import ROOT, HarmonyOracle, build_oracle

    tagged = ROOT / "tests" / "fixtures" / "harmony_gpt_oss_generation.gotmpl"
    oracle = HarmonyOracle(build_oracle(tmp_path_factory.mktemp("harmony_cli_oracle")), tagged)
    yield oracle
    oracle.close()


@pytest.mark.transformers
@pytest.mark.go
def test_harmony_spans_and_tokens_equal_the_go_oracle_and_encode(tmp_path: Path, harmony_oracles: Any) -> None:
    from tests.support.harmony_oracle import to_case

    line = json.dumps(HARMONY_RECORD)
    path = tmp_path / "tokenizer.json"
    build_tokenizer([line], HARMONY_SPECIAL).backend_tokenizer.save(str(path))
    spans_run = run("render", "-f", "harmony", "--spans", "-", stdin=line.encode() + b"\n")
    tokens_run = run("render", "-f", "harmony", "--tokenizer", str(path), "-", stdin=line.encode() + b"\n")
    assert spans_run.returncode == 0 and tokens_run.returncode == 0, (spans_run.stderr, tokens_run.stderr)
    (spans_output,) = [json.loads(text) for text in spans_run.stdout.splitlines()]
    (output,) = [json.loads(text) for text in tokens_run.stdout.splitlines()]
    assert set(spans_output) == {"id", "prompt", "generated", "messages"}
    assert {key: output[key] for key in spans_output} == spans_output
    expected = harmony_oracles.render(to_case(HARMONY_RECORD["messages"], HARMONY_RECORD["tools"],
                                              {"current_date": HARMONY_RECORD["current_date"]}))
    assert output["prompt"] == expected["output"]
    assert output["generated"] == expected["generation"]
    spans = get_format("harmony").render_spans(HARMONY_RECORD["messages"], HARMONY_RECORD["tools"],
                                               current_date=HARMONY_RECORD["current_date"])
    assert output["messages"] == [as_lists(ranges) for ranges in spans.messages]
    reference = encode_reference(spans, path)
    assert output["input_ids"] == reference["input_ids"]
    assert output["assistant_masks"] == reference["assistant_masks"]
    turns = [output["prompt"][start:end] for start, end in output["generated"]]
    assert turns == [
        "<|channel|>analysis<|message|>Use python.<|end|>", "<|channel|>final<|message|>Running it.<|end|>"
    ]
    assert output["prompt"].endswith("<|start|>assistant")


def test_spans_of_a_format_without_render_spans_is_a_usage_error() -> None:
    from prompt_formats import ChatFormat
    from prompt_formats.cli.files import UsageError
    from prompt_formats.cli.spans import check_spans_format

    class NoSpans(ChatFormat):
        name = "no-spans"

        def render(self, messages: Any, tools: Any = None, add_generation_prompt: bool = False, **options: Any) -> str:
            return "x"

    # Every package format has render_spans: the refusal is checked on a format without one.
    with pytest.raises(UsageError, match=r"^format 'no-spans' has no render_spans: --spans and --tokenizer"):
        check_spans_format(NoSpans())
    for name in ("chatml-multi-system", "chatml-safety", "gpt-oss", "harmony"):
        check_spans_format(get_format(name))


@pytest.mark.parametrize("content", [None, b"{not a tokenizer"])
def test_an_unloadable_tokenizer_is_a_usage_error(tmp_path: Path, content: bytes | None) -> None:
    path = tmp_path / "tokenizer.json"
    if content is not None:
        path.write_bytes(content)
    assert_usage_error(run_usage("render", "-f", "chatml-multi-system", "--tokenizer", str(path), "-"),
                       f"--tokenizer {path}: cannot load it")


@pytest.mark.transformers
def test_tokenizer_without_the_tokenizers_package_is_a_usage_error(tmp_path: Path, chatml_tokenizer: Path) -> None:
    # A package that fails to import, ahead of the installed one on the path: as if it were missing.
    blocked = tmp_path / "blocked" / "tokenizers"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text("raise ImportError('tokenizers is not installed here')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocked.parent), os.environ.get("PYTHONPATH", "")])}
    assert_usage_error(
        run_usage("render", "-f", "chatml-multi-system", "--tokenizer", str(chatml_tokenizer), "-", env=env),
        "--tokenizer needs the optional 'tokenizers' package",
    )


@pytest.mark.transformers
def test_the_job_pickles_its_tokenizer_path_and_loads_the_tokenizer_once(chatml_tokenizer: Path) -> None:
    import pickle

    from prompt_formats.cli.spans import SpansRenderer

    job = SpansRenderer(get_format("chatml-multi-system"), tokenizer_path=str(chatml_tokenizer))
    loaded = job.tokenizer()
    assert job.tokenizer() is loaded  # once per process, not per record
    copy = pickle.loads(pickle.dumps(job))
    assert copy.tokenizer_path == str(chatml_tokenizer) and copy._tokenizer is None
    assert copy.tokenizer() is not loaded and copy.tokenizer() is copy.tokenizer()


@pytest.mark.transformers
def test_encode_with_tokenizer_refuses_a_tokenizer_that_truncates(chatml_tokenizer: Path) -> None:
    from tokenizers import Tokenizer

    from prompt_formats import InvalidInputError
    from prompt_formats.integrations.transformers import encode_with_tokenizer

    tokenizer = Tokenizer.from_file(str(chatml_tokenizer))
    tokenizer.enable_truncation(4)
    spans = get_format("chatml-multi-system").render_spans([{"role": "user", "content": "hello there"}])
    with pytest.raises(InvalidInputError, match="truncates or pads"):
        encode_with_tokenizer(spans, tokenizer)
