"""Harmony: errors for bad input and bad options, the add_generation_prompt rule, batch rendering.

What the renderer *outputs* is checked against the Go template in ``tests/render/test_harmony_differential.py``;
here only behaviour that has no counterpart in the template is tested.
"""

from __future__ import annotations

import datetime
import pickle
from typing import Any

import pytest

import prompt_formats as pf
from prompt_formats.formats.harmony.ollama import HarmonyFormat, UnsupportedContentError

HARMONY = pf.get_format("harmony")
DATE = {"current_date": "2025-08-05"}
USER = [{"role": "user", "content": "hi"}]


def test_registered_under_harmony() -> None:
    assert "harmony" in pf.available_formats()
    assert isinstance(HARMONY, HarmonyFormat)
    assert HARMONY.name == "harmony"
    assert set(HARMONY.options) == {"current_date", "think", "reasoning_effort", "decode_tool_arguments", "strict"}
    assert pickle.loads(pickle.dumps(HARMONY)).render(USER, **DATE) == HARMONY.render(USER, **DATE)


# ---------------------------------------------------------------------------------------------------
# Bad input: InvalidInputError naming the index and the field.

BAD_INPUT: list[tuple[Any, Any, str]] = [
    ("hello", None, "messages: expected a list of messages, got str"),
    ({"role": "user"}, None, "messages: expected a list of messages, got dict"),
    (None, None, "messages: expected a list of messages, got null"),
    ([{"role": "user", "content": "a"}, 3], None, "messages[1]: expected a message object, got int"),
    ([{"content": "a"}], None, "messages[0].role: expected a string, got null"),
    ([{"role": 1, "content": "a"}], None, "messages[0].role: expected a string, got int"),
    (
        [{"role": "user", "content": "a"}] * 3 + [{"role": "user", "content": 7}],
        None,
        "messages[3].content: expected a string, a list of parts or null, got int",
    ),
    (
        [{"role": "user", "content": {"type": "text", "text": "a"}}],
        None,
        "messages[0].content: expected a string, a list of parts or null, got dict",
    ),
    (
        [{"role": "user", "content": [{"type": "text", "text": "a"}, "b"]}],
        None,
        "messages[0].content[1]: expected a content part object, got str",
    ),
    (
        [{"role": "user", "content": [{"type": "text", "text": 5}]}],
        None,
        "messages[0].content[0].text: expected a string, got int",
    ),
    (
        [{"role": "user", "content": [{"type": "audio", "audio": "..."}]}],
        None,
        "messages[0].content[0]: unknown content part type 'audio'",
    ),
    ([{"role": "assistant", "content": "a", "thinking": 5}], None, "messages[0].thinking: expected a string, got int"),
    (
        [{"role": "assistant", "content": "a", "reasoning_content": None, "reasoning": ["x"]}],
        None,
        "messages[0].reasoning: expected a string, got list",
    ),
    (
        [{"role": "assistant", "content": "a", "reasoning_content": 1.5, "thinking": "ok"}],
        None,
        "messages[0].reasoning_content: expected a string, got float",
    ),
    ([{"role": "tool", "content": "1", "tool_name": 3}], None, "messages[0].tool_name: expected a string, got int"),
    ([{"role": "tool", "content": "1", "name": False}], None, "messages[0].name: expected a string, got bool"),
    (
        [{"role": "tool", "content": "1", "tool_call_id": 7}],
        None,
        "messages[0].tool_call_id: expected a string, got int",
    ),
    (USER, "python", "tools: expected a list of tool objects, got str"),
    (USER, {"type": "function", "function": {"name": "python"}}, "tools: expected a list of tool objects, got dict"),
    (USER, ["python"], "tools[0]: expected a tool object, got str"),
    (USER, [{"type": "function", "function": "python"}], "tools[0].function: expected an object, got str"),
    (
        USER,
        [{"type": "function", "function": {"name": "python"}}, {"type": "function", "function": {}}],
        "tools[1].function.name: expected a string, got null",
    ),
    (USER, [{"name": 3}], "tools[0].name: expected a string, got int"),
]


@pytest.mark.parametrize(("messages", "tools", "message"), BAD_INPUT)
def test_bad_input_names_the_field(messages: Any, tools: Any, message: str) -> None:
    with pytest.raises(pf.InvalidInputError) as info:
        HARMONY.render(messages, tools, **DATE)
    assert str(info.value) == message
    assert isinstance(info.value, pf.FormatError)
    assert isinstance(info.value, ValueError)


