"""Deterministic benchmark corpora: realistic conversations and agent-scale requests.

Everything here is plain OpenAI-style dicts, generated from a seeded :class:`random.Random` (no
hypothesis, no files): the same arguments always give the same corpus, on every machine, so tables
measured on different days compare like with like.

Stable API (other benchmarks import it; keep these signatures):

``Request``
    ``NamedTuple(messages, tools)``: one prompt to render. ``tools`` is a list of OpenAI tool dicts
    (``{"type": "function", "function": {...}}``) or ``None``.
``realistic_requests(n, seed=0, *, single_system=False) -> list[Request]``
    A fixed mix of everyday requests (issue #2): short chats, multi-turn chats, chats with a few
    tools and one call, agent tool loops, and conversations with several system messages.
    ``single_system=True`` moves every extra system message's text into the next user message, so
    the corpus is valid for templates that require the system message to come first.
``realistic_conversations(n, seed=0, *, single_system=False) -> list[list[dict]]``
    The messages of ``realistic_requests`` alone.
``agent_tools(n_tools=40, seed=0) -> list[dict]``
    A coding agent's toolset: nested JSON schemas, about 1.9 KB of JSON per tool; ``python`` is
    always among them (so Harmony renders its tools block).
``agent_request(n_messages=257, n_tools=40, seed=0, *, reminders="system") -> Request``
    One coding-agent request (issue #7): a long system prompt, a user task, then tool loops
    (assistant turns with reasoning and one to three tool calls, tool results of realistic size),
    follow-up user turns and system reminders. Exactly ``n_messages`` messages; the last one is a
    tool result or a user message (a prompt awaiting the next assistant turn). ``reminders="system"``
    sends reminders as extra system messages (as agent clients do); ``"inline"`` puts them inside
    the next user message as ``<system-reminder>`` text, so only the first message is a system one.
``agent_request_for(name, seed, n_messages=257) -> Request``, ``agent_options(name) -> dict``
    That request in the shape format ``name``'s template takes (``FLAVOURS``), and its options.

``everyday_jobs``, ``agent_jobs``, ``agent_257`` (the held-out corpora of the headline rows, below)
    Lists of :class:`Job` (messages, tools, options) as a server receives them; ``to_wire`` and
    ``rendered_as_received`` time a render with each request decoded just before it.

Every message of the fixed corpora is text-only (string content), reasoning is in
``reasoning_content``, tool calls use the
``{"id", "type": "function", "function": {"name", "arguments": {...}}}`` shape with mapping arguments
(a few as JSON strings), and tool results carry ``name`` and ``tool_call_id``. So every corpus is
valid input for every format (ChatML, Harmony), ``single_system``/``reminders="inline"`` aside.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple

__all__ = [
    "FLAVOURS", "LLAMA_OPTIONS", "OPTIONS", "Flavour", "Job", "Request", "Wire", "agent_257", "agent_jobs",
    "agent_options", "agent_request", "agent_request_for", "agent_tools", "as_received", "everyday_jobs",
    "follow_ups", "gpt_oss_agent_requests",
    "realistic_conversations", "realistic_requests", "rendered_as_received", "to_wire", "without_call_preambles",
]

Message = dict[str, Any]


class Request(NamedTuple):
    """One prompt to render: the messages and the tools offered (``None``: no tools)."""

    messages: list[Message]
    tools: list[dict[str, Any]] | None


# ---------------------------------------------------------------------------------------------------
# Text.

_WORDS = (  # noqa: SIM905 (a word list reads better as one string)
    "the a of to and in is that for it with as on be this by are from or at an which not function "
    "value return file test error config module class method request response user data list string "
    "type update check build path line run output input result change code option default server "
    "cache parse render token message model prompt tool call schema field index buffer stream batch "
    "we should first then because so if when before after also only each every new old current"
).split()
_NON_ASCII = ("café", "naïve", "日本語", "Größe", "→", "–", "«ok»", "🙂", "résumé", "δ")
_IDENTIFIERS = (
    "render", "parse_reply", "load_config", "tokens", "messages", "prompt", "cache", "result", "path",
    "encoder", "schema", "handler", "session", "options", "index", "buffer", "stream", "batch",
)


def _sentence(rng: random.Random, n_words: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(n_words)]
    if rng.random() < 0.08:
        words[rng.randrange(n_words)] = rng.choice(_NON_ASCII)
    if rng.random() < 0.15:
        words[rng.randrange(n_words)] = "`" + rng.choice(_IDENTIFIERS) + "`"
    return " ".join(words).capitalize() + rng.choice((".", ".", ".", "?", ":"))


def _prose(rng: random.Random, n_chars: int) -> str:
    """Paragraphs of pseudo-English of about ``n_chars`` characters."""
    paragraphs: list[str] = []
    size = 0
    while size < n_chars:
        paragraph = " ".join(_sentence(rng, rng.randint(6, 18)) for _ in range(rng.randint(2, 5)))
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(paragraphs)


def _code(rng: random.Random, n_lines: int) -> str:
    lines = []
    indent = 0
    for _ in range(n_lines):
        name = rng.choice(_IDENTIFIERS)
        other = rng.choice(_IDENTIFIERS)
        kind = rng.random()
        if kind < 0.12:
            lines.append("    " * indent + f"def {name}_{rng.randint(1, 99)}(self, {other}: str) -> dict:")
            indent = min(indent + 1, 3)
        elif kind < 0.22:
            lines.append("    " * indent + f"if {other} is None or not {name}:")
            indent = min(indent + 1, 3)
        elif kind < 0.3 and indent:
            lines.append("    " * indent + f"return {{\"{name}\": {other}, \"count\": {rng.randint(0, 500)}}}")
            indent -= 1
        elif kind < 0.38:
            lines.append("    " * indent + f"# {_sentence(rng, rng.randint(4, 9))}")
        else:
            lines.append("    " * indent + f"{name} = {other}.get(\"{rng.choice(_IDENTIFIERS)}\", {rng.randint(0, 9)})")
    return "\n".join(lines)


def _path(rng: random.Random) -> str:
    top = rng.choice(("src", "lib", "tests", "app", "pkg", "docs"))
    mid = rng.choice(_IDENTIFIERS)
    ext = rng.choice((".py", ".py", ".ts", ".go", ".md", ".json", ".toml"))
    return f"{top}/{mid}/{rng.choice(_IDENTIFIERS)}{ext}"


def _numbered(text: str, start: int) -> str:
    return "\n".join(f"{start + i:6d}\t{line}" for i, line in enumerate(text.split("\n")))


# ---------------------------------------------------------------------------------------------------
# Tools.

_AGENT_TOOL_NAMES = (
    "read_file", "write_file", "edit_file", "multi_edit", "bash", "grep", "glob", "list_directory",
    "web_fetch", "web_search", "todo_write", "task", "notebook_edit", "python", "ask_user",
    "git_diff", "git_log", "git_commit", "run_tests", "lint", "format_code", "open_pull_request",
    "search_symbols", "find_references", "rename_symbol", "read_image", "kill_shell", "shell_output",
    "mcp__github__create_issue", "mcp__github__list_issues", "mcp__github__get_pull_request",
    "mcp__github__add_comment", "mcp__linear__create_ticket", "mcp__linear__search",
    "mcp__slack__post_message", "mcp__postgres__query", "mcp__browser__navigate",
    "mcp__browser__screenshot", "mcp__browser__click", "mcp__sentry__get_issue",
)


def _schema_property(rng: random.Random, depth: int) -> dict[str, Any]:
    kind = rng.random()
    description = _sentence(rng, rng.randint(5, 14))
    if depth < 2 and kind < 0.18:
        props = {f"{rng.choice(_IDENTIFIERS)}_{i}": _schema_property(rng, depth + 1) for i in range(rng.randint(2, 4))}
        return {
            "type": "object",
            "description": description,
            "properties": props,
            "required": sorted(props)[: rng.randint(0, len(props))],
            "additionalProperties": False,
        }
    if depth < 2 and kind < 0.3:
        return {"type": "array", "description": description, "items": _schema_property(rng, depth + 1),
                "minItems": rng.randint(0, 1)}
    if kind < 0.42:
        return {"type": "string", "enum": rng.sample(_IDENTIFIERS, rng.randint(2, 5)), "description": description}
    if kind < 0.55:
        return {"type": "integer", "description": description, "minimum": 0, "maximum": rng.choice((10, 600, 10**6))}
    if kind < 0.62:
        return {"type": "boolean", "description": description, "default": rng.random() < 0.5}
    if kind < 0.66:
        return {"type": "number", "description": description, "default": rng.choice((0.5, 1e-3, 30.0, 2.5))}
    return {"type": "string", "description": description}


def _tool(rng: random.Random, name: str) -> dict[str, Any]:
    props = {}
    for _ in range(rng.randint(3, 6)):
        props[rng.choice(_IDENTIFIERS) + "_" + rng.choice(("path", "id", "mode", "limit", "text", "query", "opts"))] = (
            _schema_property(rng, 0)
        )
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": _prose(rng, rng.randint(180, 560)),
            "parameters": {
                "type": "object",
                "properties": props,
                "required": sorted(props)[: rng.randint(1, 3)],
                "additionalProperties": False,
                "$schema": "http://json-schema.org/draft-07/schema#",
            },
        },
    }


def agent_tools(n_tools: int = 40, seed: int = 0) -> list[dict[str, Any]]:
    """``n_tools`` coding-agent tools with nested JSON schemas (``python`` always included)."""
    rng = random.Random(f"tools-{seed}")
    names = list(_AGENT_TOOL_NAMES)
    while len(names) < n_tools:
        names.append(f"mcp__extra__tool_{len(names)}")
    chosen = names[:n_tools]
    if "python" not in chosen and chosen:
        chosen[-1] = "python"
    return [_tool(rng, name) for name in chosen]


def _small_tools(rng: random.Random) -> list[dict[str, Any]]:
    names = rng.sample(("get_weather", "search", "read_file", "calculator", "get_time", "send_email", "lookup_order",
                        "translate"), rng.randint(1, 4))
    if rng.random() < 0.5:
        names.append("python")
    tools = []
    for name in names:
        props = {
            f"{rng.choice(_IDENTIFIERS)}_{i}": {"type": rng.choice(("string", "integer")),
                                                "description": _sentence(rng, rng.randint(4, 10))}
            for i in range(rng.randint(1, 3))
        }
        tools.append({
            "type": "function",
            "function": {
                "name": name,
                "description": _sentence(rng, rng.randint(8, 20)),
                "parameters": {"type": "object", "properties": props, "required": sorted(props)[:1]},
            },
        })
    return tools


def _arguments_for(rng: random.Random, tool: dict[str, Any]) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for key, prop in tool["function"]["parameters"]["properties"].items():
        if args and rng.random() < 0.4:
            continue
        kind = prop.get("type")
        if kind == "integer":
            args[key] = rng.randint(0, 400)
        elif kind == "boolean":
            args[key] = rng.random() < 0.5
        elif kind == "number":
            args[key] = rng.choice((0.5, 1.25, 30.0))
        elif kind == "array":
            args[key] = [_path(rng) for _ in range(rng.randint(1, 3))]
        elif kind == "object":
            args[key] = {"mode": rng.choice(_IDENTIFIERS), "limit": rng.randint(1, 50), "recursive": True}
        elif "enum" in prop:
            args[key] = rng.choice(prop["enum"])
        elif rng.random() < 0.25:
            args[key] = _code(rng, rng.randint(3, 14))
        else:
            args[key] = rng.choice((_path(rng), _sentence(rng, rng.randint(3, 9))))
    return args


def _call(rng: random.Random, tool: dict[str, Any], number: int) -> dict[str, Any]:
    args = _arguments_for(rng, tool)
    # A few clients pass the arguments as the raw JSON string the model produced.
    arguments: Any = json.dumps(args, ensure_ascii=False) if rng.random() < 0.1 else args
    return {"id": f"call_{number:04d}", "type": "function",
            "function": {"name": tool["function"]["name"], "arguments": arguments}}


def _tool_result(rng: random.Random, name: str, call_id: str, size: int) -> Message:
    kind = rng.random()
    if kind < 0.45:
        body = _numbered(_code(rng, max(3, size // 45)), rng.randint(1, 400))
    elif kind < 0.6:
        body = "\n".join(f"{_path(rng)}:{rng.randint(1, 900)}:    {_sentence(rng, rng.randint(3, 8))}"
                         for _ in range(max(1, size // 70)))
    elif kind < 0.75:
        body = json.dumps({"ok": True, "items": [{"id": rng.randint(1, 10**6), "title": _sentence(rng, 5),
                                                   "score": round(rng.random(), 3)}
                                                  for _ in range(max(1, size // 90))]}, ensure_ascii=False, indent=2)
    elif kind < 0.85:
        passed = rng.randint(10, 400)
        body = (f"============ test session starts ============\ncollected {passed + 3} items\n\n"
                + "\n".join(f"{_path(rng)}::test_{rng.choice(_IDENTIFIERS)} PASSED" for _ in range(max(1, size // 60)))
                + f"\n\n===== {passed} passed, 3 failed in {rng.random() * 9:.2f}s =====")
    else:
        body = _prose(rng, size)
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": body}


# ---------------------------------------------------------------------------------------------------
# Everyday requests (issue #2).

def _assistant(rng: random.Random, n_chars: int, reasoning: bool) -> Message:
    message: Message = {"role": "assistant", "content": _prose(rng, n_chars)}
    if reasoning:
        message["reasoning_content"] = _prose(rng, rng.randint(80, 500))
    return message


def _chat(rng: random.Random, turns: int, system: bool) -> list[Message]:
    messages: list[Message] = []
    if system:
        messages.append({"role": "system", "content": _prose(rng, rng.randint(60, 600))})
    for turn in range(turns):
        messages.append({"role": "user", "content": _prose(rng, rng.randint(20, 400))})
        if turn < turns - 1:
            messages.append(_assistant(rng, rng.randint(100, 1200), rng.random() < 0.4))
    return messages


def _tool_loop(rng: random.Random, tools: list[dict[str, Any]], rounds: int, calls: list[int]) -> list[Message]:
    messages: list[Message] = []
    for _ in range(rounds):
        n_calls = rng.choice((1, 1, 1, 2, 3))
        chosen = [rng.choice(tools) for _ in range(n_calls)]
        turn: Message = {
            "role": "assistant",
            "content": _sentence(rng, rng.randint(5, 14)) if rng.random() < 0.4 else "",
            "tool_calls": [_call(rng, tool, calls[0] + k) for k, tool in enumerate(chosen)],
        }
        if rng.random() < 0.6:
            turn["reasoning_content"] = _prose(rng, rng.randint(60, 400))
        messages.append(turn)
        for k, tool in enumerate(chosen):
            name = tool["function"]["name"]
            messages.append(_tool_result(rng, name, f"call_{calls[0] + k:04d}", rng.randint(80, 900)))
        calls[0] += n_calls
    return messages


def _realistic(rng: random.Random, single_system: bool) -> Request:
    kind = rng.random()
    calls = [0]
    if kind < 0.15:  # a short chat
        return Request(_chat(rng, rng.randint(1, 2), rng.random() < 0.7), None)
    if kind < 0.35:  # a longer multi-turn chat
        return Request(_chat(rng, rng.randint(3, 8), rng.random() < 0.8), None)
    tools = _small_tools(rng)
    if kind < 0.55:  # a chat with tools and one tool round
        messages = _chat(rng, rng.randint(1, 3), True)
        messages += _tool_loop(rng, tools, 1, calls)
        messages.append(_assistant(rng, rng.randint(80, 600), rng.random() < 0.5))
        messages.append({"role": "user", "content": _prose(rng, rng.randint(20, 200))})
        return Request(messages, tools)
    if kind < 0.9:  # an agent loop: several tool rounds
        messages = _chat(rng, 1, True)
        messages += _tool_loop(rng, tools, rng.randint(3, 12), calls)
        return Request(messages, tools)
    # several system messages: a base prompt and reminders between turns
    messages = _chat(rng, 1, True)
    for _ in range(rng.randint(1, 3)):
        messages += _tool_loop(rng, tools, 1, calls)
        messages.append({"role": "system", "content": "<system-reminder>" + _sentence(rng, 12) + "</system-reminder>"})
        messages.append({"role": "user", "content": _prose(rng, rng.randint(20, 200))})
    if single_system:
        messages = _inline_reminders(messages)
    return Request(messages, tools)


def strings_only(messages: list[Message]) -> list[Message]:
    """Every text a string, as DeepSeek-V3's template joins them to text: a tool call's arguments as
    their JSON text (as a client sends them), a content left out as ``""``."""
    def encoded(call: dict[str, Any]) -> dict[str, Any]:
        body = dict(call["function"])
        if not isinstance(body.get("arguments"), str):
            body["arguments"] = json.dumps(body.get("arguments") or {}, ensure_ascii=False)
        return {**call, "function": body}

    out = []
    for message in messages:
        message = {**message, "content": message.get("content") or ""}
        if message.get("tool_calls"):
            message["tool_calls"] = [encoded(call) for call in message["tool_calls"]]
        out.append(message)
    return out


def alternating(messages: list[Message]) -> list[Message]:
    """The conversation as Gemma 3's template takes it: the leading system message, then turns that
    alternate user / assistant, from the user's. A tool result or a later system message is the
    user's text, a tool call is left out (the template writes none), and the texts of one side's
    consecutive messages are one turn's, joined by a blank line."""
    system = messages[:1] if messages and messages[0]["role"] == "system" else []
    turns: list[Message] = []
    for message in messages[len(system):]:
        role = "assistant" if message["role"] == "assistant" else "user"
        text = message.get("content") or ""
        if not turns and role == "assistant":
            turns.append({"role": "user", "content": ""})
        if turns and turns[-1]["role"] == role:
            turns[-1] = {**turns[-1], "content": turns[-1]["content"] + "\n\n" + text}
            continue
        turn: Message = {"role": role, "content": text}
        if role == "assistant" and message.get("reasoning_content"):
            turn["reasoning_content"] = message["reasoning_content"]
        turns.append(turn)
    return system + turns


