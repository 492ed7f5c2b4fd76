"""openai-harmony's own parser tests (``parse_messages_from_completion_tokens``, ``StreamableParser``), as data.

openai-harmony returns messages; read as a reply: ``analysis`` is reasoning, ``final`` /
``commentary`` / no channel is content, a recipient is a tool call (``functions.NAME`` -> ``NAME``).
Several messages bound for one field are joined as our parser joins them (a blank line between).
The tests that read a token file name the messages they expect; the completion is written from those
messages in Harmony's grammar (said in ``adapted``). The token-level UTF-8 tests, the rendering
tests and the tool-role message are not about a reply and are left out.
"""

from __future__ import annotations

from .peer_cases import Call, PeerCase

_SRC = "openai/harmony tests/test_harmony.py"
_FROM_FILE = "the test reads a token file; the completion is written from the messages it expects"


def _case(name: str, text: str, **expect: object) -> PeerCase:
    return PeerCase(f"{_SRC}::{name}", "openai-harmony", "harmony", text, **expect)  # type: ignore[arg-type]


_WEATHER_TOKYO = (Call("get_weather", {"location": "Tokyo"}),)
_PARIS = (Call("get_weather", {"latitude": 48.8566, "longitude": 2.3522}),)
_REFUSE = "I'm sorry, but I can't help with that."
_TRICKY = (
    "Hello Müller, Γειά σου, Привет, שלום, مرحبا, नमस्ते, こんにちは, 안녕하세요, 你好. "
    "Normalized (naïve) vs. decomposed "
    "(naïve) characters. Some emojis: 😊👋🏾👨👩👧👦🇺🇸."
)

CASES: list[PeerCase] = [
    _case(
        "test_simple_reasoning_response",
        '<|channel|>analysis<|message|>User asks: "What is 2 + 2?" Simple arithmetic. Provide answer.<|end|>'
        "<|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>",
        calls=(),
        content="2 + 2 = 4.",
        reasoning='User asks: "What is 2 + 2?" Simple arithmetic. Provide answer.',
        adapted=_FROM_FILE,
    ),
    _case(
        "test_simple_tool_call",
        '<|channel|>analysis<|message|>User asks: "What is the weather in To'
        'kyo?" We need to use lookup_weather tool.<|end|>'
        '<|start|>assistant<|channel|>analysis to=lookup_weather code<|message|>{"location": "Tokyo"}<|call|>',
        calls=(Call("lookup_weather", {"location": "Tokyo"}),),
        content="",
        reasoning='User asks: "What is the weather in Tokyo?" We need to use lookup_weather tool.',
        adapted=_FROM_FILE,
    ),
    _case(
        "test_tool_call_with_constrain_tokenized_correctly",
        '<|start|>assistant to=functions.get_weather<|channel|>commentary <|cons'
        'train|>json<|message|>{"location": "Tokyo"}<|call|>',
        calls=_WEATHER_TOKYO,
        content="",
    ),
    _case(
        "test_tool_call_with_constrain_marker_adjacent",
        '<|start|>assistant to=functions.get_weather<|channel|>commentary<|cons'
        'train|>json<|message|>{"location": "Tokyo"}<|call|>',
        calls=_WEATHER_TOKYO,
        content="",
    ),
    _case(
        "test_tool_call_with_channel_before_recipient_and_constrain_adjacent",
        "<|start|>assistant<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>"
        '{"latitude":48.8566,"longitude":2.3522}<|call|>',
        calls=_PARIS,
        content="",
    ),
    _case(
        "test_streamable_parser_constrained_output_without_recipient",
        '<|start|>assistant<|channel|>final <|constrain|>json<|message|>{"result":true}<|return|>',
        calls=(),
        content='{"result":true}',
    ),
    _case(
        "test_streamable_parser_missing_message_token[non-strict]",
        "I must refuse<|end|><|start|>assistant<|channel|>analysis<|message|>We must refuse<|end|>"
        f"<|start|>assistant<|channel|>final<|message|>{_REFUSE}<|return|>",
        calls=(),
        content="I must refuse\n\n" + _REFUSE,
        reasoning="We must refuse",
    ),
    _case(
        "test_streamable_parser_missing_message_token_other_initial_headers[non-strict]",
        "<|channel|>analysis I must refuse<|end|><|start|>assistant<|channel|>analysis<|message|>We must refuse<|end|>"
        f"<|start|>assistant<|channel|>final<|message|>{_REFUSE}<|return|>",
        calls=(),
        content=_REFUSE,
        reasoning="I must refuse\n\nWe must refuse",
    ),
    _case(
        "test_streamable_parser_missing_message_token_tool_call[non-strict]",
        "... Let's use the tool.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary json"
        '<|message|>{"location": "Tokyo"}<|call|>',
        calls=_WEATHER_TOKYO,
        content="... Let's use the tool.",
    ),
    _case(
        "test_streamable_parser_tricky_utf8_decoding",
        f"<|start|>assistant<|message|>{_TRICKY}<|end|>",
        calls=(),
        content=_TRICKY,
    ),
]
