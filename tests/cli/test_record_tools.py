"""A toolset recognised by its raw bytes (prompt_formats.records.toolsets) gives every record exactly what
decoding the record whole gives it: the same prompt or the same error, byte for byte.

The reference is the same block processed with the toolset caches off (``tools_cache_size=0``) and
each line processed alone by a fresh renderer; lines repeat a few tool arrays byte for byte, next
to the lines that could fool a reader of raw bytes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.records import RecordParser, RecordRenderer
from tests.support.oracles import render_jinja
from tests.support.strategies import differential_settings

MULTI = pf.get_format("chatml-multi-system")
USER = {"role": "user", "content": "Hi"}


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": "A tool long enough to be remembered.",
                                             "parameters": {"type": "object", **extra}}}


TOOLSETS: list[Any] = [
    [tool("lookup_order")],
    [tool("lookup_order"), tool("search", properties={"q": {"type": "string", "default": 1}})],
    [tool("search", properties={"q": {"type": "string", "default": 1.0}})],  # 1 vs 1.0: other bytes
    [{"type": "function", "function": {"description": "no name: prepare_tools refuses it" * 3}}],
    [tool("big", properties={"n": {"default": 123456789012345678901234}})],  # beyond 64 bits
    [tool("lone", description="\ud800")],  # a lone surrogate, valid JSON
]


def tools_text(index: int, spacing: int) -> str:
    separators = ((",", ":"), (", ", ": "), (" ,  ", " :\t"))[spacing]
    return json.dumps(TOOLSETS[index], separators=separators)


def line_for(kind: int, index: int, spacing: int, n: int) -> bytes:
    """One JSONL line holding toolset ``index``'s bytes in one of the ways a raw reader could misread."""
    tools = tools_text(index, spacing)
    other = tools_text((index + 1) % len(TOOLSETS), spacing)
    messages = json.dumps([USER, {"role": "assistant", "content": f"turn {n}"}])
    shapes = [
        f'{{"id": {n}, "messages": {messages}, "tools": {tools}}}',
        f'{{"tools" :  {tools}, "messages": {messages}, "id": "r{n}"}}',
        f'{{"custom_id": "c{n}", "body": {{"messages": {messages}, "tools": {tools}}}}}',
        f'{{"messages": {messages}, "tools": {tools}, "tools": null}}',  # a duplicate key: the last wins
        f'{{"messages": {messages}, "\\u0074ools": [], "tools": {tools}}}',  # the same key, spelt otherwise
        f'{{"messages": {messages}, "extra": {{"tools": {tools}}}}}',  # a nested object's key
        f'{{"messages": [{{"role": "user", "content": "x", "tools": {tools}}}]}}',  # inside a message
        f'{{"messages": {messages}, "tools": {tools}}} trailing',  # not JSON after the array
        f'{{"messages": {messages}, "tools": {tools}, "n": 12345678901234567890123}}',  # a long digit run
        f'{{"messages": {messages}, "tools": {tools}, "s": "\\ud800"}}',  # a lone surrogate elsewhere
        f'{{"messages": {messages}, "tools": {tools}, "enable_thinking": "maybe"}}',  # a bad option
        f'{{"messages": {messages}, "tools": {tools}, "unknown": 1}}',  # an unknown key
        f'{{"custom_id": "c{n}", "tools": {tools}, "body": {{"messages": {messages}}}}}',  # beside the body
        f'{{"messages": {messages}, "extra_body": {{"tools": {tools}}}}}',
        f'{{"messages": {messages}, "tools": {tools}, "extra_body": {{"tools": null}}}}',
        # another toolset first, nested, then this one at the top level
        f'{{"messages": [{{"role": "user", "content": "x", "tools": {other}}}], "tools": {tools}}}',
        # an integer beyond 64 bits where the prompt shows it (a call's arguments)
        f'{{"messages": [{json.dumps(USER)}, {{"role": "assistant", "content": "", "tool_calls": [{{"function": '
        f'{{"name": "f", "arguments": {{"n": 12345678901234567890123}}}}}}]}}], "tools": {tools}}}',
    ]
    data = shapes[kind].encode("utf-8", "surrogatepass")
    return data.replace(b"trailing", b"\xff trailing") if kind == 7 and n % 2 else data