def one_call_a_turn(messages: list[Message]) -> list[Message]:
    """Each turn of several tool calls as one turn a call, each followed by its result (the Llama 3
    templates write one call a turn): the first keeps the turn's content."""
    out: list[Message] = []
    i = 0
    while i < len(messages):
        message, calls = messages[i], messages[i].get("tool_calls") or []
        end = i + 1
        while end < len(messages) and messages[end]["role"] == "tool":
            end += 1
        if message["role"] != "assistant" or len(calls) <= 1:
            out.append(message)
            i += 1
            continue
        results = messages[i + 1:end]
        for k, call in enumerate(calls):
            out.append({**message, "tool_calls": [call]} if k == 0
                       else {"role": "assistant", "content": "", "tool_calls": [call]})
            out += results[k:k + 1]
        out += results[len(calls):]
        i = end
    return out


def _inline_reminders(messages: list[Message]) -> list[Message]:
    """Move each system message but the first into the next user message's text."""
    out: list[Message] = []
    pending: list[str] = []
    for i, message in enumerate(messages):
        if message["role"] == "system" and i:
            pending.append(message["content"])
            continue
        if pending and message["role"] == "user":
            message = {**message, "content": "\n".join([*pending, message["content"]])}
            pending = []
        out.append(message)
    if pending:
        out.append({"role": "user", "content": "\n".join(pending)})
    return out


