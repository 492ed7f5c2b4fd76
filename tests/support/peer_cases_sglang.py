"""SGLang's Qwen3-Coder detector tests and its gpt-oss detector tests, as data.

SGLang's detectors read tool calls only, so the Qwen3 outputs are read with thinking off. The
gpt-oss completions start after the generation prompt's ``<|start|>assistant``, as SGLang's do.
"""

from __future__ import annotations

from .peer_cases import Call, PeerCase, tool, tools

_CASES = "sgl-project/sglang test/registered/function_call/test_qwen3_coder_detector/test_cases.py"
_SRT = "sgl-project/sglang test/srt/function_call/test_qwen3_coder_detector.py"
_PARSER = "sgl-project/sglang test/registered/function_call/test_function_call_parser.py::TestQwen3CoderDetector"
_GPT_OSS = "sgl-project/sglang test/registered/function_call/test_gpt_oss_detector.py"

FIXTURE_TOOLS = tools(
    tool(
        "get_current_weather",
        {
            "location": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer"},
        },
        required=["location"],
    ),
    tool("sql_interpreter", {"query": {"type": "string"}, "dry_run": {"type": "boolean"}}),
    tool(
        "TodoWrite",
        {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"content": {"type": "string"}, "status": {"type": "string"}},
                    "required": ["content", "status"],
                },
            }
        },
    ),
)
WEATHER_SRT = tools(
    tool("get_weather", {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}})
)
PARSER_TOOLS = (
    {
        "type": "function",
        "function": {
            "name": "get_current_weather",
            "parameters": {
                "properties": {
                    "city": {"type": "string"},
                    "state": {"type": "string"},
                    "unit": {"type": "string", "enum": ["fahrenheit", "celsius"]},
                },
                "required": ["city", "state"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "calculate_area",
            "parameters": {
                "properties": {
                    "shape": {"type": "string"},
                    "dimensions": {"type": "object"},
                    "precision": {"type": "integer"},
                }
            },
        },
    },
)
READ_FILE = tools(tool("read_file", {"files": {"type": "array"}}))


def _case(name: str, text: str, calls: tuple[Call, ...], content: str) -> PeerCase:
    return PeerCase(f"{_CASES}::{name}", "sglang", "chatml", text, FIXTURE_TOOLS, calls=calls, content=content)


BOSTON = (
    "<function=get_current_weather>\n<parameter=location>Boston</parameter>\n<parameter=unit>celsius</parameter>\n"
    "<parameter=days>3</parameter>\n</function>"
)
BOSTON_CALL = Call("get_current_weather", {"location": "Boston", "unit": "celsius", "days": 3})


def _registered() -> list[PeerCase]:
    return [
        _case("test_plain_text", "This is plain text test", (), "This is plain text test"),
        _case("test_single_tool_call", BOSTON, (BOSTON_CALL,), ""),
        _case(
            "test_single_tool_call_with_text",
            "Text prefix + tool call test\n\n" + BOSTON,
            (BOSTON_CALL,),
            "Text prefix + tool call test\n    \n",
        ),
        _case(
            "test_double_tool_call",
            "Text prefix + double tool call test\n\n<function=get_current_weather>\n<p"
            "arameter=location>New York</parameter>\n</function>\n"
            "<function=sql_interpreter>\n<parameter=query>SELECT * FROM users</paramete"
            "r>\n<parameter=dry_run>True</parameter>\n</function>\n",
            (
                Call("get_current_weather", {"location": "New York"}),
                Call("sql_interpreter", {"query": "SELECT * FROM users", "dry_run": True}),
            ),
            "Text prefix + double tool call test\n\n",
        ),
        _case(
            "test_random_fragmentation_stress_test",
            "Text prefix + random fragmentation stress test\n\n<function=get_current_weather>\n"
            "<parameter=location>San Francisco</parameter>\n</function>",
            (Call("get_current_weather", {"location": "San Francisco"}),),
            "Text prefix + random fragmentation stress test\n\n",
        ),
        _case(
            "test_implicit_parameter_close",
            "Text prefix + implicit parameter close test\n\n<function=get_current_weather>\n<parameter=location>Paris\n"
            "<parameter=unit>celsius\n<parameter=days>3\n</function>",
            (Call("get_current_weather", {"location": "Paris", "unit": "celsius", "days": 3}),),
            "Text prefix + implicit parameter close test\n\n",
        ),
        _case(
            "test_complex_schema_toolcall",
            "Text prefix + complex schema tool call test\n\n<function=TodoWrite>\n<parameter=todos>\n[\n"
            ' {"content": "Buy a new car", "status": \'pending\'},\n {"content":'
            ' "Buy a new house", "status": "completed"}\n]\n'
            "</parameter>\n</function>\n\n",
            (
                Call(
                    "TodoWrite",
                    {
                        "todos": [
                            {"content": "Buy a new car", "status": "pending"},
                            {"content": "Buy a new house", "status": "completed"},
                        ]
                    },
                ),
            ),
            "Text prefix + complex schema tool call test\n\n",
        ),
    ]


def _srt() -> list[PeerCase]:
    return [
        PeerCase(
            f"{_SRT}::test_full_parse",
            "sglang",
            "chatml",
            "<tool_call><function=get_weather><parameter=city>Shanghai</parameter"
            "><parameter=unit>celsius</parameter></tool_call>",
            WEATHER_SRT,
            calls=(Call("get_weather", {"city": "Shanghai", "unit": "celsius"}),),
        ),
        PeerCase(
            f"{_SRT}::test_streaming_parse",
            "sglang",
            "chatml",
            "Thought: calling weather. <tool_call><function=get_weather><par"
            "ameter=city>Shanghai</parameter></tool_call>",
            WEATHER_SRT,
            calls=(Call("get_weather", {"city": "Shanghai"}),),
            content="Thought: calling weather. ",
            chunks=(
                "Thought: calling weather. ",
                "<tool_call>",
                "<function=get_weather>",
                "<parameter=city>Shanghai</parameter>",
                "</tool_call>",
            ),
        ),
    ]


def _wrapped(name: str, *params: tuple[str, str]) -> str:
    body = "".join(f"<parameter={p}>\n{v}\n</parameter>\n" for p, v in params)
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


DALLAS = _wrapped("get_current_weather", ("city", "Dallas"), ("state", "TX"), ("unit", "fahrenheit"))
DALLAS_ARGS = {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}
INDENTED = (
    "<tool_call>\n        <function=get_current_weather>\n        <parame"
    "ter=city>\n        Dallas\n        </parameter>\n"
    "        <parameter=state>\n        TX\n        </parameter>\n        </function>\n        </tool_call>\n"
    "        Some text in between.\n        <tool_call>\n        <function=calculate_area>\n        <parameter=shape>\n"
    '        circle\n        </parameter>\n        <parameter=dimensions'
    '>\n        {"radius": 5}\n        </parameter>\n'
    "        </function>\n        </tool_call>"
)
SIMPLE_CHUNKS = (
    "Sure! ",
    "Let me check ",
    "the weather.",
    "<tool_call>",
    "\n<function=get_current_weather>",
    "\n<parameter=city>",
    "\nDallas",
    "\n</parameter>",
    "\n<parameter=state>",
    "\nTX",
    "\n</parameter>",
    "\n</function>",
    "\n</tool_call>",
)
INCOMPLETE_CHUNKS = (
    "<tool_call>",
    "\n<function=get_current_weather>",
    "\n<parameter=city>",
    "\nDallas",
    "\n</parameter>",
    "\n<parameter=state>",
    "\nTX",
    "\n</parameter>\n</function>\n</tool_call>",
)
INCREMENTAL_CHUNKS = (
    "I'll check the weather.",
    "<tool_call>",
    "\n<function=get_current_weather>\n",
    "<parameter=city>\n",
    "Dallas\n",
    "</parameter>\n",
    "<parameter=state>\n",
    "TX\n",
    "</parameter>\n",
    "</function>\n",
    "</tool_call>",
)


def _parser() -> list[PeerCase]:
    p = _PARSER
    dallas_tx = {"city": "Dallas", "state": "TX"}
    return [
        PeerCase(
            f"{p}::test_detect_and_parse_no_tools",
            "sglang",
            "chatml",
            "This is a test response without any tool calls",
            calls=(),
            content="This is a test response without any tool calls",
        ),
        PeerCase(
            f"{p}::test_detect_and_parse_single_tool",
            "sglang",
            "chatml",
            DALLAS,
            PARSER_TOOLS,
            calls=(Call("get_current_weather", DALLAS_ARGS),),
            content="",
        ),
        PeerCase(
            f"{p}::test_detect_and_parse_with_content",
            "sglang",
            "chatml",
            "Sure! Let me check the weather for you." + DALLAS,
            PARSER_TOOLS,
            calls=(Call("get_current_weather"),),
            content="Sure! Let me check the weather for you.",
        ),
        PeerCase(
            f"{p}::test_detect_and_parse_multiline_param",
            "sglang",
            "chatml",
            _wrapped(
                "calculate_area",
                ("shape", "rectangle"),
                ("dimensions", '{"width": 10,\n "height": 20}'),
                ("precision", "2"),
            ),
            PARSER_TOOLS,
            calls=(
                Call(
                    "calculate_area", {"shape": "rectangle", "dimensions": {"width": 10, "height": 20}, "precision": 2}
                ),
            ),
        ),
        PeerCase(
            f"{p}::test_detect_and_parse_parallel_tools",
            "sglang",
            "chatml",
            DALLAS
            + "\n"
            + _wrapped("get_current_weather", ("city", "Orlando"), ("state", "FL"), ("unit", "fahrenheit")),
            PARSER_TOOLS,
            calls=(
                Call("get_current_weather", DALLAS_ARGS),
                Call("get_current_weather", {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}),
            ),
            content="\n",
        ),
        PeerCase(
            f"{p}::test_parse_streaming_simple",
            "sglang",
            "chatml",
            "".join(SIMPLE_CHUNKS),
            PARSER_TOOLS,
            calls=(Call("get_current_weather", dallas_tx),),
            content="Sure! Let me check the weather.",
            chunks=SIMPLE_CHUNKS,
        ),
        PeerCase(
            f"{p}::test_parse_streaming_incomplete",
            "sglang",
            "chatml",
            "".join(INCOMPLETE_CHUNKS),
            PARSER_TOOLS,
            calls=(Call("get_current_weather", dallas_tx),),
            chunks=INCOMPLETE_CHUNKS,
        ),
        PeerCase(
            f"{p}::test_edge_case_no_parameters",
            "sglang",
            "chatml",
            "<tool_call>\n<function=get_current_weather>\n</function>\n</tool_call>",
            PARSER_TOOLS,
            calls=(Call("get_current_weather", {}),),
        ),
        PeerCase(
            f"{p}::test_edge_case_special_chars_in_value",
            "sglang",
            "chatml",
            _wrapped("get_current_weather", ("city", "Dallas->TX")),
            PARSER_TOOLS,
            calls=(Call("get_current_weather", {"city": "Dallas->TX"}),),
        ),
        PeerCase(
            f"{p}::test_extract_tool_calls_type_conversion",
            "sglang",
            "chatml",
            _wrapped(
                "test_types",
                ("int_param", "42"),
                ("float_param", "3.14"),
                ("bool_param", "true"),
                ("str_param", "hello world"),
                ("obj_param", '{"key": "value"}'),
            ),
            tools(
                tool(
                    "test_types",
                    {
                        "int_param": {"type": "integer"},
                        "float_param": {"type": "float"},
                        "bool_param": {"type": "boolean"},
                        "str_param": {"type": "string"},
                        "obj_param": {"type": "object"},
                    },
                )
            ),
            calls=(
                Call(
                    "test_types",
                    {
                        "int_param": 42,
                        "float_param": 3.14,
                        "bool_param": True,
                        "str_param": "hello world",
                        "obj_param": {"key": "value"},
                    },
                ),
            ),
        ),
        PeerCase(
            f"{p}::test_parse_streaming_incremental",
            "sglang",
            "chatml",
            "".join(INCREMENTAL_CHUNKS),
            PARSER_TOOLS,
            calls=(Call("get_current_weather", dallas_tx),),
            content_has=("I'll check the weather.",),
            chunks=INCREMENTAL_CHUNKS,
        ),
        PeerCase(
            f"{p}::test_parse_streaming_multiple_tools",
            "sglang",
            "chatml",
            INDENTED,
            PARSER_TOOLS,
            calls=(
                Call("get_current_weather", dallas_tx),
                Call("calculate_area", {"shape": "circle", "dimensions": {"radius": 5}}),
            ),
            content_has=("Some text in between.",),
            chunks=tuple(INDENTED[i : i + 20] for i in range(0, len(INDENTED), 20)),
        ),
    ]


_TRUNCATE = (
    "<|channel|>analysis<|message|>Reasoning...<|end|>"
    '<|start|>assistant<|channel|>commentary to=functions.read_file <|cons'
    'train|>json<|message|>{\n  "files": []\n}<|call|>'
    "<|start|>assistant<|channel|>final<|message|>This text should be truncated."
)
_FAST = "<|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{}<|call|>"


def _gpt_oss() -> list[PeerCase]:
    g = _GPT_OSS
    return [
        PeerCase(
            f"{g}::test_detect_and_parse_truncate_normal",
            "sglang",
            "harmony",
            _TRUNCATE,
            READ_FILE,
            calls=(Call("read_file", {"files": []}),),
            content="",
        ),
        PeerCase(
            f"{g}::test_parse_streaming_fast_path_fix",
            "sglang",
            "harmony",
            _FAST + "This is normal text that should be ignored.",
            READ_FILE,
            calls=(Call("read_file", {}),),
            content="",
            chunks=(_FAST, "This is normal text that should be ignored."),
        ),
    ]


CASES: list[PeerCase] = _registered() + _srt() + _parser() + _gpt_oss()
