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

Every message is text-only (string content), reasoning is in ``reasoning_content``, tool calls use the
``{"id", "type": "function", "function": {"name", "arguments": {...}}}`` shape with mapping arguments
(a few as JSON strings), and tool results carry ``name`` and ``tool_call_id``. So every corpus is
valid input for every format (ChatML, Harmony), ``single_system``/``reminders="inline"`` aside.
"""

from __future__ import annotations

import json
import random
from typing import Any, Literal, NamedTuple

__all__ = [
    "Request",
    "agent_request",
    "agent_tools",
    "realistic_conversations",
    "realistic_requests",
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