def realistic_requests(n: int, seed: int = 0, *, single_system: bool = False) -> list[Request]:
    """``n`` everyday requests, a fixed mix of chats, tool rounds, agent loops and multi-system turns."""
    rng = random.Random(f"realistic-{seed}")
    return [_realistic(rng, single_system) for _ in range(n)]


def realistic_conversations(n: int, seed: int = 0, *, single_system: bool = False) -> list[list[Message]]:
    """The messages of :func:`realistic_requests` (same arguments, same conversations)."""
    return [request.messages for request in realistic_requests(n, seed, single_system=single_system)]


# ---------------------------------------------------------------------------------------------------
# Agent requests (issue #7).

def agent_request(
    n_messages: int = 257,
    n_tools: int = 40,
    seed: int = 0,
    *,
    reminders: Literal["system", "inline"] = "system",
) -> Request:
    """One coding-agent request of exactly ``n_messages`` messages offering ``n_tools`` tools."""
    if n_messages < 2:
        raise ValueError("an agent request needs at least a system prompt and a user message")
    rng = random.Random(f"agent-{seed}")
    tools = agent_tools(n_tools, seed)
    messages: list[Message] = [
        {"role": "system", "content": _prose(rng, 9000) + "\n\n# Code style\n" + _code(rng, 40)},
        {"role": "user", "content": _prose(rng, rng.randint(200, 900))},
    ]
    calls = 0
    while len(messages) < n_messages:
        room = n_messages - len(messages)
        event = rng.random()
        if room == 1 or event < 0.04:
            messages.append({"role": "user", "content": _prose(rng, rng.randint(40, 600))})
            continue
        if event < 0.1:
            reminder = "<system-reminder>\n" + _prose(rng, rng.randint(150, 700)) + "\n</system-reminder>"
            messages.append({"role": "system", "content": reminder})
            continue
        n_calls = min(rng.choice((1, 1, 1, 1, 2, 2, 3)), room - 1)
        chosen = [rng.choice(tools) for _ in range(n_calls)]
        turn: Message = {
            "role": "assistant",
            "content": _sentence(rng, rng.randint(5, 20)) if rng.random() < 0.35 else "",
            "tool_calls": [_call(rng, tool, calls + k) for k, tool in enumerate(chosen)],
        }
        if rng.random() < 0.8:
            turn["reasoning_content"] = _prose(rng, rng.randint(80, 900))
        messages.append(turn)
        for k, tool in enumerate(chosen):
            size = rng.choice((150, 300, 500, 800, 1100, 2200))
            messages.append(_tool_result(rng, tool["function"]["name"], f"call_{calls + k:04d}", size))
        calls += n_calls
    if reminders == "inline":
        messages = _inline_reminders(messages)
        while len(messages) < n_messages:
            messages.append({"role": "user", "content": _prose(rng, rng.randint(40, 600))})
    elif reminders != "system":
        raise ValueError(f"reminders must be 'system' or 'inline', got {reminders!r}")
    return Request(messages, tools)


