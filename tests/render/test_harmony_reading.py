"""The Harmony walk's inline reading of plain dicts gives what its checked reading gives, errors included.

``write_messages`` reads a plain ``dict`` message (and ``_content_text`` a plain text-part dict)
inline; any other mapping is read by ``_fields`` (and ``_part_text``), the one checked reading. The
same messages as read-only mappings must render the same text, or raise the same error, for
well-formed and malformed messages alike: which field is named first included. (The Go oracle
checks the bytes themselves: ``test_harmony_differential.py``.)
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, ClassVar

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


class _Lying(dict):  # type: ignore[type-arg]
    """A dict whose ``get`` says what its items do not (transformers, and a template, read the items)."""

    # (lies a reader could believe: a value that fails a check would send the render to its slow route)
    _LIES: ClassVar[dict[str, Any]] = {"content": "lies", "thinking": "lies", "reasoning_content": "lies",
                                       "tool_name": "python", "name": "python", "tool_call_id": "t2",
                                       "tool_calls": None}

    def get(self, key: Any, default: Any = None) -> Any:
        return self._LIES[key] if key in self._LIES else super().get(key, default)


def spans_outcome(messages: list[Any]) -> tuple[str, ...]:
    try:
        rendered = HARMONY.render_spans(messages, **DATE)
    except pf.FormatError as exc:
        return type(exc).__name__, str(exc)
    return rendered.text, repr(rendered.messages), repr(rendered.generated), repr(rendered.dropped)


@settings(max_examples=examples(0.5, 50))
@given(st.lists(message(), max_size=6))
@example([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "thinking": "c",
          "tool_calls": [{"id": "t1", "function": {"name": "python", "arguments": {}}}]},
          {"role": "tool", "content": "d", "tool_call_id": "t1"}])  # a result named by its call
def test_a_mapping_is_read_as_its_plain_data_not_through_its_own_get(messages: list[dict[str, Any]]) -> None:
    lying = [_Lying(m) for m in messages]
    assert outcome(lying) == outcome(messages)
    assert spans_outcome(lying) == spans_outcome(messages)
    session = HARMONY.session(None, **DATE)
    try:
        assert session.render(lying, True) == outcome(messages)[1]
    except pf.FormatError as exc:
        assert (type(exc).__name__, str(exc)) == outcome(messages)


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


# Well-formed conversations, mostly read inline, against the same read by _fields. ---------------------

#: Text a plain message holds: including the markers the merges and take-outs look for.
plain_text = st.sampled_from(["", "a", "python", "<|end|>", "\n\n", "b c"])
calls = st.lists(st.builds(lambda i, n: {"id": i, "type": "function", "function": {"name": n, "arguments": "{}"}},
                           st.sampled_from(["c1", "c2", ""]), st.sampled_from(["python", "ls", ""])), max_size=2)


@st.composite
def plain_message(draw: st.DrawFn) -> dict[str, Any]:
    """A well-formed message the one loop takes: a dict of the usual fields and types, any role."""
    out: dict[str, Any] = {"role": draw(st.sampled_from(["system", "developer", "user", "user", "assistant",
                                                         "assistant", "tool", "tool", "critic"]))}
    if draw(st.integers(0, 4)):
        out["content"] = draw(st.one_of(plain_text, st.none(), st.lists(
            st.builds(lambda t: {"type": "text", "text": t}, plain_text), max_size=2)))
    for key in draw(st.lists(st.sampled_from(["reasoning_content", "thinking", "reasoning"]), unique=True, max_size=2)):
        out[key] = draw(st.one_of(st.none(), plain_text))
    if out["role"] == "assistant" and draw(st.booleans()):
        out["tool_calls"] = draw(calls)
    if out["role"] == "tool":
        for key in draw(st.lists(st.sampled_from(["tool_name", "name", "tool_call_id"]), unique=True, max_size=2)):
            out[key] = draw(st.one_of(st.none(), st.sampled_from(["python", "ls", "", "c1", "c2"])))
    return out


@settings(max_examples=examples(1, 100))
@given(st.lists(st.one_of(plain_message(), plain_message(), plain_message(), message()), max_size=10))
@example([{"role": "user", "content": "a"}, {"role": "tool", "content": "x", "name": 1}])
@example([{"role": "assistant", "content": "a", "tool_calls": [{"id": "c1", "function": {"name": "python"}}]},
          {"role": "tool", "content": "x", "tool_call_id": "c1"}])  # a result named by its call
@example([{"role": "assistant", "content": "a", "thinking": 1}])
@example([{"role": "tool", "content": "x", "tool_call_id": 5}])
def test_conversations_read_inline_render_as_read_by_fields(messages: list[dict[str, Any]]) -> None:
    as_dicts = outcome(messages)
    assert outcome([MappingProxyType(m) for m in messages]) == as_dicts
    mixed = [*messages[:1], pf.Message(role="user", content="b"), *messages[1:]]
    assert outcome(mixed) == outcome([m if isinstance(m, pf.Message) else MappingProxyType(m) for m in mixed])


class _Text(str):
    """A reasoning given as another class of string (nothing of its own)."""

    __slots__ = ()


def test_a_reasoning_given_as_another_class_of_string_is_a_loss_where_a_string_is() -> None:
    # (the analysis of an assistant turn before the last user message is left out)
    messages: list[Any] = [{"role": "assistant", "content": "a", "thinking": _Text("plan")},
                           {"role": "user", "content": "u"}]
    plain = [{"role": "assistant", "content": "a", "thinking": "plan"}, {"role": "user", "content": "u"}]
    assert spans_outcome(plain)[-1] == repr(("messages[0].thinking",))  # (what the case is about)
    assert spans_outcome(messages) == spans_outcome(plain)


class _PartLies(dict):  # type: ignore[type-arg]
    def __getitem__(self, key: Any) -> Any:
        return "lies" if key == "text" else dict.__getitem__(self, key)


def test_a_content_part_whose_own_accessors_lie_is_read_as_its_plain_data() -> None:
    lying: list[Any] = [{"role": "user", "content": [_PartLies(type="text", text="paris")]}]
    assert outcome(lying) == outcome([{"role": "user", "content": [{"type": "text", "text": "paris"}]}])
