"""The floor renderer of the everyday ChatML rows (``bench_floor.py``), in a module of its own.

``floor_render`` writes the Qwen3.6 template's prompt for the requests of the held-out everyday
corpus and for nothing else: no checks, no spans, no guard; see ``bench_floor.py``.
``floor_render_spans`` is the same for ``chatml-multi-system``'s ``render_spans`` (``bench_floor.py
--spans``): the text, the ranges and the losses of that corpus's requests. It is its own
module so that it can be compiled with mypyc beside the compiled build, for the floor of that
build (docs/performance.md, "The compiled build beside the pure one")::

    mkdir /tmp/floor && cp benchmarks/floor_chatml.py /tmp/floor && cd /tmp/floor
    /path/to/.venv-compiled/bin/python -m mypyc floor_chatml.py   # mypy installed in that venv
"""

from __future__ import annotations

from typing import Any

from prompt_formats._json import tojson
from prompt_formats.formats.chatml.render import tools_block
from prompt_formats.formats.chatml.tokens import (
    ASSISTANT_THINKING,
    ASSISTANT_TURN,
    CALL_AFTER_CONTENT,
    CALL_FIRST,
    CALL_NEXT,
    CALLS_END,
    GENERATION_PROMPT,
    GENERATION_PROMPT_NO_THINKING,
    IMAGE,
    SYSTEM_TURN,
    THINK_BLOCK_END,
    THINK_CLOSE,
    THINK_OPEN,
    TOOL_RESPONSE_CLOSE,
    TOOL_RESPONSE_FIRST,
    TOOL_RESPONSE_LAST,
    TOOL_RESPONSE_MORE,
    TOOL_RESPONSE_NEXT,
    TOOL_RESPONSE_OPEN,
    TURN_END,
    USER_TURN,
)
from prompt_formats.spans import RenderedPrompt

Message = dict[str, Any]


def _text(content: Any, images: list[int], numbered: Any) -> str:
    """A content's text: a string, or text and image parts (the corpus has no others)."""
    if type(content) is str:
        return content
    if content is None:
        return ""
    pieces = []
    for part in content:
        if "image" in part or "image_url" in part or part.get("type") == "image":
            images[0] += 1
            pieces.append(f"Picture {images[0]}: {IMAGE}" if numbered else IMAGE)
        else:
            pieces.append(part["text"])
    return "".join(pieces)


def _merged(messages: list[Message]) -> list[Message]:
    """Every system message's trimmed text, the empty ones dropped, joined into one leading one."""
    texts = [_text(m["content"], [0], None).strip() for m in messages if m["role"] == "system"]
    rest = [m for m in messages if m["role"] != "system"]
    texts = [text for text in texts if text]
    return [{"role": "system", "content": "\n\n".join(texts)}, *rest] if texts else rest


def _last_query(msgs: list[Message]) -> int:
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i]["role"] == "user":
            query = _text(msgs[i]["content"], [0], None).strip()
            if not (query.startswith(TOOL_RESPONSE_OPEN) and query.endswith(TOOL_RESPONSE_CLOSE)):
                return i
    raise ValueError("no user query")


def _prologue(msgs: list[Message], tools: Any) -> list[str]:
    block = tools_block(tools) if tools else ""
    system = msgs[0]["content"] if msgs[0]["role"] == "system" else None
    if block:
        return [block, "\n\n" + system, TURN_END] if system else [block, TURN_END]
    return [SYSTEM_TURN + system + TURN_END] if system is not None else []


def floor_render(messages: list[Message], tools: Any, add_generation_prompt: bool, enable_thinking: Any = None,
                 preserve_thinking: Any = None, add_vision_id: Any = None) -> str:
    """The template's prompt for a request of the everyday corpus (anything else: wrong or a raise).

    One function for the turns: a call per assistant turn or per tool call costs more than a tenth of
    the floor, so the floor makes none (the package's house rule of short functions is not the floor's).
    """
    msgs = _merged(messages) if any(m["role"] == "system" for m in messages) else messages
    out = _prologue(msgs, tools)
    thinking_after = -1 if preserve_thinking is True else _last_query(msgs)
    images = [0]
    last = len(msgs) - 1
    append, extend = out.append, out.extend
    for pos, message in enumerate(msgs):
        role = message["role"]
        content = message.get("content")
        content = (content if type(content) is str else _text(content, images, add_vision_id)).strip()
        if role == "tool":
            extend((TOOL_RESPONSE_FIRST if msgs[pos - 1]["role"] != "tool" else TOOL_RESPONSE_NEXT, content,
                    TOOL_RESPONSE_LAST if pos == last or msgs[pos + 1]["role"] != "tool" else TOOL_RESPONSE_MORE))
        elif role == "assistant":
            reasoning = message.get("reasoning_content")
            if reasoning is None:
                reasoning = ""
                if THINK_CLOSE in content:
                    reasoning = content.split(THINK_CLOSE)[0].rstrip("\n").split(THINK_OPEN)[-1].lstrip("\n")
                    content = content.split(THINK_CLOSE)[-1].lstrip("\n")
            if pos > thinking_after:
                extend((ASSISTANT_THINKING, reasoning.strip(), THINK_BLOCK_END, content))
            else:
                extend((ASSISTANT_TURN, content))
            calls = message.get("tool_calls")
            if not calls:
                append(TURN_END)
                continue
            opening = CALL_AFTER_CONTENT if content else CALL_FIRST
            for call in calls:
                function = call["function"]
                arguments = function["arguments"]
                if type(arguments) is str:
                    append(f"{opening}{function['name']}>\n<parameter=arguments>\n{arguments}\n</parameter>\n")
                else:
                    append(f"{opening}{function['name']}>\n")
                    for key, value in arguments.items():
                        append(f"<parameter={key}>\n{value if type(value) is str else tojson(value)}\n</parameter>\n")
                opening = CALL_NEXT
            append(CALLS_END)
        elif role == "user":
            extend((USER_TURN, content, TURN_END))
    if add_generation_prompt:
        append(GENERATION_PROMPT_NO_THINKING if enable_thinking is False else GENERATION_PROMPT)
    return "".join(out)


