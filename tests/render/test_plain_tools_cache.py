"""The content-keyed cache of plain tool lists (``prompt_formats.model.tools.PLAIN_TOOLS_CACHE``) never changes output.

Expected texts come from the Jinja2 oracle (or ``json.dumps`` for the key property); every render
goes through the cache, and pairs of tool lists that differ in ways a content key could confuse are
rendered one after the other, each way round, so that a wrong key would serve one the other's text.
"""

from __future__ import annotations

import copy
import json
import marshal
import math
import struct
import threading
import uuid
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats._text.plain import plain_data
from prompt_formats.model.tools import PLAIN_TOOLS_CACHE, PlainToolsCache, rendered_tools
from tests.support.oracles import render_jinja, render_ours
from tests.support.strategies import differential_settings, json_values

FORMATS = {"chatml-multi-system": "chatml_multi_system.jinja", "chatml-safety": "chatml_upstream.jinja"}

MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a helper."},
    {"role": "user", "content": "Go."},
]


def tools_with(value: Any, key: str = "default") -> list[dict[str, Any]]:
    """One tool whose schema holds ``value`` under ``key``."""
    return [{"type": "function", "function": {
        "name": "f", "description": "d",
        "parameters": {"type": "object", "properties": {"x": {"type": "number", key: value}}},
    }}]


def rendered(cache: PlainToolsCache, key: str, tools: Any, build: Any) -> Any:
    """What ``rendered_tools`` does with a plain list, through ``cache``."""
    toolset = cache.get(tools)
    return toolset.cached(key, build) if isinstance(toolset, pf.PreparedTools) else build(toolset)


class CountingBuild:
    """A build that returns how many times it was called, and keeps the lists it was given."""

    def __init__(self) -> None:
        self.lists: list[Any] = []

    def __call__(self, tools: Any) -> int:
        self.lists.append(tools)
        return len(self.lists)


def oracle(format_name: str, tools: Any) -> tuple[str, str]:
    return render_jinja(FORMATS[format_name], MESSAGES, tools, True)


@pytest.fixture(autouse=True)
def empty_cache() -> None:
    PLAIN_TOOLS_CACHE.clear()


class LoudStr(str):
    pass


# Pairs a content key must tell apart (or, for the subclass, refuse to key at all).
PAIRS: dict[str, tuple[Any, Any]] = {
    "int vs float": (tools_with(1), tools_with(1.0)),
    "int vs bool": (tools_with(1), tools_with(True)),
    "float vs bool": (tools_with(0.0), tools_with(False)),
    "0.0 vs -0.0": (tools_with(0.0), tools_with(-0.0)),
    "None vs NaN": (tools_with(None), tools_with(math.nan)),
    "inf vs -inf": (tools_with(math.inf), tools_with(-math.inf)),
    "1e16 vs 10**16": (tools_with(1e16), tools_with(10**16)),
    "key order": (
        [{"type": "function", "function": {"name": "f", "description": "d"}}],
        [{"function": {"description": "d", "name": "f"}, "type": "function"}],
    ),
    "str vs str subclass": (tools_with("abc"), tools_with(LoudStr("abc"))),
    "list vs tuple": (tools_with([1, 2]), tools_with((1, 2))),
    "outer list vs tuple": (tools_with(1), tuple(tools_with(1))),
    "surrogate": (tools_with("\ud800"), tools_with("\ufffd")),
    "int keys": (tools_with({1: "a"}), tools_with({"1": "a"})),
    "big int": (tools_with(2**70), tools_with(float(2**70))),
}


@pytest.mark.jinja
@pytest.mark.parametrize("format_name", sorted(FORMATS))
@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_lookalike_tool_lists_render_their_own_text(format_name: str, pair: str) -> None:
    fmt = pf.get_format(format_name)
    first, second = PAIRS[pair]
    want_first, want_second = oracle(format_name, first), oracle(format_name, second)
    assert want_first[0] == want_second[0] == "ok"
    for a, want_a, b, want_b in ((first, want_first, second, want_second), (second, want_second, first, want_first)):
        PLAIN_TOOLS_CACHE.clear()
        for _ in range(2):  # the second time round, whatever could be cached is
            assert render_ours(fmt.render, MESSAGES, a, True) == want_a
            assert render_ours(fmt.render, MESSAGES, b, True) == want_b


@pytest.mark.jinja
def test_repeated_tool_lists_are_served_from_the_cache() -> None:
    fmt = pf.get_format("chatml-multi-system")
    tools = tools_with([1, "a", None])
    want = oracle("chatml-multi-system", tools)
    assert render_ours(fmt.render, MESSAGES, tools, True) == want
    assert len(PLAIN_TOOLS_CACHE) == 1
    assert render_ours(fmt.render, MESSAGES, copy.deepcopy(tools), True) == want  # equal content, new objects
    assert len(PLAIN_TOOLS_CACHE) == 1


