"""The ``prompt-formats`` command, run as a real subprocess.

Prompts in the output are compared with the reference engines (Jinja2 for ChatML, the Go oracle for
Harmony), never with strings our own code produced.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.gpt_oss_oracle import render_gpt_oss_jinja
from tests.support.harmony_oracle import ROOT, HarmonyOracle, build_oracle, to_case
from tests.support.oracles import render_jinja
from tests.support.processes import SAFETY_NET, at_default_action, ready_workers, wait_for
from tests.support.serving_reference import decode_every_call

EXAMPLES = ROOT / "examples"
CHATML_OPTIONS = ("enable_thinking", "preserve_thinking", "add_vision_id")
CHATML_SERVING_OPTIONS = ("decode_tool_arguments", "continue_final_message")
HARMONY_OPTIONS = ("current_date", "think", "reasoning_effort", "decode_tool_arguments")
GPT_OSS_OPTIONS = ("current_date", "reasoning_effort", "model_identity", "builtin_tools")


def run(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "prompt_formats", *args],
        input=stdin, capture_output=True, cwd=cwd, timeout=SAFETY_NET, check=False,
    )


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def record_options(record: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """The record's format options as the documented record shape defines them (top level or chat_template_kwargs)."""
    options = {key: record[key] for key in names if key in record}
    options.update(record.get("chat_template_kwargs", {}))
    return options


def jinja_prompt(template: str, record: dict[str, Any], gen: bool, decoded: bool = True) -> str:
    """The template's prompt for a record; ``decoded``: on the messages a server decodes (the command's default)."""
    messages = decode_every_call(record["messages"]) if decoded else record["messages"]
    status, text = render_jinja(
        template, messages, record.get("tools"), gen, **record_options(record, CHATML_OPTIONS)
    )
    assert status == "ok", text
    return text


@pytest.fixture(scope="module")
def harmony_oracle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HarmonyOracle]:
    oracle = HarmonyOracle(build_oracle(tmp_path_factory.mktemp("harmony_oracle")))
    yield oracle
    oracle.close()


