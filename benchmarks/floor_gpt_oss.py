"""The floor renderer of the prepared ``gpt-oss`` agent row (``bench_floor.py --format gpt-oss``).

``floor_render`` writes the gpt-oss template's prompt for ``run_all.py``'s agent requests (a leading
system message, later system reminders, users, assistant tool calls with reasoning, tool results)
and for nothing else: it checks nothing (no channel tags, no field types, no losses), reads the first
call of each assistant message as the template does, keeps no spans and makes one pass with no call
per message but the JSON encoders. It is a measurement, never a renderer to use. The system message
and the tools' namespace are the package's (the same per-toolset cache), so the gap to ours is the
turns. Compiled with mypyc beside the compiled build, it is that build's floor::

    mkdir /tmp/floor && cp benchmarks/floor_gpt_oss.py /tmp/floor && cd /tmp/floor
    /path/to/.venv-compiled/bin/python -m mypyc floor_gpt_oss.py   # mypy installed in that venv
"""

from __future__ import annotations

from typing import Any

import orjson

from prompt_formats._json import json_chunks
from prompt_formats.formats.gpt_oss.options import SystemOptions, system_message
from prompt_formats.formats.gpt_oss.prompt import _functions_text as functions_text
from prompt_formats.formats.gpt_oss.render import developer_message
from prompt_formats.formats.gpt_oss.tokens import (
    ANALYSIS,
    CALL,
    CALL_CHANNEL,
    CALL_HEAD,
    END,
    FINAL,
    GENERATION,
    MESSAGE,
    RESULT_CHANNEL,
    RESULT_HEAD,
    USER,
)


def floor_render(messages: list[dict[str, Any]], tools: Any, add_generation_prompt: Any, **options: Any) -> str:
    """The template's prompt for a request of the agent row (anything else: wrong or a raise).

    The template's order: the system message, the developer message (the first message's text and
    the tools), then the loop messages; a final answer takes out the analyses written before it.
    """
    first = messages[0]
    start = 1 if first["role"] in ("system", "developer") else 0
    out = [system_message(SystemOptions(options), bool(tools)),
           *developer_message(first["content"] if start else "", functions_text(tools))]
    analyses: list[int] = []
    name = ""
    for message in messages[start:]:
        role = message["role"]
        if role == "tool":
            out += (RESULT_HEAD, name, RESULT_CHANNEL, orjson.dumps(message["content"]).decode(), END)
        elif role == "assistant":
            calls = message.get("tool_calls")
            if calls is None:
                for at in reversed(analyses):
                    del out[at:at + 3]
                analyses = []
                out += (FINAL, message["content"], END)
                continue
            call = calls[0]["function"]
            analysis = message.get("content") or message.get("reasoning_content")
            if analysis:
                analyses.append(len(out))
                out += (ANALYSIS, analysis, END)
            name = call["name"]
            arguments = call["arguments"]
            text = orjson.dumps(arguments).decode() if type(arguments) is str else "".join(json_chunks(arguments, 0))
            out += (CALL_HEAD, name, CALL_CHANNEL, "json", MESSAGE, text, CALL)
        elif role == "user":
            out += (USER, message["content"], END)
    if add_generation_prompt:
        out.append(GENERATION)
    return "".join(out)
