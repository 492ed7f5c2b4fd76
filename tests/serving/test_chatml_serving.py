"""ChatML in the agent loop (issue 15 items 1 and 2): decode_tool_arguments and the round trip.

- ``decode_tool_arguments=True`` equals the Jinja2 oracle on the messages a server decodes
  (``serving_reference.decode_every_call``: every call, strict and exact, objects only), for both
  formats; for ``chatml-safety`` the decoding comes before the guard;
- the round trip: a reply spelled as the template spells an assistant turn, parsed, sent back as
  ``reply.to_openai()`` (JSON-string arguments) with the option on, renders — through the Jinja2
  template on the decoded history, and through ours — as the generation prompt plus that completion
  plus ``"\\n"``; the changes docs/chatml.md lists are pinned by hand.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.oracles import render_jinja, render_jinja_or_crash, render_ours
from tests.support.parser_cases import counting_ids
from tests.support.serving_reference import decode_every_call
from tests.support.strategies import chatml_options, conversation, differential_settings, tools

MULTI = pf.get_format("chatml-multi-system")
ALLOW = pf.get_format("chatml-safety", policy="allow")
ESCAPE = pf.get_format("chatml-safety")
FORMATS = [(MULTI, "chatml_multi_system.jinja"), (ALLOW, "chatml_upstream.jinja"),
           (pf.get_format("qwen3.6"), "families/qwen3_6.jinja"), (pf.get_format("qwen3.8"), "families/qwen3_8.jinja")]
IDS = ["multi", "safety-allow", "qwen3.6", "qwen3.8"]

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(10**30), 10**30),
                      st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5))
json_value = st.recursive(json_leaf, lambda inner: st.one_of(st.lists(inner, max_size=2),
                                                             st.dictionaries(st.text(max_size=4), inner, max_size=2)),
                          max_leaves=5)
object_texts = st.builds(
    lambda value, separators, indent: json.dumps(value, ensure_ascii=bool(indent), separators=separators,
                                                 indent=indent),
    st.dictionaries(st.text(max_size=5), json_value, max_size=3),
    st.sampled_from([(",", ":"), (", ", ": "), (" , ", " : ")]),
    st.sampled_from([None, 0, 2]),
)
argument_texts = st.one_of(
    object_texts,
    object_texts.map(lambda t: f" \n{t}\t"),
    st.sampled_from([
        '{"a": NaN}', '{"a": Infinity}', '{"a": 1, "a": 2}', '{"a": 1e400}', '{"n": 1e308}', "[1, 2]", '"{}"',
        "3", "null", "", "{", '{"a": 1} x', "{}", '{"a": {"b": [1, {"c": null}]}}', '{"n": 1' + "0" * 5000 + "}",
        "[" * 100000 + "]" * 100000, '{"a": "\\u00e9\\ud800"}',
    ]),
    st.text(max_size=8),
)


@st.composite
def with_string_arguments(draw: st.DrawFn) -> list[Any]:
    messages = draw(conversation())
    for message in messages:
        for call in message.get("tool_calls") or ():
            if isinstance(call, dict) and draw(st.integers(0, 3)):
                body = call.get("function", call)
                body["arguments"] = draw(argument_texts)
    return messages


@pytest.mark.jinja
@pytest.mark.parametrize(("fmt", "template"), FORMATS, ids=IDS)
@differential_settings
@given(messages=with_string_arguments(), tool_list=tools, gen=st.booleans(), options=chatml_options)
def test_decode_tool_arguments_matches_jinja_on_the_decoded_messages(fmt, template, messages, tool_list, gen, options):
    expected = render_jinja_or_crash(template, decode_every_call(messages), tool_list, gen, **options)
    decoded = outcome(fmt.render, messages, tool_list, gen, decode_tool_arguments=True, **options)
    assert decoded == expected  # (None: the engine refuses arguments that are no object; ours too)
    # Off (the default, False and None): the template's own reading of the strings.
    plain = render_jinja_or_crash(template, messages, tool_list, gen, **options)
    assert outcome(fmt.render, messages, tool_list, gen, **options) == plain
    assert outcome(fmt.render, messages, tool_list, gen, decode_tool_arguments=False, **options) == plain
    assert outcome(fmt.render, messages, tool_list, gen, decode_tool_arguments=None, **options) == plain


def outcome(render: Any, *args: Any, **kwargs: Any) -> Any:
    """:func:`render_ours`, or ``None`` for the refusal of arguments that are no object (the engine's crash)."""
    try:
        return render_ours(render, *args, **kwargs)
    except pf.InvalidInputError as error:
        assert error.path.endswith(".arguments"), error
        return None


def _call(arguments: Any, wrapped: bool = True) -> list[Any]:
    body = {"name": "f", "arguments": arguments}
    return [{"role": "user", "content": "q"},
            {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": body} if wrapped
                                                               else body, {"name": "g", "arguments": '{"b": 2}'}]}]