@pytest.mark.jinja
@pytest.mark.parametrize("value", [LoudStr("x"), "\ud800", 2**70, {1: "a"}, np.float64(0.5)], ids=repr)
def test_lists_not_made_of_exact_json_types_are_built_every_time(value: Any) -> None:
    fmt = pf.get_format("chatml-multi-system")
    tools = tools_with(value)
    want = oracle("chatml-multi-system", tools)
    for _ in range(3):
        assert render_ours(fmt.render, MESSAGES, tools, True) == want
    cache = PlainToolsCache()
    build = CountingBuild()
    assert [rendered(cache, "k", tools, build) for _ in range(3)] == [1, 2, 3]


def test_a_content_seen_twice_is_prepared_and_its_value_served_from_then_on() -> None:
    # A content seen once costs its key only: no copy, no value kept (it is built from the list).
    cache = PlainToolsCache()
    build = CountingBuild()
    tools = tools_with("x")
    assert [rendered(cache, "k", copy.deepcopy(tools), build) for _ in range(4)] == [1, 2, 2, 2]
    assert isinstance(cache.get(copy.deepcopy(tools)), pf.PreparedTools)


def test_what_a_first_sighting_built_is_served_from_the_second_on() -> None:
    # Through ``rendered`` (the formats' way): the value built at the first sighting goes into the
    # toolset the content is prepared as at the second, so it is not built again; a value asked for
    # under another render key is built once, at its first asking.
    cache = PlainToolsCache()
    build = CountingBuild()
    tools = tools_with("x")
    assert [cache.rendered(copy.deepcopy(tools), "k", build) for _ in range(4)] == [1, 1, 1, 1]
    assert [cache.rendered(copy.deepcopy(tools), "j", build) for _ in range(2)] == [2, 2]
    assert isinstance(cache.get(copy.deepcopy(tools)), pf.PreparedTools)


# numpy's float64 and str_ are a float and a str to json.dumps, but marshal writes them as the bytes
# of their buffer: the same dump as a bytes object, which json.dumps rejects.
BUFFER_LOOKALIKES = [
    (np.float64(1.5), struct.pack("<d", 1.5)),
    (np.str_("ab"), "ab".encode("utf-32-le")),
]


@pytest.mark.jinja
@pytest.mark.parametrize(("number_like", "raw"), BUFFER_LOOKALIKES, ids=["float64", "str_"])
def test_buffer_objects_do_not_let_a_bytes_lookalike_through(number_like: Any, raw: bytes) -> None:
    fmt = pf.get_format("chatml-multi-system")
    good, bad = tools_with(number_like), tools_with(raw)
    assert marshal.dumps(good) == marshal.dumps(bad)  # the trap is real
    want, other = oracle("chatml-multi-system", good), oracle("chatml-multi-system", bad)
    assert want[0] == other[0] == "ok" and want != other and '"<bytes>"' in other[1]  # bytes: the text "<bytes>"
    for _ in range(2):
        assert render_ours(fmt.render, MESSAGES, good, True) == want
        assert render_ours(fmt.render, MESSAGES, bad, True) == other


@pytest.mark.parametrize(("number_like", "raw"), BUFFER_LOOKALIKES, ids=["float64", "str_"])
def test_a_buffer_objects_build_is_never_served_to_its_bytes_lookalike(number_like: Any, raw: bytes) -> None:
    # The two lists share marshal's bytes; neither is made of exact JSON types, so neither is
    # prepared (each is built from its plain data), and what one built is never what the other gets.
    cache = PlainToolsCache()
    build = CountingBuild()
    good, bad = tools_with(number_like), tools_with(raw)
    assert [cache.rendered(good, "k", build), cache.rendered(bad, "k", build), cache.rendered(bad, "k", build),
            cache.rendered(good, "k", build)] == [1, 2, 3, 4]
    assert build.lists == [plain_data(good), plain_data(bad), plain_data(bad), plain_data(good)]
    assert plain_data(bad) != plain_data(good)


@pytest.mark.jinja
def test_a_mutated_list_renders_its_new_content() -> None:
    fmt = pf.get_format("chatml-multi-system")
    tools = tools_with([1, 100])
    assert render_ours(fmt.render, MESSAGES, tools, True) == oracle("chatml-multi-system", tools)
    tools[0]["function"]["parameters"]["properties"]["x"]["default"].append(7)
    assert render_ours(fmt.render, MESSAGES, tools, True) == oracle("chatml-multi-system", tools)
    tools[0]["function"]["description"] = "changed"
    tools.append({"type": "function", "function": {"name": "g"}})
    assert render_ours(fmt.render, MESSAGES, tools, True) == oracle("chatml-multi-system", tools)