@pytest.mark.jinja
@pytest.mark.parametrize("example", ["agent_requests.jsonl", "tool_loop.jsonl", "chatml-multi-system.jsonl"])
@pytest.mark.parametrize("workers", ["1", "2"])
def test_render_examples_match_the_jinja_template(tmp_path: Path, example: str, workers: str) -> None:
    out = tmp_path / "prompts.jsonl"
    proc = run("render", "--format", "chatml-multi-system", "--add-generation-prompt", "--workers", workers,
               str(EXAMPLES / example), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    inputs = records(EXAMPLES / example)
    outputs = records(out)
    assert [o["id"] for o in outputs] == [i["id"] for i in inputs]
    for record, output in zip(inputs, outputs, strict=True):
        assert set(output) == {"id", "prompt"}
        assert output["prompt"] == jinja_prompt("chatml_multi_system.jinja", record, True)


@pytest.mark.jinja
def test_keep_tool_arguments_renders_the_templates_string_branch(tmp_path: Path) -> None:
    example = EXAMPLES / "agent_requests.jsonl"
    out = tmp_path / "prompts.jsonl"
    proc = run("render", "--format", "chatml-multi-system", "--add-generation-prompt", "--keep-tool-arguments",
               str(example), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    for record, output in zip(records(example), records(out), strict=True):
        assert output["prompt"] == jinja_prompt("chatml_multi_system.jinja", record, True, decoded=False)
    # The example has a JSON-string call (agent-001), so the two readings differ on it.
    assert any(jinja_prompt("chatml_multi_system.jinja", r, True) != jinja_prompt("chatml_multi_system.jinja", r, True,
                                                                                   decoded=False)
               for r in records(example))
    both = run("render", "--format", "chatml-multi-system", "--keep-tool-arguments", "--option",
               "decode_tool_arguments=true", str(example))
    assert both.returncode == 2 and b"contradict" in both.stderr


@pytest.mark.go
def test_render_harmony_example_matches_the_go_template(tmp_path: Path, harmony_oracle: HarmonyOracle) -> None:
    example = EXAMPLES / "harmony.jsonl"
    proc = run("render", "--format", "harmony", str(example), "-o", str(tmp_path / "out.jsonl"))
    assert proc.returncode == 0, proc.stderr
    inputs = records(example)
    outputs = records(tmp_path / "out.jsonl")
    expected = harmony_oracle.render_many(
        [to_case(r["messages"], r.get("tools"), record_options(r, HARMONY_OPTIONS)) for r in inputs]
    )
    assert [o["id"] for o in outputs] == [r["id"] for r in inputs]
    assert [o["prompt"] for o in outputs] == [e["output"] for e in expected]


@pytest.mark.jinja
def test_render_safety_format_matches_the_upstream_template(tmp_path: Path) -> None:
    # No control token in these records: chatml-safety must equal the strict upstream template.
    example = EXAMPLES / "tool_loop.jsonl"
    proc = run("render", "-f", "chatml-safety", "--add-generation-prompt", str(example), "-o", str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stderr
    outputs = records(tmp_path / "o")
    for record, output in zip(records(example), outputs, strict=True):
        assert output["prompt"] == jinja_prompt("chatml_upstream.jinja", record, True)


@pytest.mark.jinja
def test_render_safety_example_matches_the_upstream_template_but_for_its_control_tokens(tmp_path: Path) -> None:
    # The example quotes control tokens in untrusted text: policy=allow renders them as the template
    # does; the default policy (escape) renders each record the same but for the escapes.
    example = EXAMPLES / "chatml-safety.jsonl"
    allowed = run("render", "-f", "chatml-safety", "--config", "policy=allow", str(example))
    escaped = run("render", "-f", "chatml-safety", str(example))
    assert (allowed.returncode, escaped.returncode) == (0, 0), (allowed.stderr, escaped.stderr)
    inputs = records(example)
    prompts = [json.loads(line)["prompt"] for line in allowed.stdout.splitlines()]
    assert prompts == [jinja_prompt("chatml_upstream.jinja", record, False) for record in inputs]
    guarded = [json.loads(line)["prompt"] for line in escaped.stdout.splitlines()]
    assert [prompt.replace("<\\", "<") for prompt in guarded] == prompts
    assert guarded != prompts  # the example does show the guard at work


@pytest.mark.jinja
def test_render_gpt_oss_example_matches_the_jinja_template() -> None:
    example = EXAMPLES / "gpt-oss.jsonl"
    proc = run("render", "-f", "gpt-oss", str(example))
    assert proc.returncode == 0, proc.stderr
    inputs = records(example)
    outputs = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["id"] for o in outputs] == [r["id"] for r in inputs]
    for record, output in zip(inputs, outputs, strict=True):
        options = record_options(record, GPT_OSS_OPTIONS)
        expected = render_gpt_oss_jinja(decode_every_call(record["messages"]), record.get("tools"), False, **options)
        assert expected == ("ok", output["prompt"])


def call(name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return (name, arguments)


# What each example completion says, written from the completions themselves.
EXPECTED_REPLIES = {
    "completions_chatml.jsonl": ("chatml-multi-system", {
        "reply-001": (
            "The coupon is applied to the subtotal plus shipping, then shipping is added again.",
            "The bug is on line 92 of `src/shop/cart.py`: the coupon is applied to `subtotal + shipping`, and then "
            "shipping is added a second time.",
            [],
        ),
        "reply-002": (
            "I need the callers of checkout_total.",
            "Let me find every caller first.",
            [call("grep", {"pattern": "checkout_total\\(", "glob": "src/**/*.py", "max_results": 50})],
        ),
        "reply-003": (
            "Two edits, then re-run the search.",
            None,
            [call("edit_file", {"path": "src/shop/cart.py", "edits": [
                {"old_text": "coupon.apply(subtotal + shipping)", "new_text": "coupon.apply(subtotal)"}]}),
             call("grep", {"pattern": "coupon.apply"})],
        ),
        "reply-004": (
            None,
            "Bonjour ! Oui, nous avons une table pour 4 personnes à 20 h. Voulez-vous que je la réserve ?",
            [],
        ),
    }),
    "completions_harmony.jsonl": ("harmony", {
        "reply-h1": ("Sum is 29, divided by 4 is 7.25.", "The mean is 7.25.", []),
        "reply-h2": ("Need the weather tool.", None, [call("get_weather", {"city": "Kyoto"})]),
    }),
}


@pytest.mark.parametrize("example", sorted(EXPECTED_REPLIES))
def test_parse_examples_to_openai_messages(tmp_path: Path, example: str) -> None:
    fmt, expected = EXPECTED_REPLIES[example]
    serial = run("parse", "-f", fmt, str(EXAMPLES / example), "-o", str(tmp_path / "serial.jsonl"))
    parallel = run("parse", "-f", fmt, "--workers", "2", "--block-size", "200", str(EXAMPLES / example),
                   "-o", str(tmp_path / "parallel.jsonl"))
    assert serial.returncode == parallel.returncode == 0, serial.stderr + parallel.stderr
    # Call ids derive from the record ids: the same bytes whatever the workers.
    assert (tmp_path / "serial.jsonl").read_bytes() == (tmp_path / "parallel.jsonl").read_bytes()
    outputs = {o["id"]: o for o in records(tmp_path / "serial.jsonl")}
    assert set(outputs) == set(expected)
    for record_id, (reasoning, content, calls) in expected.items():
        message = outputs[record_id]["message"]
        assert message["role"] == "assistant"
        assert message.get("reasoning_content") == reasoning
        assert message["content"] == content
        got_calls = [(c["function"]["name"], json.loads(c["function"]["arguments"]))
                     for c in message.get("tool_calls", [])]
        assert got_calls == calls
        ids = [c["id"] for c in message.get("tool_calls", [])]
        assert len(set(ids)) == len(ids)
        assert all(i.startswith("call_") for i in ids)


USER = {"role": "user", "content": "Hi"}
BAD_INPUT = [
    json.dumps({"id": "ok-1", "messages": [USER]}),
    "{not json",
    "",
    json.dumps({"messages": [{"role": 7, "content": "x"}]}),
    json.dumps({"id": "unknown-key", "messages": [USER], "enable_thinkng": False}),
    json.dumps({"id": "no-query", "messages": [{"role": "assistant", "content": "x"}]}),
    json.dumps({"id": "both", "messages": [USER], "enable_thinking": False,
                "chat_template_kwargs": {"enable_thinking": True}}),
    json.dumps([USER]),
    json.dumps({"messages": [USER], "model": "m", "temperature": 0.2}),
]


@pytest.mark.jinja
@pytest.mark.parametrize(("workers", "block_size"), [("1", "1048576"), ("1", "30"), ("2", "30")])
def test_error_file_names_each_failed_record_and_the_rest_is_written(
    tmp_path: Path, workers: str, block_size: str
) -> None:
    # A 30-byte block cuts the input between (and, for longer lines, within) every record.
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(BAD_INPUT) + "\n", encoding="utf-8")
    out, errors = tmp_path / "out.jsonl", tmp_path / "errors.jsonl"
    proc = run("render", "-f", "chatml-multi-system", str(src), "-o", str(out), "--errors", str(errors),
               "--workers", workers, "--block-size", block_size)
    assert proc.returncode == 1
    expected_prompt = render_jinja("chatml_multi_system.jinja", [USER], None, False)[1]
    assert records(out) == [{"id": "ok-1", "prompt": expected_prompt}, {"id": 9, "prompt": expected_prompt}]
    reports = records(errors)
    assert [(r["line"], r["id"], r["error"]) for r in reports] == [
        (2, None, "InvalidInputError"),
        (4, None, "InvalidInputError"),
        (5, "unknown-key", "InvalidInputError"),
        (6, "no-query", "TemplateError"),
        (7, "both", "InvalidInputError"),
        (8, None, "InvalidInputError"),
    ]
    messages = [r["message"] for r in reports]
    assert messages[0].startswith("record: not valid JSON")
    assert messages[1] == "messages[0].role: expected a string, got int"
    assert messages[2].startswith("enable_thinkng: unknown key")
    assert messages[3] == render_jinja("chatml_multi_system.jinja", [{"role": "assistant", "content": "x"}])[1]
    assert messages[4] == "chat_template_kwargs.enable_thinking: also given at the top level of the request"
    assert messages[5] == "record: expected a JSON object, got an array"
    summary = proc.stderr.decode().strip().splitlines()[-1]
    assert "2 of 8 records rendered, 6 failed" in summary


def test_without_an_error_file_errors_go_to_stderr(tmp_path: Path) -> None:
    proc = run("render", "-f", "chatml-multi-system", "-", stdin=("\n".join(BAD_INPUT[:4]) + "\n").encode())
    assert proc.returncode == 1
    stderr = proc.stderr.decode()
    assert "line 2: InvalidInputError: record: not valid JSON" in stderr
    assert "line 4: InvalidInputError: messages[0].role: expected a string, got int" in stderr
    assert len(proc.stdout.splitlines()) == 1


def test_fail_fast_stops_at_the_first_failure_and_writes_no_output(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(BAD_INPUT) + "\n", encoding="utf-8")
    out, errors = tmp_path / "out.jsonl", tmp_path / "errors.jsonl"
    out.write_text("previous run\n")
    proc = run("render", "-f", "chatml-multi-system", "--fail-fast", str(src), "-o", str(out), "--errors", str(errors))
    assert proc.returncode == 1
    assert out.read_text() == "previous run\n"
    assert [r["line"] for r in records(errors)] == [2]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["errors.jsonl", "in.jsonl", "out.jsonl"]
    summary = proc.stderr.decode().strip().splitlines()[-1]
    assert "1 of 2 records rendered, 1 failed" in summary  # the records after the failure are not counted
    assert "--fail-fast" in summary


def test_exit_status_and_usage_errors(tmp_path: Path) -> None:
    good = json.dumps({"messages": [USER]}).encode() + b"\n"
    assert run("render", "-f", "chatml-multi-system", "-", stdin=good).returncode == 0
    unknown = run("render", "-f", "no-such-format", "-", stdin=good)
    assert unknown.returncode == 2
    assert b"unknown format 'no-such-format'" in unknown.stderr
    missing = run("render", "-f", "chatml-multi-system", str(tmp_path / "missing.jsonl"))
    assert missing.returncode == 2
    assert b"cannot read" in missing.stderr
    bad_option = run("render", "-f", "chatml-multi-system", "--option", "enable_thinkng=false", "-", stdin=good)
    assert bad_option.returncode == 2
    assert b"enable_thinkng" in bad_option.stderr
    assert run("render", "-f", "chatml-multi-system", "--workers", "-1", "-", stdin=good).returncode == 2
    assert run("render", "-", stdin=good).returncode == 2  # --format is required
    unwritable = run("render", "-f", "chatml-multi-system", "-", "-o", str(tmp_path / "no" / "dir" / "o.jsonl"),
                     stdin=good)
    assert unwritable.returncode == 2


@pytest.mark.parametrize(("args", "problem"), [
    (("--block-size", "68719476736"), "argument --block-size: expected at most 1,073,741,824, got 68,719,476,736"),
    (("--block-size", "9" * 20), "argument --block-size: expected at most 1,073,741,824, got 99,999,999,999,999,"
                                 "999,999"),
    (("--block-size", "-1"), "argument --block-size: expected 1 or more, got -1"),
    (("--block-size", "0"), "argument --block-size: expected 1 or more, got 0"),
    (("-j", "99999999999"), "argument --workers/-j: expected at most 4,096, got 99,999,999,999"),
])
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_count_out_of_range_is_a_usage_error_whatever_the_workers(args: tuple[str, ...], problem: str,
                                                                   workers: str) -> None:
    # (A 64 GiB block was a MemoryError traceback with -j 1, a render with -j 2; a huge -j an OverflowError.)
    good = json.dumps({"messages": [USER]}).encode() + b"\n"
    done = run("render", "-f", "chatml-multi-system", "-j", workers, *args, "-", stdin=good)
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr.decode().splitlines()[-1] == f"prompt-formats render: error: {problem}"


@pytest.mark.parametrize("source", ["in.jsonl", "-"], ids=["a-file", "standard-input"])
def test_the_largest_block_size_reads_a_small_input_without_holding_a_block_of_that_size(
    tmp_path: Path, source: str
) -> None:
    # read(n) allocates n bytes first: a gigabyte a block, for an input of a few bytes, under a 512 MiB cap.
    line = json.dumps({"messages": [USER]}).encode() + b"\n"
    (tmp_path / "in.jsonl").write_bytes(line)
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20)); "
            "from prompt_formats.cli import main; sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", code, "render", "-f", "chatml-multi-system", "-q",
                           "--block-size", str(1 << 30), source], input=line, capture_output=True, cwd=tmp_path,
                          timeout=SAFETY_NET, check=False)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.startswith(b'{"id":1,"prompt":')