def test_decode_tool_arguments_by_hand() -> None:
    prompt = MULTI.render(_call('{"city":"Paris","n":' + "1" + "0" * 30 + "}"), decode_tool_arguments=True)
    assert ("<function=f>\n<parameter=city>\nParis\n</parameter>\n<parameter=n>\n1" + "0" * 30 + "\n</parameter>\n"
            "</function>\n</tool_call>\n<tool_call>\n<function=g>\n<parameter=b>\n2\n</parameter>\n") in prompt
    assert "<parameter=arguments>\n{\"city\"" in MULTI.render(_call('{"city":"Paris"}'))  # the default
    for kept in ['{"a": NaN}', '{"a":1,"a":2}', '{"a": 1e400}', "[1]", "not json"]:
        assert f"<parameter=arguments>\n{kept}\n</parameter>" in MULTI.render(_call(kept, False),
                                                                            decode_tool_arguments=True)
    # A Message with string arguments is decoded too.
    message = pf.Message("assistant", tool_calls=(pf.ToolCall("f", '{"a":1}'), pf.ToolCall("g", "{")))
    prompt = MULTI.render([{"role": "user", "content": "q"}, message], decode_tool_arguments=True)
    assert "<function=f>\n<parameter=a>\n1\n</parameter>" in prompt
    assert "<function=g>\n<parameter=arguments>\n{\n</parameter>" in prompt


def test_safety_decodes_before_the_guard() -> None:
    # The guard then escapes the decoded string; escaping the JSON text first would have rendered it
    # as the 'arguments' parameter (the JSON no longer an object the rule decodes).
    calls = _call('{"a":"<|im_end|>"}')
    decoded = [calls[0], {**calls[1], "tool_calls": [{"type": "function", "function": {"name": "f", "arguments":
                                                     {"a": "<|im_end|>"}}}, calls[1]["tool_calls"][1]]}]
    assert ESCAPE.render(calls, decode_tool_arguments=True) == ESCAPE.render(decoded, decode_tool_arguments=True)
    assert "<parameter=a>\n<|im_end|>" not in ESCAPE.render(calls, decode_tool_arguments=True)
    with pytest.raises(pf.InjectionError):
        pf.get_format("chatml-safety", policy="reject", trust_assistant=False).render(
            calls, decode_tool_arguments=True)


@pytest.mark.parametrize("value", [1, "yes", [True]])
def test_decode_tool_arguments_takes_a_bool(value: Any) -> None:
    for fmt in (MULTI, ESCAPE, pf.get_format("harmony")):
        with pytest.raises(pf.InvalidInputError, match=r"^decode_tool_arguments: expected a bool or null"):
            fmt.render([{"role": "user", "content": "q"}], decode_tool_arguments=value)
        assert "decode_tool_arguments" in fmt.options


# ---------------------------------------------------------------------------------------------------
# The round trip.

plain = st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="<>"), max_size=10)
words = plain.map(str.strip).filter(bool)
PARAMETERS = {
    "s": {"type": "string"}, "i": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
    "o": {"type": "object"}, "a": {"type": "array"}, "z": {"type": "null"},
}
TOOLS = [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": PARAMETERS}}}
         for name in ("get_weather", "f")]
# Values of each schema type, as a model writes them in the template's spelling. Whole floats and
# large ones are left out of "x": the parser reads a whole number below 2**53 as an int (a change
# docs/chatml.md lists and test_round_trip_changes pins).
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "s": plain.filter(lambda v: v.strip() and v.strip().lower() not in ("null",)),
    "i": st.integers(-(10**30), 10**30),
    "x": st.floats(allow_nan=False, allow_infinity=False).filter(lambda v: not (v.is_integer() and abs(v) < 2**53)),
    "b": st.booleans(),
    "o": st.dictionaries(st.text(max_size=3), json_leaf, max_size=2),
    "a": st.lists(json_leaf, max_size=2),
    "z": st.none(),
}


@st.composite
def call_arguments(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.lists(st.sampled_from(sorted(PARAMETERS)), unique=True, max_size=4))
    return {key: draw(VALUES[key]) for key in keys}


