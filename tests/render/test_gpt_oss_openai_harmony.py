"""gpt-oss against openai-harmony's own renderer, on the conversations both can express.

openai-harmony (the ``oss-harmony`` fork, which loads its tokenizer offline) renders a conversation
for completion; our format renders the same conversation as the template does. The two agree byte
for byte except in the ways listed in docs/gpt-oss.md ("Differences from openai-harmony"); this test
rewrites openai-harmony's text by exactly those rules and requires the rest to be identical, and the
examples below pin each difference with both texts.
"""

from __future__ import annotations

import json
import re
from typing import Any

import openai_harmony as oh  # a hard requirement: without it this module fails, it does not skip
import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.gpt_oss_oracle import render_gpt_oss_jinja
from tests.support.oracles import harmony_encoding
from tests.support.strategies import differential_settings

pytestmark = [pytest.mark.openai_harmony]

FMT = pf.get_format("gpt-oss")
DAY = "2025-08-05"
KEEP_ANALYSIS = oh.RenderConversationConfig(auto_drop_analysis=False)
EFFORTS = {"low": oh.ReasoningEffort.LOW, "medium": oh.ReasoningEffort.MEDIUM, "high": oh.ReasoningEffort.HIGH}

words = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=10).filter(
    lambda t: "<|" not in t and "|>" not in t and t.strip() == t)
#: One line of text (openai-harmony comments out every line of a multi-line description; the template only the first).
line = st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc", "Zl", "Zp"]), min_size=1, max_size=10).filter(
    lambda t: "<|" not in t and "|>" not in t and t.strip() == t)
identifiers = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True)
scalar_schema = st.one_of(
    st.sampled_from([{"type": "string"}, {"type": "number"}, {"type": "boolean"},
                     {"type": "array", "items": {"type": "string"}}, {"type": "array", "items": {"type": "number"}}]),
    st.lists(identifiers, min_size=1, max_size=3, unique=True).map(lambda e: {"type": "string", "enum": e}),
)


@st.composite
def function_tool(draw: st.DrawFn) -> dict[str, Any]:
    properties = {}
    for name in draw(st.lists(identifiers, min_size=1, max_size=3, unique=True)):
        spec = dict(draw(scalar_schema))
        if draw(st.booleans()):
            spec["description"] = draw(line)
        properties[name] = spec
    required = draw(st.lists(st.sampled_from(list(properties)), unique=True))
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": draw(identifiers), "description": draw(line),
                                             "parameters": parameters}}


@st.composite
def case(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None, dict[str, Any]]:
    """Our messages, tools and options for a conversation openai-harmony can express."""
    options: dict[str, Any] = {"current_date": DAY, "reasoning_effort": draw(st.sampled_from(list(EFFORTS))),
                               "builtin_tools": draw(st.lists(st.sampled_from(["browser", "python"]), unique=True))}
    if draw(st.booleans()):
        options["model_identity"] = draw(words)
    tools = draw(st.one_of(st.none(), st.lists(function_tool(), min_size=1, max_size=3)))
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": draw(st.sampled_from(["system", "developer"])), "content": draw(words)})
    messages.append({"role": "user", "content": draw(words)})
    for _ in range(draw(st.integers(0, 4))):
        thinking = draw(st.one_of(st.none(), words))
        if tools and draw(st.booleans()):
            function = draw(st.sampled_from(tools))["function"]
            arguments = {name: draw(words) for name in function["parameters"]["properties"]}
            messages.append({"role": "assistant", "thinking": thinking,
                             "tool_calls": [{"function": {"name": function["name"], "arguments": arguments}}]})
            messages.append({"role": "tool", "content": draw(words)})
        else:
            messages.append({"role": "assistant", "thinking": thinking, "content": draw(words)})
            messages.append({"role": "user", "content": draw(words)})
    return messages, tools, options


def user(text: str) -> Any:
    return oh.Message.from_role_and_content(oh.Role.USER, text)


def result(recipient: str, text: str) -> Any:
    author = oh.Author.new(oh.Role.TOOL, recipient)
    return oh.Message.from_author_and_content(author, text).with_channel("commentary").with_recipient("assistant")


def assistant(text: str, channel: str) -> Any:
    return oh.Message.from_role_and_content(oh.Role.ASSISTANT, text).with_channel(channel)


