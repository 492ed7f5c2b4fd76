"""vLLM's Qwen3-Coder parser tests and the tests its Qwen3 XML and Coder parsers share, as data (part one).

vLLM's Qwen3 parsers read tool calls only (no reasoning), so the outputs are read with thinking off
(the prompt did not open ``<think>``). The rest of vLLM's cases: :mod:`.peer_cases_vllm_more`.
"""

from __future__ import annotations

from .peer_cases import Call, PeerCase, tool, tools

_CODER = "vllm-project/vllm tests/tool_parsers/test_qwen3coder_tool_parser.py"
SHARED = _SHARED = "vllm-project/vllm tests/tool_parsers/test_qwen3_xml_coder_shared.py"

WEATHER = tool(
    "get_current_weather",
    {
        "city": {"type": "string", "description": "The city name"},
        "state": {"type": "string", "description": "The state code"},
        "unit": {"type": "string", "enum": ["fahrenheit", "celsius"]},
    },
    required=["city", "state"],
)
AREA = tool(
    "calculate_area", {"shape": {"type": "string"}, "dimensions": {"type": "object"}, "precision": {"type": "integer"}}
)
SAMPLE = tools(WEATHER, AREA)
TYPES = tools(
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
)
WRITE_FILE = tools(tool("write_file", {"path": {"type": "string"}, "content": {"type": "string"}}))
GET_WEATHER = tools(tool("get_weather", {"city": {"type": "string"}}))


def xml_call(name: str, *params: tuple[str, str], inline: bool = False) -> str:
    sep = "" if inline else "\n"
    body = "".join(f"<parameter={p}>{sep}{v}{sep}</parameter>\n" for p, v in params)
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


DALLAS = xml_call("get_current_weather", ("city", "Dallas"), ("state", "TX"), ("unit", "fahrenheit"))
DALLAS_ARGS = {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}
ORLANDO = xml_call("get_current_weather", ("city", "Orlando"), ("state", "FL"), ("unit", "fahrenheit"))
RECT = xml_call(
    "calculate_area", ("shape", "rectangle"), ("dimensions", '{"width": 10, \n "height": 20}'), ("precision", "2")
)
RECT_ARGS = {"shape": "rectangle", "dimensions": {"width": 10, "height": 20}, "precision": 2}
CIRCLE = xml_call("calculate_area", ("shape", "circle"), ("dimensions", '{"radius": 15.5}'), ("precision", "3"))
CIRCLE_ARGS = {"shape": "circle", "dimensions": {"radius": 15.5}, "precision": 3}
MISSING_CLOSE = (
    "Let me check the weather for you:\n<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n"
    "<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>"
)
TYPED = xml_call(
    "test_types",
    ("int_param", "42"),
    ("float_param", "3.14"),
    ("bool_param", "true"),
    ("str_param", "hello world"),
    ("obj_param", '{"key": "value"}'),
)
TYPED_ARGS = {
    "int_param": 42,
    "float_param": 3.14,
    "bool_param": True,
    "str_param": "hello world",
    "obj_param": {"key": "value"},
}


def _extract(source: str, variant: str, text: str, calls: tuple[Call, ...], content: str) -> PeerCase:
    return PeerCase(
        f"{source}::test_extract_tool_calls[{variant}]", "vllm", "chatml", text, SAMPLE, calls=calls, content=content
    )


