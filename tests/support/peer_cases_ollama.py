"""Ollama's Qwen3-Coder parser tests (``qwen3coder``, its bare-call tests), as data.

Ollama's ``qwen3coder`` parser has no reasoning, so the outputs are read with thinking off.
"""

from __future__ import annotations

from typing import Any

from .peer_cases import ANY, Call, PeerCase, tool, tools

_CODER = "ollama/ollama model/parsers/qwen3coder_test.go"
_BARE = "ollama/ollama model/parsers/qwen3coder_bare_test.go"


def _content(name: str, text: str, content: str) -> PeerCase:
    return PeerCase(
        f"{_CODER}::TestQwenParserStreaming[{name}]",
        "ollama",
        "chatml",
        text,
        calls=(),
        content=content,
        adapted="Ollama's test feeds the text in steps and checks the events; the content they carry is asserted",
    )


def _streaming() -> list[PeerCase]:
    return [
        _content("simple message streamed word by word", "hi there", "hi there"),
        _content("token-by-token whitespace handling", "a\nb", "a\nb"),
        _content("arabic text handling", "مرحبا بالعالم", "مرحبا بالعالم"),
        _content("emoji passthrough", "✅", "✅"),
        _content("unicode streaming with whitespace handling", "مرحبا \n世界", "مرحبا \n世界"),
        _content("non-breaking space withheld across chunks", "Hello\u00a0world", "Hello\u00a0world"),
        _content(
            "ideographic space before partial tool fakeout",
            "Hello\u3000<toolfakeout>abc",
            "Hello\u3000<toolfakeout>abc",
        ),
        _content("partial tool open tag fakeout", "abc\n<tool_call fakeout", "abc\n<tool_call fakeout"),
    ]


def _raw(name: str, raw: str, call: Call, tool_list: tuple[Any, ...] | None = None) -> PeerCase:
    return PeerCase(
        f"{_CODER}::TestQwenToolParser[{name}]",
        "ollama",
        "chatml",
        f"<tool_call>\n{raw}\n</tool_call>",
        tool_list,
        calls=(call,),
        adapted="Ollama's test parses the raw call inside <tool_call>; it is wrapped in its <tool_call> block",
    )


def _tool_parser() -> list[PeerCase]:
    calc = tools(
        tool(
            "calculate",
            {
                "x": {"type": "number"},
                "y": {"type": "integer"},
                "enabled": {"type": "boolean"},
                "items": {"type": "array"},
            },
        )
    )
    return [
        _raw(
            "simple tool call",
            "<function=get_current_temperature>\n<parameter=location>\nSan Francisco\n</parameter>\n"
            "<parameter=unit>\ncelsius\n</parameter>\n</function>",
            Call("get_current_temperature", {"location": "San Francisco", "unit": "celsius"}),
        ),
        _raw(
            "names with spaces",
            "<function=get current temperature>\n<parameter=location with spaces>\nSan Francisco\n</parameter>\n"
            "<parameter=unit with spaces>\ncelsius\n</parameter>\n</function>",
            Call("get current temperature", {"location with spaces": "San Francisco", "unit with spaces": "celsius"}),
        ),
        _raw(
            "names with quotes",
            '<function="get current temperature">\n<parameter="location with spaces">\nSan Francisco\n</parameter>\n'
            '<parameter="unit with spaces">\n"celsius"\n</parameter>\n</function>',
            Call(
                '"get current temperature"',
                {'"location with spaces"': "San Francisco", '"unit with spaces"': '"celsius"'},
            ),
        ),
        _raw(
            "tool call with typed parameters",
            "<function=calculate>\n<parameter=x>\n3.14\n</parameter>\n<parameter=y>\n42\n</parameter>\n"
            '<parameter=enabled>\ntrue\n</parameter>\n<parameter=items>\n["a", "b", "c"]\n</parameter>\n</function>',
            Call("calculate", {"x": 3.14, "y": 42, "enabled": True, "items": ["a", "b", "c"]}),
            calc,
        ),
        _raw(
            "ampersands in parameter values",
            '<function=exec>\n<parameter=command>\nls && echo "done"\n</parameter>\n</function>',
            Call("exec", {"command": 'ls && echo "done"'}),
        ),
        _raw(
            "angle brackets in parameter values",
            '<function=exec>\n<parameter=command>\nls && echo "a > b and a < b"\n</parameter>\n</function>',
            Call("exec", {"command": 'ls && echo "a > b and a < b"'}),
        ),
        _raw(
            "unicode in function names and parameters",
            "<function=获取天气>\n<parameter=城市>\n北京\n</parameter>\n"
            "<parameter=message>\nHello! 你好! 🌟 مرحبا\n</parameter>\n</function>",
            Call("获取天气", {"城市": "北京", "message": "Hello! 你好! 🌟 مرحبا"}),
        ),
    ]


