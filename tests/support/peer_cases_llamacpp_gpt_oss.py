"""llama.cpp's ``tests/test-chat.cpp`` cases for the GPT-OSS template, as data.

The outputs start after the generation prompt's ``<|start|>assistant``; llama.cpp compares the whole
message, so what a case does not set is the empty string.
"""

from __future__ import annotations

from typing import Any

from .peer_cases import Call, PeerCase, tool
from .peer_cases_llamacpp import HELLO, ONE, SPECIAL

_GPT_OSS = "ggml-org/llama.cpp tests/test-chat.cpp::GPT-OSS"


def _g(
    n: int,
    text: str,
    tool_list: tuple[Any, ...] | None = None,
    calls: tuple[Call, ...] = (),
    content: str = "",
    reasoning: str = "",
) -> PeerCase:
    return PeerCase(
        f"{_GPT_OSS}[{n}]", "llama.cpp", "harmony", text, tool_list, calls=calls, content=content, reasoning=reasoning
    )


def _gpt_oss() -> list[PeerCase]:
    think = "<|channel|>analysis<|message|>I'm\nthinking<|end|>"
    edit = tool(
        "edit",
        {"oldString": {"type": "string"}, "newString": {"type": "string"}, "replaceAll": {"type": "boolean"}},
        required=["oldString", "newString"],
    )
    hello_py = "<|channel|>analysis<|message|>I will execute python to say hello<|end|>"
    return [
        _g(1, "<|channel|>final<|message|>" + HELLO, content=HELLO),
        _g(2, "<|channel|>commentary<|message|>" + HELLO, content=HELLO),
        _g(
            3, think + "<|start|>assistant<|channel|>final<|message|>" + HELLO, content=HELLO, reasoning="I'm\nthinking"
        ),
        _g(4, "<|channel|>analysis<|message|>I'm\nthinking", reasoning="I'm\nthinking"),
        _g(5, ' to=functions.special_function<|channel|>analysis<|message|>{"arg1": 1}', (SPECIAL,), (ONE,)),
        _g(6, '<|channel|>analysis to=functions.special_function<|message|>{"arg1": 1}', (SPECIAL,), (ONE,)),
        _g(
            7,
            ' to=functions.special_function<|channel|>analysis <|constrain|>json<|message|>{"arg1": 1}',
            (SPECIAL,),
            (ONE,),
        ),
        _g(8, '<|channel|>commentary to=functions.special_function<|message|>{"arg1": 1}', (SPECIAL,), (ONE,)),
        _g(
            9,
            think + '<|start|>assistant to=functions.special_function<|channel|>analysis<|message|>{"arg1": 1}',
            (SPECIAL,),
            (ONE,),
            reasoning="I'm\nthinking",
        ),
        _g(
            10,
            "<|channel|>analysis<|message|>Thinking about edit...<|end|><|start|>"
            "assistant<|channel|>commentary to=functions.edit "
            '<|constrain|>json<|message|>{"oldString": "if (part < railCount - 1) {",'
            ' "newString": "if (part < 4) {", "replaceAll": false}',
            (edit,),
            (
                Call(
                    "edit",
                    {"oldString": "if (part < railCount - 1) {", "newString": "if (part < 4) {", "replaceAll": False},
                ),
            ),
            reasoning="Thinking about edit...",
        ),
        _g(
            11,
            "<|channel|>analysis<|message|>I need to output the invoice details i"
            "n JSON<|end|><|start|>assistant<|channel|>final "
            '<|constrain|>json<|message|>{"amount": 123.45, "date": "2025-12-03"}',
            content='{"amount": 123.45, "date": "2025-12-03"}',
            reasoning="I need to output the invoice details in JSON",
        ),
        _g(
            12,
            hello_py
            + "<|start|>assistant to=container.exec<|channel|>commentary<|message|>python3 -c 'print(\"hello\")'",
            reasoning="I will execute python to say hello",
        ),
        _g(
            13,
            hello_py + '<|start|>assistant<|channel|>commentary to=python <|constrain|>code<|message|>print("hello")',
            reasoning="I will execute python to say hello",
        ),
        _g(
            14,
            "<|channel|>commentary to=assistant" + think + "<|start|>assistant<|channel|>final<|message|>" + HELLO,
            content=HELLO,
            reasoning="I'm\nthinking",
        ),
        _g(
            15,
            think + "<|start|>assistant<|channel|>commentary to=assistant<|channel|>final<|message|>" + HELLO,
            content=HELLO,
            reasoning="I'm\nthinking",
        ),
    ]


CASES: list[PeerCase] = _gpt_oss()