# ---------------------------------------------------------------------------------------------------
# Held-out corpora of the headline rows (issue 18): jobs as a server receives them.
#
# Held-out corpora for the headline benchmarks: the everyday and the agent mix of issue 18.
#
# Generated here from a seeded :class:`random.Random` (the tests' hypothesis strategies are not used,
# so the corpus is not the input the code was tuned on); the same arguments always give the same
# jobs. Each :class:`Job` is one request as a server receives it, decoded from its own JSON text
# (:func:`as_received`): the messages, the tool list (a repeated tool list is equal, never the same
# object) and the render options passed as keywords.
#
# The proportions are written in ``docs/performance.md``; the constants below are the source.
#
# ``flavour`` says which format family the corpus must be valid for: ``"chatml"`` (every feature),
# ``"chatml-strict"`` (one leading system message: the later ones become ``<system-reminder>``
# text in the next user message, as for the upstream template), ``"harmony"`` (no images: the
# format is text only; options ``current_date``/``reasoning_effort``), ``"gpt-oss"`` (as harmony,
# with one leading system message as ``chatml-strict`` and string content only, since the published
# template reads ``message.content`` as a string; an assistant tool call with reasoning loses its
# preamble, which that template refuses beside reasoning), ``"json"`` and ``"json-thinking"`` (the
# templates that write JSON calls: string content only, no images; ``enable_thinking`` only for the
# latter, Qwen3's), ``"json-vision"`` (Qwen3-VL's: text parts and images, ``add_vision_id``),
# ``"nemotron"`` (string content, object arguments, no images; ``enable_thinking``,
# ``truncate_history_thinking``).