# What one list object can be changed into, in place, one after the other: each must render its own
# text although the list is the very object the cache saw before (its identity check must not be
# taken for the content).
IN_PLACE = [1, 1.0, True, 0.0, -0.0, False, None, math.nan, math.inf, "abc", LoudStr("abc"), (1, 2), [1, 2],
            {"a": 1, "b": 2}, {"b": 2, "a": 1}, 1]


@pytest.mark.jinja
@pytest.mark.parametrize("format_name", sorted(FORMATS))
def test_a_list_mutated_in_place_never_gets_a_stale_toolset(format_name: str) -> None:
    fmt = pf.get_format(format_name)
    tools = tools_with(IN_PLACE[0])
    schema = tools[0]["function"]["parameters"]["properties"]["x"]
    for value in IN_PLACE:
        schema["default"] = value
        want = oracle(format_name, tools)
        for _ in range(4):  # first sight, prepared, recognised by its key, by its text and containers
            assert render_ours(fmt.render, MESSAGES, tools, True) == want
    function = tools[0]["function"]
    function["name"] = function.pop("name")  # the same keys, in another order
    assert render_ours(fmt.render, MESSAGES, tools, True) == oracle(format_name, tools)
    tools[0] = {"function": dict(function), "type": "function"}  # a tool replaced by an equal one, keys reordered
    assert render_ours(fmt.render, MESSAGES, tools, True) == oracle(format_name, tools)


# Containers held inside an immutable one: a tuple shares its items, so a list or dict inside it can
# change after the cache saw it. (old value, new value) for a list and a dict held in a tuple.
INSIDE_A_TUPLE = [(None, math.nan), (None, math.inf), (1, -math.inf), ("x", "y"),
                  ("12345678-1234-5678-1234-567812345678", uuid.UUID("12345678-1234-5678-1234-567812345678"))]


@pytest.mark.jinja
@pytest.mark.parametrize("format_name", sorted(FORMATS))
@pytest.mark.parametrize(("old", "new"), INSIDE_A_TUPLE)
def test_a_container_inside_a_tuple_mutated_in_place_never_gets_a_stale_toolset(
    format_name: str, old: Any, new: Any,
) -> None:
    fmt = pf.get_format(format_name)
    inner_list, inner_dict = [old], {"a": old}
    tools = tools_with(([inner_list], ({"k": inner_dict},)))
    for _ in range(4):  # first sight, prepared, recognised by its key, by its text and containers
        assert render_ours(fmt.render, MESSAGES, tools, True) == oracle(format_name, tools)
    for mutate in (lambda: inner_list.__setitem__(0, new), lambda: inner_dict.__setitem__("a", new)):
        mutate()
        try:
            want: Any = render_ours(fmt.render, MESSAGES, copy.deepcopy(tools), True)  # a content never seen
        except pf.FormatError as error:
            want = (type(error), str(error))
        try:
            got: Any = render_ours(fmt.render, MESSAGES, tools, True)
        except pf.FormatError as error:
            got = (type(error), str(error))
        assert got == want


def test_the_same_list_is_recognised_and_a_changed_one_is_not() -> None:
    tools = tools_with(1)
    assert PLAIN_TOOLS_CACHE.get(tools) is tools  # first sight: the list itself, nothing copied
    first = PLAIN_TOOLS_CACHE.get(tools)
    assert isinstance(first, pf.PreparedTools)
    assert first.tools[0] is not tools[0]  # a copy: the caller's list may change
    assert PLAIN_TOOLS_CACHE.get(tools) is first
    assert PLAIN_TOOLS_CACHE.get(copy.deepcopy(tools)) is first  # the same content, other objects
    tools[0]["function"]["parameters"]["properties"]["x"]["default"] = 1.0
    assert PLAIN_TOOLS_CACHE.get(tools) is tools  # a new content, seen once
    second = PLAIN_TOOLS_CACHE.get(tools)
    assert second is not first and second.tools == tuple(tools)  # type: ignore[union-attr]
    assert rendered_tools(tools, "test.key", lambda t: json.dumps(list(t))) == json.dumps(tools)


def test_errors_are_raised_every_time_and_not_cached() -> None:
    fmt = pf.get_format("chatml-multi-system")
    for _ in range(2):
        with pytest.raises(pf.InvalidInputError, match=r"^tools\[0\]: not serialisable"):
            fmt.render(MESSAGES, tools_with({(1,): 2}), True)  # a tuple key: what JSON cannot encode
    assert len(PLAIN_TOOLS_CACHE) == 0