def test_message_objects_are_validated_too() -> None:
    with pytest.raises(pf.InvalidInputError, match=r"^messages\[1\]\.content: expected a string, a list"):
        HARMONY.render([pf.Message("user", "a"), pf.Message("user", 5)], **DATE)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "part",
    [
        {"type": "image", "image": "a.png"},
        {"type": "image_url", "image_url": {"url": "data:"}},
        {"image": "a.png"},
        {"type": "video", "video": "a.mp4"},
        {"video": ["f1.png"]},
    ],
)
def test_image_and_video_parts_are_refused(part: dict[str, Any]) -> None:
    messages = [USER[0], {"role": "user", "content": [{"type": "text", "text": "look"}, part]}]
    with pytest.raises(UnsupportedContentError) as info:
        HARMONY.render(messages, **DATE)
    assert info.value.path == "messages[1].content[1]"
    kind = "video" if "video" in part else "image"
    assert str(info.value) == (
        f"messages[1].content[1]: {kind} parts are not supported by the harmony format (text only)"
    )
    assert isinstance(info.value, pf.InvalidInputError)


def test_image_part_objects_are_refused() -> None:
    message = pf.Message("user", (pf.TextPart("a"), pf.ImagePart()))
    with pytest.raises(UnsupportedContentError, match=r"^messages\[0\]\.content\[1\]: image parts"):
        HARMONY.render([message], **DATE)
    message = pf.Message("user", (pf.VideoPart(),))
    with pytest.raises(UnsupportedContentError, match=r"^messages\[0\]\.content\[0\]: video parts"):
        HARMONY.render([message], **DATE)


def test_fields_the_template_never_reads_are_ignored() -> None:
    plain = HARMONY.render([{"role": "assistant", "content": "a"}], **DATE)
    with_calls = HARMONY.render(
        [{"role": "assistant", "content": "a", "tool_calls": "not even a list", "tool_call_id": 5}], **DATE
    )
    assert plain == with_calls


# ---------------------------------------------------------------------------------------------------
# Options.


def test_unknown_option() -> None:
    with pytest.raises(pf.UnknownOptionError, match="enable_thinking"):
        HARMONY.render(USER, enable_thinking=False)


@pytest.mark.parametrize("think", ["extreme", "MAX", "", 1, 0, 2.0, ["low"]])
def test_bad_think_value(think: Any) -> None:
    with pytest.raises(pf.InvalidInputError, match=r"^think: expected null, a bool or one of"):
        HARMONY.render(USER, think=think, **DATE)


@pytest.mark.parametrize("effort", ["max", "HIGH", "", True, 3])
def test_bad_reasoning_effort(effort: Any) -> None:
    with pytest.raises(pf.InvalidInputError, match=r"^reasoning_effort: expected null or one of"):
        HARMONY.render(USER, reasoning_effort=effort, **DATE)


def test_think_and_reasoning_effort_together() -> None:
    with pytest.raises(pf.FormatError, match="either think or reasoning_effort, not both"):
        HARMONY.render(USER, think=True, reasoning_effort="high", **DATE)
    with pytest.raises(pf.FormatError, match="not both"):
        HARMONY.render(USER, think=False, reasoning_effort="none", **DATE)
    # None means "not given": either may be None beside the other.
    assert HARMONY.render(USER, think=None, reasoning_effort="high", **DATE) == HARMONY.render(
        USER, think="high", **DATE
    )
    assert HARMONY.render(USER, think="low", reasoning_effort=None, **DATE) == HARMONY.render(
        USER, reasoning_effort="low", **DATE
    )


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("2025-8-5", "expected a 'YYYY-MM-DD' date, got '2025-8-5'"),
        ("2025-02-30", "expected a 'YYYY-MM-DD' date, got '2025-02-30'"),
        ("20250805", "expected a 'YYYY-MM-DD' date, got '20250805'"),
        ("2025-08-05T10:00", "expected a 'YYYY-MM-DD' date, got '2025-08-05T10:00'"),
        (" 2025-08-05", "expected a 'YYYY-MM-DD' date, got ' 2025-08-05'"),
        ("２０２５-08-05", "expected a 'YYYY-MM-DD' date, got '２０２５-08-05'"),
        (20250805, "expected a datetime.date or a 'YYYY-MM-DD' string, got int"),
    ],
)
def test_bad_current_date(value: Any, problem: str) -> None:
    with pytest.raises(pf.InvalidInputError) as info:
        HARMONY.render(USER, current_date=value)
    assert str(info.value) == "current_date: " + problem