@pytest.mark.jinja
def test_stdin_to_stdout_with_options_from_the_command_line() -> None:
    lines = [json.dumps({"id": "a", "messages": [USER]}),
             json.dumps({"id": "b", "messages": [USER], "enable_thinking": True})]
    proc = run("render", "-f", "chatml-multi-system", "--add-generation-prompt", "--option", "enable_thinking=false",
               "-q", "-", "-o", "-", stdin=("\n".join(lines) + "\n").encode())
    assert proc.returncode == 0
    assert proc.stderr == b""
    outputs = [json.loads(line) for line in proc.stdout.splitlines()]
    assert outputs == [
        {"id": "a", "prompt": render_jinja("chatml_multi_system.jinja", [USER], None, True, enable_thinking=False)[1]},
        {"id": "b", "prompt": render_jinja("chatml_multi_system.jinja", [USER], None, True, enable_thinking=True)[1]},
    ]


@pytest.mark.jinja
def test_batch_api_lines_are_read_as_their_body() -> None:
    line = {"custom_id": "req-7", "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": "qwen", "messages": [USER], "max_tokens": 10}}
    proc = run("render", "-f", "chatml-multi-system", "-", stdin=json.dumps(line).encode())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"id": "req-7", "prompt": render_jinja("chatml_multi_system.jinja", [USER])[1]}


