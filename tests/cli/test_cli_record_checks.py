"""What the command refuses in a record that the template would take silently, run as a subprocess.

An option value of a kind the option does not take (``"enable_thinking": "no"``, ``0``) fails its
record, as ``--option`` refuses it for the run, unless ``--template-option-values``: then the prompt
is the template's own for that value (compared with Jinja2). A completion request's ``prompt``
without ``messages`` is named for what it is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_cli import records, run
from tests.support.oracles import render_jinja

USER = [{"role": "user", "content": "Hi"}]
TEMPLATE = "chatml_multi_system.jinja"


def write(tmp_path: Path, *lines: dict[str, Any]) -> Path:
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return source


def reports(tmp_path: Path, command: str, source: Path, *args: str) -> tuple[int, list[dict[str, Any]]]:
    errors = tmp_path / "errors.jsonl"
    proc = run(command, "-f", "chatml-multi-system", "-q", *args, str(source), "-o", str(tmp_path / "out.jsonl"),
               "--errors", str(errors))
    return proc.returncode, records(errors)


WRONG_KINDS = [
    ({"enable_thinking": "no"}, "enable_thinking", "expected a boolean, got a string"),
    ({"enable_thinking": 0}, "enable_thinking", "expected a boolean, got a number"),
    ({"chat_template_kwargs": {"enable_thinking": "false"}}, "chat_template_kwargs.enable_thinking",
     "expected a boolean, got a string"),
    ({"preserve_thinking": None}, "preserve_thinking", "expected a boolean, got null"),
]


@pytest.mark.parametrize(("options", "field", "problem"), WRONG_KINDS, ids=lambda value: str(value))
def test_a_record_option_of_the_wrong_kind_fails_the_record(
    tmp_path: Path, options: dict[str, Any], field: str, problem: str,
) -> None:
    source = write(tmp_path, {"id": "bad", "messages": USER, **options}, {"id": "good", "messages": USER})
    status, failed = reports(tmp_path, "render", source, "--add-generation-prompt")
    assert status == 1
    assert [(r["id"], r["message"]) for r in failed] == [("bad", f"{field}: {problem}")]
    assert [r["id"] for r in records(tmp_path / "out.jsonl")] == ["good"]


def test_a_parse_record_option_of_the_wrong_kind_fails_the_record(tmp_path: Path) -> None:
    completion = "<think>\nx\n</think>\n\nHello<|im_end|>"
    source = write(tmp_path, {"id": "bad", "completion": completion, "enable_thinking": "no"})
    status, failed = reports(tmp_path, "parse", source)
    assert status == 1
    assert [(r["id"], r["message"]) for r in failed] == [("bad", "enable_thinking: expected a boolean, got a string")]


def test_the_command_line_refuses_a_number_for_a_boolean_as_a_record_does(tmp_path: Path) -> None:
    proc = run("render", "-f", "chatml-multi-system", "--option", "enable_thinking=0", str(write(tmp_path)))
    assert proc.returncode == 2
    expected = "prompt-formats: --option enable_thinking=0: expected a boolean, got a number"
    assert proc.stderr.decode().strip() == expected


@pytest.mark.jinja
@pytest.mark.parametrize("value", ["no", 0, "false", None])
def test_template_option_values_renders_what_the_template_renders(tmp_path: Path, value: Any) -> None:
    source = write(tmp_path, {"id": 1, "messages": USER, "enable_thinking": value})
    status, failed = reports(tmp_path, "render", source, "--add-generation-prompt", "--template-option-values")
    assert (status, failed) == (0, [])
    expected_status, expected = render_jinja(TEMPLATE, USER, None, True, enable_thinking=value)
    assert expected_status == "ok"
    assert records(tmp_path / "out.jsonl") == [{"id": 1, "prompt": expected}]


def test_template_option_values_parses_as_the_template_reads_the_value(tmp_path: Path) -> None:
    # "no" is true to the template (only exactly false closes the think block): parsed as true is.
    completion = "x\n</think>\n\nHello<|im_end|>"
    source = write(tmp_path, *({"id": index, "completion": completion, "enable_thinking": value}
                               for index, value in enumerate(("no", True, False))))
    status, failed = reports(tmp_path, "parse", source, "--template-option-values")
    assert (status, failed) == (0, [])
    as_no, as_true, as_false = (out["message"] for out in records(tmp_path / "out.jsonl"))
    assert as_no == as_true != as_false


def test_a_completion_request_is_named_for_what_it_is(tmp_path: Path) -> None:
    source = write(tmp_path, {"id": "c", "prompt": "Once upon a time", "max_tokens": 5})
    status, failed = reports(tmp_path, "render", source)
    assert status == 1
    assert [(r["id"], r["message"]) for r in failed] == [
        ("c", "messages: missing (this command reads chat requests; a completion request's prompt is not one)"),
    ]
