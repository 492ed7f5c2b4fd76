"""Prepared toolsets: same bytes as the plain list, immune to later mutation, picklable, thread-safe.

Expected texts come from the Jinja2 oracle rendering a snapshot of the tools as they were when the
toolset was prepared.
"""

from __future__ import annotations

import copy
import pickle
import threading
from typing import Any

import pytest

import prompt_formats as pf
from tests.support.oracles import render_jinja

FORMATS = {"chatml-multi-system": "chatml_multi_system.jinja", "chatml-safety": "chatml_upstream.jinja"}

MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Read the config."},
    {"role": "assistant", "content": "", "reasoning_content": "Use read_file.",
     "tool_calls": [{"type": "function", "function": {"name": "read_file", "arguments": {"path": "a.toml"}}}]},
    {"role": "tool", "content": "[tool]\nname = 'x'"},
]


def make_tools() -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {
                "path": {"type": "string", "description": "Path, relative to the root."},
                "range": {"type": "array", "items": {"type": "integer"}, "default": [1, 100]},
            }, "required": ["path"]},
        }},
        {"type": "function", "function": {"name": "python", "description": "Run code.", "parameters": {}}},
    ]


def expected(format_name: str, tools: list[dict[str, Any]]) -> str:
    outcome = render_jinja(FORMATS[format_name], MESSAGES, tools, True)
    assert outcome[0] == "ok"
    return outcome[1]


@pytest.mark.jinja
@pytest.mark.parametrize("format_name", sorted(FORMATS))
def test_prepared_renders_like_the_plain_list(format_name: str) -> None:
    fmt = pf.get_format(format_name)
    tools = make_tools()
    prepared = pf.prepare_tools(tools)
    want = expected(format_name, tools)
    assert fmt.render(MESSAGES, prepared, True) == want
    assert fmt.render(MESSAGES, prepared, True) == want  # from the cache this time
    assert fmt.render_batch([MESSAGES, MESSAGES], prepared, True) == [want, want]
    assert fmt.render_batch([MESSAGES, MESSAGES], tools, True) == [want, want]


@pytest.mark.jinja
@pytest.mark.parametrize("format_name", sorted(FORMATS))
def test_later_mutation_of_the_callers_dicts_changes_nothing(format_name: str) -> None:
    fmt = pf.get_format(format_name)
    tools = make_tools()
    snapshot = copy.deepcopy(tools)
    prepared = pf.prepare_tools(tools)
    # Mutate everything reachable, before and after the first render (which fills the cache).
    tools[0]["function"]["description"] = "CHANGED"
    tools[0]["function"]["parameters"]["properties"]["range"]["default"].append(999)
    assert fmt.render(MESSAGES, prepared, True) == expected(format_name, snapshot)
    tools[1]["function"]["name"] = "CHANGED"
    tools.append({"type": "function", "function": {"name": "extra"}})
    assert fmt.render(MESSAGES, prepared, True) == expected(format_name, snapshot)
    assert prepared.names == ("read_file", "python")


def test_the_prepared_tools_cannot_be_mutated_through_the_object() -> None:
    prepared = pf.prepare_tools(make_tools())
    assert isinstance(prepared.tools, tuple)
    with pytest.raises(AttributeError):
        prepared.extra = 1  # type: ignore[attr-defined]


@pytest.mark.jinja
@pytest.mark.parametrize("format_name", sorted(FORMATS))
def test_pickle_round_trip_renders_the_same(format_name: str) -> None:
    fmt = pf.get_format(format_name)
    tools = make_tools()
    prepared = pf.prepare_tools(tools)
    fresh = pickle.loads(pickle.dumps(prepared))
    fmt.render(MESSAGES, prepared, True)  # fill the cache, then pickle again
    warm = pickle.loads(pickle.dumps(prepared))
    want = expected(format_name, tools)
    assert fmt.render(MESSAGES, fresh, True) == want
    assert fmt.render(MESSAGES, warm, True) == want
    assert warm.names == prepared.names


def render_in_threads(fmt: pf.ChatFormat, prepared: pf.PreparedTools, threads: int, renders: int) -> list[str]:
    """Start ``threads`` threads at once, each rendering ``renders`` times; re-raise any error."""
    start = threading.Barrier(threads)
    results: list[str] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            start.wait()
            for _ in range(renders):
                results.append(fmt.render(MESSAGES, prepared, True))
        except BaseException as exc:  # a thread's exception would otherwise be lost
            errors.append(exc)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if errors:
        raise errors[0]
    return results


