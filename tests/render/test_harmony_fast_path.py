"""The Harmony renderer's fast path for plain dicts gives what its checked reading gives, errors included.

``write_messages`` reads a plain ``dict`` message (and ``_content_text`` a plain text-part dict) on a
fast path; any other mapping is read by ``_fields`` (and ``_part_text``), the one checked reading.
The same messages as read-only mappings must render the same text, or raise the same error, for
well-formed and malformed messages alike: which field is named first included.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import hypothesis.strategies as st
from hypothesis import example, given, settings

import prompt_formats as pf
from tests.support.settings import examples

HARMONY = pf.get_format("harmony")
DATE = {"current_date": "2025-08-05"}

#: A value of any of the kinds a field may wrongly hold, or the right kind.
text_value = st.one_of(st.sampled_from(["", "a", "python", "<|end|>", "\n\n"]), st.text(max_size=4))
wrong_value = st.sampled_from([1, 2.5, True, ["x"], {"text": "x"}, b"x"])
maybe_text = st.one_of(st.none(), text_value, wrong_value)

part = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, text_value),
    st.builds(lambda t: {"type": "text", "text": t}, wrong_value),
    st.builds(lambda t: {"text": t}, text_value),
    st.builds(lambda t: {"type": "text", "text": t, "image": "x.png"}, text_value),
    st.sampled_from([{"type": "text"}, {"type": "image", "image": "x.png"}, {"image_url": "u"},
                     {"type": "video"}, {"type": "audio"}, {}, "text", None]),
)
content = st.one_of(st.none(), text_value, wrong_value, st.lists(part, max_size=3), st.tuples(part))
role = st.one_of(st.sampled_from(["system", "developer", "user", "assistant", "tool", "other"]), st.none(),
                 st.just(1))


@st.composite
def message(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {"role": draw(role), "content": draw(content)}
    for key in ("reasoning_content", "thinking", "reasoning", "tool_name", "name", "tool_call_id"):
        if draw(st.booleans()):
            out[key] = draw(maybe_text)
    return out


def outcome(messages: list[Any]) -> tuple[str, str]:
    try:
        return "text", HARMONY.render(messages, **DATE)
    except pf.FormatError as exc:
        return type(exc).__name__, str(exc)


@settings(max_examples=examples(0.5, 50))
@given(st.lists(message(), max_size=6))
@example([{"role": "assistant", "content": 1, "thinking": 2}])  # the reasoning is named first
@example([{"role": "tool", "content": [{"type": "image"}], "name": 3}])
@example([{"role": 1, "content": [{"type": "audio"}]}])
@example([{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": 1}]}])
@example([{"role": "user", "content": [{"type": "text", "text": "a", "image": "x.png"}]}])  # an image part
def test_dicts_read_as_any_mapping(messages: list[dict[str, Any]]) -> None:
    as_dicts = outcome(messages)
    as_mappings = outcome([MappingProxyType(m) for m in messages])
    assert as_dicts == as_mappings
    parts = [{**m, "content": [MappingProxyType(p) if isinstance(p, dict) else p for p in m["content"]]}
             if isinstance(m["content"], list) else m for m in messages]
    assert outcome(parts) == as_dicts


def test_the_checked_reading_names_the_first_wrong_field() -> None:
    """What the test above compares: the reasoning before the content, a part by its index."""
    cases = [
        ([{"role": "assistant", "content": 1, "thinking": 2}], "messages[0].thinking: expected a string, got int"),
        ([{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": 1}]}],
         "messages[0].content[1].text: expected a string, got int"),
        ([{"role": "user", "content": "a"}, {"role": "user", "content": [{"type": "image"}]}],
         "messages[1].content[0]: image parts are not supported by the harmony format (text only)"),
    ]
    for messages, expected in cases:
        for shape in (messages, [MappingProxyType(m) for m in messages]):
            kind, text = outcome(shape)
            assert kind != "text"
            assert text == expected
