"""Reference engines the tests compare against: the templates rendered by the real engines.

Nothing here is imported by the package. The Jinja2 oracle is configured as transformers configures
it for ``apply_chat_template`` (``tests/spans/test_transformers_oracle.py`` proves the two agree).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from .oracle_marks import require

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

Outcome = tuple[str, str]
"""``("ok", rendered_text)`` or ``("error", message)`` where the template raised."""

REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")

#: Each format's reference Jinja template, a fixture (``harmony``'s reference is Go's): the one map
#: the tests read it from.
JINJA_TEMPLATES = {
    "chatml-multi-system": "chatml_multi_system.jinja",
    "chatml-safety": "chatml_upstream.jinja",
    "gpt-oss": "gpt_oss.jinja",
    "qwen3.5": "families/qwen3_5_think.jinja",
    "qwen3.5-nothink": "families/qwen3_5_nothink.jinja",
    "qwen3.6": "families/qwen3_6.jinja",
    "qwen3.8": "families/qwen3_8.jinja",
    "qwen3": "families/qwen3.jinja",
    "qwen3-instruct-2507": "families/qwen3_instruct_2507.jinja",
    "qwen2.5": "families/qwen2_5.jinja",
    "qwen3-vl": "families/qwen3_vl.jinja",
    "nemotron-3-nano": "families/nemotron_3_nano.jinja",
    "nemotron-3-super": "families/nemotron_3_super.jinja",
    "nemotron-3-ultra": "families/nemotron_3_ultra.jinja",
    "nemotron-3.5": "families/nemotron_3_5.jinja",
}


def templates_of(*names: str) -> dict[str, str]:
    """The reference templates of the formats ``names``, by name."""
    return {name: JINJA_TEMPLATES[name] for name in names}


def fixture_text(name: str) -> str:
    """A template fixture's exact text (no newline translation)."""
    return (FIXTURES / name).read_bytes().decode("utf-8")


@cache
def jinja_template(name: str) -> Any:
    """The fixture compiled once in a Jinja2 environment configured like transformers' one."""
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(
        x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False
    ) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt: str) -> str:
        return datetime.now().strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(fixture_text(name))


def alias_reasoning(messages: list[Any]) -> list[Any]:
    """transformers 5.22+: the first non-None of the reasoning fields is also passed as
    ``reasoning_content`` (and ``thinking``)."""
    out = []
    for message in messages:
        if isinstance(message, dict):
            reasoning = next((message[k] for k in REASONING_FIELDS if message.get(k) is not None), None)
            if reasoning is not None:
                message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        out.append(message)
    return out


def render_jinja(
    template_name: str,
    messages: list[Any],
    tools: list[Mapping[str, Any]] | None = None,
    add_generation_prompt: bool = False,
    **options: Any,
) -> Outcome:
    """Render with the Jinja2 oracle; a ``raise_exception`` of the template becomes ``("error", msg)``.

    Any other exception (a type error inside the template) propagates: the tests only feed the
    oracle inputs within the documented input space.
    """
    import jinja2

    template = jinja_template(template_name)
    try:
        text = template.render(
            messages=alias_reasoning(messages),
            tools=tools,
            documents=None,
            add_generation_prompt=add_generation_prompt,
            **options,
        )
    except jinja2.exceptions.TemplateError as exc:
        if type(exc) is not jinja2.exceptions.TemplateError:
            raise
        return ("error", str(exc))
    return ("ok", text)


def render_jinja_or_crash(
    template_name: str, messages: list[Any], tools: Any = None, add_generation_prompt: bool = False, **options: Any
) -> Outcome | None:
    """:func:`render_jinja`, or ``None`` where Jinja2 itself refuses the input (a type error: the
    Qwen templates' ``arguments|items`` of a value that is no mapping)."""
    try:
        return render_jinja(template_name, messages, tools, add_generation_prompt, **options)
    except TypeError as exc:
        assert "Can only get item pairs from a mapping" in str(exc), exc
        return None


def without_nones(messages: Any) -> Any:
    """Each message (a mapping) without its ``None``-valued keys, as transformers hands messages to a
    template (``_normalize_chat_messages``); anything that is no list as it is."""
    if not isinstance(messages, list):
        return messages
    return [{key: value for key, value in message.items() if value is not None} if isinstance(message, Mapping)
            else message for message in messages]


def render_jinja_as_transformers(
    template_name: str, messages: Any, tools: Any = None, add_generation_prompt: bool = False, **options: Any
) -> Outcome | None:
    """:func:`render_jinja` of the messages as transformers hands them to the template (each
    message's ``None``-valued keys dropped, then the reasoning aliased), or ``None`` where the
    engine itself fails: a type error (text concatenated with a value that is no string, a value
    ``tojson`` cannot encode, an undefined one among them) or an undefined value used."""
    import jinja2

    try:
        return render_jinja(template_name, without_nones(messages), tools, add_generation_prompt, **options)
    except (TypeError, jinja2.exceptions.UndefinedError):
        return None


def render_ours(render: Callable[..., str], *args: Any, **kwargs: Any) -> Outcome:
    """Call one of our ``render`` methods, mapping a ``TemplateError`` to ``("error", message)``."""
    from prompt_formats import TemplateError

    try:
        return ("ok", render(*args, **kwargs))
    except TemplateError as exc:
        return ("error", str(exc))


def harmony_encoding() -> Any:
    """openai-harmony's gpt-oss encoding, loaded once, when a test first asks for it (never at import:
    the quick tier imports every test module and runs no engine); every call checks the test's marker."""
    require("openai_harmony")
    return _harmony_encoding()


@cache
def _harmony_encoding() -> Any:
    import openai_harmony

    return openai_harmony.load_harmony_encoding(openai_harmony.HarmonyEncodingName.HARMONY_GPT_OSS)
