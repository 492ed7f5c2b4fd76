"""llama.cpp's ``tests/test-chat.cpp`` cases for the Qwen3.5-4B and Qwen3-Coder templates, as data.

llama.cpp compares the whole message (reasoning, content, tool calls; arguments as normalised JSON),
so what a case does not set is the empty string. Its test tools are defined at the top of
test-chat.cpp; the ones whose definitions were not read are given the schemas their expected
values imply (said in ``adapted``). Qwen3.5-4B generates with thinking on unless a case turns it
off; Qwen3-Coder's template has no thinking. GPT-OSS: :mod:`.peer_cases_llamacpp_gpt_oss`.
"""

from __future__ import annotations

from typing import Any

from .peer_cases import Call, PeerCase, tool

_SRC = "ggml-org/llama.cpp tests/test-chat.cpp"
_QWEN35 = f"{_SRC}::Qwen3.5-4B"
_CODER = f"{_SRC}::Qwen3-Coder"

SPECIAL = tool("special_function", {"arg1": {"type": "integer", "description": "The arg."}}, required=["arg1"])
SPECIAL_OPT = tool(
    "special_function_with_opt", {"arg1": {"type": "integer"}, "arg2": {"type": "integer"}}, required=["arg1"]
)
PYTHON = tool("python", {"code": {"type": "string"}}, required=["code"])
EDIT = tool("edit", {"filename": {"type": "string"}, "oldString": {"type": "string"}, "newString": {"type": "string"}})
HTML = tool("html", {"markup": {"type": "string"}})
TODO = tool("todo_list", {"todos": {"type": "array"}})
TERMINAL = tool("run_in_terminal", {"command": {"type": "string"}})
EMPTY = tool("empty_args", {})
EMPTY_NO_PROPS = tool("empty_args_no_props")
REQ4 = tool(
    "tool_2req_4opt",
    {"req1": {"type": "string"}, "req2": {"type": "integer"}, **{f"opt{i}": {"type": "integer"} for i in range(1, 5)}},
)
REQ5 = tool(
    "tool_2req_5opt",
    {
        "req1": {"type": "string"},
        "req2": {"type": "integer"},
        "opt1": {"type": "string"},
        "opt2": {"type": "integer"},
        "opt3": {"type": "string"},
        "opt4": {"type": "integer"},
        "opt5": {"type": "string"},
    },
)
IMPLIED = "the tool's schema is the one its expected values imply (its definition in test-chat.cpp was not read)"
ONE = Call("special_function", {"arg1": 1})
TWO = (ONE, Call("special_function_with_opt", {"arg1": 1, "arg2": 2}))
CALL_ONE = "<tool_call>\n<function=special_function>\n<parameter=arg1>\n1\n</parameter>\n</function>\n</tool_call>"
CALL_OPT = (
    "<tool_call>\n<function=special_function_with_opt>\n<parameter=arg1>\n1"
    "\n</parameter>\n<parameter=arg2>\n2\n</parameter>\n"
    "</function>\n</tool_call>"
)
PWD = "<tool_call>\n<function=run_in_terminal>\n<parameter=command>\npwd\n</parameter>\n</function>\n</tool_call>"
PWD_CALL = (Call("run_in_terminal", {"command": "pwd"}),)
HELLO = "Hello, world!\nWhat's up?"
PY_CODE = 'def hello():\n    print("Hello, world!")\n\nhello()'


def _wrapped(name: str, *params: tuple[str, str]) -> str:
    body = "".join(f"<parameter={p}>\n{v}\n</parameter>\n" for p, v in params)
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def _c(
    source: str,
    n: int,
    text: str,
    tool_list: tuple[Any, ...] | None,
    thinking: bool,
    calls: tuple[Call, ...] = (),
    content: str = "",
    reasoning: str = "",
    adapted: str = "",
) -> PeerCase:
    return PeerCase(
        f"{source}[{n}]",
        "llama.cpp",
        "chatml",
        text,
        tool_list,
        thinking=thinking,
        calls=calls,
        content=content,
        reasoning=reasoning,
        adapted=adapted,
    )


