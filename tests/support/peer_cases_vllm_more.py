"""vLLM's tests shared by its Qwen3 XML and Coder parsers (beyond the common ones), its Qwen3.6 bug
tests, its Qwen3-XML configuration and its gpt-oss (openai) tool parser tests, as data.

The Qwen3 outputs are read with thinking off (vLLM's parsers read tool calls only). Its gpt-oss test
renders a conversation with openai-harmony; the completion is the assistant messages after the
generation prompt's ``<|start|>assistant``.
"""

from __future__ import annotations

from .peer_cases import ANY, Call, PeerCase, tool, tools
from .peer_cases_vllm import GET_WEATHER, SHARED, TYPES, WRITE_FILE, xml_call

_SHARED = SHARED
_BUGS = "vllm-project/vllm tests/tool_parsers/test_qwen36_bugs.py"
_XML = "vllm-project/vllm tests/tool_parsers/test_qwen3xml_tool_parser.py"
_OPENAI = "vllm-project/vllm tests/tool_parsers/test_openai_tool_parser.py"
_call = xml_call


def _nested(content: str, path: str) -> str:
    return (
        "<tool_call>\n<function=write_file>\n"
        f"<parameter=path>\n{path}\n</parameter>\n"
        f"<parameter=content>\n{content}</parameter>\n</function>\n</tool_call>"
    )


XML_TAGS = (
    'char_deltas = [\n    "<tool_call>\\n",\n    "<parameter=query>\\n",\n'
    '    "\\n</parameter>\\n",\n    "</function>\\n",\n]\n'
)
PARAM_LINES = (
    'TOOL_CALL_TEMPLATE = """\n</parameter>\n<parameter=new_string>\n#!/usr/bin/env python3\n</parameter>\n"""\n'
)
REAL_NAME = 'doc = """\n<parameter=path>\nliteral/value\n</parameter>\n"""\n'
FULL_NESTED = (
    'doc = """\n<tool_call>\n<function=write_file>\n<parameter=path>\nliteral/value.txt\n</parameter>\n'
    '<parameter=content>\nhello\n</parameter>\n</function>\n</tool_call>\n"""\n'
)
OUT_OF_SCHEMA = (
    'template = """\n<tool_call>\n<function=foo>\n<parameter=bar>baz</parameter>\n</function>\n</tool_call>\n"""\n'
)
TWO_IN_ONE = _call("get_weather", ("city", "Paris")) + "\n" + _call("get_weather", ("city", "London"))


