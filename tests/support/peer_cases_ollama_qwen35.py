"""Ollama's Qwen3.5 parser tests (``qwen35``, its boundary tests, ``qwen38``) and its Harmony parser tests, as data.

Ollama's ``qwen3.5`` parser is initialised with ``think`` on or off, which is our ``enable_thinking``.
Its Harmony parser starts after an implicit ``<|start|>assistant`` (``AddImplicitStart``), as our
completion does.
"""

from __future__ import annotations

from typing import Any

from .peer_cases import Call, PeerCase, tool, tools

_Q35 = "ollama/ollama model/parsers/qwen35_test.go"
_BOUNDARY = "ollama/ollama model/parsers/qwen35_boundary_test.go"
_Q38 = "ollama/ollama model/parsers/qwen38_test.go"
_HARMONY = "ollama/ollama harmony/harmonyparser_test.go"

LOCATION = tools(tool("get_weather", {"location": {"type": "string"}}))
_SF_CALL = "<tool_call><function=get_weather><parameter=location>\nSF\n</parameter></function></tool_call>"


def _q35(name: str, text: str, thinking: bool, **expect: Any) -> PeerCase:
    return PeerCase(f"{_Q35}::{name}", "ollama", "chatml", text, expect.pop("tools", None), thinking=thinking, **expect)


def _qwen35() -> list[PeerCase]:
    sf = (Call("get_weather", {"location": "SF"}),)
    weather_days = tools(tool("get_weather", {"location": {"type": "string"}, "days": {"type": "integer"}}))
    return [
        _q35(
            "TestQwen35ParserXMLToolCall",
            "<tool_call><function=get_weather><parameter=location>\nSan Francisco\n</parameter>"
            "<parameter=days>\n3\n</parameter></function></tool_call>",
            False,
            tools=weather_days,
            calls=(Call("get_weather", {"location": "San Francisco", "days": 3}),),
            content="",
            reasoning="",
        ),
        _q35(
            "TestQwen35ParserThinkingWithExplicitOpeningTag",
            "<think>\nLet me think...</think>Answer.",
            True,
            calls=(),
            content="Answer.",
            reasoning="Let me think...",
        ),
        _q35(
            "TestQwen35ParserToolCallEmittedInThinkingIsParsed",
            "Need weather lookup" + _SF_CALL,
            True,
            tools=LOCATION,
            calls=sf,
            content="",
            reasoning="Need weather lookup",
        ),
        _q35(
            "TestQwen35ParserToolCallEmittedInThinkingIsParsedWhenToolCallTagIsSplitAcrossChunks",
            "Need weather lookup" + _SF_CALL,
            True,
            tools=LOCATION,
            calls=sf,
            content="",
            reasoning="Need weather lookup",
            chunks=("Need weather lookup<tool_c", _SF_CALL[len("<tool_c") :]),
        ),
        _q35(
            "TestQwen35ParserFakeoutPartialToolCallThenThinkCloseAcrossChunks",
            "Need weather lookup<tool_c</think>",
            True,
            tools=LOCATION,
            calls=(),
            content="",
            reasoning="Need weather lookup<tool_c",
            chunks=("Need weather lookup<tool_c", "</thi", "nk>"),
        ),
        _q35(
            "TestQwen35ParserToolCallAfterThinkingCloseIsParsed",
            "Need weather lookup</think>" + _SF_CALL,
            True,
            tools=LOCATION,
            calls=sf,
            content="",
            reasoning="Need weather lookup",
        ),
        _q35(
            "TestQwen35ParserThinkingDisabledPassesContentThrough",
            "Plain answer without think close tag.",
            False,
            calls=(),
            content="Plain answer without think close tag.",
            reasoning="",
        ),
        _q35(
            "TestQwen35ParserThinkingDisabledWithCloseTagTreatsAsContent",
            "</think>Some content after spurious tag.",
            False,
            calls=(),
            content="</think>Some content after spurious tag.",
            reasoning="",
        ),
        _q35(
            "TestQwen35ParserLeadingThinkCloseProducesContent",
            "</think>The final answer.",
            True,
            calls=(),
            content="The final answer.",
            reasoning="",
        ),
        _q35(
            "TestQwen35ParserStreamingSplitThinkCloseTag",
            "Reasoning text</think>The final answer.",
            True,
            calls=(),
            content="The final answer.",
            reasoning="Reasoning text",
            chunks=("Reasoning text</thi", "nk>The final answer."),
        ),
        _q35(
            "TestQwen35ParserStreamingEatsWhitespaceAfterThinkClose",
            "Reasoning</think>\n \tThe final answer.",
            True,
            calls=(),
            content="The final answer.",
            reasoning="Reasoning",
            chunks=("Reasoning</think>", "\n \t", "The final answer."),
        ),
        _q35(
            "TestQwen35ParserThinkingTruncatedWithoutCloseTag",
            "Reasoning that never closes",
            True,
            calls=(),
            content="",
            reasoning="Reasoning that never closes",
        ),
        _q35(
            "TestQwen35ParserTruncatedToolCall",
            "Let me help</think>\n<tool_call><function=write_file><parameter=content>print('hel",
            True,
            calls=(),
            content="<function=write_file><parameter=content>print('hel",
            reasoning="Let me help",
        ),
        _q35(
            "TestQwen35ParserInvalidToolCallFallsBackToContent",
            "<tool_call>not valid xml</tool_call>",
            False,
            calls=(),
            content="not valid xml",
        ),
    ]