def _qwen35() -> list[PeerCase]:
    q = _QWEN35
    edit = (EDIT,)
    return [
        _c(q, 1, "I'm\nthinking\n</think>\n\n" + HELLO, None, True, content=HELLO, reasoning="I'm\nthinking"),
        _c(q, 2, CALL_ONE, (SPECIAL,), False, (ONE,)),
        _c(q, 3, "I'm\nthinking\n</think>\n\n" + CALL_ONE, (SPECIAL,), True, (ONE,), reasoning="I'm\nthinking"),
        _c(q, 4, CALL_ONE + "\n" + CALL_OPT, (SPECIAL, SPECIAL_OPT), False, TWO),
        _c(q, 5, _wrapped("python", ("code", PY_CODE)), (PYTHON,), False, (Call("python", {"code": PY_CODE}),)),
        _c(
            q,
            6,
            _wrapped("edit", ("filename", "foo.c"), ("oldString", "#iclunde"), ("newString", "#include")),
            edit,
            False,
            (Call("edit", {"filename": "foo.c", "oldString": "#iclunde", "newString": "#include"}),),
        ),
        _c(
            q,
            7,
            _wrapped("edit", ("filename", "foo.c"), ("oldString", "#iclunde"), ("newString", "#include\n")),
            edit,
            False,
            (Call("edit", {"filename": "foo.c", "oldString": "#iclunde", "newString": "#include\n"}),),
        ),
        _c(
            q,
            8,
            _wrapped("python", ("code", '    print("Hello, world!")')),
            (PYTHON,),
            False,
            (Call("python", {"code": '    print("Hello, world!")'}),),
        ),
        _c(
            q,
            9,
            'I need to output the invoice details in JSON\n</think>\n\n{"amount": 123.45, "date": "2025-12-03"}',
            None,
            True,
            content='{"amount": 123.45, "date": "2025-12-03"}',
            reasoning="I need to output the invoice details in JSON",
        ),
        _c(q, 10, PWD, (TERMINAL,), True, PWD_CALL),
        _c(
            q,
            11,
            "Need to inspect the current directory.\n" + PWD,
            (TERMINAL,),
            True,
            PWD_CALL,
            reasoning="Need to inspect the current directory.",
        ),
        _c(
            q,
            12,
            "<tool_call>\n<function=empty_args>\n</function>\n</tool_call>",
            (EMPTY,),
            False,
            (Call("empty_args", {}),),
        ),
        _c(
            q,
            13,
            "<tool_call>\n<function=empty_args_no_props>\n</function>\n</tool_call>",
            (EMPTY_NO_PROPS,),
            False,
            (Call("empty_args_no_props", {}),),
        ),
        _c(q, 14, "<think>\n\n</think>\n\n" + CALL_ONE, (SPECIAL,), True, (ONE,), reasoning="<think>\n\n"),
        _c(q, 15, "</think>\n\n" + CALL_ONE, (SPECIAL,), True, (ONE,)),
        _c(q, 16, "</think>\n\n" + PWD, (TERMINAL,), True, PWD_CALL),
        _c(
            q,
            17,
            "</think>\n\nLet me inspect the current directory.\n" + PWD,
            (TERMINAL,),
            True,
            PWD_CALL,
            content="Let me inspect the current directory.\n",
        ),
        _c(
            q,
            18,
            "I should inspect the directory.\n</think>\n\nLet me inspect it now.\n" + PWD,
            (TERMINAL,),
            True,
            PWD_CALL,
            content="Let me inspect it now.\n",
            reasoning="I should inspect the directory.",
        ),
        _c(
            q,
            19,
            "I need to run a terminal command.\n</think>\n\n" + PWD,
            (TERMINAL,),
            True,
            PWD_CALL,
            reasoning="I need to run a terminal command.",
        ),
        _c(
            q,
            20,
            "I need to run a terminal command.\n</think>\n\nLet me inspect the current directory.\n" + PWD,
            (TERMINAL,),
            True,
            PWD_CALL,
            content="Let me inspect the current directory.\n",
            reasoning="I need to run a terminal command.",
        ),
    ]


