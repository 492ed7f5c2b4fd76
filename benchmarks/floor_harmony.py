"""The floor renderer of the everyday ``harmony`` row (``bench_floor.py --format harmony``).

``floor_render`` writes the prompt of Ollama's gpt-oss Go template for the requests of the held-out
everyday corpus (``heldout.everyday_jobs(..., "harmony")``) and for nothing else: it checks nothing,
reads only the fields that corpus holds (a tool result's ``name``, never its call id; reasoning as
``reasoning_content``; no prefill), keeps no spans and makes one pass with no call per message.
It is a measurement, never a renderer to use: what any pure-Python renderer of this template must
spend at least. The header's date and reasoning line are the package's (``harmony.options``).
Compiled with mypyc beside the compiled build, it is that build's floor::

    mkdir /tmp/floor && cp benchmarks/floor_harmony.py /tmp/floor && cd /tmp/floor
    /path/to/.venv-compiled/bin/python -m mypyc floor_harmony.py   # mypy installed in that venv
"""

from __future__ import annotations

from typing import Any

from prompt_formats.formats.harmony.options import date_text, reasoning_line_for
from prompt_formats.formats.harmony.tokens import (
    ANALYSIS,
    DATE,
    END,
    FINAL,
    GENERATION,
    PYTHON_RESULT,
    PYTHON_TOOL,
    SYSTEM_END,
    SYSTEM_START,
    USER,
)


def floor_render(messages: list[dict[str, Any]], tools: Any, add_generation_prompt: Any,
                 current_date: Any = None, reasoning_effort: Any = None) -> str:
    """The template's prompt for a request of the everyday corpus (anything else: wrong or a raise).

    The template's order: the header, then each message (one of the previous message's role joins
    its text after a blank line; a user message takes out the reasoning written before it).
    """
    offers_python = False
    if tools:
        for tool in tools:
            if tool["function"]["name"] == "python":
                offers_python = True
    out = [SYSTEM_START, "", DATE, date_text(current_date), reasoning_line_for(None, reasoning_effort),
           PYTHON_TOOL if offers_python else "", SYSTEM_END]
    system: list[str] = []
    analyses: list[int] = []
    previous: Any = None
    run = 0
    for message in messages:
        role = message["role"]
        content = message["content"]
        if type(content) is not str:
            content = "\n\n".join([part["text"] for part in content])
        if role == previous and role != "tool":
            if role == "system":
                system.append(content)
            elif role == "user" or (len(out) > run and out[-3] is FINAL):
                out[-2] += "\n\n" + content
            else:
                out += (FINAL, "\n\n" + content, END)
        elif role == "user":
            for at in analyses:
                out[at] = out[at + 1] = out[at + 2] = ""
            analyses = []
            out += (USER, content, END)
        elif role == "assistant":
            run = len(out)
            thinking = message.get("reasoning_content")
            if thinking:
                analyses.append(run)
                out += (ANALYSIS, thinking, END)
            if content:
                out += (FINAL, content, END)
        elif role == "tool":
            if message.get("name") == "python":
                out += (PYTHON_RESULT, content, END)
        elif role == "system":
            system.append(content)
        previous = role
    out[1] = "\n\n".join(system)
    out.append(GENERATION)
    return "".join(out)
