"""The Harmony reply parser: rules by example, parity with openai-harmony's parser, round trip, robustness.

Oracles: openai-harmony (the ``oss-harmony`` fork, which loads its tokenizer offline) renders
assistant messages and parses completions; the Go template (Ollama's) renders the round-trip turns.
Both are required: a missing one fails the tests.
"""

from __future__ import annotations

import json
import re
from typing import Any

import openai_harmony as oh  # a hard requirement: without it this module fails, it does not skip
import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.formats.harmony import parse_header
from prompt_formats.model.messages import AssistantReply, ToolCall
from tests.support.harmony_oracle import HarmonyOracle, to_case
from tests.support.oracles import harmony_encoding
from tests.support.parser_cases import HARMONY_MARKERS, completions, counting_ids
from tests.support.strategies import differential_settings

FMT = pf.get_format("harmony")


def parse(text: str, **context: Any) -> AssistantReply:
    return FMT.parse(text, id_factory=counting_ids(), **context)


def call(name: str, arguments: Any, index: int = 0) -> ToolCall:
    return ToolCall(name, arguments, f"call_{index}")


# --- Rules by example. ------------------------------------------------------------------------------


def test_analysis_then_final() -> None:
    text = "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Answer.<|return|>"
    assert parse(text) == AssistantReply("Answer.", "Think.")


def test_function_call_with_constrain() -> None:
    text = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>'
    assert parse(text) == AssistantReply(tool_calls=(call("get_weather", {"city": "Paris"}),))


@pytest.mark.parametrize("header", [
    " to=functions.f<|channel|>commentary json",
    "<|channel|>commentary to=functions.f<|constrain|>json",
    "<|channel|>commentary to=functions.f",
    " to=functions.f<|channel|>commentary <|constrain|>json",
])
def test_recipient_before_or_after_channel(header: str) -> None:
    assert parse(header + '<|message|>{"a": 1}<|call|>').tool_calls == (call("f", {"a": 1}),)


def test_python_call_keeps_code_raw() -> None:
    text = (
        "<|channel|>analysis<|message|>run it<|end|>"
        '<|start|>assistant to=python<|channel|>analysis code<|message|>print("x")\n<|call|>'
    )
    assert parse(text) == AssistantReply(None, "run it", (call("python", {"code": 'print("x")\n'}),))


def test_preamble_and_several_calls() -> None:
    text = (
        "<|channel|>commentary<|message|>Checking both.<|end|>"
        '<|start|>assistant<|channel|>commentary to=functions.a json<|message|>{}<|call|>'
        '<|start|>assistant<|channel|>commentary to=browser.search json<|message|>{"q": "x"}<|call|>'
    )
    assert parse(text) == AssistantReply("Checking both.", None, (call("a", {}), call("browser.search", {"q": "x"}, 1)))


def test_messages_of_one_field_are_joined_with_a_blank_line() -> None:
    text = "<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>analysis<|message|>b<|end|>"
    assert parse(text).reasoning == "a\n\nb"


def test_invalid_json_is_kept_raw_and_noted() -> None:
    reply = parse("<|channel|>commentary to=functions.f json<|message|>{oops<|call|>")
    assert reply.tool_calls == (call("f", "{oops"),)
    assert reply.malformed == ("tool call 0 (f): arguments are not a JSON object, kept raw",)
    assert reply.to_openai()["tool_calls"][0]["function"]["arguments"] == "{oops"


@pytest.mark.parametrize("body", ["[1]", "3", '"s"', "", "{NaN: 1}", '{"a": NaN}'])
def test_non_object_arguments_are_raw(body: str) -> None:
    assert parse(f"<|channel|>commentary to=functions.f<|message|>{body}<|call|>").tool_calls[0].arguments == body


def test_end_of_text_ends_the_last_message() -> None:
    assert parse('<|channel|>commentary to=functions.f<|message|>{"a": 1}').tool_calls == (call("f", {"a": 1}),)
    assert parse("<|channel|>final<|message|>partial") == AssistantReply("partial")


def test_prefill_continues_the_open_message() -> None:
    assert parse(" more.<|end|><|start|>assistant<|channel|>final<|message|>ok", prefill="analysis") == AssistantReply(
        "ok", " more."
    )
    assert parse(" rest<|return|>", prefill="final") == AssistantReply(" rest")
    with pytest.raises(pf.InvalidInputError, match=r"^prefill: expected null"):
        parse("x", prefill="user")


def test_render_options_are_accepted() -> None:
    assert parse("<|channel|>final<|message|>x", think="high", current_date="2025-01-01") == AssistantReply("x")


