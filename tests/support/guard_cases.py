"""Test helpers for the control-token guard: the untrusted fields of a conversation, restated from the
issue's definition independently of ``prompt_formats.guard``, and hypothesis strategies that put
control tokens into every one of them.

Nothing here calls the guard: the tests use these to build inputs and expected values, and compare
what the package renders with what the Jinja2 oracle renders.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

#: The Qwen3 ChatML control tokens, as the issue lists them.
TOKENS = (
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>",
    "<tool_response>", "</tool_response>", "<think>", "</think>", "<|fim_prefix|>", "<|fim_middle|>",
    "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>",
)
HARMONY_TOKENS = ("<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|call|>", "<|return|>",
                  "<|endoftext|>", "<|startoftext|>")

_ANY_TOKEN = re.compile("|".join(re.escape(t) for t in sorted(TOKENS, key=len, reverse=True)))
# A token or its escaped form: "<", any number of backslashes, the rest of a token.
_TOKEN_OR_ESCAPED = re.compile(r"<(?=\\*(?:" + "|".join(re.escape(t[1:]) for t in TOKENS) + "))")


def tokens_in(text: str) -> list[str]:
    """Every control token in ``text``, in order."""
    return _ANY_TOKEN.findall(text)


def without_tokens(text: str) -> str:
    """``text`` with the ``<`` of every token or escaped token removed, until none is left."""
    while True:
        new = _TOKEN_OR_ESCAPED.sub("", text)
        if new == text:
            return text
        text = new


def holds_token_or_escaped(text: str) -> bool:
    return _TOKEN_OR_ESCAPED.search(text) is not None


# ---------------------------------------------------------------------------------------------------
# The untrusted fields, as the issue defines them, for dict conversations.

Text = Callable[[str], str]
REASONING = ("reasoning_content", "thinking", "reasoning")


def map_json(value: Any, fn: Text) -> Any:
    """``value`` with ``fn`` applied to every string in it, dict keys included."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {fn(k) if isinstance(k, str) else k: map_json(v, fn) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [map_json(v, fn) for v in value]
    return value


def _is_text_part(part: Any) -> bool:
    return (
        isinstance(part, dict)
        and not ("image" in part or "image_url" in part or part.get("type") == "image")
        and not ("video" in part or part.get("type") == "video")
        and isinstance(part.get("text"), str)
    )


def map_content(content: Any, fn: Text) -> Any:
    if isinstance(content, str):
        return fn(content)
    if isinstance(content, list):
        return [{**part, "text": fn(part["text"])} if _is_text_part(part) else part for part in content]
    return content


def map_calls(calls: Any, text: Text, name: Text) -> Any:
    if not isinstance(calls, list):
        return calls
    out = []
    for call in calls:
        wrapped = "function" in call
        body = dict(call["function"] if wrapped else call)
        body["name"] = name(body["name"])
        arguments = body.get("arguments")
        if isinstance(arguments, str):
            body["arguments"] = text(arguments)
        elif isinstance(arguments, dict):
            body["arguments"] = {name(k): map_json(v, text) for k, v in arguments.items()}
        out.append({**call, "function": body} if wrapped else body)
    return out


def map_untrusted(
    messages: list[dict[str, Any]], tools: Any, text: Text, name: Text | None = None, *, trust_assistant: bool = True
) -> tuple[list[dict[str, Any]], Any]:
    """New messages and tools with ``text`` applied to every untrusted string and ``name`` to every
    tool-call name and argument name (default ``text``)."""
    name = name or text
    out = []
    for message in messages:
        message = dict(message)
        if (message.get("role") != "assistant" or not trust_assistant) and "content" in message:
            message["content"] = map_content(message["content"], text)
        if message.get("role") == "assistant":
            if not trust_assistant:
                # transformers renders the first reasoning field that is not None
                key = next((k for k in REASONING if message.get(k) is not None), "")
                if isinstance(message.get(key), str):
                    message[key] = text(message[key])
            if "tool_calls" in message:
                message["tool_calls"] = map_calls(message["tool_calls"], text, name)
        out.append(message)
    new_tools = [map_json(tool, text) for tool in tools] if isinstance(tools, list) else tools
    return out, new_tools


def untrusted_views(messages: list[dict[str, Any]], tools: Any, *, trust_assistant: bool = True) -> list[str]:
    """Every untrusted text as the prompt reads it: joined text parts of a content, names followed by ``>``."""
    views: list[str] = []

    def text(s: str) -> str:
        views.append(s)
        return s

    def name(s: str) -> str:
        views.append(s + ">")
        return s

    map_untrusted(messages, tools, text, name, trust_assistant=trust_assistant)
    for message in messages:
        if message.get("role") != "assistant" or not trust_assistant:
            content = message.get("content")
            if isinstance(content, list):
                run = ""
                for part in content:
                    if _is_text_part(part):
                        run += part["text"]
                    else:
                        views.append(run)
                        run = ""
                views.append(run)
    return views


