"""The message model: OpenAI dicts in and out, and formats render objects exactly as the dicts."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats import InvalidInputError, Message
from prompt_formats.model.messages import checked_tool_fields, tool_fields
from tests.support.oracles import render_ours
from tests.support.settings import budget
from tests.support.strategies import chatml_options, conversation, tools


def as_objects(messages: list[Any]) -> list[Any] | None:
    try:
        return [Message.from_openai(m, i) for i, m in enumerate(messages)]
    except InvalidInputError:
        return None


@budget(0.5)
@given(conversation(), tools, st.booleans(), chatml_options)
def test_objects_render_like_dicts(messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> None:
    objects = as_objects(messages)
    if objects is None:
        return  # parts the model does not accept (the template's own error cases)
    fmt = pf.get_format("chatml-multi-system")
    assert render_ours(fmt.render, objects, tool_list, gen, **options) == render_ours(
        fmt.render, messages, tool_list, gen, **options
    )
    normalised = [m.to_openai() for m in objects]
    assert [Message.from_openai(m, i) for i, m in enumerate(normalised)] == objects


def test_reasoning_aliases_and_tool_call_shapes() -> None:
    m = Message.from_openai(
        {
            "role": "assistant",
            "content": None,
            "thinking": "why",
            "tool_calls": [
                {"name": "f", "arguments": '{"a": 1}'},
                {"id": "c1", "function": {"name": "g", "arguments": {"b": 2}}},
            ],
        }
    )
    assert m.reasoning == "why"
    assert m.tool_calls[0] == pf.ToolCall("f", '{"a": 1}')
    assert m.tool_calls[1] == pf.ToolCall("g", {"b": 2}, "c1")
    assert m.to_openai()["tool_calls"][1] == {
        "id": "c1",
        "type": "function",
        "function": {"name": "g", "arguments": {"b": 2}},
    }
    assert pickle.loads(pickle.dumps(m)) == m


def test_assistant_reply_to_openai() -> None:
    reply = pf.AssistantReply(content="ok", reasoning="r", tool_calls=(pf.ToolCall("f", {"x": [1, "é"]}, "call_1"),))
    assert reply.to_openai() == {
        "role": "assistant",
        "content": "ok",
        "reasoning_content": "r",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"x":[1,"é"]}'}}],
    }


def test_parts_dispatch_like_the_template() -> None:
    m = Message.from_openai(
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}, {"video": "v"}, {"text": "t"}]}
    )
    assert [type(p).__name__ for p in m.content or ()] == ["ImagePart", "VideoPart", "TextPart"]


class _Str(str):
    pass


_FIELD = st.one_of(st.none(), st.text(max_size=3), st.builds(_Str, st.text(max_size=3)), st.integers(),
                   st.just({}), st.just({"type": "object"}), st.just([]))


def _tool_like() -> st.SearchStrategy[Any]:
    # Mostly well-formed, so that each field alone is often the one that is wrong.
    function = st.fixed_dictionaries(
        {"name": st.one_of(st.text(max_size=3), _FIELD)},
        optional={"description": st.one_of(st.text(max_size=3), _FIELD), "parameters": st.one_of(st.just({}), _FIELD),
                  "strict": _FIELD},
    ) | st.dictionaries(st.sampled_from(["name", "description", "parameters"]), _FIELD, max_size=3)
    return st.one_of(
        st.builds(lambda f: {"type": "function", "function": f}, st.one_of(function, _FIELD)),
        function,
        _FIELD,
    )


@budget(1)
@given(_tool_like())
def test_tool_fields_fast_path_agrees_with_the_checked_path(tool: Any) -> None:
    # tool_fields reads the usual shape directly; it must accept, return and reject exactly as the
    # step-by-step checks do.
    def outcome(read: Any) -> Any:
        try:
            return ("ok", read(tool, 2))
        except InvalidInputError as exc:
            return ("error", str(exc))

    assert outcome(tool_fields) == outcome(checked_tool_fields)


# Issue 13: Message objects are not validated when built; rendering one with a field of the wrong
# type crashed with TypeError or AttributeError instead of naming the field.
BAD_MESSAGES = [
    (pf.Message(role="user", content=5), "messages[1].content"),  # type: ignore[arg-type]
    (pf.Message(role="user", content=(5,)), "messages[1].content[0]"),  # type: ignore[arg-type]
    (pf.Message(role="user", content=["a"]), "messages[1].content[0]"),  # type: ignore[arg-type]
    (pf.Message(role="user", content=(pf.ImagePart(5),)), "messages[1].content[0]"),  # type: ignore[arg-type]
    (pf.Message(role="user", content=(pf.TextPart(5),)), "messages[1].content[0].text"),  # type: ignore[arg-type]
    (pf.Message(role=None, content="hi"), "messages[1].role"),  # type: ignore[arg-type]
    (pf.Message(role="assistant", content="x", tool_calls="x"), "messages[1].tool_calls"),  # type: ignore[arg-type]
    (pf.Message(role="assistant", content="", tool_calls=(5,)), "messages[1].tool_calls[0]"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("name", ["chatml-safety", "chatml-multi-system"])
@pytest.mark.parametrize(("message", "path"), BAD_MESSAGES)
def test_chatml_names_the_bad_field_of_a_message_object(name, message, path):
    for fmt in (pf.get_format(name), pf.get_format(name, policy="reject") if name == "chatml-safety" else None):
        if fmt is None:
            continue
        with pytest.raises(pf.InvalidInputError) as info:
            fmt.render([pf.Message(role="user", content="q"), message])
        assert info.value.path == path, str(info.value)


def test_harmony_names_a_text_part_that_is_not_text():
    with pytest.raises(pf.InvalidInputError) as info:
        pf.get_format("harmony").render([pf.Message(role="user", content=(pf.TextPart(5),))])  # type: ignore[arg-type]
    assert info.value.path == "messages[0].content[0].text"


class _LyingRole(str):
    """A role whose ``==`` answers for every role: the template is handed its plain data."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__


@pytest.mark.jinja
@pytest.mark.parametrize(("name", "template"), [("chatml-multi-system", "chatml_multi_system.jinja"),
                                                ("chatml-safety", "chatml_upstream.jinja")])
def test_a_role_of_a_str_subclass_is_read_as_its_plain_string(name: str, template: str) -> None:
    # transformers hands the template the plain string of a str subclass, so its own == is never asked.
    from transformers.utils.chat_template_utils import render_jinja_template

    from tests.support.oracles import fixture_text

    messages = [{"role": _LyingRole("system"), "content": "S"}, {"role": _LyingRole("user"), "content": "U"},
                {"role": _LyingRole("assistant"), "content": "A"}, {"role": _LyingRole("user"), "content": "V"}]
    expected = render_jinja_template(conversations=[messages], chat_template=fixture_text(template),
                                     add_generation_prompt=True)[0][0]
    fmt = pf.get_format(name, policy="allow") if name == "chatml-safety" else pf.get_format(name)
    assert fmt.render(messages, None, True) == expected
    assert fmt.render_spans(messages, None, True).text == expected