Flavour = Literal["chatml", "chatml-strict", "chatml-objects", "json", "json-thinking", "json-vision", "harmony",
                  "gpt-oss", "nemotron", "gemma", "gemma4", "deepseek", "glm", "llama"]
#: The flavours whose content is a string.
_STRING_CONTENT = ("gpt-oss", "json", "json-thinking", "nemotron", "gemma", "deepseek", "glm", "llama")
_IMAGES = ("chatml", "chatml-strict", "chatml-objects", "json-vision", "gemma", "gemma4")  # the flavours with images
#: The flavours whose calls' arguments are objects (``objects_only``).
_OBJECT_ARGUMENTS = ("chatml-objects", "nemotron", "gemma4", "glm", "llama")

# Proportions (per request unless said otherwise).
TEXT_PARTS = 0.30  # of user and system messages: content given as a list of text parts
IMAGES = 0.12  # of requests: one user message carries one or two image parts (ChatML only)
EXTRA_SYSTEM = 0.20  # of requests: one or two later system messages (reminders)
RICH_ARGUMENTS = 0.50  # of tool calls: a float, a nested object or list, and a bool argument added
REASONING = 0.45  # of assistant turns: reasoning in history (a tenth of them inline as <think>)
KEYWORD_OPTIONS = 0.50  # of requests: render options passed as keywords
SHARED_TOOLSETS = 6  # tool-using requests draw their tool list from this many app toolsets
AGENT_IMAGES = 0.5  # of agent sessions: one user message carries one or two image parts (ChatML only)


class Job(NamedTuple):
    """One request: messages, tools (``None``: no tools) and the keyword options of the render."""

    messages: list[Message]
    tools: list[dict[str, Any]] | None
    options: dict[str, Any]


def as_received(jobs: list[Job]) -> list[Job]:
    """Each job as a server holds it: decoded from its own JSON text (fresh, compact objects).

    Generated objects are scattered over memory among the generator's garbage; a request decoded
    from the wire is not, and the benchmark should not charge either engine for the difference.
    A ``PreparedTools`` (not JSON) is kept as it is."""
    out = []
    for messages, tools, options in jobs:
        plain = tools is None or isinstance(tools, list)
        decoded = json.loads(json.dumps({"m": messages, "t": tools if plain else None, "o": options}))
        out.append(Job(decoded["m"], decoded["t"] if plain else tools, decoded["o"]))
    return out