EDITOR = tools(tool("editor", {"path": {"type": "string"}, "new_text": {"type": "string"}}))
_EDITOR_CALL = (
    "<tool_call><function=editor><parameter=path>manic_miner.html</parameter>"
    "<parameter=new_text>}});</parameter></function></tool_call>"
)


def _boundary() -> list[PeerCase]:
    call = (Call("editor", {"path": "manic_miner.html", "new_text": "}});"}),)
    inside = "<think>I need to fix the extra brace. The line reads `}}});` and should read `}});`." + _EDITOR_CALL
    after = "<think>The brace count is wrong.</think>" + _EDITOR_CALL
    cut = inside.index("</parameter>") + 1
    return [
        PeerCase(
            f"{_BOUNDARY}::TestAToolCallOpenedInsideThinkingSurvivesAnyChunkBoundary[inside thinking]",
            "ollama",
            "chatml",
            inside,
            EDITOR,
            thinking=True,
            calls=call,
        ),
        PeerCase(
            f"{_BOUNDARY}::TestAToolCallOpenedInsideThinkingSurvivesAnyChunkBoundary[after thinking]",
            "ollama",
            "chatml",
            after,
            EDITOR,
            thinking=True,
            calls=call,
        ),
        PeerCase(
            f"{_BOUNDARY}::TestTheBoundaryThatSwallowedTheCall",
            "ollama",
            "chatml",
            inside,
            EDITOR,
            thinking=True,
            calls=call,
            chunks=(inside[:cut], inside[cut:]),
        ),
        PeerCase(
            f"{_BOUNDARY}::TestReasoningIsStillDeliveredWithTheCall",
            "ollama",
            "chatml",
            inside,
            EDITOR,
            thinking=True,
            calls=call,
            reasoning="I need to fix the extra brace. The line reads `}}});` and should read `}});`.",
            adapted="Ollama asserts the reasoning contains 'extra brace' and no call markup; the whole reasoning "
            "is compared",
        ),
    ]


def _qwen38() -> list[PeerCase]:
    uv = tools(
        tool("get_weather", {"city": {"type": "string"}}), tool("set_uv_threshold", {"index": {"type": "integer"}})
    )
    text = (
        "<think>\nNeed weather and UV for Montréal.\n</think>\n\nI'll check"
        " both.\n\n<tool_call>\n<function=get_weather>\n"
        "<parameter=city>\nMontréal\n</parameter>\n</function>\n</tool_cal"
        "l>\n<tool_call>\n<function=set_uv_threshold>\n"
        "<parameter=index>\n5\n</parameter>\n</function>\n</tool_call>"
    )
    return [
        PeerCase(
            f"{_Q38}::TestQwen38ParserReferenceContinuationAtEverySplit",
            "ollama",
            "chatml",
            text,
            uv,
            thinking=True,
            calls=(Call("get_weather", {"city": "Montréal"}), Call("set_uv_threshold", {"index": 5})),
            content="I'll check both.",
            reasoning="Need weather and UV for Montréal.",
        ),
        PeerCase(
            f"{_Q38}::TestQwen38ParserMalformedAndControlLikeContent[ordinary control-like text]",
            "ollama",
            "chatml",
            "Plan</think>ordinary <tool_calling> marker.",
            thinking=True,
            calls=(),
            content="ordinary <tool_calling> marker.",
            reasoning="Plan",
        ),
        PeerCase(
            f"{_Q38}::TestQwen38ParserMalformedAndControlLikeContent[truncated tool call]",
            "ollama",
            "chatml",
            "Plan</think>Before<tool_call><function=get_weather>",
            thinking=True,
            calls=(),
            content="Before",
            reasoning="Plan",
        ),
    ]


def _h(name: str, text: str, **expect: Any) -> PeerCase:
    return PeerCase(f"{_HARMONY}::{name}", "ollama", "harmony", text, **expect)


_HEADER_ADAPTED = "Ollama's test reads the header alone; it is given the body '{}' and read as the message it heads"


