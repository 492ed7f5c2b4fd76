"""The Ray Data integration on a local two-CPU Ray cluster: the same prompts as render_batch and Jinja2,
and per row what the command gives the same line (also checked on the Arrow layouts a batch may come
in, by running the batch function in this process).

Needs the ``ray`` extra (``pip install -e '.[test,ray]'``): without Ray the test fails, it does not skip.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import prompt_formats as pf
from prompt_formats.cli import main
from prompt_formats.integrations import ray as ray_integration
from prompt_formats.integrations.ray import parse_dataset, render_dataset
from prompt_formats.records.toolsets import RawToolsets
from tests.support.oracles import render_jinja

# One local Ray cluster for the module: under pytest-xdist (--dist loadgroup) its tests share a worker.
pytestmark = [pytest.mark.ray, pytest.mark.jinja, pytest.mark.xdist_group("ray")]

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather now.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def conversation(i: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": f"Agent {i}."},
                                      {"role": "user", "content": f"Weather in city {i}?"}]
    if i % 3:
        arguments: dict[str, Any] = {"city": f"C{i}"}
        if i % 2:
            # Only some calls carry this argument: as Arrow structs it would be added to every call as null.
            arguments["units"] = "metric"
        messages += [
            {"role": "assistant", "content": "", "reasoning_content": "Ask the tool.", "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"{i} °C"},
            {"role": "system", "content": "Reminder: be brief."},
        ]
    return messages


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    try:
        import ray
    except ImportError as exc:  # fail, never skip: the integration must be tested
        raise RuntimeError("the Ray tests need the ray extra: pip install -e '.[test,ray]'") from exc

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_render_dataset_gives_the_prompts_of_render_batch(ray_cluster: Any, tmp_path: Path) -> None:
    conversations = [conversation(i) for i in range(40)]
    lines = [json.dumps({"id": i, "messages": c, "tools": TOOLS}) for i, c in enumerate(conversations)]
    lines.insert(7, json.dumps({"id": "bad", "messages": [{"role": "assistant", "content": "no user"}]}))
    src = tmp_path / "requests.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")

    dataset = ray_cluster.data.read_text(str(src))
    rendered = render_dataset(dataset, "chatml-multi-system", add_generation_prompt=True, batch_size=8)
    rows = rendered.take_all()

    assert len(rows) == len(lines)
    by_id = {json.loads(row["text"])["id"]: row for row in rows}
    bad = by_id.pop("bad")
    assert bad["prompt"] is None
    assert bad["error"] == "TemplateError: " + render_jinja("chatml_multi_system.jinja", [
        {"role": "assistant", "content": "no user"}])[1]
    expected = pf.get_format("chatml-multi-system").render_batch(conversations, TOOLS, True)
    assert [by_id[i]["prompt"] for i in range(len(conversations))] == expected
    assert all(by_id[i]["error"] is None for i in range(len(conversations)))
    for i in (0, 1, 5):
        assert by_id[i]["prompt"] == render_jinja("chatml_multi_system.jinja", conversations[i], TOOLS, True)[1]


def test_unknown_options_fail_before_any_work(ray_cluster: Any) -> None:
    dataset = ray_cluster.data.from_items([{"text": "{}"}])
    with pytest.raises(pf.UnknownOptionError):
        render_dataset(dataset, "chatml-multi-system", options={"enable_thinkng": False})


def test_parse_dataset_gives_openai_messages(ray_cluster: Any) -> None:
    rows = [
        {"text": json.dumps({"id": "a", "completion": "Sunny today.\n</think>\n\nIt is sunny."})},
        {"text": json.dumps({"id": "b", "tools": TOOLS, "completion": "Need the tool.\n</think>\n\n<tool_call>\n"
                             "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n"
                             "</tool_call>"})},
        {"text": json.dumps({"id": "c", "completion": 7})},
    ]
    parsed = parse_dataset(ray_cluster.data.from_items(rows), "chatml-multi-system").take_all()
    by_id = {json.loads(row["text"])["id"]: row for row in parsed}
    assert json.loads(by_id["a"]["message"]) == {
        "role": "assistant", "content": "It is sunny.", "reasoning_content": "Sunny today."}
    message_b = json.loads(by_id["b"]["message"])
    assert message_b["reasoning_content"] == "Need the tool."
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message_b["tool_calls"]] == [
        ("get_weather", {"city": "Paris"})]
    assert by_id["c"]["message"] is None
    assert by_id["c"]["error"] == "InvalidInputError: completion: expected a string, got a number"


def test_render_dataset_reads_json_as_the_command_does(ray_cluster: Any, tmp_path: Path) -> None:
    # Integers beyond 64 bits stay exact; a lone surrogate escape, which an Arrow string cannot hold
    # once decoded, fails its own row only.
    big = {"id": "big", "messages": [
        {"role": "user", "content": "count"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": {"n": 123456789012345678901234567890}}}]},
        {"role": "tool", "content": "ok"},
    ]}
    half = {"id": "half", "messages": [{"role": "user", "content": "half \ud83d"}]}
    plain = {"id": "plain", "messages": [{"role": "user", "content": "hello"}]}
    src = tmp_path / "requests.jsonl"
    src.write_text("".join(json.dumps(record) + "\n" for record in (big, half, plain)), encoding="utf-8")

    rows = render_dataset(ray_cluster.data.read_text(str(src)), "chatml-multi-system").take_all()
    by_id = {json.loads(row["text"])["id"]: row for row in rows}
    assert by_id["big"]["error"] is None
    assert by_id["big"]["prompt"] == render_jinja("chatml_multi_system.jinja", big["messages"])[1]
    assert "123456789012345678901234567890" in by_id["big"]["prompt"]
    assert by_id["half"]["prompt"] is None
    assert by_id["half"]["error"] == (
        "InvalidInputError: prompt: holds a lone surrogate, which a column of UTF-8 strings cannot hold"
    )
    assert by_id["plain"]["prompt"] == render_jinja("chatml_multi_system.jinja", plain["messages"])[1]


def gpt_oss_conversation(i: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": f"Agent {i}."},
                                      {"role": "user", "content": f"Weather in city {i}?"}]
    if i % 2:
        messages += [
            {"role": "assistant", "thinking": "Ask the tool.", "tool_calls": [{
                "id": f"c{i}", "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": f"C{i}"}},
            }]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"{i} °C"},
        ]
    return messages


def test_render_dataset_renders_gpt_oss_as_its_template(ray_cluster: Any, tmp_path: Path) -> None:
    from tests.support.gpt_oss_oracle import render_gpt_oss_jinja

    conversations = [gpt_oss_conversation(i) for i in range(12)]
    src = tmp_path / "requests.jsonl"
    src.write_text("".join(json.dumps({"id": i, "messages": c, "tools": TOOLS}) + "\n"
                           for i, c in enumerate(conversations)), encoding="utf-8")
    options = {"current_date": "2025-08-05"}
    rows = render_dataset(ray_cluster.data.read_text(str(src)), "gpt-oss", add_generation_prompt=True,
                          options=options, batch_size=4).take_all()
    by_id = {json.loads(row["text"])["id"]: row for row in rows}
    for i, messages in enumerate(conversations):
        assert by_id[i]["error"] is None
        assert ("ok", by_id[i]["prompt"]) == render_gpt_oss_jinja(messages, TOOLS, True, **options)


# --- Per row what the command gives the same line ---------------------------------------------------------------------

USER = {"role": "user", "content": "Weather?"}
NULL_ROW = (None, "ValueError: text: null")


def render_lines() -> list[bytes]:
    """Lines the command renders or refuses: a toolset repeated byte for byte (and once spelt otherwise),
    lines that are no JSON or no valid record, integers beyond 64 bits, a Batch API line, no id."""
    big_call = {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"n": 123456789012345678901234567890}}}]}
    lines = [json.dumps({"id": i, "messages": conversation(i), "tools": TOOLS}) for i in range(5)]
    lines += [
        "{not json",
        json.dumps({"id": "int content", "messages": [{"role": "user", "content": 1}], "tools": TOOLS}),
        json.dumps({"id": "no user", "messages": [{"role": "assistant", "content": "no user"}], "tools": TOOLS}),
        json.dumps({"id": "big", "messages": [USER, big_call, {"role": "tool", "content": "ok"}], "tools": TOOLS}),
        json.dumps({"id": 12345678901234567890123, "messages": [USER], "tools": TOOLS}),
        json.dumps({"custom_id": "batch", "method": "POST", "url": "/v1/chat/completions",
                    "body": {"messages": [USER], "tools": TOOLS}}),
        json.dumps({"id": "compact", "messages": [USER], "tools": TOOLS}, separators=(",", ":")),
        json.dumps({"id": "option", "messages": [USER], "tools": TOOLS, "enable_thinking": "no"}),
        f'{{"id": "twice", "messages": [{json.dumps(USER)}], "tools": {json.dumps(TOOLS)}, "tools": null}}',
        json.dumps({"messages": [USER], "tools": TOOLS}),
    ]
    return [line.encode() for line in lines]


def command_rows(tmp_path: Path, command: str, lines: list[bytes], *flags: str) -> list[tuple[Any, str | None]]:
    """What ``prompt-formats COMMAND -f chatml-multi-system`` gives each line: ``(its prompt or message,
    None)``, or ``(None, "<error>: <message>")`` from its error report."""
    src, out, errors = tmp_path / f"{command}.jsonl", tmp_path / f"{command}.out", tmp_path / f"{command}.errors"
    src.write_bytes(b"".join(line + b"\n" for line in lines))
    main([command, "-f", "chatml-multi-system", "-q", *flags, "-o", str(out), "--errors", str(errors), str(src)])
    outputs = iter(json.loads(line) for line in out.read_bytes().splitlines())
    failed = {report["line"]: report for report in map(json.loads, errors.read_bytes().splitlines())}
    field = "prompt" if command == "render" else "message"
    return [(None, f"{failed[n]['error']}: {failed[n]['message']}") if n in failed else (next(outputs)[field], None)
            for n in range(1, len(lines) + 1)]


class OneBatch:
    """A stand-in for a Ray Dataset of one batch: ``map_batches`` runs the batch function here, on it."""

    def __init__(self, table: Any) -> None:
        self.table = table

    def map_batches(self, fn: Any, *, batch_format: str, batch_size: int, fn_kwargs: dict[str, Any]) -> Any:
        assert batch_format == "pyarrow"
        return fn(self.table, **fn_kwargs)


def rows_of(table: Any, column: str) -> list[tuple[Any, str | None]]:
    return list(zip(table.column(column).to_pylist(), table.column("error").to_pylist(), strict=True))


def test_a_batch_gets_per_row_what_the_command_gives_its_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow as pa

    accents = json.dumps({"id": "accents", "messages": [{"role": "user", "content": "naïve"}]}, ensure_ascii=False)
    not_utf8 = b'{"id": "bytes", "messages": [{"role": "user", "content": "caf\xff"}]}'
    lines = [*render_lines(), not_utf8, accents.encode()]
    expected = command_rows(tmp_path, "render", lines, "--add-generation-prompt", "--keep-tool-arguments")
    assert expected[-2] == (None, "InvalidInputError: record: invalid UTF-8 at byte 62 of line 16")
    recognised: list[bool] = []
    decode_known = RawToolsets.decode_known

    def spy(self: RawToolsets, *args: Any) -> Any:
        record = decode_known(self, *args)
        recognised.append(record is not None)
        return record

    monkeypatch.setattr(RawToolsets, "decode_known", spy)
    # Arrow strings are not checked as UTF-8 when viewed from binaries; the first chunk starts inside
    # its buffers (a slice), as a batch cut from a bigger block does.
    for kind, raw in ((pa.string(), pa.binary()), (pa.large_binary(), pa.large_binary()),
                      (pa.string_view(), pa.binary_view())):
        ray_integration._renderer.cache_clear()  # a fresh toolset cache for each layout
        recognised.clear()
        head = pa.array([b"[]", *lines[:4]], raw).view(kind).slice(1)
        tail = pa.array([*lines[4:], None], raw).view(kind)
        table = pa.table({"text": pa.chunked_array([head, tail])})
        rendered = render_dataset(OneBatch(table), "chatml-multi-system", add_generation_prompt=True)
        assert rows_of(rendered, "prompt") == [*expected, NULL_ROW], kind
        # 12 lines hold the toolset's bytes: from the third on, those without a 19-digit run (read by
        # the exact decoder) are recognised by them, as the command's lines are.
        assert recognised.count(True) == 8, kind


def test_a_parsed_batch_gets_per_row_what_the_command_gives_its_lines(tmp_path: Path) -> None:
    import pyarrow as pa

    call = ("Need the tool.\n</think>\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\n{}\n</parameter>\n"
            "</function>\n</tool_call>")
    lines = [json.dumps(record).encode() for record in (
        {"id": "a", "completion": "Sunny today.\n</think>\n\nIt is sunny."},
        *({"tools": TOOLS, "completion": call.format(city)} for city in ("Paris", "Oslo", "Lima")),
        {"id": "c", "completion": 7},
        {"id": "d", "tools": "no list", "completion": "x"},
    )] + [b"[1, 2"]
    expected = command_rows(tmp_path, "parse", lines)
    assert [error is None for _, error in expected] == [True] * 4 + [False] * 3
    table = pa.table({"text": pa.array([*(line.decode() for line in lines), None])})
    parsed = rows_of(parse_dataset(OneBatch(table), "chatml-multi-system"), "message")
    assert [(None if message is None else json.loads(message), error) for message, error in parsed] == [
        *expected, NULL_ROW]


def test_render_dataset_gives_per_row_what_the_command_gives_its_lines(ray_cluster: Any, tmp_path: Path) -> None:
    import pyarrow as pa

    lines = render_lines()
    expected = command_rows(tmp_path, "render", lines, "--add-generation-prompt", "--keep-tool-arguments")
    assert sum(error is not None for _, error in expected) == 4
    dataset = ray_cluster.data.from_arrow(pa.table({"text": [*(line.decode() for line in lines), None]}))
    rows = render_dataset(dataset, "chatml-multi-system", add_generation_prompt=True, batch_size=len(lines) + 1)
    assert [(row["prompt"], row["error"]) for row in rows.take_all()] == [*expected, NULL_ROW]