# TestQwenToolCallValueParsing: (description, raw value, the parameter's types, the value Ollama reads).
_VALUES: list[tuple[str, str, list[str], Any]] = [
    ("default string value (no type specified)", "some-string", [], "some-string"),
    ("trim a single leading and trailing newline", "\nsome-string\n", [], "some-string"),
    ("trim at most one leading and trailing newline", "\n\nsome-string\n\n", [], "\nsome-string\n"),
    ("newline really has to be the first character to be trimmed", " \nsome-string\n ", [], " \nsome-string\n "),
    ("numeric type", "123", ["number"], 123),
    ("integer type", "42", ["integer"], 42),
    ("negative integer", "-100", ["integer"], -100),
    ("zero integer", "0", ["integer"], 0),
    ("integer with leading zeros", "007", ["integer"], 7),
    ("large integer", "2147483648", ["integer"], 2147483648),
    ("float type", "3.14", ["number"], 3.14),
    ("negative float", "-273.15", ["number"], -273.15),
    ("float without decimal part", "100.0", ["number"], 100),
    ("scientific notation positive", "1.23e5", ["number"], 123000),
    ("scientific notation negative", "1.5e-3", ["number"], 0.0015),
    ("very small float", "0.00000001", ["number"], 0.00000001),
    ("explicit string type", "hello world", ["string"], "hello world"),
    (
        "string with special characters",
        "/usr/local/bin/test-file_v2.0.sh",
        ["string"],
        "/usr/local/bin/test-file_v2.0.sh",
    ),
    ("string with quotes", 'He said "hello" to me', ["string"], 'He said "hello" to me'),
    ("multiline string", "line one\nline two\nline three", ["string"], "line one\nline two\nline three"),
    ("empty string", "", ["string"], ""),
    ("string that looks like a number", "12345", ["string"], "12345"),
    ("boolean true", "true", ["boolean"], True),
    ("boolean false", "false", ["boolean"], False),
    ("boolean case insensitive true", "True", ["boolean"], True),
    ("boolean case insensitive false", "FALSE", ["boolean"], False),
    ("null value lowercase", "null", ["string"], None),
    ("null value case insensitive", "NULL", ["integer"], None),
    ("array of strings", '["foo", "bar", "baz"]', ["array"], ["foo", "bar", "baz"]),
    ("array of numbers", "[1, 2.5, 3]", ["array"], [1, 2.5, 3]),
    ("array of mixed types", '["string", 123, true, null]', ["array"], ["string", 123, True, None]),
    ("empty array", "[]", ["array"], []),
    ("simple object", '{"key": "value", "number": 42}', ["object"], {"key": "value", "number": 42}),
    ("nested object", '{"outer": {"inner": "value"}}', ["object"], {"outer": {"inner": "value"}}),
    ("empty object", "{}", ["object"], {}),
    ("invalid integer falls back to string", "not-a-number", ["integer"], "not-a-number"),
    ("invalid float falls back to string", "3.14.159", ["number"], "3.14.159"),
    ("invalid boolean falls back to false", "yes", ["boolean"], False),
    ("invalid JSON array falls back to string", "[1, 2, unclosed", ["array"], "[1, 2, unclosed"),
    ("invalid JSON object falls back to string", '{"key": unclosed', ["object"], '{"key": unclosed'),
    ("integer overflow should use int64", "2147483648", ["integer"], 2147483648),
    ("float with many decimal places", "3.141592653589793", ["number"], 3.141592653589793),
    (
        "string with JSON-like content",
        '{"this": "is", "just": "a string"}',
        ["string"],
        '{"this": "is", "just": "a string"}',
    ),
    ("whitespace-only string", "   ", ["string"], "   "),
    ("parameter not in tool definition defaults to string", "some value", [], "some value"),
    ("string or number union - valid number", "42.5", ["string", "number"], 42.5),
    ("string or number union - non-numeric string", "hello", ["string", "number"], "hello"),
    ("number or string union - valid number (order shouldn't matter)", "42.5", ["number", "string"], 42.5),
    ("integer or null union - valid integer", "123", ["integer", "null"], 123),
    ("integer or null union - null value", "null", ["integer", "null"], None),
    ("null or integer union - null value (order shouldn't matter)", "null", ["null", "integer"], None),
    ("boolean or string union - valid boolean", "true", ["boolean", "string"], True),
    ("boolean or string union - non-boolean becomes string", "yes", ["boolean", "string"], "yes"),
    ("string or boolean union - valid boolean (precedence test)", "false", ["string", "boolean"], False),
    ("integer or number union - integer value", "42", ["integer", "number"], 42),
    ("integer or number union - float value", "42.5", ["integer", "number"], 42.5),
    ("number or integer union - integer value (precedence test)", "42", ["number", "integer"], 42),
    ("array or object union - valid array", "[1, 2, 3]", ["array", "object"], [1, 2, 3]),
    ("array or object union - valid object", '{"key": "value"}', ["array", "object"], {"key": "value"}),
    ("object or array union - valid array (precedence test)", "[1, 2, 3]", ["object", "array"], [1, 2, 3]),
    ("complex multi-type union - null", "null", ["string", "number", "boolean", "null"], None),
    ("complex multi-type union - boolean", "true", ["string", "number", "boolean", "null"], True),
    ("complex multi-type union - number", "3.14", ["string", "number", "boolean", "null"], 3.14),
    ("complex multi-type union - string", "hello", ["string", "number", "boolean", "null"], "hello"),
    ("integer string union - integer string becomes integer", "123", ["integer", "string"], 123),
    ("string integer union - integer string becomes integer (precedence)", "123", ["string", "integer"], 123),
    (
        "anyOf array or string - with array of objects",
        '[{"content": "task 1", "status": "pending", "priority": "high", "id": "1"}, '
        '{"content": "task 2", "status": "completed", "priority": "low", "id": "2"}]',
        ["array", "string"],
        [
            {"content": "task 1", "status": "pending", "priority": "high", "id": "1"},
            {"content": "task 2", "status": "completed", "priority": "low", "id": "2"},
        ],
    ),
    (
        "anyOf array or string - with plain string",
        "Error: could not load data",
        ["array", "string"],
        "Error: could not load data",
    ),
]