def _shared_only() -> list[PeerCase]:
    s = _SHARED
    return [
        PeerCase(
            f"{s}::test_extract_tool_calls_complex_type_with_single_quote",
            "vllm",
            "chatml",
            _call("test_types", ("obj_param", "{'key': 'value'}")),
            TYPES,
            calls=(Call("test_types", {"obj_param": {"key": "value"}}),),
        ),
        PeerCase(
            f"{s}::test_extract_tool_calls_streaming_speculative_decode_loss",
            "vllm",
            "chatml",
            "<tool_call>\n<function=test>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
            calls=(Call("test", {"city": "Paris"}),),
            chunks=(
                "<tool_call>\n<function=test>\n",
                "<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
            ),
            adapted="the request offered no tools (vLLM's test asserts only that 'Paris' is in the arguments)",
        ),
        PeerCase(
            f"{s}::test_string_null_value_preserved",
            "vllm",
            "chatml",
            "<tool_call>\n<function=search>\n<parameter=query>null</parameter>\n</function>\n</tool_call>",
            tools(tool("search", {"query": {"type": "string"}})),
            calls=(Call("search", {"query": "null"}),),
        ),
        PeerCase(
            f"{s}::test_anyof_string_null_keeps_value_as_string",
            "vllm",
            "chatml",
            "<tool_call>\n<function=set_code>\n<parameter=code>42</parameter>\n</function>\n</tool_call>",
            tools(tool("set_code", {"code": {"anyOf": [{"type": "string"}, {"type": "null"}]}})),
            calls=(Call("set_code", {"code": "42"}),),
        ),
        PeerCase(
            f"{s}::test_anyof_integer_null_parses_as_int",
            "vllm",
            "chatml",
            "<tool_call>\n<function=set_count>\n<parameter=count>42</parameter>\n</function>\n</tool_call>",
            tools(tool("set_count", {"count": {"anyOf": [{"type": "integer"}, {"type": "null"}]}})),
            calls=(Call("set_count", {"count": 42}),),
        ),
        PeerCase(
            f"{s}::test_double_encoded_object_param_nonstreaming",
            "vllm",
            "chatml",
            "<tool_call>\n<function=process>\n<parameter=name>\nhello\n</parameter>\n"
            "<parameter=data>\n\"{'key': 'value', 'n': 1}\"\n</parameter>\n</function>\n</tool_call>\n",
            tools(tool("process", {"name": {"type": "string"}, "data": {"type": "object"}})),
            calls=(Call("process", {"name": "hello", "data": {"key": "value", "n": 1}}),),
        ),
        PeerCase(
            f"{s}::test_content_with_xml_structural_tags_nonstreaming",
            "vllm",
            "chatml",
            _nested(XML_TAGS, "test.py") + "\n",
            WRITE_FILE,
            calls=(Call("write_file", {"path": "test.py", "content": XML_TAGS.rstrip("\n")}),),
        ),
        PeerCase(
            f"{s}::test_content_with_param_like_lines_nonstreaming",
            "vllm",
            "chatml",
            _nested(PARAM_LINES, "test_template.py") + "\n",
            WRITE_FILE,
            calls=(Call("write_file", {"path": "test_template.py", "content": PARAM_LINES.rstrip("\n")}),),
        ),
        PeerCase(
            f"{s}::test_content_with_real_param_name_literal_nonstreaming",
            "vllm",
            "chatml",
            _nested(REAL_NAME, "fixture.py"),
            WRITE_FILE,
            calls=(Call("write_file", {"path": "fixture.py", "content": REAL_NAME.rstrip("\n")}),),
        ),
        PeerCase(
            f"{s}::test_content_with_full_nested_tool_call_nonstreaming",
            "vllm",
            "chatml",
            _nested(FULL_NESTED, "fixture.py"),
            WRITE_FILE,
            calls=(Call("write_file", {"path": "fixture.py", "content": FULL_NESTED.rstrip("\n")}),),
        ),
        PeerCase(
            f"{s}::test_two_tools_second_with_out_of_schema_nested_literal_nonstreaming",
            "vllm",
            "chatml",
            "<tool_call>\n<function=foo>\n<parameter=bar>baz</parameter>\n</function>\n</tool_call>\n\n"
            + _nested(OUT_OF_SCHEMA, "fixture.py"),
            WRITE_FILE,
            calls=(
                Call("foo", {"bar": "baz"}),
                Call("write_file", {"path": "fixture.py", "content": OUT_OF_SCHEMA.rstrip("\n")}),
            ),
        ),
        PeerCase(
            f"{s}::test_array_with_json_bool",
            "vllm",
            "chatml",
            '<tool_call>\n<function=pick>\n<parameter=items>\n["a", "b", 1, t'
            'rue]\n</parameter>\n</function>\n</tool_call>',
            tools(tool("pick", {"items": {"type": "array"}})),
            calls=(Call("pick", {"items": ["a", "b", 1, True]}),),
        ),
        PeerCase(
            f"{s}::test_two_tool_calls_in_one_streaming_chunk",
            "vllm",
            "chatml",
            TWO_IN_ONE,
            GET_WEATHER,
            calls=(Call("get_weather", {"city": "Paris"}), Call("get_weather", {"city": "London"})),
            chunks=(TWO_IN_ONE,),
        ),
        PeerCase(
            f"{s}::test_python_none_value_for_nullable_int",
            "vllm",
            "chatml",
            "<tool_call>\n<function=set_count>\n<parameter=count>None</parameter>\n</function>\n</tool_call>",
            tools(tool("set_count", {"count": {"anyOf": [{"type": "integer"}, {"type": "null"}]}})),
            calls=(Call("set_count", {"count": None}),),
        ),
        PeerCase(
            f"{s}::test_streaming_two_tool_calls_plus_trailing_text_one_delta",
            "vllm",
            "chatml",
            TWO_IN_ONE + "\nAll done!",
            GET_WEATHER,
            calls=(Call("get_weather", ANY), Call("get_weather", ANY)),
            content_has=("All done!",),
            chunks=(TWO_IN_ONE + "\nAll done!",),
        ),
        PeerCase(
            f"{s}::test_streaming_trailing_text_with_final_close_in_same_delta",
            "vllm",
            "chatml",
            "<tool_call>\n<function=get_weather>\n<parameter=city>Paris</paramete"
            "r>\n</function>\n</tool_call>\nI hope this helps!",
            GET_WEATHER,
            calls=(Call("get_weather", ANY),),
            content_has=("I hope this helps!",),
            chunks=(
                "<tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>",
                "\n</tool_call>\nI hope this helps!",
            ),
        ),
        PeerCase(
            f"{s}::test_jinja_template_phantom_tool_call_is_rejected_nonstreaming",
            "vllm",
            "chatml",
            "<tool_call>\n<function={{ tc.name }}>\n<parameter={{ k }}>\n{{ v }"
            "}\n</parameter>\n</function>\n</tool_call>\n\n"
            + _call("write_file", ("path", "out.txt"), ("content", "hello")),
            WRITE_FILE,
            calls=(Call("write_file", {"path": "out.txt", "content": "hello"}),),
        ),
        PeerCase(
            f"{s}::test_inline_empty_tool_call_preserves_content_before_real_call",
            "vllm",
            "chatml",
            "I'll show: <tool_call>example</tool_call>. Now real:\n" + _call("log", ("msg", "hi")),
            tools(tool("log", {"msg": {"type": "string"}})),
            calls=(Call("log", ANY),),
            content_has=("I'll show:", "Now real:"),
        ),
    ] + [
        PeerCase(
            f"{s}::test_anyof_string_null_with_null_literal_returns_none[{literal}]",
            "vllm",
            "chatml",
            f"<tool_call>\n<function=set_value>\n<parameter=optional>{literal}</parameter>\n</function>\n</tool_call>",
            tools(tool("set_value", {"optional": {"anyOf": [{"type": "string"}, {"type": "null"}]}})),
            calls=(Call("set_value", {"optional": None}),),
        )
        for literal in ("null", "None")
    ]


