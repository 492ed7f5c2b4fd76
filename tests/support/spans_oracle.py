"""The generation oracle: transformers' own renderer on the tagged copies of the reference templates.

``tests/fixtures/*_generation.jinja`` are the reference templates with ``{% generation %}`` …
``{% endgeneration %}`` around exactly what docs/training-data.md defines as generated (ChatML: each
assistant turn after ``<|im_start|>assistant\\n`` up to and including its ``<|im_end|>``; gpt-oss:
each assistant message after ``<|start|>assistant`` up to and including its ``<|end|>``, ``<|call|>``
or ``<|return|>``). ``tests/spans/test_spans_oracle.py`` proves they render the same text as the untagged
templates and put the tags where that definition says.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import strategies as st

from prompt_formats.format.spans import normalize_ranges
from tests.support.oracles import fixture_text
from tests.support.strategies import plain_text, text

#: Each reference template and its tagged copy.
TAGGED = {
    "chatml_multi_system.jinja": "chatml_multi_system_generation.jinja",
    "chatml_upstream.jinja": "chatml_upstream_generation.jinja",
    "gpt_oss.jinja": "gpt_oss_generation.jinja",
    **{f"families/{name}.jinja": f"families/{name}_generation.jinja"
       for name in ("gemma3", "gemma4", "deepseekv3", "glm4moe", "qwen3_5_think", "qwen3_5_nothink", "qwen3_6",
                    "qwen3_8", "qwen3", "qwen3_instruct_2507", "qwen2_5", "qwen3_vl", "nemotron_3_nano",
                    "nemotron_3_super", "nemotron_3_ultra", "nemotron_3_5", "llama3_1", "llama3_2")},
}

Outcome = tuple[str, Any]
"""``("ok", (text, generation_indices))`` or ``("error", "ExceptionType: message")``."""


def render_with_generation(
    template_name: str,
    messages: list[Any],
    tools: list[Mapping[str, Any]] | None = None,
    add_generation_prompt: bool = False,
    **kwargs: Any,
) -> tuple[str, list[tuple[int, int]]]:
    """The fixture rendered by ``transformers.utils.chat_template_utils.render_jinja_template`` with
    ``return_assistant_tokens_mask=True``, the messages normalised first as ``apply_chat_template``
    does (``_normalize_chat_messages``: each message's ``None``-valued keys dropped): the prompt text
    and transformers' generation indices."""
    from transformers.utils.chat_template_utils import _normalize_chat_messages, render_jinja_template

    texts, indices = render_jinja_template(
        conversations=[_normalize_chat_messages(messages)],
        tools=tools,
        chat_template=fixture_text(template_name),
        add_generation_prompt=add_generation_prompt,
        return_assistant_tokens_mask=True,
        **kwargs,
    )
    return texts[0], [tuple(pair) for pair in indices[0]]  # type: ignore[misc]


def outcome(template_name: str, *args: Any, **kwargs: Any) -> Outcome:
    """:func:`render_with_generation`, with any exception turned into ``("error", "Type: message")``
    so that a template's failures can be compared too."""
    try:
        return ("ok", render_with_generation(template_name, *args, **kwargs))
    except Exception as exc:
        return ("error", f"{type(exc).__name__}: {exc}")


class _FixedDatetime(datetime.datetime):
    @classmethod
    def now(cls, tz: datetime.tzinfo | None = None) -> _FixedDatetime:
        return cls(2026, 1, 2, 12, 0, 0)


@contextlib.contextmanager
def fixed_today() -> Iterator[str]:
    """Make transformers' ``strftime_now`` (gpt-oss's date) read 2026-01-02 inside the block, so that
    two renders compared with each other cannot straddle midnight. Yields that date."""
    from transformers.utils import chat_template_utils

    saved = chat_template_utils.datetime
    chat_template_utils.datetime = _FixedDatetime  # type: ignore[misc]
    try:
        yield "2026-01-02"
    finally:
        chat_template_utils.datetime = saved  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------------
# gpt-oss-shaped conversations (text content, one call per tool-calling turn, tool results after it),
# sometimes with a message the template refuses.

gpt_tools = st.lists(
    st.sampled_from(
        [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Weather.",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
                },
            },
            {"type": "function", "function": {"name": "now", "description": "The time."}},
        ]
    ),
    max_size=2,
)
words = st.one_of(text, plain_text)
call = st.builds(
    lambda name, args, wrapped: (
        {"type": "function", "function": {"name": name, "arguments": args}}
        if wrapped
        else {"name": name, "arguments": args}
    ),
    st.sampled_from(["get_weather", "now"]),
    st.one_of(st.dictionaries(plain_text, plain_text, max_size=2), words),
    st.booleans(),
)


@st.composite
def gpt_oss_assistant(draw: st.DrawFn) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant"}
    if draw(st.integers(0, 5)):
        message["content"] = draw(words)
    if draw(st.booleans()):
        message["thinking"] = draw(words)
    if draw(st.booleans()):
        message["tool_calls"] = [draw(call)]
    return message


@st.composite
def gpt_oss_conversation(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": draw(st.sampled_from(["system", "developer"])), "content": draw(words)})
    for _ in range(draw(st.integers(1, 3))):
        messages.append({"role": "user", "content": draw(words)})
        for _ in range(draw(st.integers(0, 3))):
            assistant = draw(gpt_oss_assistant())
            messages.append(assistant)
            if "tool_calls" in assistant:
                messages.extend({"role": "tool", "content": draw(words)} for _ in range(draw(st.integers(0, 2))))
    if draw(st.integers(0, 9)) == 0:
        messages.insert(
            draw(st.integers(0, len(messages))),
            draw(
                st.sampled_from(
                    [
                        {"role": "tool", "content": "x"},
                        {"role": "assistant", "content": None},
                        {"role": "user", "content": [{"type": "text", "text": "t"}]},
                    ]
                )
            ),
        )
    return messages


gpt_kwargs = st.fixed_dictionaries(
    {},
    optional={
        "reasoning_effort": st.sampled_from(["low", "high"]),
        "model_identity": plain_text,
        "builtin_tools": st.sampled_from([["python"], ["browser", "python"], []]),
    },
)


def expected_generated(roles: list[Any], indices: list[tuple[int, int]], policy: str) -> tuple[tuple[int, int], ...]:
    """transformers' generation indices (one per assistant message, in order) selected by ``policy``,
    in canonical form (touching ranges are one)."""
    assistants = [i for i, role in enumerate(roles) if role == "assistant"]
    assert len(assistants) == len(indices)
    chosen = list(zip(assistants, indices, strict=True))
    if policy == "last":
        chosen = chosen[-1:]
    elif policy == "after_last_user":
        last_user = max((i for i, role in enumerate(roles) if role == "user"), default=-1)
        chosen = [pair for pair in chosen if pair[0] > last_user]
    return normalize_ranges((a, b) for _, (a, b) in chosen)