def shape(value: Any) -> Any:
    """``value`` with every object's exact type, and floats by their bits."""
    if type(value) is float:
        return (float, struct.pack("<d", value))
    if type(value) is dict:
        return (dict, [(shape(k), shape(v)) for k, v in value.items()])
    if type(value) in (list, tuple):
        return (type(value), [shape(v) for v in value])
    return (type(value), value)


json_with_tuples = st.recursive(
    json_values, lambda children: st.one_of(st.tuples(children), st.tuples(children, children)), max_leaves=6
)


@differential_settings
@given(json_with_tuples)
def test_marshal_gives_json_values_back_exactly(value: Any) -> None:
    # The cache's argument: a dump determines the exact types, values, order and float bits of
    # what was dumped, hence its JSON text.
    loaded = marshal.loads(marshal.dumps(value))
    assert shape(loaded) == shape(value)
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return
    assert json.dumps(loaded, ensure_ascii=False) == text


def named(n: int, description: str = "d") -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": f"f{n}", "description": description}}]


def test_bounds_by_count_oldest_first_out() -> None:
    cache = PlainToolsCache(max_entries=3)
    built: list[int] = []

    def build_for(n: int) -> Any:
        def build(tools: Any) -> str:
            built.append(n)
            return f"text {n}"

        return build

    for n in (1, 2, 3):
        assert cache.get(named(n))[0]["function"]["name"] == f"f{n}"  # first sight: its key only
        assert rendered(cache, "k", named(n), build_for(n)) == f"text {n}"
    assert rendered(cache, "k", named(1), build_for(1)) == "text 1"  # a hit
    assert built == [1, 2, 3]
    cache.get(named(4))
    assert rendered(cache, "k", named(4), build_for(4)) == "text 4"  # evicts 1, the oldest
    assert len(cache) == 3
    for n in (2, 3, 4):
        rendered(cache, "k", named(n), build_for(n))
    assert built == [1, 2, 3, 4]
    assert rendered(cache, "k", named(1), build_for(1)) == "text 1"  # seen once again: built from the list
    assert built == [1, 2, 3, 4, 1]
    assert rendered(cache, "other key", named(3), build_for(3)) == "text 3"  # keys are per format
    assert built == [1, 2, 3, 4, 1, 3]


def test_bounds_by_bytes() -> None:
    cache = PlainToolsCache(max_entries=100, max_bytes=25_000)
    for n in range(10):
        for _ in range(2):
            rendered(cache, "k", named(n, "x" * 5_000), lambda tools: "built")
            assert cache.nbytes <= 25_000
    assert 1 <= len(cache) <= 2
    rendered(cache, "k", named(99, "x" * 30_000), lambda tools: "built")  # larger than the bound: not kept
    assert cache.nbytes <= 25_000
    cache.resize(max_entries=1, max_bytes=25_000)
    assert len(cache) == 1
    cache.resize(max_entries=0, max_bytes=25_000)
    assert len(cache) == 0
    assert rendered(cache, "k", named(1), lambda tools: "y") == "y"
    assert len(cache) == 0


@pytest.mark.jinja
def test_threads_share_the_cache() -> None:
    fmt = pf.get_format("chatml-multi-system")
    toolsets = [tools_with(n) for n in range(8)] + [tools_with(float(n)) for n in range(8)]
    wants = [oracle("chatml-multi-system", tools) for tools in toolsets]
    bounds = PLAIN_TOOLS_CACHE.max_entries, PLAIN_TOOLS_CACHE.max_bytes
    PLAIN_TOOLS_CACHE.resize(5, bounds[1])  # so that the threads also evict
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def work(offset: int) -> None:
        try:
            start.wait()
            for k in range(200):
                i = (offset + k * 3) % len(toolsets)
                assert render_ours(fmt.render, MESSAGES, copy.deepcopy(toolsets[i]), True) == wants[i]
        except BaseException as exc:  # a thread's exception would otherwise be lost
            errors.append(exc)

    try:
        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        PLAIN_TOOLS_CACHE.resize(*bounds)
    if errors:
        raise errors[0]
    assert len(PLAIN_TOOLS_CACHE) <= 5


def test_a_content_has_one_key_however_its_list_is_held() -> None:
    # marshal flags an object held by more than one reference: the list's own references (a name, an
    # argument, a compiled caller's borrowed one) must not make the same content a second key.
    cache = PlainToolsCache()
    held = named(7)
    also = held
    cache.get(held)
    assert isinstance(cache.get(named(7)), pf.PreparedTools)  # a temporary, seen the second time
    assert cache.get(also) is cache.get(named(7))
    assert len(cache) == 1