def _xml_config() -> list[PeerCase]:
    x = f"{_XML}::TestQwen3xmlToolParser"
    data = tools(tool("test_function"))
    return [
        PeerCase(
            f"{x}[no_tool_calls_output]",
            "vllm",
            "chatml",
            "This is a regular response without any tool calls.",
            calls=(),
            content="This is a regular response without any tool calls.",
        ),
        PeerCase(
            f"{x}[single_tool_call_output]",
            "vllm",
            "chatml",
            "<tool_call>\n<function=get_weather>\n<parameter=city>Tokyo</parameter>\n</function>\n</tool_call>",
            calls=(Call("get_weather", {"city": "Tokyo"}),),
        ),
        PeerCase(
            f"{x}[parallel_tool_calls_output]",
            "vllm",
            "chatml",
            "<tool_call>\n<function=get_weather>\n<parameter=city>Tokyo</parameter>\n</function>\n</tool_call>"
            "<tool_call>\n<function=get_time>\n<parameter=timezone>Asia/Tokyo</parameter>\n</function>\n</tool_call>",
            calls=(Call("get_weather", ANY), Call("get_time", ANY)),
        ),
        PeerCase(
            f"{x}[empty_arguments_output]",
            "vllm",
            "chatml",
            "<tool_call>\n<function=refresh>\n</function>\n</tool_call>",
            calls=(Call("refresh", {}),),
            adapted="the common test asserts a call with empty arguments",
        ),
        PeerCase(
            f"{x}[surrounding_text_output]",
            "vllm",
            "chatml",
            "Let me check the weather for you.\n\n<tool_call>\n<function=get_"
            "weather>\n<parameter=city>Tokyo</parameter>\n"
            "</function>\n</tool_call>\n\nI will get that information.",
            calls=(Call("get_weather", {"city": "Tokyo"}),),
            content_has=("Let me check the weather for you.",),
        ),
        PeerCase(
            f"{x}[various_data_types_output]",
            "vllm",
            "chatml",
            "<tool_call>\n<function=test_function>\n<parameter=string_field>hello</parameter>\n"
            "<parameter=int_field>42</parameter>\n<parameter=float_field>3.14</parameter>\n"
            "<parameter=bool_field>true</parameter>\n<parameter=null_field>null</parameter>\n"
            '<parameter=array_field>["a", "b", "c"]</parameter>\n'
            '<parameter=object_field>{"nested": "value"}</parameter>\n'
            "</function>\n</tool_call>",
            data,
            calls=(Call("test_function"),),
            adapted="the common test asserts a call holding the seven fields, untyped (supports_typed_arguments off)",
        ),
        PeerCase(
            f"{x}[escaped_strings_output]",
            "vllm",
            "chatml",
            '<tool_call>\n<function=test_function>\n<parameter=quoted>He said "hello"</parameter>\n'
            "<parameter=path>C:\\Users\\file.txt</parameter>\n<parameter=newline>l"
            "ine1\nline2</parameter>\n</function>\n</tool_call>",
            data,
            calls=(
                Call(
                    "test_function",
                    {"quoted": 'He said "hello"', "path": "C:\\Users\\file.txt", "newline": "line1\nline2"},
                ),
            ),
        ),
    ]