def function_call(recipient: str, body: str) -> Any:
    return assistant(body, "commentary").with_recipient(recipient).with_content_type("<|constrain|>json")


def harmony_conversation(messages: list[dict[str, Any]], tools: Any, options: dict[str, Any]) -> oh.Conversation:
    """The same conversation as openai-harmony messages, with the analysis messages the template keeps.

    The two drop analysis by different rules (see docs/gpt-oss.md); this conversion applies the
    template's, and ``render_harmony`` renders without openai-harmony's own dropping, so everything
    else is compared. ``test_analysis_is_dropped_by_different_rules`` pins the rules themselves.
    """
    system = (oh.SystemContent.new().with_conversation_start_date(options["current_date"])
              .with_reasoning_effort(EFFORTS[options["reasoning_effort"]]))
    if "model_identity" in options:
        system = system.with_model_identity(options["model_identity"])
    if "browser" in options["builtin_tools"]:
        system = system.with_browser_tool()
    if "python" in options["builtin_tools"]:
        system = system.with_python_tool()
    out = [oh.Message.from_role_and_content(oh.Role.SYSTEM, system)]
    rest = messages
    developer = oh.DeveloperContent.new()
    if messages[0]["role"] in ("system", "developer"):
        developer = developer.with_instructions(messages[0]["content"])
        rest = messages[1:]
    if tools:
        developer = developer.with_function_tools([
            oh.ToolDescription.new(t["function"]["name"], t["function"]["description"], t["function"]["parameters"])
            for t in tools])
    if rest is not messages or tools:
        out.append(oh.Message.from_role_and_content(oh.Role.DEVELOPER, developer))
    last_call = ""
    last_final = max((i for i, m in enumerate(rest) if m["role"] == "assistant" and "tool_calls" not in m), default=-1)
    for index, message in enumerate(rest):
        role = message["role"]
        if role == "user":
            out.append(user(message["content"]))
        elif role == "tool":
            out.append(result(last_call, message["content"]))
        else:
            if message["thinking"] is not None and "tool_calls" in message and index > last_final:
                out.append(assistant(message["thinking"], "analysis"))
            if "tool_calls" in message:
                function = message["tool_calls"][0]["function"]
                last_call = "functions." + function["name"]
                out.append(function_call(last_call, json.dumps(function["arguments"], ensure_ascii=False)))
            else:
                out.append(assistant(message["content"], "final"))
    return oh.Conversation.from_messages(out)


def render_harmony(messages: list[dict[str, Any]], tools: Any, options: dict[str, Any]) -> str:
    conversation = harmony_conversation(messages, tools, options)
    tokens = harmony_encoding().render_conversation_for_completion(conversation, oh.Role.ASSISTANT, KEEP_ANALYSIS)
    return harmony_encoding().decode_utf8(tokens)


_CALL = re.compile(
    r"<\|start\|>assistant<\|channel\|>commentary to=(functions\.[^ <]+) <\|constrain\|>json<\|message\|>")
_RESULT = re.compile(
    r"<\|start\|>(functions\.[^<]+)<\|channel\|>commentary to=assistant<\|message\|>(.*?)<\|end\|>", re.S)
_DEVELOPER = re.compile(r"<\|start\|>developer<\|message\|>(.*?)<\|end\|>", re.S)


def _developer(match: re.Match[str]) -> str:
    body = match[1]
    if "# Tools\n\n" not in body:  # instructions alone: the template ends them with a blank line
        body += "\n\n"
    return f"<|start|>developer<|message|>{body}<|end|>"


def as_the_template_writes_it(text: str) -> str:
    """openai-harmony's text with the documented differences rewritten to the template's spelling."""
    text = _DEVELOPER.sub(_developer, text, count=1)
    text = _CALL.sub(r"<|start|>assistant to=\1<|channel|>commentary json<|message|>", text)
    return _RESULT.sub(
        lambda m: f"<|start|>{m[1]} to=assistant<|channel|>commentary<|message|>"
                  f"{json.dumps(m[2], ensure_ascii=False)}<|end|>", text)


@differential_settings
@given(case())
def test_openai_harmony_renders_the_same_but_for_the_listed_differences(data: Any) -> None:
    messages, tools, options = data
    ours = FMT.render(messages, tools, True, **options)
    assert as_the_template_writes_it(render_harmony(messages, tools, options)) == ours


