"""Harmony's tolerant reading: a message without a channel is final content, noted; compared with openai-harmony."""

from __future__ import annotations

import pytest
from openai_harmony import Role

import prompt_formats as pf
from tests.support.oracles import harmony_encoding

NOTE = "message without a channel: read as final content"

CASES = [
    "<|start|>assistant<|message|>Answer<|end|>",
    "<|message|>Answer<|end|>",
    "<|message|>Answer",
    "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|message|>Answer<|return|>",
]


def openai_harmony_messages(text: str) -> list[tuple[str | None, str | None, str]]:
    """(channel, recipient, text) of each message openai-harmony's own parser reads from the completion."""
    tokens = harmony_encoding().encode(text, allowed_special="all")
    role = None if text.startswith("<|start|>") else Role.ASSISTANT
    messages = harmony_encoding().parse_messages_from_completion_tokens(tokens, role=role, strict=False)
    return [(m.channel, m.recipient, "".join(c.text for c in m.content)) for m in messages]  # type: ignore[attr-defined]


@pytest.mark.openai_harmony
@pytest.mark.parametrize("fmt_name", ["harmony", "gpt-oss"])
@pytest.mark.parametrize("text", CASES)
def test_channel_less_message_is_final_content_with_a_note(fmt_name: str, text: str) -> None:
    reply = pf.get_format(fmt_name).parse(text)
    # openai-harmony reads the same completion as a channel-less assistant message holding the answer.
    theirs = openai_harmony_messages(text)
    assert theirs[-1][:2] == (None, None)
    assert reply.content == theirs[-1][2] == "Answer"
    assert reply.malformed == (NOTE,)
    assert reply.tool_calls == ()


def test_channel_less_message_streams_as_content() -> None:
    fmt = pf.get_format("harmony")
    parser = fmt.stream_parser()
    events = [e for ch in CASES[0] for e in parser.feed(ch)] + parser.close()
    assert [e for e in events if isinstance(e, pf.ContentDelta)] == [pf.ContentDelta(c) for c in "Answer"]
    assert pf.Malformed(NOTE) in events