lines = st.lists(
    st.tuples(st.integers(0, 16), st.integers(0, len(TOOLSETS) - 1), st.integers(0, 2)), min_size=1, max_size=30
)


def one_by_one(block: bytes) -> tuple[bytes, bytes]:
    out, errors = b"", b""
    for number, line in enumerate(block.split(b"\n")[:-1], 1):
        ok, encoded = RecordRenderer(MULTI, True).process_line(number, line)
        if ok:
            out += encoded
        else:
            errors += encoded
    return out, errors


@differential_settings
@given(lines)
def test_a_block_renders_as_its_lines_decoded_whole(shapes: list[tuple[int, int, int]]) -> None:
    # Two plain sightings of most arrays first, so that they are remembered by their bytes before the
    # drawn lines (the third spacing is learnt, or not, from the drawn lines).
    teaching = [(0, index, spacing) for index in range(len(TOOLSETS)) for spacing in range(2)] * 2
    block = b"".join(line_for(kind, index, spacing, n) + b"\n"
                     for n, (kind, index, spacing) in enumerate(teaching + shapes))
    cached = RecordRenderer(MULTI, True).process_block(1, block)
    uncached = RecordRenderer(MULTI, True, tools_cache_size=0).process_block(1, block)
    assert cached == uncached
    assert (cached.output, cached.errors) == one_by_one(block)


@pytest.mark.jinja
def test_a_repeated_tool_array_is_recognised_by_its_bytes_and_renders_the_template_bytes() -> None:
    renderer = RecordRenderer(MULTI, True)
    line = line_for(0, 1, 1, 7)
    block = (line + b"\n") * 3
    assert renderer._tools.decode_known(block, 0, len(line), True) is None  # nothing remembered yet
    result = renderer.process_block(1, block)
    assert result.failed == 0
    known = renderer._tools.decode_known(block, 0, len(line), True)
    assert known is not None and isinstance(known["tools"].toolset, pf.PreparedTools)  # recognised by its bytes
    expected = render_jinja("chatml_multi_system.jinja", json.loads(line)["messages"], TOOLSETS[1], True)[1]
    assert [json.loads(out)["prompt"] for out in result.output.splitlines()] == [expected] * 3


def test_the_same_content_in_other_bytes_is_not_recognised_by_them() -> None:
    renderer = RecordRenderer(MULTI, True)
    compact, spaced = line_for(0, 1, 0, 1), line_for(0, 1, 1, 1)
    renderer.process_block(1, (compact + b"\n") * 2)
    assert renderer._tools.decode_known(compact, 0, len(compact), True) is not None
    assert renderer._tools.decode_known(spaced, 0, len(spaced), True) is None


def test_parse_records_with_repeated_tool_arrays_parse_as_their_lines_alone() -> None:
    completion = '<tool_call>\n{"name": "lookup_order", "arguments": {"x": 1}}\n</tool_call>'
    tools = tools_text(1, 1)
    block = b"".join(f'{{"id": {n}, "completion": {json.dumps(completion)}, "tools": {tools}}}\n'.encode()
                     for n in range(4))
    cached = RecordParser(MULTI).process_block(1, block)
    assert cached == RecordParser(MULTI, tools_cache_size=0).process_block(1, block)
    assert cached.failed == 0 and cached.records == 4


def test_a_nested_tools_array_before_the_record_s_own_is_not_taken_for_it() -> None:
    # The first bytes "tools" of the line are a message's key: its array must not be remembered as
    # standing for the record's toolset, which a later record holding that array would then get.
    shapes = [(0, 1, 2), (0, 1, 2), (15, 1, 2), (0, 2, 2), (0, 2, 2), (0, 2, 2)]
    block = b"".join(line_for(kind, index, spacing, n) + b"\n" for n, (kind, index, spacing) in enumerate(shapes))
    cached = RecordRenderer(MULTI, True).process_block(1, block)
    assert cached == RecordRenderer(MULTI, True, tools_cache_size=0).process_block(1, block)
    assert (cached.output, cached.errors) == one_by_one(block)
