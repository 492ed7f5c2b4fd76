"""``render --tokenizer`` given a model directory (``save_pretrained``: tokenizer.json,
tokenizer_config.json, the chat template) or a Hub name, run as a subprocess.

The directory's template chooses the format when ``--format`` is not given: its prompts are the
template's own (Jinja2), its token ids those of the same tokenizer given as a file. A template that
is not one of the package's, or not the one ``--format`` names, and a Hub name that cannot be
fetched, are usage errors naming what was tried.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.hf_tokenizers import CHATML_ADDED, CHATML_SPECIAL, build_tokenizer
from tests.support.oracles import render_jinja
from tests.support.processes import SAFETY_NET

pytest.importorskip("tokenizers")
pytest.importorskip("transformers")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
USER = [{"role": "user", "content": "Hi there"}]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "prompt_formats", *args], capture_output=True, env=env,
                          timeout=SAFETY_NET, check=False)


def model_directory(tmp_path: Path, template: str | None) -> Path:
    tokenizer = build_tokenizer(["Hi there, how are you?"], CHATML_SPECIAL, tuple(CHATML_ADDED))
    if template is not None:
        tokenizer.chat_template = template
    directory = tmp_path / "model"
    tokenizer.save_pretrained(str(directory))
    return directory


def source(tmp_path: Path) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"id": 1, "messages": USER}) + "\n")
    return path


@pytest.mark.transformers
def test_a_model_directory_chooses_its_format_and_loads_its_tokenizer(tmp_path: Path) -> None:
    template = (FIXTURES / "chatml_multi_system.jinja").read_text("utf-8")
    directory = model_directory(tmp_path, template)
    by_directory = run("render", "--tokenizer", str(directory), "--add-generation-prompt", "-q", str(source(tmp_path)))
    assert by_directory.returncode == 0, by_directory.stderr
    by_file = run("render", "-f", "chatml-multi-system", "--tokenizer", str(directory / "tokenizer.json"),
                  "--add-generation-prompt", "-q", str(source(tmp_path)))
    assert by_file.returncode == 0, by_file.stderr
    [out] = [json.loads(line) for line in by_directory.stdout.splitlines()]
    status, expected = render_jinja("chatml_multi_system.jinja", USER, None, True)
    assert (status, out["prompt"]) == ("ok", expected)
    assert out["input_ids"]  # the tokenizer did encode
    assert by_directory.stdout == by_file.stdout


@pytest.mark.transformers
def test_a_model_directory_whose_template_is_not_ours_is_refused(tmp_path: Path) -> None:
    directory = model_directory(tmp_path, "{{ messages[0]['content'] }}")
    proc = run("render", "--tokenizer", str(directory), str(source(tmp_path)), "-o", str(tmp_path / "out.jsonl"))
    assert proc.returncode == 2
    assert proc.stderr.decode().startswith(
        f"prompt-formats: --tokenizer {directory}: its chat_template is not a format of this package: "
        "not the reference template of any format")
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.transformers
def test_a_model_directory_of_another_format_than_format_is_refused(tmp_path: Path) -> None:
    directory = model_directory(tmp_path, (FIXTURES / "chatml_multi_system.jinja").read_text("utf-8"))
    proc = run("render", "-f", "chatml-safety", "--tokenizer", str(directory), str(source(tmp_path)))
    assert proc.returncode == 2
    assert proc.stderr.decode().strip() == (
        f"prompt-formats: --tokenizer {directory}: its chat_template is the template of 'chatml-multi-system', "
        "not of --format chatml-safety")


@pytest.mark.transformers
def test_a_model_directory_without_a_template_needs_format(tmp_path: Path) -> None:
    directory = model_directory(tmp_path, None)
    proc = run("render", "--tokenizer", str(directory), str(source(tmp_path)))
    assert proc.returncode == 2
    assert "no chat_template to choose the format by: give --format" in proc.stderr.decode()


def test_a_hub_name_that_cannot_be_fetched_says_what_was_tried(tmp_path: Path) -> None:
    pytest.importorskip("huggingface_hub")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}  # an empty cache, no network
    proc = run("render", "--tokenizer", "no-such-owner/no-such-model", str(source(tmp_path)), env=env)
    assert proc.returncode == 2
    # In the command's words, one line: what the argument was taken for, where it was looked for, why not there.
    assert proc.stderr.decode() == (
        "prompt-formats: --tokenizer no-such-owner/no-such-model: not a file or a directory, so it was looked up "
        "as a Hugging Face Hub model: its tokenizer.json is not in the local Hugging Face cache, and downloads "
        "are off (HF_HUB_OFFLINE is set)\n")


def usage_error_line(proc: subprocess.CompletedProcess[bytes]) -> str:
    """The one line of a usage error (exit status 2), without the trailing newline."""
    assert proc.returncode == 2, proc.stderr
    stderr = proc.stderr.decode()
    assert stderr.count("\n") == 1 and stderr.endswith("\n"), stderr
    return stderr[:-1]


@pytest.mark.transformers
def test_a_tokenizer_config_nested_too_deeply_is_a_usage_error(tmp_path: Path) -> None:
    directory = model_directory(tmp_path, None)
    (directory / "tokenizer_config.json").write_text('{"chat_template": ' + "[" * 100_000 + "]" * 100_000 + "}")
    line = usage_error_line(run("render", "--tokenizer", str(directory), str(source(tmp_path))))
    assert line == (f"prompt-formats: --tokenizer {directory}: cannot read tokenizer_config.json: "
                    "its JSON is nested too deeply to read")


@pytest.mark.transformers
def test_a_chat_template_that_is_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    directory = model_directory(tmp_path, None)
    (directory / "chat_template.jinja").write_bytes(b"{{ messages }}\xff")
    line = usage_error_line(run("render", "--tokenizer", str(directory), str(source(tmp_path))))
    assert line == (f"prompt-formats: --tokenizer {directory}: cannot read chat_template.jinja: "
                    "not UTF-8 text (invalid byte 15)")


def test_format_is_required_without_a_model(tmp_path: Path) -> None:
    proc = run("render", str(source(tmp_path)))
    assert proc.returncode == 2
    assert "--format is required" in proc.stderr.decode()
