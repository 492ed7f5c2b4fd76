"""The peer cases where our reading differs from the peer's: what we give instead, and why.

Each row is asserted by tests/parse/test_peer_cases.py (we give ``Ours``, and not what the peer
gives). The reasons are the parse rules written in docs/chatml.md and docs/harmony.md ("Where the
readings differ"); most rows are cases where the peers disagree with each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from .peer_cases import Call

__all__ = ["DISAGREEMENTS", "Ours"]


@dataclass(frozen=True)
class Ours:
    """What we recover from a peer case, and why it differs from what that peer recovers."""

    reason: str
    calls: tuple[Call, ...] | None = None
    content: str | None = None
    content_has: tuple[str, ...] = ()
    reasoning: str | None = None


_OLLAMA = "ollama/ollama model/parsers/"
_VALUES = f"{_OLLAMA}qwen3coder_test.go::TestQwenToolCallValueParsing"
_SHARED = "vllm-project/vllm tests/tool_parsers/test_qwen3_xml_coder_shared.py"
_SGLANG = "sgl-project/sglang test/registered/function_call/"

NOT_JSON = (
    "a value is typed only when it is JSON text of a type the schema allows (null and booleans in any case); "
    "anything else stays the text as written, never a guess"
)
PYTHON_LITERAL = (
    "a value is read as JSON, as the template writes non-string values (tojson); Python literals "
    "(single quotes, None, a repr inside a JSON string) stay the text as written; Ollama, llama.cpp and "
    "openai-harmony do not read them either"
)
NULL_NEEDS_SCHEMA = "null is read only where the schema allows null (vLLM keeps 'null' text for a string parameter)"
CUT_OFF = (
    "an announced call cannot be un-sent: a ChatML call cut off by the end of the completion stays a call with the "
    "arguments written so far and a note (SGLang streams such a call too); Ollama turns it into content and drops "
    "'<tool_call>'"
)
JUNK_BLOCK = (
    "text is never dropped: a '<tool_call>' block holding no '<function=NAME>' is content as written, "
    "noted; Ollama keeps its inside and drops the tags, vLLM keeps the text around it"
)
JSON_NOT_A_CALL = (
    "text is never dropped: a '<tool_call>' block that holds no JSON call (cut off, or not JSON) is content as "
    "written, noted; Ollama keeps its inside and drops the tags, vLLM (test_hermes_parser_non_streaming_tool_call_"
    "invalid_json) keeps the text as written, as we do"
)
_QWEN3 = f"{_OLLAMA}qwen3_test.go::TestQwen3Parser"

DISAGREEMENTS: dict[str, Ours] = {
    f"{_VALUES}[integer with leading zeros]": Ours(NOT_JSON, calls=(Call("f", {"p": "007"}),)),
    f"{_VALUES}[null value lowercase]": Ours(NULL_NEEDS_SCHEMA, calls=(Call("f", {"p": "null"}),)),
    f"{_VALUES}[null value case insensitive]": Ours(NULL_NEEDS_SCHEMA, calls=(Call("f", {"p": "NULL"}),)),
    f"{_VALUES}[invalid boolean falls back to false]": Ours(NOT_JSON, calls=(Call("f", {"p": "yes"}),)),
    f"{_OLLAMA}qwen3coder_test.go::TestQwen3CoderParserTruncatedToolCallNoCloseTag": Ours(
        CUT_OFF, calls=(Call("write_file", {"path": "/tmp/test.py", "content": "print('hel"}),), content=""
    ),
    f"{_OLLAMA}qwen3coder_test.go::TestQwen3CoderParserTruncatedToolCallNoCloseTagStreaming": Ours(
        CUT_OFF, calls=(Call("write_file", {"content": "incomplete..."}),), content="Here is the code:"
    ),
    f"{_OLLAMA}qwen35_test.go::TestQwen35ParserTruncatedToolCall": Ours(
        CUT_OFF, calls=(Call("write_file", {"content": "print('hel"}),), content="", reasoning="Let me help"
    ),
    f"{_OLLAMA}qwen38_test.go::TestQwen38ParserMalformedAndControlLikeContent[truncated tool call]": Ours(
        CUT_OFF, calls=(Call("get_weather", {}),), content="Before", reasoning="Plan"
    ),
    f"{_OLLAMA}qwen3coder_test.go::TestQwen3CoderParserInvalidToolCallXML": Ours(
        JUNK_BLOCK, calls=(), content="<tool_call>this is not valid xml at all</tool_call>"
    ),
    f"{_OLLAMA}qwen3coder_test.go::TestQwen3CoderParserValidToolCallAfterInvalid": Ours(
        JUNK_BLOCK, calls=(Call("get_weather", {"location": "SF"}),), content="<tool_call>invalid content</tool_call>"
    ),
    f"{_OLLAMA}qwen35_test.go::TestQwen35ParserInvalidToolCallFallsBackToContent": Ours(
        JUNK_BLOCK, calls=(), content="<tool_call>not valid xml</tool_call>"
    ),
    f"{_QWEN3}TruncatedToolCallNoCloseTag": Ours(
        JSON_NOT_A_CALL, calls=(),
        content='<tool_call>{"name":"write_file","arguments":{"path":"/tmp/test.py","content":"print(\'hel'
    ),
    f"{_QWEN3}TruncatedToolCallNoCloseTagStreaming": Ours(
        JSON_NOT_A_CALL, calls=(),
        content='Here is the code:\n<tool_call>{"name":"write_file","arguments":{"content":"...',
    ),
    f"{_QWEN3}InvalidToolCallJSON": Ours(
        JSON_NOT_A_CALL, calls=(),
        content='<tool_call>{"name":"write_file","arguments":{"content":"incomplete...</tool_call>'
    ),
    f"{_QWEN3}ThinkingWithTruncatedToolCall": Ours(
        JSON_NOT_A_CALL, calls=(), content='<tool_call>{"name":"write_file","arguments":{"content":"truncated',
        reasoning="Let me help",
    ),
    f"{_QWEN3}ValidToolCallAfterInvalid": Ours(
        JSON_NOT_A_CALL, calls=(Call("get_weather", {"location": "SF"}),),
        content="<tool_call>invalid json</tool_call>",
    ),
    "ollama/ollama harmony/harmonyparser_test.go::TestToolCallArgParsing[empty args become empty object]": Ours(
        "the peers disagree: vLLM keeps an empty body as the arguments '' (test_openai_tool_parser, no_args), Ollama "
        "gives {}; we keep the body as written, noted as cut off (no '<|call|>' came)",
        calls=(Call("refresh", ""),),
    ),
    f"{_SHARED}::test_extract_tool_calls_complex_type_with_single_quote": Ours(
        PYTHON_LITERAL, calls=(Call("test_types", {"obj_param": "{'key': 'value'}"}),)
    ),
    f"{_SHARED}::test_double_encoded_object_param_nonstreaming": Ours(
        PYTHON_LITERAL, calls=(Call("process", {"name": "hello", "data": "\"{'key': 'value', 'n': 1}\""}),)
    ),
    f"{_SHARED}::test_python_none_value_for_nullable_int": Ours(
        PYTHON_LITERAL, calls=(Call("set_count", {"count": "None"}),)
    ),
    f"{_SHARED}::test_anyof_string_null_with_null_literal_returns_none[None]": Ours(
        PYTHON_LITERAL, calls=(Call("set_value", {"optional": "None"}),)
    ),
    f"{_SGLANG}test_qwen3_coder_detector/test_cases.py::test_complex_schema_toolcall": Ours(
        PYTHON_LITERAL,
        calls=(
            Call(
                "TodoWrite",
                {
                    "todos": '[\n {"content": "Buy a new car", "status": \'pending\'},\n'
                    ' {"content": "Buy a new house", "status": "completed"}\n]'
                },
            ),
        ),
        content="Text prefix + complex schema tool call test",
    ),
    "sgl-project/sglang test/registered/function_call/test_function_call_parser.py::TestQwen3CoderDetector"
    "::test_parse_streaming_multiple_tools": Ours(
        "the peers disagree: SGLang strips a value's whitespace; Ollama (TestQwenToolCallValueParsing) and llama.cpp "
        "(Qwen3.5-4B[8]) drop only one newline each side, as we do, so tha"
        "t a value reads back as the template wrote it",
        calls=(
            Call("get_current_weather", {"city": "        Dallas\n        ", "state": "        TX\n        "}),
            Call("calculate_area", {"shape": "        circle\n        ", "dimensions": {"radius": 5}}),
        ),
        content_has=("Some text in between.",),
    ),
    f"{_SGLANG}test_gpt_oss_detector.py::test_detect_and_parse_truncate_normal": Ours(
        "the peers disagree: SGLang drops the text after a tool call; vLLM (test_extract_tool_calls_with_content) and "
        "openai-harmony keep a final message after a call as content, as we do (text is never dropped)",
        calls=(Call("read_file", {"files": []}),),
        content="This text should be truncated.",
        reasoning="Reasoning...",
    ),
    f"{_SGLANG}test_gpt_oss_detector.py::test_parse_streaming_fast_path_fix": Ours(
        "text is never dropped: text after a message is content, noted; SGLang drops it",
        calls=(Call("read_file", {}),),
        content="This is normal text that should be ignored.",
    ),
    "ggml-org/llama.cpp tests/test-chat.cpp::Qwen3.5-4B[14]": Ours(
        "a '<think>' repeated at the start of a completion whose prompt opened the reasoning is dropped, not kept as "
        "reasoning text as llama.cpp keeps it",
        calls=(Call("special_function", {"arg1": 1}),),
        content="",
        reasoning="",
    ),
    "ggml-org/llama.cpp tests/test-chat.cpp::GPT-OSS[12]": Ours(
        "a message with a recipient is a tool call, whatever the recipient (llama.cpp drops calls of built-in tools no "
        "request offered); its arguments are not JSON, so they stay the raw text, noted",
        calls=(Call("container.exec", "python3 -c 'print(\"hello\")'"),),
        content="",
        reasoning="I will execute python to say hello",
    ),
    "ggml-org/llama.cpp tests/test-chat.cpp::GPT-OSS[13]": Ours(
        "'to=python' is the python tool's call ({\"code\": BODY}), which t"
        "he harmony template offers; llama.cpp drops it",
        calls=(Call("python", {"code": 'print("hello")'}),),
        content="",
        reasoning="I will execute python to say hello",
    ),
}