@pytest.mark.parametrize(("text", "content", "note"), [
    ("plain text", "plain text", "message header not followed by '<|message|>': kept as text"),
    ("<|channel|>final<|end|>", "<|channel|>final", "message header not followed by '<|message|>': kept as text"),
    ("<|channel|>bogus<|message|>b<|end|>", "<|channel|>bogus<|message|>b",
     "message on unknown channel 'bogus': kept as text"),
    ("<|start|>user<|message|>hi", "<|start|>user<|message|>hi",
     "message from role 'user', not 'assistant': kept as text"),
    ("<|channel|>final<|message|>a<|end|>junk", "a\n\njunk", "text between messages: kept as content"),
])
def test_malformed_structure_is_content_with_a_note(text: str, content: str, note: str) -> None:
    reply = parse(text)
    assert (reply.content, reply.malformed) == (content, (note,))


@pytest.mark.parametrize(("text", "abandoned"), [
    ("<|channel|>final<|channel|>final<|message|>b", "<|channel|>final"),
    ("<|channel|>commentary to=assistant<|channel|>final<|message|>b", "<|channel|>commentary to=assistant"),
    ("<|channel|>analysis<|channel|>commentary<|channel|>final<|message|>b",
     "<|channel|>analysis<|channel|>commentary"),
])
def test_a_header_with_a_second_channel_heads_the_message_of_its_last(text: str, abandoned: str) -> None:
    # The header before the last "<|channel|>" never got its "<|message|>" (llama.cpp reads it so too).
    reply = parse(text)
    assert (reply.content, reply.reasoning) == ("b", None)
    assert reply.malformed == (f"message header {abandoned!r} not followed by '<|message|>' before another "
                               "'<|channel|>': read as an empty message",)


def test_whitespace_between_messages_is_not_noted() -> None:
    text = "<|channel|>final<|message|>a<|end|>\n<|start|>assistant<|channel|>final<|message|>b"
    assert parse(text) == AssistantReply("a\n\nb")


def test_markers_inside_a_body_are_text() -> None:
    text = "<|channel|>final<|message|>a<|start|>assistant<|channel|>x<|message|>b<|return|>"
    assert parse(text) == AssistantReply("a<|start|>assistant<|channel|>x<|message|>b")


def test_parse_header() -> None:
    header = parse_header("assistant to=functions.get_weather<|channel|>commentary json", True)
    assert (header.name, header.problem) == ("get_weather", "")
    assert parse_header("<|channel|>final extra words", False).problem


# --- Parity with openai-harmony's parser on the messages it renders. -----------------------------------


body_text = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"]), max_size=12
).filter(lambda t: "<|" not in t and "|>" not in t)
json_object = st.dictionaries(st.text(max_size=4), st.one_of(st.integers(), st.booleans(), st.none(), body_text),
                              max_size=3)


@st.composite
def assistant_messages(draw: st.DrawFn) -> list[Any]:
    out = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["analysis", "final", "commentary", "function", "python", "bad-json"]))
        if kind in ("analysis", "final", "commentary"):
            message = oh.Message.from_role_and_content(oh.Role.ASSISTANT, draw(body_text)).with_channel(kind)
        elif kind == "python":
            message = (oh.Message.from_role_and_content(oh.Role.ASSISTANT, draw(body_text))
                       .with_channel("analysis").with_recipient("python").with_content_type("code"))
        else:
            if kind == "function":
                body = json.dumps(draw(json_object), ensure_ascii=draw(st.booleans()))
            else:
                body = "{" + draw(body_text)
            name = draw(st.sampled_from(["get_weather", "f", "lookup_2"]))
            message = (oh.Message.from_role_and_content(oh.Role.ASSISTANT, body).with_channel("commentary")
                       .with_recipient(f"functions.{name}").with_content_type("<|constrain|>json"))
        out.append(message)
    return out


def expected_reply(messages: list[Any]) -> AssistantReply:
    """What the documented rules make of messages as openai-harmony parsed them."""
    reasoning: list[str] = []
    content: list[str] = []
    calls: list[ToolCall] = []
    notes: list[str] = []
    for message in messages:
        text = "".join(part.text for part in message.content)
        recipient = message.recipient
        if recipient:
            name = recipient.removeprefix("functions.")
            if recipient == "python":
                arguments: Any = {"code": text}
            else:
                try:
                    arguments = json.loads(text)
                except ValueError:
                    arguments = None
                if not isinstance(arguments, dict):
                    notes.append(f"tool call {len(calls)} ({name}): arguments are not a JSON object, kept raw")
                    arguments = text
            calls.append(ToolCall(name, arguments, f"call_{len(calls)}"))
        elif text:
            (reasoning if message.channel == "analysis" else content).append(text)
    return AssistantReply("\n\n".join(content) or None, "\n\n".join(reasoning) or None, tuple(calls), tuple(notes))