def _value_case(desc: str, raw: str, types: list[str], want: Any) -> PeerCase:
    schema: dict[str, Any] = {} if not types else {"type": types[0] if len(types) == 1 else types}
    return PeerCase(
        f"{_CODER}::TestQwenToolCallValueParsing[{desc}]",
        "ollama",
        "chatml",
        f"<tool_call>\n<function=f>\n<parameter=p>{raw}</parameter>\n</function>\n</tool_call>",
        tools(tool("f", {"p": schema})),
        calls=(Call("f", {"p": want}),),
        adapted="Ollama's test reads one raw value by its types; it is written as a call to a tool f whose "
        "parameter p has them",
    )


def _parser_tests() -> list[PeerCase]:
    c = _CODER
    three = (
        "<tool_call><function=first><parameter=a>1</parameter></function></tool_call>\n"
        "<tool_call><function=second><parameter=b>2</parameter></function></tool_call>\n"
        "<tool_call><function=third><parameter=c>3</parameter></function></tool_call>"
    )
    three_calls = (Call("first", {"a": "1"}), Call("second", {"b": "2"}), Call("third", {"c": "3"}))
    chunked = (
        "<tool_call><function=first><parameter=a>1</parameter></function></tool_call><tool_call><function=second>",
        "<parameter=b>2</parameter></function></tool_call><tool_call><function=th"
        "ird><parameter=c>3</parameter></function></tool_call>",
    )
    return [
        PeerCase(
            f"{c}::TestQwen3CoderParserTruncatedToolCallNoCloseTag",
            "ollama",
            "chatml",
            "<tool_call><function=write_file><parameter=path>/tmp/test.py</parameter><parameter=content>print('hel",
            calls=(),
            content="<function=write_file><parameter=path>/tmp/test.py</parameter><parameter=content>print('hel",
        ),
        PeerCase(
            f"{c}::TestQwen3CoderParserTruncatedToolCallNoCloseTagStreaming",
            "ollama",
            "chatml",
            "Here is the code:\n<tool_call><function=write_file><parameter=content>incomplete...",
            calls=(),
            content="Here is the code:<function=write_file><parameter=content>incomplete...",
            chunks=("Here is the code:\n<tool_call>", "<function=write_file><parameter=content>incomplete..."),
        ),
        PeerCase(
            f"{c}::TestQwen3CoderParserInvalidToolCallXML",
            "ollama",
            "chatml",
            "<tool_call>this is not valid xml at all</tool_call>",
            calls=(),
            content="this is not valid xml at all",
        ),
        PeerCase(
            f"{c}::TestQwen3CoderParserValidToolCallAfterInvalid",
            "ollama",
            "chatml",
            "<tool_call>invalid content</tool_call>\n<tool_call><function=get_weather><p"
            "arameter=location>SF</parameter></function></tool_call>",
            calls=(Call("get_weather", {"location": "SF"}),),
            content="invalid content",
        ),
        PeerCase(
            f"{c}::TestQwen3CoderParserContentDrainOnDone",
            "ollama",
            "chatml",
            "Hello world\n",
            calls=(),
            content="Hello world\n",
        ),
        PeerCase(f"{c}::TestQwen3CoderParserToolCallIndexing", "ollama", "chatml", three, calls=three_calls),
        PeerCase(
            f"{c}::TestQwen3CoderParserToolCallIndexingStreaming",
            "ollama",
            "chatml",
            "".join(chunked),
            calls=three_calls,
            chunks=chunked,
        ),
    ]


