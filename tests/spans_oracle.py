"""The generation oracle: transformers' own renderer on the tagged copies of the reference templates.

``tests/fixtures/*_generation.jinja`` are the reference templates with ``{% generation %}`` …
``{% endgeneration %}`` around exactly what docs/training-data.md defines as generated (ChatML: each
assistant turn after ``<|im_start|>assistant\\n`` up to and including its ``<|im_end|>``; gpt-oss:
each assistant message after ``<|start|>assistant`` up to and including its ``<|end|>``, ``<|call|>``
or ``<|return|>``). ``tests/test_spans_oracle.py`` proves they render the same text as the untagged
templates and put the tags where that definition says.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Iterator, Mapping
from typing import Any

from oracles import fixture_text

#: Each reference template and its tagged copy.
TAGGED = {
    "chatml_multi_system.jinja": "chatml_multi_system_generation.jinja",
    "chatml_upstream.jinja": "chatml_upstream_generation.jinja",
    "gpt_oss.jinja": "gpt_oss_generation.jinja",
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
    ``return_assistant_tokens_mask=True``: the prompt text and transformers' generation indices."""
    from transformers.utils.chat_template_utils import render_jinja_template

    texts, indices = render_jinja_template(
        conversations=[messages],
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