def _harmony() -> list[PeerCase]:
    weather = (Call("get_weather", {}),)
    headers = [
        ("assistant<|channel|>analysis to=functions.get_weather", "recipient after channel"),
        ("assistant to=functions.get_weather<|channel|>analysis", "recipient before channel"),
        ("assistant to=functions.get_weather abc<|channel|>analysis", "extra token after the recipient"),
        (
            "assistant<|channel|>commentary to=functions.get_weather <|constrain|>json",
            "constrain, recipient after channel",
        ),
        (
            "assistant to=functions.get_weather<|channel|>commentary <|constrain|>json",
            "constrain, recipient before channel",
        ),
        ("assistant<|channel|>commentary to=functions.get_weather<|constrain|>json", "constrain without space"),
        (
            "assistant to=functions.get_weather<|channel|>commentary<|constrain|>json",
            "constrain without space, other order",
        ),
    ]
    sf = '{"location":"San Francisco"}'
    return [
        _h(
            f"TestHeaderParsing[{label}]",
            f"<|start|>{header}<|message|>{{}}<|call|>",
            calls=weather,
            adapted=_HEADER_ADAPTED,
        )
        for header, label in headers
    ] + [
        _h(
            "TestHeaderParsing[analysis]",
            "<|start|>assistant<|channel|>analysis<|message|>x<|end|>",
            calls=(),
            reasoning="x",
            adapted=_HEADER_ADAPTED.replace("'{}'", "'x'"),
        ),
        _h(
            "TestHarmonyParserHeaderEvent[tool call then tool result]",
            "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
            + sf
            + "<|call|>"
            '<|start|>functions.get_weather to=assistant<|message|>{"sunny": true, "temperature": 20}<|end|>',
            calls=(Call("get_weather", {"location": "San Francisco"}),),
        ),
        _h(
            "TestHarmonyParserHeaderEvent[implicit start]",
            "<|channel|>analysis<|message|>User asks weather in SF. We need lo"
            "cation. Use get_current_weather with location "
            '"San Francisco, CA".<|end|><|start|>assistant<|channel|>commentary t'
            'o=functions.get_current_weather <|constrain|>json'
            '<|message|>{"location":"San Francisco, CA"}<|call|>',
            calls=(Call("get_current_weather", {"location": "San Francisco, CA"}),),
            reasoning="User asks weather in SF. We need location. Use get_current_weather with location "
            '"San Francisco, CA".',
        ),
        _h(
            "TestHarmonyParserNonStreaming[analysis]",
            "<|start|>assistant<|channel|>analysis<|message|>The answer is 4<|end|>",
            reasoning="The answer is 4",
            content="",
        ),
        _h(
            "TestHarmonyParserNonStreaming[recipient]",
            "<|start|>assistant<|channel|>commentary to=functions.calc<|message|>Computing...<|end|>",
            calls=(Call("calc"),),
        ),
        _h(
            "TestHarmonyParserNonStreaming[assistant without channel]",
            "<|start|>assistant<|message|>Hi!<|end|>",
            content="Hi!",
            adapted="the user message before it is left out: a completion holds the assistant's messages only",
        ),
        _h(
            "TestHarmonyParserNonStreaming[implicit start]",
            "<|channel|>analysis<|message|>Thinking about the request<|end|>",
            reasoning="Thinking about the request",
            content="",
        ),
        _h(
            "TestHarmonyParserStreaming[message with channel streamed]",
            "<|start|>assistant<|channel|>analysis<|message|>Thinking...<|end|>",
            reasoning="Thinking...",
            chunks=("<|start|>assistant", "<|chan", "nel|>analysis", "<|message|>", "Thinking", "...", "<|end|>"),
        ),
        _h(
            "TestHarmonyParserStreaming[message with channel and recipient]",
            '<|start|>assistant<|channel|>commentary to=functions.calc<|message|>{"x": 5}<|end|>',
            calls=(Call("calc", {"x": 5}),),
            chunks=("<|start|>assistant<|channel|>commentary to=functions.calc<|message|>", '{"x": 5}', "<|end|>"),
        ),
        _h(
            "TestHarmonyParserStreaming[recipient before channel]",
            '<|start|>assistant to=functions.calc<|channel|>commentary<|message|>{"x": 5}<|end|>',
            calls=(Call("calc", {"x": 5}),),
        ),
        _h(
            "TestToolCallArgParsing[valid tool call with clean JSON args]",
            "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>" + sf,
            calls=(Call("get_weather", {"location": "San Francisco"}),),
        ),
        _h(
            "TestToolCallArgParsing[empty args become empty object]",
            "<|start|>assistant<|channel|>commentary to=functions.refresh <|constrain|>json<|message|>",
            calls=(Call("refresh", {}),),
        ),
        _h(
            "TestToolCallArgParsing[truncated JSON missing one brace is repaired]",
            "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
            '{"location":"San Francisco","options":{"units":"metric"}',
            calls=(Call("get_weather", {"location": "San Francisco", "options": {"units": "metric"}}),),
        ),
        _h(
            "TestToolCallArgParsing[truncated JSON missing multiple braces is repaired]",
            "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
            '{"location":"San Francisco","options":{"units":"metric"',
            calls=(Call("get_weather", {"location": "San Francisco", "options": {"units": "metric"}}),),
        ),
    ]


CASES: list[PeerCase] = _qwen35() + _boundary() + _qwen38() + _harmony()