@pytest.mark.jinja
@pytest.mark.parametrize("format_name", sorted(FORMATS))
def test_many_threads_share_one_prepared_toolset(format_name: str) -> None:
    fmt = pf.get_format(format_name)
    tools = make_tools()
    want = expected(format_name, tools)
    for _ in range(5):  # a fresh toolset each time, so the threads race to fill its cache
        results = render_in_threads(fmt, pf.prepare_tools(tools), threads=8, renders=20)
        assert len(results) == 160
        assert set(results) == {want}


def test_bad_tools_are_rejected_when_prepared() -> None:
    with pytest.raises(pf.InvalidInputError) as info:
        pf.prepare_tools([{"type": "function", "function": {"name": "ok"}}, "not a tool"])
    assert info.value.path.startswith("tools[1]")
    with pytest.raises(pf.InvalidInputError):
        pf.prepare_tools({"name": "a mapping, not a list"})


@pytest.mark.jinja
def test_owning_validates_like_the_constructor_and_keeps_the_list() -> None:
    tools = [{"type": "function", "function": {"name": "ok"}}, {"type": "function", "function": {"name": 3}}]
    with pytest.raises(pf.InvalidInputError) as owning:
        pf.PreparedTools.owning(tools)
    with pytest.raises(pf.InvalidInputError) as constructed:
        pf.PreparedTools(tools)
    assert str(owning.value) == str(constructed.value) == "tools[1].function.name: expected a string, got int"
    good = tools[:1]
    prepared = pf.PreparedTools.owning(good)
    assert prepared.tools[0] is good[0]
    assert pf.get_format("chatml-multi-system").render([{"role": "user", "content": "x"}], tools=prepared) == (
        render_jinja("chatml_multi_system.jinja", [{"role": "user", "content": "x"}], good)[1]
    )


def _deep_tool(depth: int, leaf: object = "x") -> dict:
    schema: object = leaf
    for _ in range(depth):
        schema = {"a": schema}
    return {"type": "function", "function": {"name": "f", "parameters": schema}}


def test_a_toolset_nested_too_deep_is_refused_with_a_format_error():
    # Issue 13: from 495 levels on, the deep copy raised RecursionError.
    from prompt_formats.guard import MAX_NESTING

    for depth in (MAX_NESTING, MAX_NESTING + 1, 495, 1000, 5000):
        tool = _deep_tool(depth - 2)  # the tool and its function dict are two of the levels
        if depth <= MAX_NESTING:
            assert pf.prepare_tools([tool]).tools[0] == tool
            continue
        with pytest.raises(pf.InvalidInputError) as info:
            pf.prepare_tools([tool])
        assert info.value.path == "tools[0]" and "nested more than" in info.value.problem


@pytest.mark.parametrize("policy", ["escape", "reject"])
def test_a_prepared_toolset_with_a_token_deep_inside_is_refused_by_the_command(tmp_path, policy):
    # Issue 13: the command read each record's tools into a prepared toolset and the guard raised
    # RecursionError for a token 490+ levels deep ("error": "RecursionError").
    import json
    import subprocess
    import sys

    lines = []
    for depth in (300, 490, 600, 900):
        tools = json.dumps([_deep_tool(1, "LEAF")]).replace('"LEAF"', '{"a": ' * depth + '"<|im_end|>"' + "}" * depth)
        lines.append(f'{{"id": "d{depth}", "messages": [{{"role": "user", "content": "hi"}}], "tools": {tools}}}')
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "prompt_formats", "render", "-f", "chatml-safety", "--config", f'policy="{policy}"',
         str(source), "-o", str(tmp_path / "out"), "--errors", str(tmp_path / "err"), "--quiet"],
        capture_output=True, timeout=300, check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert (tmp_path / "out").read_text() == ""
    failed = [json.loads(line) for line in (tmp_path / "err").read_text().splitlines()]
    assert [(r["id"], r["error"]) for r in failed] == [(f"d{d}", "InvalidInputError") for d in (300, 490, 600, 900)]
    assert all(r["message"].startswith("tools[0]: nested more than") for r in failed)