@pytest.mark.openai_harmony
@differential_settings
@given(messages=assistant_messages())
def test_parity_with_openai_harmony(messages: list[Any]) -> None:
    tokens = [token for message in messages for token in harmony_encoding().render(message)]
    text = harmony_encoding().decode_utf8(tokens)
    assert text.startswith("<|start|>assistant")
    completion = text[len("<|start|>assistant"):]
    completion_tokens = harmony_encoding().encode(completion, allowed_special="all")
    theirs = harmony_encoding().parse_messages_from_completion_tokens(completion_tokens, oh.Role.ASSISTANT)
    assert parse(completion) == expected_reply(theirs)
    # The oracle's own reading agrees with what was rendered (so the comparison is meaningful).
    assert [m.recipient for m in theirs] == [m.recipient for m in messages]


# --- Round trip through the reference template (Go, as Ollama runs it). ------------------------------


round_trip_text = st.one_of(
    st.none(),
    st.lists(st.one_of(st.text(max_size=6), st.sampled_from(["<|channel|>", "<|start|>", "<|message|>", "\n", " "])),
             min_size=1, max_size=5).map("".join).filter(
        lambda t: t != "" and not any(m in t for m in ("<|end|>", "<|call|>", "<|return|>"))),
)


@pytest.mark.go
@differential_settings
@given(reasoning=round_trip_text, content=round_trip_text)
def test_round_trip_through_the_template(oracle: HarmonyOracle, reasoning: str | None, content: str | None) -> None:
    history = [{"role": "user", "content": "question"}]
    message: dict[str, Any] = {"role": "assistant", "content": content or ""}
    if reasoning is not None:
        message["thinking"] = reasoning
    # A tool result that the template does not render closes the assistant turn and asks for the next.
    later = {"role": "tool", "content": "", "tool_name": "other"}
    options = {"current_date": "2025-06-01"}
    prompt = oracle.render(to_case(history, None, options))["output"]
    full = oracle.render(to_case([*history, message, later], None, options))["output"]
    assert prompt.endswith("<|start|>assistant") and full.endswith("<|start|>assistant")
    assert full.startswith(prompt)
    completion = full[len(prompt):-len("<|start|>assistant")]
    assert parse(completion) == AssistantReply(content or None, reasoning or None)


# --- Robustness and coverage. -----------------------------------------------------------------------

_BODY = re.compile(r"<\|message\|>(.*?)(?:<\|end\|>|<\|call\|>|<\|return\|>|$)", re.DOTALL)


def reply_text(reply: AssistantReply) -> str:
    pieces = [reply.reasoning or "", reply.content or ""]
    for c in reply.tool_calls:
        pieces.append(c.name)
        pieces.append(c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments, ensure_ascii=False))
    return "\x01".join(pieces)


@pytest.mark.parametrize("prefill", [None, "analysis"])
@differential_settings
@given(text=st.one_of(completions(HARMONY_MARKERS), st.text(), st.binary().map(lambda b: b.decode("utf-8", "replace"))),
       words=st.lists(st.integers(0, 30), max_size=4))
def test_any_text_parses_and_bodies_are_never_lost(prefill: str | None, text: str, words: list[int]) -> None:
    # Sprinkle unique words through the text; each one inside a message body must come out.
    for k, at in enumerate(words):
        cut = at % (len(text) + 1)
        text = text[:cut] + f"W{k}Z" + text[cut:]
    context = {} if prefill is None else {"prefill": prefill}
    reply = parse(text, **context)  # never raises
    out = reply_text(reply)
    scanned = ("<|message|>" if prefill else "") + text
    for body in _BODY.findall(scanned):
        for word in re.findall(r"W\d+Z", body):
            assert word in out, (word, text, reply)
    if not any(marker in text for marker in ("<|", "|>")) and text.strip() and prefill is None:
        assert reply.content == text


def test_cut_at_every_position_never_raises() -> None:
    full = (
        "<|channel|>analysis<|message|>plan<|end|><|start|>assistant to=functions.f<|channel|>commentary "
        '<|constrain|>json<|message|>{"a": [1, 2]}<|call|><|start|>assistant<|channel|>final<|message|>done<|return|>'
    )
    for cut in range(len(full) + 1):
        reply = parse(full[:cut])
        for c in reply.tool_calls:
            assert c.name == "f"