def _extract_cases(source: str) -> list[PeerCase]:
    return [
        PeerCase(
            f"{source}::test_extract_tool_calls_no_tools",
            "vllm",
            "chatml",
            "This is a test response without any tool calls",
            calls=(),
            content="This is a test response without any tool calls",
        ),
        _extract(source, "single_tool", DALLAS, (Call("get_current_weather", DALLAS_ARGS),), ""),
        _extract(
            source,
            "single_tool_with_content",
            "Sure! Let me check the weather for you." + DALLAS,
            (Call("get_current_weather", DALLAS_ARGS),),
            "Sure! Let me check the weather for you.",
        ),
        _extract(source, "single_tool_multiline_param", RECT, (Call("calculate_area", RECT_ARGS),), ""),
        _extract(
            source,
            "parallel_tools",
            DALLAS + "\n" + ORLANDO,
            (
                Call("get_current_weather", DALLAS_ARGS),
                Call("get_current_weather", {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}),
            ),
            "",
        ),
        _extract(
            source,
            "tool_with_typed_params",
            "Let me calculate that area for you." + CIRCLE,
            (Call("calculate_area", CIRCLE_ARGS),),
            "Let me calculate that area for you.",
        ),
        PeerCase(
            f"{source}::test_extract_tool_calls_fallback_no_tags",
            "vllm",
            "chatml",
            "<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>"
            "\n<parameter=state>\nTX\n</parameter>\n</function>",
            SAMPLE,
            calls=(Call("get_current_weather"),),
        ),
        PeerCase(
            f"{source}::test_extract_tool_calls_type_conversion",
            "vllm",
            "chatml",
            TYPED,
            TYPES,
            calls=(Call("test_types", TYPED_ARGS),),
        ),
        PeerCase(
            f"{source}::test_extract_tool_calls_missing_closing_parameter_tag",
            "vllm",
            "chatml",
            MISSING_CLOSE,
            SAMPLE,
            calls=(Call("get_current_weather", DALLAS_ARGS),),
            content_has=("Let me check the weather for you:",),
        ),
        PeerCase(
            f"{source}::test_extract_tool_calls_streaming_incremental",
            "vllm",
            "chatml",
            "I'll check the weather." + xml_call("get_current_weather", ("city", "Dallas"), ("state", "TX")),
            SAMPLE,
            calls=(Call("get_current_weather", {"city": "Dallas", "state": "TX"}),),
            content_has=("I'll check the weather.",),
        ),
        PeerCase(
            f"{source}::test_none_tool_calls_filtered",
            "vllm",
            "chatml",
            "<tool_call>\n<function=bad_func_no_gt\n</function>\n</tool_call>"
            "\n<tool_call>\n<function=get_current_weather>\n"
            "<parameter=city>Dallas</parameter>\n<parameter=state>TX</parameter>\n</function>\n</tool_call>",
            SAMPLE,
            calls=(Call("get_current_weather", {"city": "Dallas", "state": "TX"}),),
        ),
        PeerCase(
            f"{source}::test_streaming_multi_param_single_chunk",
            "vllm",
            "chatml",
            DALLAS,
            SAMPLE,
            calls=(Call("get_current_weather", DALLAS_ARGS),),
            chunks=(
                "<tool_call>",
                "\n<function=get_current_weather>",
                "\n",
                "<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</para"
                "meter>\n<parameter=unit>\nfahrenheit\n</parameter>",
                "\n</function>",
                "\n</tool_call>",
            ),
        ),
        PeerCase(
            f"{source}::test_no_double_serialization_string_args",
            "vllm",
            "chatml",
            "<tool_call>\n<function=greet>\n<parameter=message>hello world</parameter>\n</function>\n</tool_call>",
            tools(tool("greet", {"message": {"type": "string"}})),
            calls=(Call("greet", {"message": "hello world"}),),
        ),
    ]


def _coder_only() -> list[PeerCase]:
    anyof = tools(
        tool(
            "test_anyof",
            {
                "anyof_int": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 5},
                "anyof_str": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "anyof_array": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
                "anyof_obj": {"anyOf": [{"type": "object"}, {"type": "null"}]},
                "type_as_array": {"type": ["integer", "null"]},
                "multi_non_null": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
            },
        )
    )
    search = tools(
        tool(
            "search_web",
            {
                "query": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "count": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 5},
                "verbose": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
            },
        )
    )
    return [
        PeerCase(
            f"{_CODER}::test_extract_tool_calls_anyof_type_conversion",
            "vllm",
            "chatml",
            xml_call(
                "test_anyof",
                ("anyof_int", "5"),
                ("anyof_str", "hello"),
                ("anyof_array", '["a", "b", "c"]'),
                ("anyof_obj", '{"key": "value"}'),
                ("type_as_array", "42"),
                ("multi_non_null", "some text"),
            ),
            anyof,
            calls=(
                Call(
                    "test_anyof",
                    {
                        "anyof_int": 5,
                        "anyof_str": "hello",
                        "anyof_array": ["a", "b", "c"],
                        "anyof_obj": {"key": "value"},
                        "type_as_array": 42,
                        "multi_non_null": "some text",
                    },
                ),
            ),
        ),
        PeerCase(
            f"{_CODER}::test_extract_tool_calls_anyof_type_conversion_streaming",
            "vllm",
            "chatml",
            xml_call("search_web", ("query", "vllm tool parser"), ("count", "10"), ("verbose", "true")),
            search,
            calls=(Call("search_web", {"query": "vllm tool parser", "count": 10, "verbose": True}),),
        ),
        PeerCase(
            f"{_CODER}::test_extract_tool_calls_streaming[parallel_tools]",
            "vllm",
            "chatml",
            DALLAS + "\n" + ORLANDO.replace("fahrenheit", "celsius"),
            SAMPLE,
            calls=(
                Call("get_current_weather", DALLAS_ARGS),
                Call("get_current_weather", {"city": "Orlando", "state": "FL", "unit": "celsius"}),
            ),
            content="",
        ),
        PeerCase(
            f"{_CODER}::test_extract_tool_calls_streaming_missing_opening_tag",
            "vllm",
            "chatml",
            "I'll check the weather for you.\n\n<function=get_current_weathe"
            "r>\n<parameter=city>\nDallas\n</parameter>\n"
            "<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenhe"
            "it\n</parameter>\n</function>\n</tool_call>",
            SAMPLE,
            calls=(Call("get_current_weather", DALLAS_ARGS),),
            content_has=("I'll check the weather for you.",),
        ),
        PeerCase(
            f"{_CODER}::test_anyof_parameter_not_double_encoded",
            "vllm",
            "chatml",
            '<tool_call>\n<function=update_record>\n<parameter=data>{"key": "value",'
            ' "count": 42}</parameter>\n</function>\n</tool_call>',
            tools(tool("update_record", {"data": {"anyOf": [{"type": "object"}, {"type": "null"}]}})),
            calls=(Call("update_record", {"data": {"key": "value", "count": 42}}),),
        ),
    ]


CASES: list[PeerCase] = _extract_cases(_CODER) + _coder_only() + _extract_cases(_SHARED)