def _coder() -> list[PeerCase]:
    k = _CODER
    nullable_str = tool("set_nullable_str", {"name": {"type": ["string", "null"]}})
    union = tool(
        "set_union",
        {
            "value": {"anyOf": [{"type": "object"}, {"type": "string"}]},
            "amount": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        },
    )
    todos = '[{"item": "Check stuff", "selected": false}, {"item": "Prepare stuff", "selected": true}]'
    bare_one = "<function=special_function>\n<parameter=arg1>\n1\n</parameter>\n</function>\n</tool_call>"
    return [
        _c(k, 1, HELLO, None, False, content=HELLO),
        _c(k, 2, CALL_ONE, (SPECIAL,), False, (ONE,)),
        _c(k, 3, bare_one, (SPECIAL,), False, (ONE,)),
        _c(k, 4, "Let me call it.\n" + bare_one, (SPECIAL,), False, (ONE,), content="Let me call it.\n"),
        _c(k, 5, bare_one + "\n" + CALL_OPT, (SPECIAL, SPECIAL_OPT), False, TWO),
        _c(k, 6, CALL_ONE + "\n" + CALL_OPT, (SPECIAL, SPECIAL_OPT), False, TWO),
        _c(k, 7, _wrapped("python", ("code", PY_CODE)), (PYTHON,), False, (Call("python", {"code": PY_CODE}),)),
        _c(k, 8, _wrapped("python", ("code", "格")), (PYTHON,), False, (Call("python", {"code": "格"}),)),
        _c(
            k,
            9,
            _wrapped("html", ("markup", "<html>\n <head>\n  <title>Hello!</title>\n </head>\n</html>")),
            (HTML,),
            False,
            (Call("html", {"markup": "<html>\n <head>\n  <title>Hello!</title>\n </head>\n</html>"}),),
        ),
        _c(
            k,
            10,
            _wrapped("todo_list", ("todos", todos)),
            (TODO,),
            False,
            (
                Call(
                    "todo_list",
                    {
                        "todos": [
                            {"item": "Check stuff", "selected": False},
                            {"item": "Prepare stuff", "selected": True},
                        ]
                    },
                ),
            ),
        ),
        _c(
            k,
            11,
            _wrapped("edit", ("newString", "#include"), ("filename", "foo.c"), ("oldString", "#iclunde")),
            (EDIT,),
            False,
            (Call("edit", {"newString": "#include", "filename": "foo.c", "oldString": "#iclunde"}),),
        ),
        _c(
            k,
            12,
            _wrapped("tool_2req_4opt", ("req2", "42"), ("req1", "hello"), ("opt2", "200")),
            (REQ4,),
            False,
            (Call("tool_2req_4opt", {"req2": 42, "req1": "hello", "opt2": 200}),),
            adapted=IMPLIED,
        ),
        _c(
            k,
            13,
            _wrapped("tool_2req_4opt", ("req1", "hello"), ("req2", "42"), ("opt4", "100"), ("opt2", "200")),
            (REQ4,),
            False,
            (Call("tool_2req_4opt", {"req1": "hello", "req2": 42, "opt4": 100, "opt2": 200}),),
            adapted=IMPLIED,
        ),
        _c(
            k,
            14,
            _wrapped(
                "tool_2req_5opt",
                ("req1", "world"),
                ("req2", "7"),
                ("opt5", "last"),
                ("opt3", "middle"),
                ("opt1", "first"),
            ),
            (REQ5,),
            False,
            (Call("tool_2req_5opt", {"req1": "world", "req2": 7, "opt5": "last", "opt3": "middle", "opt1": "first"}),),
            adapted=IMPLIED,
        ),
        _c(
            k,
            15,
            _wrapped(
                "tool_2req_5opt",
                ("req1", "test"),
                ("req2", "99"),
                ("opt3", "c"),
                ("opt1", "a"),
                ("opt5", "e"),
                ("opt4", "4"),
                ("opt2", "2"),
            ),
            (REQ5,),
            False,
            (
                Call(
                    "tool_2req_5opt",
                    {"req1": "test", "req2": 99, "opt3": "c", "opt1": "a", "opt5": "e", "opt4": 4, "opt2": 2},
                ),
            ),
            adapted=IMPLIED,
        ),
        _c(
            k,
            16,
            _wrapped("set_nullable_str", ("name", "hello world")),
            (nullable_str,),
            False,
            (Call("set_nullable_str", {"name": "hello world"}),),
        ),
        _c(
            k,
            17,
            _wrapped("set_nullable_str_nf", ("name", "hello world")),
            (tool("set_nullable_str_nf", {"name": {"type": ["null", "string"]}}),),
            False,
            (Call("set_nullable_str_nf", {"name": "hello world"}),),
        ),
        _c(
            k,
            18,
            _wrapped("set_nullable_int", ("count", "42")),
            (tool("set_nullable_int", {"count": {"type": ["integer", "null"]}}),),
            False,
            (Call("set_nullable_int", {"count": 42}),),
        ),
        _c(
            k,
            19,
            _wrapped("set_nullable_str", ("name", "null")),
            (nullable_str,),
            False,
            (Call("set_nullable_str", {"name": None}),),
        ),
        _c(
            k,
            20,
            _wrapped("set_union", ("value", '{"a": 1}'), ("amount", "2 dollars")),
            (union,),
            False,
            (Call("set_union", {"value": {"a": 1}, "amount": "2 dollars"}),),
            adapted=IMPLIED,
        ),
        _c(
            k,
            21,
            _wrapped("set_union", ("value", "{not valid json"), ("amount", "42")),
            (union,),
            False,
            (Call("set_union", {"value": "{not valid json", "amount": 42}),),
            adapted=IMPLIED,
        ),
        _c(
            k,
            22,
            _wrapped("set_unit", ("unit", "celsius")),
            (tool("set_unit", {"unit": {"enum": ["celsius", "fahrenheit"]}}),),
            False,
            (Call("set_unit", {"unit": "celsius"}),),
        ),
    ]


CASES: list[PeerCase] = _qwen35() + _coder()