def floor_render_spans(messages: list[Message], tools: Any, add_generation_prompt: bool, enable_thinking: Any = None,
                       preserve_thinking: Any = None, add_vision_id: Any = None) -> RenderedPrompt:
    """``chatml-multi-system``'s ``render_spans`` result for a request of the everyday corpus: the
    text, each input message's ranges, the generated ranges (``"all"``) and the losses, in
    :func:`floor_render`'s one pass with the positions added up as the pieces are written."""
    origin = [i for i, m in enumerate(messages) if m["role"] != "system"]
    msgs = _merged(messages) if len(origin) < len(messages) else messages
    if len(msgs) > len(origin):
        origin.insert(0, -1)
    out = _prologue(msgs, tools)
    ranges: list[tuple[tuple[int, int], ...]] = [()] * len(messages)
    if msgs[0]["role"] == "system":
        at = len(out[0]) + 2 if len(out) == 3 else len(SYSTEM_TURN)
        for i, m in enumerate(messages):
            if m["role"] == "system" and (size := len(_text(m["content"], [0], None).strip())):
                ranges[i] = ((at, at + size),)
                at += size + 2
    pos = sum(map(len, out))
    generated: list[tuple[int, int]] = []
    dropped: list[str] = []
    thinking_after = -1 if preserve_thinking is True else _last_query(msgs)
    images = [0]
    last = len(msgs) - 1
    append, extend = out.append, out.extend
    for at, message in enumerate(msgs):
        role = message["role"]
        index = origin[at]
        content = message.get("content")
        content = (content if type(content) is str else _text(content, images, add_vision_id)).strip()
        if role == "tool":
            head = TOOL_RESPONSE_FIRST if msgs[at - 1]["role"] != "tool" else TOOL_RESPONSE_NEXT
            tail = TOOL_RESPONSE_LAST if at == last or msgs[at + 1]["role"] != "tool" else TOOL_RESPONSE_MORE
            extend((head, content, tail))
            if content:
                ranges[index] = ((pos + len(head), pos + len(head) + len(content)),)
            pos += len(head) + len(content) + len(tail)
        elif role == "assistant":
            start = len(out)
            reasoning = message.get("reasoning_content")
            kept = at > thinking_after
            if reasoning is None:
                reasoning = ""
                if THINK_CLOSE in content:
                    reasoning = content.split(THINK_CLOSE)[0].rstrip("\n").split(THINK_OPEN)[-1].lstrip("\n")
                    content = content.split(THINK_CLOSE)[-1].lstrip("\n")
                    if not kept and reasoning.strip():
                        dropped.append(f"messages[{index}].content")
            elif not kept and reasoning.strip():
                dropped.append(f"messages[{index}].reasoning_content")
            if kept:
                extend((ASSISTANT_THINKING, reasoning.strip(), THINK_BLOCK_END, content))
            else:
                extend((ASSISTANT_TURN, content))
            calls = message.get("tool_calls")
            if calls:
                opening = CALL_AFTER_CONTENT if content else CALL_FIRST
                for call in calls:
                    function = call["function"]
                    arguments = function["arguments"]
                    if type(arguments) is str:
                        append(f"{opening}{function['name']}>\n<parameter=arguments>\n{arguments}\n</parameter>\n")
                    else:
                        append(f"{opening}{function['name']}>\n")
                        for key, value in arguments.items():
                            text = value if type(value) is str else tojson(value)
                            append(f"<parameter={key}>\n{text}\n</parameter>\n")
                    opening = CALL_NEXT
                append(CALLS_END)
            else:
                append(TURN_END)
            end = pos + sum(map(len, out[start:]))
            turn = ((pos + _HEADER, end - 1),)
            ranges[index] = turn
            generated += turn
            pos = end
        elif role == "user":
            extend((USER_TURN, content, TURN_END))
            if content:
                ranges[index] = ((pos + _USER, pos + _USER + len(content)),)
            pos += _USER + len(content) + _TURN_END
    if add_generation_prompt:
        append(GENERATION_PROMPT_NO_THINKING if enable_thinking is False else GENERATION_PROMPT)
    return RenderedPrompt.unchecked("".join(out), tuple(ranges), tuple(generated), tuple(dropped))


_HEADER, _USER, _TURN_END = len(ASSISTANT_TURN), len(USER_TURN), len(TURN_END)
