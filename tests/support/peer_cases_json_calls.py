"""The JSON form of a Qwen tool call (``<tool_call>`` + ``{"name": …, "arguments": …}``), as data.

Qwen2.5 and Qwen3 write their calls so; vLLM reads them with its ``hermes`` parser (tool calls
only: read with thinking off) and Ollama with its ``qwen3`` parser (with and without thinking).
"""

from __future__ import annotations

from .peer_cases import Call, PeerCase

HERMES = "vllm-project/vllm tests/tool_parsers/test_hermes_tool_parser.py"
QWEN3 = "ollama/ollama model/parsers/qwen3_test.go"

_TRIGGER = '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}\n</tool_call>'
_SF = '<tool_call>{"name":"get_weather","arguments":{"location":"San Francisco","unit":"celsius"}}</tool_call>'
_SF_CALL = Call("get_weather", {"location": "San Francisco", "unit": "celsius"})
_INDEXED = (Call("first", {"a": "1"}), Call("second", {"b": "2"}), Call("third", {"c": "3"}))


def _hermes(name: str, text: str, calls: tuple[Call, ...], content: str | None = None) -> PeerCase:
    return PeerCase(f"{HERMES}::{name}", "vllm", "chatml", text, calls=calls, content=content)


def _vllm() -> list[PeerCase]:
    return [
        _hermes("test_hermes_parser_streaming_just_forward_text",
                "This is some prior text that has nothing to do with tool calling.", (),
                "This is some prior text that has nothing to do with tool calling."),
        _hermes("test_hermes_parser_streaming_failure_case_bug_19056", _TRIGGER,
                (Call("final_answer", {"trigger": True}),)),
        _hermes("test_hermes_parser_streaming",
                '<tool_call>{"name": "get_current_temperature","arguments": {"location":'
                '"San Francisco, California, United States", "unit": "celsius"}}</tool_call>',
                (Call("get_current_temperature",
                      {"location": "San Francisco, California, United States", "unit": "celsius"}),)),
        _hermes("test_hermes_streaming_content_then_tool_call_with_stream_interval",
                'Sure, let me check the weather.<tool_call>{"name": "get_weather", "arguments": {"city": "NYC"}}'
                "</tool_call>",
                (Call("get_weather", {"city": "NYC"}),), "Sure, let me check the weather."),
        _hermes("test_hermes_streaming_multiple_tool_calls_with_stream_interval",
                '<tool_call>{"name": "search", "arguments": {"q": "cats"}}</tool_call>'
                '<tool_call>{"name": "search", "arguments": {"q": "dogs"}}</tool_call>',
                (Call("search", {"q": "cats"}), Call("search", {"q": "dogs"}))),
        _hermes("test_hermes_parser_non_streaming_no_tool_call", "This is not a tool call.", ()),
        _hermes("test_hermes_parser_non_streaming_tool_call_between_tags", _TRIGGER,
                (Call("final_answer", {"trigger": True}),)),
        _hermes("test_hermes_parser_non_streaming_tool_call_until_eos",
                '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}',
                (Call("final_answer", {"trigger": True}),)),
        _hermes("test_hermes_parser_non_streaming_tool_call_invalid_json",
                '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}', (),
                '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}'),
        _hermes("test_hermes_parser_non_streaming_serialized_arguments",
                '<tool_call>\n{"name": "get_db_config", "arguments": "{\\"param\\": \\"max_connections\\"}"}\n'
                "</tool_call>",
                (Call("get_db_config", {"param": "max_connections"}),)),
        _hermes("test_hermes_parser_non_streaming_bare_string_arguments",
                '<tool_call>\n{"name": "do_thing", "arguments": "hello"}\n</tool_call>',
                (Call("do_thing", '"hello"'),)),
        _hermes("test_hermes_streaming_content_and_tool_call_in_single_chunk",
                'Hi!<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>',
                (Call("f", {"x": 1}),), "Hi!"),
    ]


def _qwen3(name: str, text: str, thinking: bool, calls: tuple[Call, ...], content: str | None = None,
           reasoning: str | None = None, chunks: tuple[str, ...] | None = None) -> PeerCase:
    return PeerCase(f"{QWEN3}::{name}", "ollama", "chatml", text, thinking=thinking, calls=calls, content=content,
                    reasoning=reasoning, chunks=chunks)


def _ollama() -> list[PeerCase]:
    truncated = '{"name":"write_file","arguments":{"path":"/tmp/test.py","content":"print(\'hel'
    streamed = '{"name":"write_file","arguments":{"content":"...'
    incomplete = '{"name":"write_file","arguments":{"content":"incomplete...'
    return [
        _qwen3("TestQwen3ParserToolCall", _SF, False, (_SF_CALL,), ""),
        _qwen3("TestQwen3ParserThinkingWithToolCallBeforeThinkingClose", "Let me think" + _SF, True, (_SF_CALL,),
               "", "Let me think"),
        _qwen3("TestQwen3ParserThinkingWithSplitToolOpenTag",
               'Let me think<tool_call>{"name":"get_weather","arguments":{"location":"SF"}}</tool_call>', True,
               (Call("get_weather", {"location": "SF"}),), "", "Let me think",
               ("Let me think<tool_ca", 'll>{"name":"get_weather","arguments":{"location":"SF"}}</tool_call>')),
        _qwen3("TestQwen3ParserToolCallIndexing",
               '<tool_call>{"name":"first","arguments":{"a":"1"}}</tool_call>\n'
               '<tool_call>{"name":"second","arguments":{"b":"2"}}</tool_call>\n'
               '<tool_call>{"name":"third","arguments":{"c":"3"}}</tool_call>', False, _INDEXED),
        _qwen3("TestQwen3ParserToolCallIndexingStreaming",
               '<tool_call>{"name":"first","arguments":{"a":"1"}}</tool_call><tool_call>{"name":"second",'
               '"arguments":{"b":"2"}}</tool_call><tool_call>{"name":"third","arguments":{"c":"3"}}</tool_call>',
               False, _INDEXED,
               chunks=('<tool_call>{"name":"first","arguments":{"a":"1"}}</tool_call><tool_call>{"name":"second",'
                       '"arguments":{"b":"2"}',
                       '}</tool_call><tool_call>{"name":"third","arguments":{"c":"3"}}</tool_call>')),
        _qwen3("TestQwen3ParserTruncatedToolCallNoCloseTag", "<tool_call>" + truncated, False, (), truncated),
        _qwen3("TestQwen3ParserTruncatedToolCallNoCloseTagStreaming", "Here is the code:\n<tool_call>" + streamed,
               False, (), "Here is the code:" + streamed, chunks=("Here is the code:\n<tool_call>", streamed)),
        _qwen3("TestQwen3ParserInvalidToolCallJSON", "<tool_call>" + incomplete + "</tool_call>", False, (),
               incomplete),
        _qwen3("TestQwen3ParserThinkingWithTruncatedToolCall",
               'Let me help</think>\n<tool_call>{"name":"write_file","arguments":{"content":"truncated', True, (),
               '{"name":"write_file","arguments":{"content":"truncated', "Let me help"),
        _qwen3("TestQwen3ParserValidToolCallAfterInvalid",
               '<tool_call>invalid json</tool_call>\n<tool_call>{"name":"get_weather","arguments":{"location":"SF"}}'
               "</tool_call>", False, (Call("get_weather", {"location": "SF"}),), "invalid json"),
    ]


CASES: list[PeerCase] = _vllm() + _ollama()