# --- The differences, pinned: each one's openai-harmony text beside the template's (the Jinja2 oracle). ----


def _one_parameter(spec: Any) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": "f", "description": "D",
                                              "parameters": {"type": "object", "properties": {"p": spec}}}}]


OPTIONS = {"current_date": DAY, "reasoning_effort": "medium", "builtin_tools": []}


@pytest.mark.jinja
@pytest.mark.parametrize(("tools", "harmony_text"), [
    (_one_parameter({"type": "string", "default": "x"}), 'p?: string, // default: "x"\n}'),
    (_one_parameter({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}),
     "p?: {\n    x: number,\n    },\n"),
    (_one_parameter({"oneOf": [{"type": "string"}, {"type": "number"}]}), "p?:\n | string\n | number\n,\n"),
    (_one_parameter({"type": "array"}), "p?: Array<any>,\n"),
    (_one_parameter({"type": "object"}), "p?: {\n    },\n"),
    ([{"type": "function", "function": {"name": "f", "description": "D", "parameters": {"type": "object"}}}],
     "type f = (_: {\n}) => any;"),
    ([{"type": "function", "function": {"name": "f", "description": "a\nb", "parameters": {}}}], "// a\n// b\n"),
])
def test_tool_declarations_that_differ(tools: list[dict[str, Any]], harmony_text: str) -> None:
    messages = [{"role": "user", "content": "q"}]
    template = render_gpt_oss_jinja(messages, tools, True, **OPTIONS)[1]
    harmony = render_harmony(messages, tools, OPTIONS)
    assert harmony_text in harmony and harmony_text not in template
    assert FMT.render(messages, tools, True, **OPTIONS) == template


def _turn(thinking: str, final: bool) -> dict[str, Any]:
    if final:
        return {"role": "assistant", "thinking": thinking, "content": "F" + thinking}
    return {"role": "assistant", "thinking": thinking, "tool_calls": [{"function": {"name": "f", "arguments": {}}}]}


def _all_analysis(messages: list[dict[str, Any]]) -> list[Any]:
    out = []
    for message in messages:
        if message["role"] == "user":
            out.append(user(message["content"]))
        elif message["role"] == "tool":
            out.append(result("functions.f", message["content"]))
        else:
            out.append(assistant(message["thinking"], "analysis"))
            if "tool_calls" in message:
                out.append(function_call("functions.f", "{}"))
            else:
                out.append(assistant(message["content"], "final"))
    return out


@pytest.mark.jinja
@pytest.mark.parametrize(("turns", "template_keeps", "harmony_keeps"), [
    # openai-harmony drops analysis only when the last assistant message is final, and then only
    # before the first final one; the template drops every final answer's thinking and a tool call's
    # analysis once a final answer follows.
    ([("A1", True), ("A2", True)], [], ["A2"]),
    ([("A1", True), ("A2", False)], ["A2"], ["A1", "A2"]),
    ([("A1", False), ("A2", True)], [], []),
    ([("A1", False), ("A2", False)], ["A1", "A2"], ["A1", "A2"]),
])
def test_analysis_is_dropped_by_different_rules(
    turns: list[tuple[str, bool]], template_keeps: list[str], harmony_keeps: list[str]
) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "q"}]
    for thinking, final in turns:
        messages.append(_turn(thinking, final))
        messages.append({"role": "user", "content": "u"} if final else {"role": "tool", "content": "r"})
    template = render_gpt_oss_jinja(messages, None, True, **OPTIONS)[1]
    system = oh.Message.from_role_and_content(oh.Role.SYSTEM, oh.SystemContent.new().with_conversation_start_date(DAY))
    conversation = oh.Conversation.from_messages([system, *_all_analysis(messages)])
    encoding = harmony_encoding()
    harmony = encoding.decode_utf8(encoding.render_conversation_for_completion(conversation, oh.Role.ASSISTANT))
    kept = "<|channel|>analysis<|message|>{}<|end|>"
    assert [t for t, _ in turns if kept.format(t) in template] == template_keeps
    assert [t for t, _ in turns if kept.format(t) in harmony] == harmony_keeps
    assert FMT.render(messages, None, True, **OPTIONS) == template