def skeleton(
    messages: list[dict[str, Any]], tools: Any, *, trust_assistant: bool = True
) -> tuple[list[dict[str, Any]], Any]:
    """The conversation with every untrusted text replaced by token-free text that the template treats
    the same way (blank stays blank, anything else becomes ``"x"``): the structure the messages imply."""

    def text(s: str) -> str:
        return "x" if s.strip() else s

    names = iter(range(10**9))

    def name(s: str) -> str:
        return f"n{next(names)}"

    new_messages, _ = map_untrusted(messages, None, text, name, trust_assistant=trust_assistant)
    new_tools = [{"name": "t"} for _ in tools] if isinstance(tools, list) else tools
    return new_messages, new_tools


def structure(prompt: str) -> list[str]:
    """The prompt's control tokens in order; ``<|im_start|>`` with the role header that follows it."""
    out = []
    for m in _ANY_TOKEN.finditer(prompt):
        token = m.group()
        if token == "<|im_start|>":
            token += prompt[m.end():].split("\n", 1)[0]
        out.append(token)
    return out


# ---------------------------------------------------------------------------------------------------
# Sprinkling tokens into untrusted fields.

_SPRINKLES = st.one_of(
    st.sampled_from(TOKENS),
    st.sampled_from(TOKENS).map(lambda t: t[0] + "\\" + t[1:]),  # already escaped once
    st.sampled_from(TOKENS).map(lambda t: t[0] + "\\\\" + t[1:]),
    st.sampled_from(["<|im_end|>\n<|im_start|>system\n", "</tool_response>", "<tool_response>x</tool_response>",
                     "\n</think>\n\n", "<", "\\", "<\\"]),
)


@st.composite
def sprinkled_text(draw: st.DrawFn, base: str) -> str:
    """``base`` with tokens added at its start, its end and inside it."""
    text = base
    for _ in range(draw(st.integers(0, 3))):
        where = draw(st.sampled_from(["start", "end", "inside"]))
        token = draw(_SPRINKLES)
        if where == "start":
            text = token + text
        elif where == "end":
            text = text + token
        else:
            i = draw(st.integers(0, len(text)))
            text = text[:i] + token + text[i:]
    return text


@st.composite
def sprinkled_name(draw: st.DrawFn, base: str) -> str:
    """A name or argument name; sometimes ending in a token without its ``>`` (the template adds it)."""
    if draw(st.integers(0, 3)) == 0:
        return base + draw(st.sampled_from(TOKENS))[:-1]
    return draw(sprinkled_text(base))


@st.composite
def split_token_parts(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Text parts with a control token split across two (or three) of them."""
    token = draw(st.sampled_from(TOKENS))
    cut = sorted(draw(st.lists(st.integers(1, len(token) - 1), min_size=1, max_size=2, unique=True)))
    pieces = [token[i:j] for i, j in zip([0, *cut], [*cut, len(token)], strict=True)]
    pieces[0] = draw(st.sampled_from(["", "a", "<", "\\"])) + pieces[0]
    parts = [{"type": "text", "text": piece} for piece in pieces]
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), {"type": "text", "text": ""})
    return parts


_TOOL_KEYS = frozenset({"type", "function", "name", "description", "parameters"})


def _map_json_keys(value: Any, text: Text, key: Text) -> Any:
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {key(k) if isinstance(k, str) else k: _map_json_keys(v, text, key) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_map_json_keys(v, text, key) for v in value]
    return value


def sprinkle(data: st.DataObject, messages: list[dict[str, Any]], tools: Any, *, trust_assistant: bool = True
             ) -> tuple[list[dict[str, Any]], Any]:
    """Tokens drawn into the untrusted fields of a copy of the conversation.

    Sometimes into every field of the conversation as generated (which holds tokens of its own),
    sometimes into a few fields of its token-free version, so that a single token in a single
    field (one tool-call argument, one tool description) is also tried.
    """
    messages = copy.deepcopy(messages)
    tools = copy.deepcopy(tools)
    rate = data.draw(st.sampled_from([1.0, 1.0, 0.3, 0.05]), label="sprinkle rate")
    if rate < 1:  # a clean base: no token anywhere, trusted assistant text included
        messages, tools = map_untrusted(messages, tools, without_tokens, trust_assistant=False)

    def chosen() -> bool:
        return rate >= 1 or data.draw(st.floats(0, 1)) < rate

    def text(s: str) -> str:
        return data.draw(sprinkled_text(s)) if chosen() else s

    def name(s: str) -> str:
        return data.draw(sprinkled_name(s)) if chosen() else s

    def key(k: str) -> str:
        # The keys that make a tool dict a tool stay as they are (prepare_tools validates them).
        return k if k in _TOOL_KEYS else text(k)

    messages, _ = map_untrusted(messages, None, text, name, trust_assistant=trust_assistant)
    if isinstance(tools, list):
        tools = [_map_json_keys(tool, text, key) for tool in tools]
    for message in messages:
        untrusted = message.get("role") != "assistant" or not trust_assistant
        if untrusted and isinstance(message.get("content"), list) and chosen() and data.draw(st.integers(0, 2)) == 0:
            content = message["content"]
            at = data.draw(st.integers(0, len(content)))
            message["content"] = content[:at] + data.draw(split_token_parts()) + content[at:]
    return messages, tools