EXEC = tools(tool("exec_command", {"cmd": {"type": "string"}}))
BARE = "<function=exec_command>\n<parameter=cmd>\nls -la\n</parameter>\n</function>"


def _bare() -> list[PeerCase]:
    b = _BARE
    return [
        PeerCase(
            f"{b}::TestQwen3CoderBareFunctionCallIsParsed",
            "ollama",
            "chatml",
            BARE,
            EXEC,
            calls=(Call("exec_command", {"cmd": "ls -la"}),),
            content="",
        ),
        PeerCase(
            f"{b}::TestQwen3CoderBareCallSwallowsOrphanCloseTag",
            "ollama",
            "chatml",
            BARE + "\n</tool_call>\ndone",
            EXEC,
            calls=(Call("exec_command", ANY),),
            content="done",
        ),
        PeerCase(
            f"{b}::TestQwen3CoderBareCallStreamedInChunks",
            "ollama",
            "chatml",
            BARE,
            EXEC,
            calls=(Call("exec_command", ANY),),
            chunks=tuple(BARE[i : i + 7] for i in range(0, len(BARE), 7)),
        ),
        PeerCase(
            f"{b}::TestQwen3CoderWrappedCallStillWorks",
            "ollama",
            "chatml",
            "<tool_call>\n" + BARE + "\n</tool_call>",
            EXEC,
            calls=(Call("exec_command", ANY),),
        ),
        PeerCase(
            f"{b}::TestQwen3CoderProseWithUnclosedFunctionTagFlushesAsContent",
            "ollama",
            "chatml",
            "the tag <function=foo is documented here",
            EXEC,
            calls=(),
            content="the tag <function=foo is documented here",
        ),
        PeerCase(
            f"{b}::TestQwen3CoderBareGarbagePayloadDowngradesToContent",
            "ollama",
            "chatml",
            "<function=<<not xml>></function>",
            EXEC,
            calls=(),
            content="<function=<<not xml>></function>",
            adapted="Ollama asserts the content is not empty; the text as written is what it keeps",
        ),
    ]


CASES: list[PeerCase] = _streaming() + _tool_parser() + [_value_case(*v) for v in _VALUES] + _parser_tests() + _bare()
