"""The Ray Data integration on a local two-CPU Ray cluster: the same prompts as render_batch and Jinja2.

Needs the ``ray`` extra (``pip install -e '.[test,ray]'``): without Ray the test fails, it does not skip.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import prompt_formats as pf
from prompt_formats.integrations.ray import parse_dataset, render_dataset
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