class Wire(NamedTuple):
    """A job as it arrives: the JSON text of its messages and plain tools, a ``PreparedTools`` kept
    aside (it is not JSON), and the options."""

    text: str
    prepared: Any
    options: dict[str, Any]


def to_wire(jobs: Sequence[Job]) -> list[Wire]:
    """Each job's JSON text (a ``PreparedTools`` kept as it is)."""
    out = []
    for messages, tools, options in jobs:
        plain = tools is None or isinstance(tools, list)
        out.append(Wire(json.dumps({"m": messages, "t": tools if plain else None}), None if plain else tools, options))
    return out


def rendered_as_received(
    render: Callable[..., str],
) -> Callable[[Sequence[Wire]], tuple[list[str], float]]:
    """A self-timed pass for ``timing.straight``: each request decoded just before it is rendered
    (untimed), as a server does, then its render timed; the outputs and CPU µs per request.

    Every engine so meets each request fresh from the decoder, in the same state of the CPU's
    caches, whatever ran before it on a shared machine."""
    clock = time.thread_time_ns

    def work(wires: Sequence[Wire]) -> tuple[list[str], float]:
        outputs = []
        total = 0
        for text, prepared, options in wires:
            decoded = json.loads(text)
            tools = prepared if prepared is not None else decoded["t"]
            start = clock()
            outputs.append(render(decoded["m"], tools, True, **options))
            total += clock() - start
        return outputs, total / len(wires) / 1000

    return work


def _parts(rng: random.Random, text: str) -> list[dict[str, Any]]:
    cut = rng.randrange(len(text)) if text else 0
    pieces = [text[:cut], text[cut:]] if 0 < cut < len(text) else [text]
    return [{"type": "text", "text": piece} for piece in pieces]


def _image(rng: random.Random) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"https://example.com/img/{rng.randrange(10**6)}.png"}}


def _rich_arguments(rng: random.Random, arguments: Any) -> Any:
    if not isinstance(arguments, dict) or rng.random() >= RICH_ARGUMENTS:
        return arguments
    return {
        **arguments,
        "temperature": round(rng.uniform(0, 2), 3),
        "filters": {"since": f"2025-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}", "limit": rng.randint(1, 100),
                    "tags": rng.sample(("a", "b", "ops", "db", "ui"), 2), "strict": rng.random() < 0.5},
        "dry_run": rng.random() < 0.5,
    }


def _dress_message(rng: random.Random, message: Message, flavour: Flavour) -> Message:
    message = dict(message)
    role = message["role"]
    if role == "assistant":
        if "tool_calls" in message:
            message["tool_calls"] = [
                {**call, "function": {**call["function"],
                                      "arguments": _rich_arguments(rng, call["function"]["arguments"])}}
                for call in message["tool_calls"]
            ]
        reasoning = message.pop("reasoning_content", None)
        if reasoning is not None and rng.random() < REASONING / 0.5:  # py gives about half
            if rng.random() < 0.1 and flavour.startswith("chatml") and message.get("content"):
                message["content"] = f"<think>\n{reasoning}\n</think>\n\n{message['content']}"
            else:
                message["reasoning_content"] = reasoning
                if flavour == "gpt-oss" and message.get("tool_calls"):
                    message["content"] = ""  # the template refuses content and reasoning beside a tool call
    elif role in ("user", "system") and flavour not in _STRING_CONTENT and rng.random() < TEXT_PARTS:
        message["content"] = _parts(rng, message["content"])
    return message


def objects_only(messages: list[Message]) -> list[Message]:
    """Every tool call's JSON-string arguments decoded (left out when they are no object): the Qwen
    models' own templates iterate them as an object, as a server that decodes them sends them."""
    def decoded(call: dict[str, Any]) -> dict[str, Any]:
        body = dict(call["function"])
        if isinstance(body.get("arguments"), str):
            value = json.loads(body["arguments"])
            if isinstance(value, dict):
                body["arguments"] = value
            else:
                del body["arguments"]
        return {**call, "function": body}

    return [{**m, "tool_calls": [decoded(c) for c in m["tool_calls"]]} if m.get("tool_calls") else m
            for m in messages]


def without_call_preambles(messages: list[Message]) -> list[Message]:
    """An assistant tool call with reasoning loses its content (the gpt-oss template refuses both)."""
    return [{**m, "content": ""} if m["role"] == "assistant" and m.get("tool_calls") and m.get("reasoning_content")
            else m for m in messages]


def _add_image(rng: random.Random, messages: list[Message]) -> None:
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    if not users:
        return
    i = rng.choice(users)
    content = messages[i]["content"]
    parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
    messages[i] = {**messages[i], "content": [*(_image(rng) for _ in range(rng.randint(1, 2))), *parts]}