def test_a_killed_run_leaves_the_output_name_untouched(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("previous run\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "prompt_formats", "render", "-f", "chatml-multi-system", "-", "-o", str(out)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    try:
        proc.stdin.write((json.dumps({"messages": [USER]}) + "\n").encode() * 1000)
        proc.stdin.flush()
        wait_for(lambda: [p for p in tmp_path.iterdir() if p.name.startswith(".out.jsonl.")], "the temporary output")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert out.read_text() == "previous run\n"


@pytest.mark.jinja
def test_an_output_file_is_replaced_only_when_the_run_completes(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"messages": [USER]}) + "\n")
    out = tmp_path / "out.jsonl"
    out.write_text("previous run\n")
    assert run("render", "-f", "chatml-multi-system", str(src), "-o", str(out)).returncode == 0
    assert records(out) == [{"id": 1, "prompt": render_jinja("chatml_multi_system.jinja", [USER])[1]}]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl"]
    assert oct(out.stat().st_mode & 0o777) != oct(0o600)  # an ordinary file's mode, not mkstemp's


def test_progress_line_and_summary() -> None:
    lines = (json.dumps({"messages": [USER]}) + "\n") * 3
    proc = run("render", "-f", "chatml-multi-system", "--progress", "always", "-", stdin=lines.encode())
    stderr = proc.stderr.decode()
    assert "\rrendered 3 records" in stderr
    assert "/s" in stderr
    assert stderr.strip().splitlines()[-1].endswith(" records/s, 1 worker)")
    assert "\x1b[Kprompt-formats: 3 of 3 records rendered, 0 failed" in stderr  # the progress line erased first
    quiet = run("render", "-f", "chatml-multi-system", "--quiet", "-", stdin=lines.encode())
    assert quiet.stderr == b""


