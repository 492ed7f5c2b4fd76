"""The reference template engines the benchmarks race against, each set up once.

- Jinja2: the test oracle's environment (``tests/oracles.py``), configured as transformers configures
  it (sandboxed, ``trim_blocks``/``lstrip_blocks``, ``loopcontrols``, ``tojson`` = ``json.dumps``,
  ``raise_exception``), the template compiled once.
- MiniJinja (PyPI ``minijinja``): configured as close to that as it allows: the same
  ``trim_blocks``/``lstrip_blocks`` (loop controls are built in), ``tojson`` replaced by the same
  ``json.dumps`` call (its own differs: HTML-safe escapes), ``raise_exception`` and
  ``strftime_now`` globals, Python-compatible string methods on (``pycompat``, needed by
  ``.split``/``.startswith`` in the template), the template compiled once and cached by the
  environment.

Both render with ``render(messages, tools, add_generation_prompt, **options)``, the keyword arguments
transformers passes (``documents=None`` included).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))

from oracles import fixture_text, jinja_template  # noqa: E402

__all__ = ["Renderer", "jinja2_renderer", "minijinja_renderer", "versions"]

Renderer = Callable[..., str]


def jinja2_renderer(template_name: str) -> Renderer:
    """``render(messages, tools, add_generation_prompt, **options)`` with Jinja2, compiled once."""
    template = jinja_template(template_name)

    def render(messages: Any, tools: Any = None, add_generation_prompt: bool = False, **options: Any) -> str:
        return template.render(  # type: ignore[no-any-return]
            messages=messages, tools=tools, documents=None, add_generation_prompt=add_generation_prompt, **options
        )

    return render


def _tojson(
    x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False
) -> str:
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def minijinja_renderer(template_name: str) -> Renderer:
    """``render(messages, tools, add_generation_prompt, **options)`` with MiniJinja, compiled once."""
    import minijinja

    def raise_exception(message: str) -> None:
        raise minijinja.TemplateError(message)

    def strftime_now(fmt: str) -> str:
        return datetime.now().strftime(fmt)

    env = minijinja.Environment(
        templates={template_name: fixture_text(template_name)},
        filters={"tojson": _tojson},
        globals={"raise_exception": raise_exception, "strftime_now": strftime_now},
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        debug=False,
        pycompat=True,
    )

    def render(messages: Any, tools: Any = None, add_generation_prompt: bool = False, **options: Any) -> str:
        return env.render_template(  # type: ignore[no-any-return]
            template_name,
            messages=messages,
            tools=tools,
            documents=None,
            add_generation_prompt=add_generation_prompt,
            **options,
        )

    return render


def versions() -> dict[str, str]:
    """Versions of the interpreter and the engines, for the tables' headers."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for package in ("jinja2", "minijinja", "orjson"):
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = "missing"
    return out