def _options(rng: random.Random, flavour: Flavour, has_image: bool) -> dict[str, Any]:
    if flavour == "gemma":  # the tokenizer's bos_token, which transformers passes the template
        return {"bos_token": "<bos>"}
    if flavour == "gemma4":  # (and thinking on for some)
        return {"bos_token": "<bos>", **({"enable_thinking": True} if rng.random() < 0.3 else {})}
    if flavour == "deepseek":
        return {"bos_token": "<｜begin▁of▁sentence｜>"}
    if flavour == "llama":  # (a date given: 3.2's default is today's, which the reference reads from the clock)
        return dict(LLAMA_OPTIONS)
    if flavour == "glm":  # (given and false: thinking off)
        return {"enable_thinking": False} if rng.random() < 0.3 else {}
    if rng.random() >= KEYWORD_OPTIONS:
        return {}
    if flavour == "nemotron":
        return {"enable_thinking": rng.random() < 0.6, **({"truncate_history_thinking": False}
                                                          if rng.random() < 0.3 else {})}
    if flavour.startswith("json"):  # (Qwen3's template reads enable_thinking, Qwen3-VL's add_vision_id)
        if flavour == "json-vision":
            return {"add_vision_id": True} if has_image else {}
        return {"enable_thinking": rng.random() < 0.6} if flavour == "json-thinking" else {}
    if flavour.startswith("chatml"):
        options: dict[str, Any] = {"enable_thinking": rng.random() < 0.6}
        if rng.random() < 0.3 and flavour != "chatml-objects":  # (Qwen3.5's templates have no such option)
            options["preserve_thinking"] = True
        if has_image:
            options["add_vision_id"] = True
        return options
    effort = rng.choice(("low", "medium", "high"))
    return {"reasoning_effort": effort} if flavour == "gpt-oss" else {"reasoning_effort": effort,
                                                                       "current_date": "2025-08-05"}


def _extra_system(rng: random.Random, messages: list[Message]) -> list[Message]:
    later = [i for i, m in enumerate(messages) if i and m["role"] == "user"]
    for i in sorted(rng.sample(later, min(len(later), rng.randint(1, 2))), reverse=True):
        text = "<system-reminder>" + _sentence(rng, 12) + "</system-reminder>"
        messages.insert(i, {"role": "system", "content": text})
    return messages


def _dress(
    rng: random.Random, messages: list[Message], flavour: Flavour, agent: bool = False
) -> tuple[list[Message], bool]:
    """The features of issue 18 laid over a generated conversation; also whether it holds images.

    An everyday conversation gets its later system messages from ``EXTRA_SYSTEM`` alone; an agent
    session keeps the system reminders it was generated with."""
    if not agent:
        messages = [m for i, m in enumerate(messages) if m["role"] != "system" or i == 0]
        if rng.random() < EXTRA_SYSTEM:
            messages = _extra_system(rng, messages)
    if flavour in ("chatml-strict", "chatml-objects"):  # its template raises on a later system message
        messages = _inline_reminders(messages)
    if flavour == "gemma":
        messages = alternating(messages)
    if flavour == "deepseek":
        messages = strings_only(messages)
    messages = [_dress_message(rng, m, flavour) for m in messages]
    if flavour in _OBJECT_ARGUMENTS:
        messages = objects_only(messages)
    if flavour == "llama":
        messages = one_call_a_turn(messages)
    has_image = flavour in _IMAGES and rng.random() < (AGENT_IMAGES if agent else IMAGES)
    if has_image:
        _add_image(rng, messages)
    return messages, has_image


def everyday_jobs(n: int, seed: int = 0, flavour: Flavour = "chatml") -> list[Job]:
    """``n`` everyday requests in the proportions above (``realistic_requests`` underneath)."""
    rng = random.Random(f"everyday-{flavour}-{seed}")
    apps = [_small_tools(rng) for _ in range(SHARED_TOOLSETS)]
    weights = [1 / (k + 1) for k in range(SHARED_TOOLSETS)]
    jobs = []
    for request in realistic_requests(n, seed + 1000):
        messages, has_image = _dress(rng, request.messages, flavour)
        tools = None
        if request.tools is not None:
            tools = rng.choices(apps, weights)[0] if rng.random() < 0.7 else request.tools
        jobs.append(Job(messages, tools, _options(rng, flavour, has_image)))
    return as_received(jobs)