def spelled(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def template_completion(reasoning: str | None, content: str, calls: list[tuple[str, dict[str, Any]]],
                        thinking: bool) -> str:
    """The completion as the template spells the assistant turn after the generation prompt."""
    out = f"{reasoning or ''}\n</think>\n\n" if thinking else ""
    out += content
    for k, (name, arguments) in enumerate(calls):
        out += ("\n" if k else "\n\n" if content else "") + f"<tool_call>\n<function={name}>\n"
        out += "".join(f"<parameter={key}>\n{spelled(value)}\n</parameter>\n" for key, value in arguments.items())
        out += "</function>\n</tool_call>"
    return out + "<|im_end|>"


histories = st.one_of(
    st.sampled_from([
        [{"role": "user", "content": "q"}],
        [{"role": "system", "content": "S"}, {"role": "user", "content": "q"},
         {"role": "assistant", "content": "", "reasoning_content": "plan", "tool_calls": [
             {"type": "function", "function": {"name": "f", "arguments": '{"s": "x", "i": 2}'}}]},
         {"role": "tool", "content": "r"}],
        [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1", "reasoning_content": "t1"},
         {"role": "user", "content": "q2"}],
    ]),
    conversation(),
)


@pytest.mark.jinja
@pytest.mark.parametrize(("fmt", "template"), FORMATS, ids=IDS)
@differential_settings
@given(history=histories, reasoning=st.one_of(st.none(), words), content=st.one_of(st.just(""), words),
       calls=st.lists(st.tuples(st.sampled_from(["get_weather", "f"]), call_arguments()), max_size=3),
       thinking=st.booleans(), options=chatml_options)
def test_round_trip_through_the_template(fmt, template, history, reasoning, content, calls, thinking, options):
    options = {**options, "enable_thinking": None if thinking else False}
    if not thinking:
        reasoning = None  # the prompt closed the think block: a reply without reasoning
    decoded = decode_every_call(history)
    prompt = render_jinja_or_crash(template, decoded, TOOLS, True, **options)
    assume(prompt is not None and prompt[0] == "ok")
    assert prompt is not None
    completion = template_completion(reasoning, content, calls, thinking)
    reply = fmt.parse(completion, TOOLS, id_factory=counting_ids(), **options)
    # parse gives the reply back
    assert not reply.malformed
    assert (reply.reasoning or None, reply.content or "") == (reasoning, content)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == calls
    sent_back = reply.to_openai()  # arguments as JSON strings, as OpenAI's API carries them
    assert all(isinstance(c["function"]["arguments"], str) for c in sent_back.get("tool_calls", []))
    expected = ("ok", prompt[1] + completion + "\n")
    assert render_jinja(template, decode_every_call([*history, sent_back]), TOOLS, False, **options) == expected
    ours = render_ours(fmt.render, [*history, sent_back], TOOLS, False, decode_tool_arguments=True, **options)
    assert ours == expected


def _sent_back(completion: str, **options: Any) -> str:
    """The reply's turn as the template writes it back (Jinja2 on the decoded message)."""
    reply = MULTI.parse(completion, TOOLS, id_factory=counting_ids(), **options)
    history = [{"role": "user", "content": "q"}]
    status, text = render_jinja("chatml_multi_system.jinja", decode_every_call([*history, reply.to_openai()]),
                                None, False, **options)
    assert status == "ok"
    return text.removeprefix("<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n")


@pytest.mark.jinja
@pytest.mark.parametrize(("completion", "written_back"), [
    # Whitespace around the reasoning and the content is trimmed; the markers take the template's spelling.
    ("  plan </think>answer  <|im_end|>", "plan\n</think>\n\nanswer<|im_end|>\n"),
    # Content after (or between) calls is written before them.
    ("p\n</think>\n\n<tool_call>\n<function=f>\n</function>\n</tool_call>\nafter<|im_end|>",
     "p\n</think>\n\nafter\n\n<tool_call>\n<function=f>\n</function>\n</tool_call><|im_end|>\n"),
    # Typed values come back as the template writes the value: NULL, True, 1.50, 3.0 (a whole number), spacing.
    ("p\n</think>\n\n<tool_call><function=f><parameter=z>NULL</parameter><parameter=b>True</parameter>"
     "<parameter=x>1.50</parameter><parameter=o>{\"k\":[1,2]}</parameter></function><|im_end|>",
     "p\n</think>\n\n<tool_call>\n<function=f>\n<parameter=z>\nnull\n</parameter>\n<parameter=b>\ntrue\n</parameter>\n"
     "<parameter=x>\n1.5\n</parameter>\n<parameter=o>\n{\"k\": [1, 2]}\n</parameter>\n</function>\n</tool_call>"
     "<|im_end|>\n"),
    ("p\n</think>\n\n<tool_call>\n<function=f>\n<parameter=x>\n3.0\n</parameter>\n</function>\n</tool_call><|im_end|>",
     "p\n</think>\n\n<tool_call>\n<function=f>\n<parameter=x>\n3\n</parameter>\n</function>\n</tool_call><|im_end|>\n"),
    # A stop token the server stripped: the template writes <|im_end|> back.
    ("p\n</think>\n\nanswer", "p\n</think>\n\nanswer<|im_end|>\n"),
])
def test_round_trip_changes(completion: str, written_back: str) -> None:
    assert _sent_back(completion) == written_back


@pytest.mark.jinja
def test_round_trip_reasoning_is_dropped_after_the_next_query() -> None:
    reply = MULTI.parse("plan\n</think>\n\nanswer<|im_end|>", TOOLS)
    later = [{"role": "user", "content": "q"}, reply.to_openai(), {"role": "user", "content": "q2"}]
    expected = render_jinja("chatml_multi_system.jinja", later, None, False)
    assert expected == ("ok", "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\nanswer<|im_end|>\n"
                              "<|im_start|>user\nq2<|im_end|>\n")
    assert render_ours(MULTI.render, later, None, False, decode_tool_arguments=True) == expected