def _bugs() -> list[PeerCase]:
    return [
        PeerCase(
            f"{_BUGS}::test_coder_array_with_json_bool_nonstreaming",
            "vllm",
            "chatml",
            '<tool_call>\n<function=pick>\n<parameter=items>\n["a", "b", 1, t'
            'rue]\n</parameter>\n</function>\n</tool_call>',
            tools(tool("pick", {"items": {"type": "array"}})),
            calls=(Call("pick", {"items": ["a", "b", 1, True]}),),
        ),
        PeerCase(
            f"{_BUGS}::test_coder_two_tool_calls_in_one_streaming_chunk",
            "vllm",
            "chatml",
            TWO_IN_ONE,
            GET_WEATHER,
            calls=(Call("get_weather", {"city": "Paris"}), Call("get_weather", {"city": "London"})),
            chunks=(TWO_IN_ONE,),
        ),
    ]


_ANALYSIS = (
    '<|channel|>analysis<|message|>User asks: "What is the weather in Tokyo?" '
    "We need to use get_current_weather tool.<|end|>"
)
_ANALYSIS2 = (
    '<|channel|>analysis<|message|>User asks: "What is the weather in Tokyo?" based on their location. '
    "We need to use get_current_weather tool and get_user_location tool.<|end|>"
)


def _fn(name: str, body: str, json_type: bool = True) -> str:
    ctype = " <|constrain|>json" if json_type else ""
    return f"<|start|>assistant<|channel|>commentary to=functions.{name}{ctype}<|message|>{body}<|call|>"


def _openai() -> list[PeerCase]:
    o = _OPENAI
    rendered = (
        "rendered by openai-harmony as vLLM's test does; the completion starts after the prompt's '<|start|>assistant'"
    )
    return (
        [
            PeerCase(
                f"{o}::test_extract_tool_calls_no_tools",
                "vllm",
                "harmony",
                "<|channel|>final<|message|>This is a test<|end|>",
                calls=(),
                content="This is a test",
                adapted=rendered,
            ),
        ]
        + [
            PeerCase(
                f"{o}::test_extract_tool_calls_single_tool[{i}]",
                "vllm",
                "harmony",
                _ANALYSIS + _fn("get_current_weather", args),
                calls=(Call("get_current_weather", {"location": "Tokyo"}),),
                content="",
                adapted=rendered,
            )
            for i, args in enumerate(('{"location": "Tokyo"}', '{\n"location": "Tokyo"\n}'))
        ]
        + [
            PeerCase(
                f"{o}::test_extract_tool_calls_multiple_tools",
                "vllm",
                "harmony",
                _ANALYSIS2
                + _fn("get_current_weather", '{"location": "Tokyo"}')
                + _fn("get_user_location", '{"location": "Tokyo"}')
                + _fn("no_content_type", '{"location": "Tokyo"}', False)
                + _fn("not_json_no_content_type", "foo", False)
                + _fn("empty_args", "{}")
                + _fn("no_args", ""),
                calls=(
                    Call("get_current_weather", {"location": "Tokyo"}),
                    Call("get_user_location", {"location": "Tokyo"}),
                    Call("no_content_type", {"location": "Tokyo"}),
                    Call("not_json_no_content_type", "foo"),
                    Call("empty_args", {}),
                    Call("no_args", ""),
                ),
                content="",
                adapted=rendered,
            ),
            PeerCase(
                f"{o}::test_extract_tool_calls_with_content",
                "vllm",
                "harmony",
                _ANALYSIS2
                + _fn("get_current_weather", '{"location": "Tokyo"}')
                + "<|start|>assistant<|channel|>final<|message|>This tool call will get the weather.<|end|>",
                calls=(Call("get_current_weather", {"location": "Tokyo"}),),
                content="This tool call will get the weather.",
                adapted=rendered,
            ),
        ]
    )


CASES: list[PeerCase] = _shared_only() + _xml_config() + _bugs() + _openai()