def test_progress_of_a_file_shows_an_eta_labelled_by_bytes(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text((json.dumps({"messages": [USER]}) + "\n") * 3)
    proc = run("render", "-f", "chatml-multi-system", "--progress", "always", str(src), "-o", str(tmp_path / "o"))
    assert "\rrendered 3 records  " in proc.stderr.decode()
    assert "  ETA ~0s (by bytes)  " in proc.stderr.decode()


def test_formats_lists_every_format_and_its_options() -> None:
    proc = run("formats", "--json")
    assert proc.returncode == 0
    listing = {entry["name"]: entry for entry in json.loads(proc.stdout)}
    assert {"chatml-multi-system", "harmony"} <= set(listing)
    assert set(listing["chatml-multi-system"]["options"]) == {*CHATML_OPTIONS, *CHATML_SERVING_OPTIONS, "strict"}
    assert set(listing["harmony"]["options"]) == {*HARMONY_OPTIONS, "strict"}
    text = run("formats").stdout.decode()
    assert "    render options:\n      enable_thinking (boolean): " in text


def test_the_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "prompt-formats"
    proc = subprocess.run([str(script), "formats"], capture_output=True, timeout=SAFETY_NET, check=False)
    assert proc.returncode == 0
    assert b"chatml-multi-system" in proc.stdout


@contextlib.contextmanager
def reaped(proc: subprocess.Popen[bytes]) -> Iterator[subprocess.Popen[bytes]]:
    """Kill ``proc`` if it is still running when the block ends (a failed assertion): no test leaks it."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ctrl_c_exits_130_and_leaves_no_file(tmp_path: Path) -> None:
    out, spool = tmp_path / "out.jsonl", tmp_path / "spool"
    spool.mkdir()
    # Small blocks: the workers get records while standard input is still open.
    proc = subprocess.Popen(
        [sys.executable, "-m", "prompt_formats", "render", "-f", "chatml-multi-system", "--workers", "2",
         "--block-size", "100", "-", "-o", str(out)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        preexec_fn=at_default_action(signal.SIGINT), env={**os.environ, "TMPDIR": str(spool)},
    )
    assert proc.stdin is not None and proc.stderr is not None
    with reaped(proc):
        proc.stdin.write((json.dumps({"messages": [USER]}) + "\n").encode() * 1000)
        proc.stdin.flush()
        wait_for(lambda: [p for p in tmp_path.iterdir() if p.name.startswith(".out.jsonl.")], "the temporary output")
        wait_for(lambda: ready_workers(proc.pid, 1), "the worker process ready")
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal does on Ctrl-C: the whole process group
        status = proc.wait(timeout=SAFETY_NET)
    stderr = proc.stderr.read().decode()
    assert status == 130
    assert "prompt-formats: interrupted" in stderr
    assert "Traceback" not in stderr
    assert [p.name for p in tmp_path.iterdir()] == ["spool"]
    assert list(spool.iterdir()) == []


@pytest.mark.jinja
@pytest.mark.parametrize("block_size", ["1048576", "5"])
def test_blank_lines_are_skipped_and_counted(block_size: str) -> None:
    record = json.dumps({"messages": [USER]})
    text = "  \t \n   " + json.dumps({"id": "x", "messages": [USER]}) + "\r\n\n" + record  # no final newline
    proc = run("render", "-f", "chatml-multi-system", "--block-size", block_size, "-", stdin=text.encode())
    assert proc.returncode == 0, proc.stderr
    prompt = render_jinja("chatml_multi_system.jinja", [USER])[1]
    assert [json.loads(line) for line in proc.stdout.splitlines()] == [
        {"id": "x", "prompt": prompt}, {"id": 4, "prompt": prompt}]
    assert "2 of 2 records rendered" in proc.stderr.decode()


@pytest.mark.parametrize(("workers", "block_size"), [("1", "1048576"), ("2", "30")])
def test_fail_fast_to_stdout_writes_only_what_came_before_the_failure(workers: str, block_size: str) -> None:
    good = [json.dumps({"id": f"g{i}", "messages": [USER]}) for i in range(5)]
    lines = [*good[:3], json.dumps({"id": "bad", "messages": [{"role": 1}]}), *good[3:]]
    proc = run("render", "-f", "chatml-multi-system", "--fail-fast", "--workers", workers, "--block-size", block_size,
               "-", stdin=("\n".join(lines) + "\n").encode())
    assert proc.returncode == 1
    assert [json.loads(line)["id"] for line in proc.stdout.splitlines()] == ["g0", "g1", "g2"]
    stderr = proc.stderr.decode()
    assert "line 4 (id 'bad'): InvalidInputError: messages[0].role: expected a string, got int" in stderr
    assert "3 of 4 records rendered, 1 failed" in stderr


@pytest.mark.jinja
def test_integers_beyond_64_bits_render_exactly(tmp_path: Path) -> None:
    record = {
        "id": "big",
        "messages": [
            {"role": "user", "content": "count"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": "f", "arguments": {"n": 123456789012345678901234567890}}}]},
            {"role": "tool", "content": "ok"},
        ],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"n": {"type": "integer", "maximum": 99999999999999999999}}}}}],
    }
    source = tmp_path / "big.jsonl"
    source.write_text(json.dumps(record) + "\n")
    result = run("render", "--format", "chatml-multi-system", str(source))
    assert result.returncode == 0, result.stderr
    [out] = [json.loads(line) for line in result.stdout.splitlines()]
    assert out["prompt"] == jinja_prompt("chatml_multi_system.jinja", record, False)


@pytest.mark.jinja
@pytest.mark.parametrize("workers", ["1", "2"])
def test_stdin_redirected_from_a_file_is_read_as_stdin(tmp_path: Path, workers: str) -> None:
    # A file named "-" in the working directory must not be mistaken for the redirected stdin.
    real = {"id": "REAL", "messages": [{"role": "user", "content": "real"}]}
    decoy = {"id": "DCOY", "messages": [{"role": "user", "content": "dcoy"}]}
    (tmp_path / "-").write_text(json.dumps(decoy) + "\n")
    source = tmp_path / "real.jsonl"
    source.write_text(json.dumps(real) + "\n")
    with source.open("rb") as stdin:
        result = subprocess.run(
            [sys.executable, "-m", "prompt_formats", "render", "-f", "chatml-multi-system", "--workers", workers, "-"],
            stdin=stdin, capture_output=True, cwd=tmp_path, timeout=SAFETY_NET, check=False,
        )
    assert result.returncode == 0, result.stderr
    [out] = [json.loads(line) for line in result.stdout.splitlines()]
    assert out["id"] == "REAL"
    assert out["prompt"] == jinja_prompt("chatml_multi_system.jinja", real, False)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the workers through /proc")
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_worker_that_dies_fails_the_run_with_status_2(tmp_path: Path, signum: int) -> None:
    # SIGKILL as the out-of-memory killer sends it; SIGTERM sent to the worker alone, which ends it
    # as by default: a worker forked from the command does not run the command's own stop handler.
    out, errors = tmp_path / "out.jsonl", tmp_path / "errors.jsonl"
    out.write_text("previous run\n")
    line = (json.dumps({"messages": [USER]}) + "\n").encode()
    spool = tmp_path / "spool"  # where the worker processes leave their blocks
    spool.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "prompt_formats", "render", "-f", "chatml-multi-system", "--workers", "2",
         "--block-size", "100", "-", "-o", str(out), "--errors", str(errors)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(spool)}, preexec_fn=at_default_action(signal.SIGTERM),
    )
    assert proc.stdin is not None
    with reaped(proc):
        proc.stdin.write(line * 100)
        proc.stdin.flush()
        # Every worker process (-j 2: this one renders too, beside one worker process): the blocks sent
        # to it are lost, and the blocks of the input still to come will be sent to it.
        workers = wait_for(lambda: ready_workers(proc.pid, 1), "the worker process ready")
        for worker in workers:
            with contextlib.suppress(ProcessLookupError):  # the run stopped it already, on the first death
                os.kill(worker, signum)
        # Reaped: the run has seen the death (while this process renders what it has, it may not yet).
        wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in workers), "the dead worker reaped")
        # More input after the death: the run must notice it whatever it was doing when the workers died.
        _, stderr = proc.communicate(line * 100, timeout=SAFETY_NET)
    text = stderr.decode()
    assert proc.returncode == 2, text
    assert "Traceback" not in text
    [message] = text.splitlines()
    assert message.startswith("prompt-formats: a worker process")
    assert out.read_text() == "previous run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "spool"]  # no error file, no temporary file
    assert list(spool.iterdir()) == []


def test_when_the_output_cannot_be_put_in_place_neither_is_the_error_file(tmp_path: Path) -> None:
    out, errors = tmp_path / "out.jsonl", tmp_path / "errors.jsonl"
    errors.write_text("previous run\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "prompt_formats", "render", "-f", "chatml-multi-system", "-", "-o", str(out),
         "--errors", str(errors)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    with reaped(proc):
        proc.stdin.write(b"{not json\n" + (json.dumps({"messages": [USER]}) + "\n").encode())
        proc.stdin.flush()
        wait_for(lambda: len([p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]) >= 2, "two temporary files")
        out.mkdir()  # the output's final name can no longer be replaced by a file
        _, stderr = proc.communicate(timeout=SAFETY_NET)
    text = stderr.decode()
    assert proc.returncode == 2, text
    assert "Traceback" not in text
    assert errors.read_text() == "previous run\n"  # not a report of a run whose output is not there
    assert sorted(p.name for p in tmp_path.iterdir()) == ["errors.jsonl", "out.jsonl"]
    assert f"prompt-formats: cannot write {out}: Is a directory" in text


def closed_pipe_run(args: list[str], stream: str, unbuffered: bool) -> subprocess.CompletedProcess[bytes]:
    """Run the command with ``stream`` ("stdout" or "stderr") a pipe whose reader went away before anything was written.

    Every write to it then fails with EPIPE, as at the end of `prompt-formats ... | head -n 1`, without a race.
    Python's own buffering of standard output depends on PYTHONUNBUFFERED: the test sets it as asked.
    """
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    read_end, write_end = os.pipe()
    os.close(read_end)
    streams: dict[str, Any] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, stream: write_end}
    try:
        return subprocess.run([sys.executable, "-m", "prompt_formats", *args], **streams, env=env,
                              timeout=SAFETY_NET, check=False)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("unbuffered", [False, True])
@pytest.mark.parametrize("command", [("render", "--workers", "1"), ("render", "--workers", "2"), ("formats",)])
def test_a_closed_standard_output_ends_the_run_quietly_with_status_141(
    tmp_path: Path, command: tuple[str, ...], unbuffered: bool
) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"messages": [USER]}) + "\n{not json\n" + json.dumps({"messages": [USER]}) + "\n")
    args = [*command]
    if command[0] == "render":
        args += ["-f", "chatml-multi-system", str(src), "--errors", str(tmp_path / "errors.jsonl")]
    proc = closed_pipe_run(args, "stdout", unbuffered)
    assert proc.returncode == 141, proc.stderr  # what a shell reports for `cat` or `grep` stopped by SIGPIPE
    assert proc.stderr == b""  # no traceback, no message, no summary
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]  # the run did not end: no error file


def test_a_closed_standard_error_ends_the_run_with_status_141(tmp_path: Path) -> None:
    # `2>&1 | head`: a failed record is reported on standard error, whose reader went away.
    src = tmp_path / "in.jsonl"
    src.write_text("{not json\n" + json.dumps({"messages": [USER]}) + "\n")
    proc = closed_pipe_run(["render", "-f", "chatml-multi-system", str(src), "-o", str(tmp_path / "out.jsonl")],
                           "stderr", unbuffered=False)
    assert proc.returncode == 141
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]  # the run did not end: no output file


@pytest.mark.parametrize("option", ["-o", "--errors"])
def test_an_output_that_is_a_directory_is_refused_before_any_work(tmp_path: Path, option: str) -> None:
    # Standard input stays open and empty: a run that started working would wait for it forever.
    (tmp_path / "dir").mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "prompt_formats", "render", "-f", "chatml-multi-system", "-", option,
         str(tmp_path / "dir")],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    with reaped(proc):
        status = proc.wait(timeout=SAFETY_NET)
    assert status == 2
    assert proc.stderr.read().decode().strip() == f"prompt-formats: cannot write {tmp_path / 'dir'}: Is a directory"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir"]  # no temporary file left
    assert list((tmp_path / "dir").iterdir()) == []


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_names_the_output_and_exits_2(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text((json.dumps({"messages": [USER]}) + "\n") * 2000)  # more than one write buffer
    with open("/dev/full", "wb") as full:
        result = subprocess.run(
            [sys.executable, "-m", "prompt_formats", "render", "-f", "chatml-multi-system", str(source)],
            stdout=full, stderr=subprocess.PIPE, timeout=SAFETY_NET, check=False,
        )
    assert result.returncode == 2
    assert result.stderr.decode().strip() == "prompt-formats: cannot write standard output: No space left on device"


def test_a_bug_in_the_command_exits_2_with_its_traceback_and_no_output(tmp_path: Path) -> None:
    # A bug is simulated by breaking the command's own work loop from a driver script (no hook in the
    # program): the run must not claim records failed (1) nor leave an output file.
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text(json.dumps({"messages": [USER]}) + "\n")
    driver = (
        "import sys\n"
        "import prompt_formats.cli as cli\n"
        "def broken(*args, **kwargs):\n"
        "    raise RuntimeError('boom')\n"
        "cli.ordered_map = broken\n"
        f"sys.exit(cli.main(['render', '-f', 'chatml-multi-system', {str(source)!r}, '-o', {str(out)!r}]))\n"
    )
    result = subprocess.run([sys.executable, "-c", driver], capture_output=True, timeout=SAFETY_NET, check=False)
    text = result.stderr.decode()
    assert result.returncode == 2, text
    assert "RuntimeError: boom" in text
    assert text.splitlines()[-1] == (
        "prompt-formats: internal error (the traceback above is a bug to report); the run is incomplete"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]  # no output, no temporary file


# ---------------------------------------------------------------------------------------------------
# What -o and --errors do with whatever is at their path (issue 13, items 5-7).


def good_and_bad_input(tmp_path: Path) -> Path:
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "g", "messages": [USER]}) + "\n{not json\n")
    return source


def expected_good() -> list[dict[str, str]]:
    """The record good_and_bad_input's good line gives, rendered by the template."""
    return [{"id": "g", "prompt": render_jinja("chatml_multi_system.jinja", [USER])[1]}]


@pytest.mark.jinja
@pytest.mark.parametrize("option", ["-o", "--errors"])
def test_a_fifo_output_is_written_through_and_stays_a_fifo(tmp_path: Path, option: str) -> None:
    source = good_and_bad_input(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    other = tmp_path / ("errors.jsonl" if option == "-o" else "out.jsonl")
    other_option = "--errors" if option == "-o" else "-o"
    # The reader is a child: it waits at open() for the writer, then reads to the end of the data.
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    with reaped(reader):
        proc = run("render", "-f", "chatml-multi-system", str(source), option, str(fifo), other_option, str(other))
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
        data, _ = reader.communicate(timeout=60)
    assert proc.returncode == 1, proc.stderr
    written = [json.loads(line) for line in data.splitlines()]
    if option == "-o":
        assert written == expected_good()
        assert [r["line"] for r in records(other)] == [2]
    else:
        assert [r["line"] for r in written] == [2]
        assert records(other) == expected_good()


@pytest.mark.jinja
def test_a_symlink_output_is_followed_and_the_target_keeps_its_mode(tmp_path: Path) -> None:
    source = good_and_bad_input(tmp_path)
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "out.jsonl"
    target.write_text("previous run\n")
    target.chmod(0o640)
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    proc = run("render", "-f", "chatml-multi-system", str(source), "-o", str(link), "--errors",
               str(tmp_path / "errors.jsonl"))
    assert proc.returncode == 1, proc.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert records(target) == expected_good()
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["out.jsonl"]  # no temporary file left


@pytest.mark.parametrize("option", ["-o", "--errors"])
def test_an_existing_file_keeps_its_mode(tmp_path: Path, option: str) -> None:
    source = good_and_bad_input(tmp_path)
    existing = tmp_path / "existing.jsonl"
    existing.write_text("previous run\n")
    existing.chmod(0o640)
    other = ["--errors", str(tmp_path / "e")] if option == "-o" else ["-o", str(tmp_path / "o")]
    proc = run("render", "-f", "chatml-multi-system", str(source), option, str(existing), *other)
    assert proc.returncode == 1, proc.stderr
    assert stat.S_IMODE(existing.stat().st_mode) == 0o640
    assert existing.read_text() != "previous run\n"


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
def test_dev_null_as_output_and_error_file_stays_a_character_device(tmp_path: Path) -> None:
    # Runs only after the FIFO test above showed that a non-regular file is written through: the
    # same code path writes a character device (as root, the old scheme replaced /dev/null).
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    source = good_and_bad_input(tmp_path)
    proc = run("render", "-f", "chatml-multi-system", str(source), "-o", "/dev/null", "--errors", "/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert proc.returncode == 1, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


@pytest.mark.parametrize("alias", ["same", "symlink", "hardlink"])
def test_the_same_file_as_output_and_error_file_is_refused_before_any_work(tmp_path: Path, alias: str) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("previous run\n")
    other = tmp_path / "other.jsonl"
    if alias == "same":
        other = out
    elif alias == "symlink":
        other.symlink_to(out)
    else:
        os.link(out, other)
    # Standard input stays open and empty: a run that started working would wait for it forever.
    proc = subprocess.Popen(
        [sys.executable, "-m", "prompt_formats", "render", "-f", "chatml-multi-system", "-", "-o", str(out),
         "--errors", str(other)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    with reaped(proc):
        status = proc.wait(timeout=60)
    message = proc.stderr.read().decode().strip()
    assert status == 2, message
    assert message == (
        f"prompt-formats: -o {out} and --errors {other} are the same file: give the error report its own file"
    )
    assert out.read_text() == "previous run\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_an_unwritable_standard_error_never_exits_1_without_the_output(tmp_path: Path) -> None:
    # Exit status 1 promises the good records are in the output; a report that cannot be written
    # makes the run incomplete instead (2), and then no output file is put in place.
    source, out = good_and_bad_input(tmp_path), tmp_path / "out.jsonl"
    with open("/dev/full", "wb") as full:
        result = subprocess.run(
            [sys.executable, "-m", "prompt_formats", "render", "-f", "chatml-multi-system", str(source),
             "-o", str(out)],
            stdout=subprocess.PIPE, stderr=full, timeout=120, check=False,
        )
    assert result.returncode in (1, 2)
    if result.returncode == 1:
        assert records(out) == expected_good()
    else:
        assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def peak_rss_kib(args: list[str]) -> int:
    """The peak resident memory (KiB) of the command run with ``args``, measured alone in a fresh wrapper process."""
    wrapper = (
        "import resource, subprocess, sys\n"
        "subprocess.run([sys.executable, '-m', 'prompt_formats', *sys.argv[1:]], check=False,\n"
        "               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    proc = subprocess.run([sys.executable, "-c", wrapper, *args], capture_output=True, timeout=120, check=True)
    return int(proc.stdout)


def test_memory_is_bounded_by_the_block_and_not_by_the_number_of_records(tmp_path: Path) -> None:
    # 60,000 one-byte records that all fail, in one block: each report kept at its allocation size
    # (about 4 KB) would add some 240 MB; bounded, the block's output and reports are a few MB.
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    small.write_text("1\n")
    large.write_text("1\n" * 60_000)
    common = ["render", "-f", "chatml-multi-system", "-q", "--errors", str(tmp_path / "errors.jsonl"),
              "-o", str(tmp_path / "out.jsonl")]
    baseline = peak_rss_kib([*common, str(small)])
    peak = peak_rss_kib([*common, str(large)])
    assert len(records(tmp_path / "errors.jsonl")) == 60_000
    assert peak - baseline < 40_000, (baseline, peak)


# ---------------------------------------------------------------------------------------------------
# Values on the command line and run-wide checks (issue 13, items 10-11).


@pytest.mark.jinja
@pytest.mark.parametrize("word", ["False", "false", "FALSE", "fAlSe"])
def test_a_false_word_on_the_command_line_turns_thinking_off(word: str) -> None:
    proc = run("render", "-f", "chatml-multi-system", "--add-generation-prompt", "--option", f"enable_thinking={word}",
               "-q", "-", stdin=(json.dumps({"messages": [USER]}) + "\n").encode())
    assert proc.returncode == 0, proc.stderr
    expected = render_jinja("chatml_multi_system.jinja", [USER], None, True, enable_thinking=False)[1]
    assert json.loads(proc.stdout)["prompt"] == expected


@pytest.mark.go
@pytest.mark.parametrize(("word", "value"), [("True", True), ("none", None), ("NONE", None), ("high", "high")])
def test_words_on_the_command_line_are_booleans_null_or_strings_where_the_option_takes_strings(
    harmony_oracle: HarmonyOracle, word: str, value: Any
) -> None:
    record = {"messages": [USER], "current_date": "2026-01-15"}
    proc = run("render", "-f", "harmony", "--option", f"think={word}", "-q", "-", stdin=json.dumps(record).encode())
    assert proc.returncode == 0, proc.stderr
    [expected] = harmony_oracle.render_many([to_case([USER], None, {"current_date": "2026-01-15", "think": value})])
    assert json.loads(proc.stdout)["prompt"] == expected["output"]


def refused_before_reading(*args: str) -> str:
    """The one line the command prints when it refuses ``args`` at start; stdin stays open and empty,
    so a run that started reading would wait forever."""
    proc = subprocess.Popen([sys.executable, "-m", "prompt_formats", *args, "-"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stderr is not None and proc.stdout is not None
    with reaped(proc):
        status = proc.wait(timeout=60)
    lines = proc.stderr.read().decode().splitlines()
    assert status == 2, lines
    assert proc.stdout.read() == b""
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize(("args", "message"), [
    (("render", "-f", "chatml-multi-system", "--option", "enable_thinking=maybe"),
     "prompt-formats: --option enable_thinking=maybe: not JSON, nor true/false/none, and enable_thinking takes"
     " a boolean, not a string"),
    (("render", "-f", "harmony", "--option", "think=maybe"),
     "prompt-formats: --option think=maybe: think: expected null, a bool or one of 'low', 'medium', 'high', 'max',"
     " got 'maybe'"),
    (("render", "-f", "harmony", "--option", "reasoning_effort=extreme"), "prompt-formats: --option"),
    (("render", "-f", "harmony", "--no-add-generation-prompt"),
     "prompt-formats: --no-add-generation-prompt: harmony: add_generation_prompt=False is not supported"),
    (("render", "-f", "chatml-multi-system", "--config", "guard=true"), "prompt-formats: format 'chatml-multi-system': "
     "guard: expected a ControlTokenGuard or null, got bool"),
    (("render", "-f", "chatml-safety", "--config", "policy=maybe"),
     "prompt-formats: format 'chatml-safety': policy must be one of"),
    (("render", "-f", "chatml-safety", "--config", "trust_assistant=maybe"), "prompt-formats: format 'chatml-safety':"
     " trust_assistant: expected a boolean, got str"),
    (("render", "-f", "chatml-multi-system", "--config", "nope=1"), "prompt-formats: format 'chatml-multi-system':"
     " unknown configuration key 'nope' (configuration: guard)"),
    (("parse", "-f", "harmony", "--option", "prefill=nowhere"), "prompt-formats: --option prefill=nowhere: prefill:"),
])
def test_a_bad_run_wide_value_is_refused_once_before_reading_input(args: tuple[str, ...], message: str) -> None:
    assert refused_before_reading(*args).startswith(message)


def test_get_format_refuses_a_guard_that_is_not_a_guard() -> None:
    import prompt_formats as pf

    for name in ("chatml-multi-system", "harmony"):
        with pytest.raises(pf.FormatError, match="guard: expected a ControlTokenGuard or null, got bool"):
            pf.get_format(name, guard=True)
    with pytest.raises(pf.FormatError, match="unknown configuration key 'nope'"):
        pf.get_format("harmony", nope=1)


# ---------------------------------------------------------------------------------------------------
# --version and the plain-text format list (issue 13, item 21).


def test_version_prints_the_installed_version() -> None:
    from importlib.metadata import version

    proc = run("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == f"prompt-formats {version('prompt_formats')}\n"


def test_formats_prints_plain_text_with_each_option_described() -> None:
    text = run("formats").stdout.decode()
    for markup in ("``", ":class:", ":mod:", ":func:", "see the module docstring"):
        assert markup not in text
    listing = {entry["name"]: entry for entry in json.loads(run("formats", "--json").stdout)}
    blocks = {block.splitlines()[0]: block for block in text.strip().split("\n\n")}
    assert set(blocks) == set(listing)
    for name, block in blocks.items():
        lines = block.splitlines()
        assert len(lines) >= 2 and lines[1].strip(), f"{name}: no line saying what it is"
        for option, description in listing[name]["options"].items():
            assert any(line.strip().startswith(f"{option} ") and line.endswith(description) for line in lines), option
    assert set(CHATML_OPTIONS) <= set(listing["chatml-safety"]["options"])


# ---------------------------------------------------------------------------------------------------
# The progress line (issue 13, item 13).


def run_on_a_terminal(args: list[str], columns: int) -> str:
    """Run the command with standard error on a pseudo-terminal ``columns`` wide; what it wrote there."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    try:
        proc = subprocess.run([sys.executable, "-m", "prompt_formats", *args], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=slave, timeout=120, check=False)
        os.close(slave)
        slave = -1
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other side is closed and everything was read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
    assert proc.returncode == 0
    return b"".join(chunks).decode()


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_the_progress_line_fits_a_narrow_terminal_and_is_redrawn_in_place(tmp_path: Path) -> None:
    import re

    source = tmp_path / "in.jsonl"
    source.write_text((json.dumps({"messages": [USER]}) + "\n") * 200)
    text = run_on_a_terminal(["render", "-f", "chatml-multi-system", "--progress", "auto", "--block-size", "100",
                              str(source), "-o", str(tmp_path / "out.jsonl")], columns=40)
    redraws = [line for line in re.findall(r"\r([^\r\n\x1b]*)\x1b\[K", text) if line]  # "": an erase
    assert redraws, text
    assert all(len(line) <= 39 for line in redraws), redraws  # never wraps onto a second line
    assert redraws[-1].startswith("rendered 200 records")
    before_summary = text.split("prompt-formats:")[0]
    assert "\n" not in before_summary  # one line, rewritten: no stale copies above it


def test_the_progress_line_re_reads_the_width_and_labels_its_eta() -> None:
    from types import SimpleNamespace

    from prompt_formats.cli.progress import Progress

    written: list[str] = []
    widths = iter([200, 30, 200])
    now = [100.0]
    position = SimpleNamespace(total=1000, bytes_read=0)
    progress = Progress("rendered", position, True, written.append, lambda: next(widths), lambda: now[0])
    now[0], position.bytes_read = 120.0, 200  # 20 s for a fifth of the bytes: 80 s to go
    progress.update(5000, 3, force=True)
    progress.update(6000, 3, force=True)  # the terminal got narrow
    progress.update(7000, 3, force=True)  # and wide again
    assert written[0] == "\rrendered 5,000 records  250/s  3 failed  ETA ~1m20s (by bytes)  20s\x1b[K"
    assert written[1] == "\rrendered 6,000 records  300/s\x1b[K"
    assert written[2].startswith("\rrendered 7,000 records  350/s  3 failed  ETA ~1m20s (by bytes)")
    progress.clear()
    assert written[-1] == "\r\x1b[K"


def test_strict_fails_a_record_the_template_drops_part_of(tmp_path: Path) -> None:
    # gpt-oss drops a system message after the first: rendered by default, refused under --strict.
    record = {"id": "r1", "messages": [USER, {"role": "system", "content": "reminder"}, USER],
              "current_date": "2025-08-05"}
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(record) + "\n")
    plain = run("render", "-f", "gpt-oss", "--add-generation-prompt", str(src))
    assert plain.returncode == 0
    prompt = json.loads(plain.stdout)["prompt"]
    assert "reminder" not in prompt and prompt.count("<|start|>user") == 2
    errors = tmp_path / "errors.jsonl"
    strict = run("render", "-f", "gpt-oss", "--add-generation-prompt", "--strict", str(src), "--errors", str(errors))
    assert strict.returncode == 1
    [error] = [json.loads(line) for line in errors.read_text().splitlines()]
    assert "messages[1]" in json.dumps(error) and "strict=True refuses a loss" in json.dumps(error)


def test_running_out_of_memory_is_said_as_such_not_as_a_bug(capsys: pytest.CaptureFixture[str]) -> None:
    from prompt_formats.cli import _failure

    assert _failure(MemoryError()) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    assert captured.err == ("prompt-formats: out of memory; the run is incomplete (a smaller --block-size "
                            "needs less)\n")
