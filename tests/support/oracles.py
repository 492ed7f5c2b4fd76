"""Reference engines the tests compare against: the templates rendered by the real engines.

Nothing here is imported by the package. The Jinja2 oracle is configured as transformers configures
it for ``apply_chat_template`` (``tests/spans/test_transformers_oracle.py`` proves the two agree).
"""

from __future__ import annotations

import dataclasses
import json
import sys
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
    "gemma-3": "families/gemma3.jinja",
    "gemma-4": "families/gemma4.jinja",
    "deepseek-v3": "families/deepseekv3.jinja",
    "glm-4.5": "families/glm4moe.jinja",
    "llama-3.1": "families/llama3_1.jinja",
    "llama-3.2": "families/llama3_2.jinja",
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


def plain_template_data(value: Any) -> Any:
    """``value`` as transformers 5.24 hands it to a template (``_plain_template_data``): exact JSON
    scalars as they are; a subclass of ``str``, ``int`` or ``float`` as the plain value of its data;
    any mapping as a dict and lists and tuples as such, their items (and keys) read the same way; a
    numpy scalar as its Python value; a dataclass or pydantic model as the dict of its fields; and
    anything else as the placeholder ``"<TypeName>"``."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {plain_template_data(key): plain_template_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain_template_data(item) for item in value]
    if isinstance(value, tuple):
        return tuple(plain_template_data(item) for item in value)
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.generic):
        return plain_template_data(value.item())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: plain_template_data(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if callable(getattr(value, "model_dump", None)):
        return plain_template_data(value.model_dump())
    return f"<{type(value).__name__}>"


def render_jinja(
    template_name: str,
    messages: list[Any],
    tools: list[Mapping[str, Any]] | None = None,
    add_generation_prompt: bool = False,
    *,
    instruments: Mapping[str, Callable[..., Any]] | None = None,
    **options: Any,
) -> Outcome:
    """Render with the Jinja2 oracle, the messages, tools and options read as transformers hands them
    to the template (:func:`plain_template_data`, then the reasoning aliased); a ``raise_exception``
    of the template becomes ``("error", msg)``. ``instruments`` are the oracle's own functions
    (a ``strftime_now`` fixed to one day), passed to the template as they are.

    Any other exception (a type error inside the template) propagates: the tests only feed the
    oracle inputs within the documented input space.
    """
    import jinja2

    template = jinja_template(template_name)
    try:
        text = template.render(
            messages=alias_reasoning(plain_template_data(messages)),
            tools=plain_template_data(tools),
            documents=None,
            add_generation_prompt=add_generation_prompt,
            **plain_template_data(options),
            **(instruments or {}),
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
    """Each message without its ``None``-valued keys, as transformers hands messages to a template
    (``_normalize_chat_messages``: a mapping, a dataclass or a pydantic model read as a dict first);
    anything that is neither a list nor a tuple as it is."""
    if not isinstance(messages, (list, tuple)):
        return messages
    read = [message_as_dict(message) for message in messages]
    return [{key: value for key, value in message.items() if value is not None} if isinstance(message, dict)
            else message for message in read]


def takes(messages: Any, tools: Any) -> bool:
    """Whether transformers takes the messages (already read by :func:`without_nones`) and the tools
    at all: it raises a ``TypeError`` ("Chat messages should be dicts, dataclasses or pydantic models")
    for messages that are not a list of them, and a ``ValueError`` ("Tools should either be a JSON
    schema, or a callable function") for a tool that is no dict."""
    if not isinstance(messages, list) or not all(isinstance(message, dict) for message in messages):
        return False
    return tools is None or (isinstance(tools, (list, tuple)) and all(isinstance(tool, dict) for tool in tools))


def message_as_dict(message: Any) -> Any:
    """A message object as transformers reads it before anything else: a mapping, a dataclass or a
    pydantic model as a dict (of its fields); anything else as it is."""
    if isinstance(message, Mapping):
        return dict(message.items())
    if dataclasses.is_dataclass(message) and not isinstance(message, type):
        return {field.name: getattr(message, field.name) for field in dataclasses.fields(message)}
    if callable(getattr(message, "model_dump", None)):
        return message_as_dict(message.model_dump())
    return message


def render_jinja_as_transformers(
    template_name: str, messages: Any, tools: Any = None, add_generation_prompt: bool = False, **options: Any
) -> Outcome | None:
    """:func:`render_jinja` of the messages as transformers hands them to the template (each
    message's ``None``-valued keys dropped, then the reasoning aliased), or ``None`` where the
    engine itself fails: a type error (text concatenated with a value that is no string, a value
    ``tojson`` cannot encode, an undefined one among them) or an undefined value used."""
    import jinja2

    messages = without_nones(messages)
    if not takes(messages, tools):
        return None
    try:
        return render_jinja(template_name, messages, tools, add_generation_prompt, **options)
    except (TypeError, jinja2.exceptions.UndefinedError):
        return None


def render_ours(render: Callable[..., str], *args: Any, **kwargs: Any) -> Outcome:
    """Call one of our ``render`` methods, mapping a ``TemplateError`` to ``("error", message)``."""
    from prompt_formats import TemplateError

    try:
        return ("ok", render(*args, **kwargs))
    except TemplateError as exc:
        return ("error", str(exc))


def render_or_crash(render: Callable[..., str], *args: Any, **kwargs: Any) -> Outcome:
    """:func:`render_ours`, with an ``InvalidInputError`` as ``("crash", "")``: where the engine
    itself fails, ours must refuse the input naming a field of the messages or the tools."""
    from prompt_formats import InvalidInputError

    try:
        return render_ours(render, *args, **kwargs)
    except InvalidInputError as exc:
        assert exc.path.startswith(("messages", "tools")), exc
        return ("crash", "")


def assert_second_call_named(render: Callable[[list[Any]], str], oracle: Callable[[list[Any]], Outcome],
                              good: Any, call: Any, path: str) -> None:
    """An assistant turn whose second tool call is ``call`` (its first ``good``): the engine fails on it
    (``oracle`` says so: a crash), and ``render`` refuses it with an ``InvalidInputError`` at ``path``."""
    from prompt_formats import InvalidInputError

    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [good, call]}]
    assert oracle(messages) == ("crash", "")
    try:
        render(messages)
    except InvalidInputError as exc:
        assert exc.path == path, exc
    else:
        raise AssertionError(f"rendered, where the engine fails at {path}")


def harmony_encoding() -> Any:
    """openai-harmony's gpt-oss encoding, loaded once, when a test first asks for it (never at import:
    the quick tier imports every test module and runs no engine); every call checks the test's marker."""
    require("openai_harmony")
    return _harmony_encoding()


@cache
def _harmony_encoding() -> Any:
    import openai_harmony

    return openai_harmony.load_harmony_encoding(openai_harmony.HarmonyEncodingName.HARMONY_GPT_OSS)