def agent_jobs(sessions: int = 2, seed: int = 0, flavour: Flavour = "chatml", every: int = 24) -> list[Job]:
    """Follow-up requests of ``sessions`` coding-agent sessions (257 messages, 40 tools each).

    A session sends its growing history: a request after about every ``every`` messages, each
    with a fresh copy of the session's tool list (a repeated tool list) and the session's options.
    """
    rng = random.Random(f"agent-{flavour}-{seed}")
    jobs = []
    for s in range(sessions):
        request = agent_request(257, 40, seed + 1000 + s)
        messages, has_image = _dress(rng, request.messages, flavour, agent=True)
        options = _options(rng, flavour, has_image)
        cuts = [i + 1 for i, m in enumerate(messages) if m["role"] in ("user", "tool")
                and (i + 1 == len(messages) or messages[i + 1]["role"] == "assistant")]
        chosen = [cut for k, cut in enumerate(cuts) if cut == cuts[-1] or k % max(1, every // 4) == 0]
        for cut in dict.fromkeys(c for c in chosen if c >= every // 2):
            jobs.append(Job(messages[:cut], request.tools, options))
    return as_received(jobs)


# ---------------------------------------------------------------------------------------------------
# What the benches share about the formats: the corpus flavour each is valid for, the options every
# request of a fixed corpus is rendered with, and the agent rows' requests.

FLAVOURS: dict[str, Flavour] = {
    "chatml-multi-system": "chatml", "chatml-safety": "chatml-strict", "harmony": "harmony", "gpt-oss": "gpt-oss",
    "qwen3.5": "chatml-objects", "qwen3.5-nothink": "chatml-objects", "qwen3.6": "chatml-objects",
    "qwen3.8": "chatml-objects",
    # The JSON-call templates write a content that is no string as nothing (Qwen2.5 refuses it): text only.
    "qwen3": "json-thinking", "qwen3-instruct-2507": "json", "qwen2.5": "json", "qwen3-vl": "json-vision",
    # Nemotron prints a content that is no string as Python prints it: text only, as a client sends it.
    "nemotron-3-nano": "nemotron", "nemotron-3-super": "nemotron", "nemotron-3-ultra": "nemotron",
    "nemotron-3.5": "nemotron",
    # Gemma 3's roles alternate and it has no tools: the conversations as alternating chats (``alternating``).
    "gemma-3": "gemma",
    # Gemma 4's template iterates a call's arguments as an object: object arguments; parts and images.
    "gemma-4": "gemma4",
    # DeepSeek-V3's template joins every text to text: string contents and JSON-text arguments.
    "deepseek-v3": "deepseek",
    # GLM-4.5's template iterates a call's arguments as an object: object arguments, string contents.
    "glm-4.5": "glm",
    # The Llama 3 templates write one call a turn, its arguments as JSON: object arguments, string contents.
    "llama-3.1": "llama", "llama-3.2": "llama",
}
#: The options of every Llama 3 request: the tokenizer's bos_token, and a date.
LLAMA_OPTIONS = {"bos_token": "<|begin_of_text|>", "date_string": "26 Jul 2024"}
#: The options of the fixed (not held-out) corpora: Harmony and gpt-oss read today's date otherwise.
OPTIONS: dict[str, dict[str, Any]] = {
    "harmony": {"current_date": "2025-08-05", "reasoning_effort": "medium"},
    "gpt-oss": {"current_date": "2025-08-05", "reasoning_effort": "medium"},
}


def agent_options(name: str) -> dict[str, Any]:
    """The options of every agent request of format ``name`` (a tokenizer's ``bos_token``, a date)."""
    flavour = FLAVOURS[name]
    if flavour == "harmony":
        return {"current_date": "2025-08-05", "reasoning_effort": "medium"}
    if flavour in ("gemma", "gemma4"):
        return {"bos_token": "<bos>"}
    if flavour == "deepseek":
        return {"bos_token": "<｜begin▁of▁sentence｜>"}
    return dict(LLAMA_OPTIONS) if flavour == "llama" else {}


def agent_request_for(name: str, seed: int, n_messages: int = 257) -> Request:
    """``agent_request(n_messages, 40, seed)`` as format ``name``'s template takes it: reminders inline
    where the template refuses a later system message, the messages in the shape its flavour needs
    (object or JSON-text arguments, one call a turn, alternating roles, no call preambles)."""
    flavour = FLAVOURS[name]
    reminders: Literal["system", "inline"] = "inline" if flavour in ("chatml-strict", "chatml-objects") else "system"
    request = agent_request(n_messages, 40, seed, reminders=reminders)
    messages = without_call_preambles(request.messages) if flavour == "gpt-oss" else request.messages
    messages = objects_only(messages) if flavour in _OBJECT_ARGUMENTS else messages
    messages = one_call_a_turn(messages) if flavour == "llama" else messages
    messages = alternating(messages) if flavour == "gemma" else messages
    messages = strings_only(messages) if flavour == "deepseek" else messages
    return Request(messages, request.tools)


def agent_257(name: str, prepared: bool) -> Callable[[int], list[Job]]:
    """The agent-257 rows: three 257-message, 40-tool requests per round (seeds ``3r .. 3r+2``).

    ``prepared``: each toolset is prepared and used once by the format before timing (on a
    one-message request), as a server that keeps a session's ``PreparedTools`` has it; plain: each
    tool list is at its first sight. ``chatml-safety``'s template raises on a later system message,
    so its reminders are inline; the others get them as agents send them, as system messages."""
    import prompt_formats as pf  # the package the caller imported (the tree or an installed build)

    options = agent_options(name)

    def make(r: int) -> list[Job]:
        jobs = []
        for seed in range(3 * r, 3 * r + 3):
            request = agent_request_for(name, seed)
            tools: Any = request.tools
            if prepared:
                tools = pf.prepare_tools(request.tools)
                pf.get_format(name).render([{"role": "user", "content": "hello"}], tools, True, **options)
            jobs.append(Job(request.messages, tools, dict(options)))
        return as_received(jobs)

    return make


def gpt_oss_agent_requests(seeds: int, n_messages: int = 257, reminders: str = "system") -> list[Request]:
    """``agent_request`` for gpt-oss's template: a tool-call turn with both a preamble and reasoning
    keeps the reasoning (the template refuses both); reminders as later system messages (which the
    template drops) or ``"inline"`` in the next user message."""
    out = []
    for seed in range(seeds):
        request = agent_request(n_messages, 40, seed, reminders="inline" if reminders == "inline" else "system")
        messages = [{k: v for k, v in m.items() if k != "content"}
                    if m.get("tool_calls") and m.get("content") and m.get("reasoning_content") else m
                    for m in request.messages]
        out.append(Request(messages, request.tools))
    return out


def follow_ups(request: Request, count: int) -> list[list[Message]]:
    """A session's last ``count + 1`` requests: prefixes ending right before an assistant message."""
    messages = request.messages
    ends = [k for k in range(2, len(messages)) if messages[k]["role"] == "assistant"]
    return [messages[:k] for k in ends[-(count + 1):]]