def test_current_date_forms_agree() -> None:
    as_text = HARMONY.render(USER, current_date="0987-01-02")
    assert "\nCurrent date: 0987-01-02\n" in as_text
    assert HARMONY.render(USER, current_date=datetime.date(987, 1, 2)) == as_text
    assert HARMONY.render(USER, current_date=datetime.datetime(987, 1, 2, 23, 59)) == as_text
    today = datetime.date.today().isoformat()
    assert HARMONY.render(USER, current_date=None) == HARMONY.render(USER) == HARMONY.render(USER, current_date=today)


# ---------------------------------------------------------------------------------------------------
# add_generation_prompt: the template has no switch; None and True render it, False is refused.


def test_add_generation_prompt() -> None:
    default = HARMONY.render(USER, **DATE)
    assert default.endswith("<|end|><|start|>assistant")
    assert HARMONY.render(USER, add_generation_prompt=True, **DATE) == default
    assert HARMONY.render(USER, None, None, **DATE) == default
    with pytest.raises(pf.FormatError, match="add_generation_prompt=False is not supported"):
        HARMONY.render(USER, add_generation_prompt=False, **DATE)
    with pytest.raises(pf.InvalidInputError, match=r"^add_generation_prompt: expected a bool or null, got str"):
        HARMONY.render(USER, add_generation_prompt="yes", **DATE)  # type: ignore[arg-type]


def test_prefill_ends_inside_the_last_message_even_with_add_generation_prompt() -> None:
    prefill = [*USER, {"role": "assistant", "content": "Sure"}]
    assert HARMONY.render(prefill, add_generation_prompt=True, **DATE).endswith(
        "<|start|>assistant<|channel|>final<|message|>Sure"
    )


# ---------------------------------------------------------------------------------------------------
# Tools and batches.


def test_prepared_tools_render_the_same_and_cache_the_answer() -> None:
    tools = [
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},
        {"type": "function", "function": {"name": "python"}},
    ]
    prepared = pf.prepare_tools(tools)
    rendered = HARMONY.render(USER, prepared, **DATE)
    assert rendered == HARMONY.render(USER, tools, **DATE)
    assert "\n# Tools\n## python\n" in rendered
    assert prepared.cached("harmony.offers_python", lambda _: None) is True
    without = pf.prepare_tools(tools[:1])
    assert HARMONY.render(USER, without, **DATE) == HARMONY.render(USER, **DATE)
    assert without.cached("harmony.offers_python", lambda _: None) is False


def test_render_batch() -> None:
    conversations = [USER, [{"role": "user", "content": 5}], [{"role": "system", "content": "s"}, *USER]]
    with pytest.raises(pf.InvalidInputError):
        HARMONY.render_batch(conversations, **DATE)
    out = HARMONY.render_batch(conversations, errors="collect", **DATE)
    assert out[0] == HARMONY.render(USER, **DATE)
    assert isinstance(out[1], pf.InvalidInputError)
    assert out[2] == HARMONY.render(conversations[2], **DATE)
    assert HARMONY.render_batch([USER], add_generation_prompt=True, **DATE) == [out[0]]
    with pytest.raises(pf.FormatError, match="add_generation_prompt=False"):
        HARMONY.render_batch([USER], add_generation_prompt=False, **DATE)
    with pytest.raises(pf.UnknownOptionError):
        HARMONY.render_batch([USER], bogus=1)


def test_any_mapping_renders_like_a_dict() -> None:
    """Plain dicts take a fast path; other mappings and Message objects must render the same."""
    from types import MappingProxyType

    messages = [
        {"role": "developer", "content": "d"},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"text": "b"}]},
        {"role": "assistant", "content": None, "reasoning": "r", "tool_calls": []},
        {"role": "tool", "content": "42", "name": "python"},
        {"role": "assistant", "content": "done", "thinking": "t"},
        {"role": "user", "content": "q"},
    ]
    tools = [{"type": "function", "function": {"name": "python"}}]
    expected = HARMONY.render(messages, tools, **DATE)
    proxies = [MappingProxyType(m) for m in messages]
    assert HARMONY.render(proxies, [MappingProxyType(t) for t in tools], **DATE) == expected
    objects = [pf.Message.from_openai(m, i) for i, m in enumerate(messages)]
    assert HARMONY.render(objects, tools, **DATE) == expected
    assert HARMONY.render(tuple(messages), tuple(tools), **DATE) == expected
