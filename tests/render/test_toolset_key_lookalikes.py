"""Tool lists that orjson writes alike must never share an entry of the plain-tools cache.

orjson (the cheaper candidate key for ``prompt_formats.model.tools.PlainToolsCache``, see the toolset
paragraph of docs/performance.md) writes a tuple as a list, NaN and the infinities as ``null``,
an enum member as its value and a UUID as its text. gpt-oss prints a schema's values with
``str()`` (so a nested tuple reads ``('a',)`` where a list reads ``['a']``) and the ChatML templates
refuse what ``json.dumps`` refuses: each pair below renders differently under the reference
template, so a key that confused the two would serve one list the other's text. Expected texts
come from the Jinja2 oracles; each pair is rendered one after the other, each way round, twice.
"""

from __future__ import annotations

import enum
import math
import uuid
from typing import Any

import pytest

import prompt_formats as pf
from prompt_formats.model.tools import PLAIN_TOOLS_CACHE
from tests.support.gpt_oss_oracle import render_gpt_oss_jinja
from tests.support.oracles import Outcome, render_jinja, render_ours

pytestmark = [pytest.mark.jinja]

DAY = "2025-01-02"
MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "Go."}]


class Colour(enum.Enum):
    RED = "red"


def tools_with(kind: str, key: str, value: Any) -> list[dict[str, Any]]:
    """One tool whose parameter ``x`` (of JSON type ``kind``) holds ``value`` under ``key``."""
    return [{"type": "function", "function": {
        "name": "f", "description": "d",
        "parameters": {"type": "object", "properties": {"x": {"type": kind, key: value}}},
    }}]


# name -> (formats that render the two lists differently, first list, second list)
PAIRS: dict[str, tuple[tuple[str, ...], Any, Any]] = {
    "nested list vs tuple": (("gpt-oss",),
                             tools_with("string", "enum", [["a"]]), tools_with("string", "enum", [("a",)])),
    "None vs NaN": (("gpt-oss",), tools_with("number", "default", None), tools_with("number", "default", math.nan)),
    "None vs inf": (("gpt-oss",), tools_with("number", "default", None), tools_with("number", "default", math.inf)),
    "enum member vs value": (("chatml-multi-system", "chatml-safety", "gpt-oss"),
                             tools_with("string", "default", "red"), tools_with("string", "default", Colour.RED)),
    "UUID vs its text": (("chatml-multi-system", "chatml-safety"),
                         tools_with("string", "default", str(uuid.UUID(int=1))),
                         tools_with("string", "default", uuid.UUID(int=1))),
}

TEMPLATES = {"chatml-multi-system": "chatml_multi_system.jinja", "chatml-safety": "chatml_upstream.jinja"}
CASES = [(name, fmt) for name, (formats, _, _) in sorted(PAIRS.items()) for fmt in formats]


def render(format_name: str, tools: Any) -> Outcome:
    fmt = pf.get_format(format_name)
    if format_name == "gpt-oss":
        return render_ours(fmt.render, MESSAGES, tools, True, current_date=DAY)
    return render_ours(fmt.render, MESSAGES, tools, True)


def oracle(format_name: str, tools: Any) -> Outcome:
    try:
        if format_name == "gpt-oss":
            return render_gpt_oss_jinja(MESSAGES, tools, True, current_date=DAY)
        return render_jinja(TEMPLATES[format_name], MESSAGES, tools, True)
    except TypeError:  # tojson (json.dumps) refuses the value: so does the format, under FormatError
        return ("raises", "")


def outcome(format_name: str, tools: Any) -> Outcome:
    try:
        return render(format_name, tools)
    except pf.FormatError:
        return ("raises", "")


@pytest.fixture(autouse=True)
def empty_cache() -> None:
    PLAIN_TOOLS_CACHE.clear()


@pytest.mark.parametrize(("pair", "format_name"), CASES)
def test_lists_orjson_writes_alike_render_their_own_text(pair: str, format_name: str) -> None:
    _, first, second = PAIRS[pair]
    want_first, want_second = oracle(format_name, first), oracle(format_name, second)
    assert want_first != want_second  # the pair is one a confused key would get wrong
    for a, want_a, b, want_b in ((first, want_first, second, want_second), (second, want_second, first, want_first)):
        PLAIN_TOOLS_CACHE.clear()
        for _ in range(3):  # by the second and third time round, whatever could be cached is
            assert outcome(format_name, a) == want_a
            assert outcome(format_name, b) == want_b
