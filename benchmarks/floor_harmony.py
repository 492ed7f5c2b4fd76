"""The floor renderer of the everyday ``harmony`` row (``bench_floor.py --format harmony``).

``floor_render`` writes the prompt of Ollama's gpt-oss Go template for the requests of the held-out
everyday corpus (``heldout.everyday_jobs(..., "harmony")``) and for nothing else: it checks nothing,
reads only the fields that corpus holds (a tool result's ``name``, never its call id; reasoning as
``reasoning_content``; no prefill), keeps no spans and makes one pass with no call per message.
It is a measurement, never a renderer to use: what any pure-Python renderer of this template must
spend at least. The header's date and reasoning line are the package's (``harmony.options``).
``floor_render_spans`` is the same for ``render_spans`` (``bench_floor.py --spans``): the text, the
ranges and the losses of that corpus's requests.
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
from prompt_formats.spans import RenderedPrompt


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


def floor_render_spans(messages: list[dict[str, Any]], tools: Any, add_generation_prompt: Any,
                       current_date: Any = None, reasoning_effort: Any = None) -> RenderedPrompt:
    """``render_spans``' result for a request of the everyday corpus: the text, each message's
    ranges, the generated ranges (``"all"``) and the losses, in one pass after a scan of the roles.

    The header's system text and the last user message are read first (a scan over the roles), so
    no range moves and no reasoning is written and taken out; positions are added up as written.
    """
    dropped: list[str] = []
    offers_python = False
    for index, tool in enumerate(tools or ()):
        function = tool["function"]
        if function["name"] != "python" or offers_python:
            dropped.append(f"tools[{index}]")
            continue
        offers_python = True
        dropped += [f"tools[{index}].function.{key}" for key in ("description", "parameters") if function.get(key)]
    texts = [_floor_text(m["content"]) for m in messages]
    roles = [m["role"] for m in messages]
    last_user = len(roles) - 1 - roles[::-1].index("user") if "user" in roles else -1
    system = "\n\n".join([texts[i] for i, role in enumerate(roles) if role == "system"])
    out = [SYSTEM_START, system, DATE, date_text(current_date), reasoning_line_for(None, reasoning_effort),
           PYTHON_TOOL if offers_python else "", SYSTEM_END]
    pos = sum(map(len, out))
    system_at = len(SYSTEM_START)
    systems = 0
    ranges: list[tuple[tuple[int, int], ...]] = [()] * len(messages)
    generated: list[tuple[int, int]] = []
    previous: Any = None
    for index, message in enumerate(messages):
        role = roles[index]
        content = texts[index]
        size = len(content)
        if role == previous and role != "tool":
            if role == "system":
                system_at += 2
                if size:
                    ranges[index] = ((system_at, system_at + size),)
                system_at += size
                systems += 1
            elif role == "user" or out[-3] is FINAL:
                out[-2] += "\n\n" + content
                start = pos - _END + 2
                pos = start + size + _END
                if size:
                    ranges[index] = ((start, start + size),)
                if role == "assistant":
                    generated[-1] = (generated[-1][0], pos)
            else:
                out += (FINAL, "\n\n" + content, END)
                start = pos + _FINAL + 2
                generated.append((pos + _AUTHOR, start + size + _END))
                pos = start + size + _END
                if size:
                    ranges[index] = ((start, start + size),)
            if role == "assistant" and (message.get("reasoning_content") or message.get("tool_calls")):
                dropped += _lost(index, message, False)
        elif role == "user":
            out += (USER, content, END)
            start = pos + _USER
            pos = start + size + _END
            if size:
                ranges[index] = ((start, start + size),)
        elif role == "assistant":
            own: tuple[tuple[int, int], ...] = ()
            thinking = message.get("reasoning_content")
            if thinking and index > last_user:
                out += (ANALYSIS, thinking, END)
                start = pos + _ANALYSIS
                own = ((start, start + len(thinking)),)
                generated.append((pos + _AUTHOR, start + len(thinking) + _END))
                pos = start + len(thinking) + _END
            if size:
                out += (FINAL, content, END)
                start = pos + _FINAL
                own += ((start, start + size),)
                generated.append((pos + _AUTHOR, start + size + _END))
                pos = start + size + _END
            ranges[index] = own
            if (thinking and index <= last_user) or message.get("tool_calls"):
                dropped += _lost(index, message, index > last_user)
        elif role == "tool":
            if message.get("name") == "python":
                out += (PYTHON_RESULT, content, END)
                start = pos + _PYTHON
                pos = start + size + _END
                if size:
                    ranges[index] = ((start, start + size),)
            elif size:
                dropped.append(f"messages[{index}]")
        elif role == "system":
            system_at += 2 if systems else 0
            if size:
                ranges[index] = ((system_at, system_at + size),)
            system_at += size
            systems += 1
        previous = role
    out.append(GENERATION)
    return RenderedPrompt.unchecked("".join(out), tuple(ranges), tuple(generated), tuple(dropped))


_END, _USER, _ANALYSIS, _FINAL, _PYTHON = len(END), len(USER), len(ANALYSIS), len(FINAL), len(PYTHON_RESULT)
_AUTHOR = len(GENERATION)


def _floor_text(content: Any) -> str:
    return content if type(content) is str else "\n\n".join([part["text"] for part in content])


def _lost(index: int, message: dict[str, Any], shown: bool) -> list[str]:
    """The losses of an assistant message: its reasoning unless ``shown``, its tool calls."""
    lost = [] if shown or not message.get("reasoning_content") else [f"messages[{index}].reasoning_content"]
    return [*lost, f"messages[{index}].tool_calls"] if message.get("tool_calls") else lost
