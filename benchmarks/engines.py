"""The reference template engines the benchmarks race against, each set up once.

- Jinja2 configured as transformers configures it (sandboxed, ``trim_blocks``/``lstrip_blocks``,
  ``loopcontrols``, ``tojson`` = ``json.dumps``, ``raise_exception``, ``strftime_now``), the template
  compiled once (transformers caches compiled templates too), and each message's reasoning field
  passed as ``reasoning_content`` and ``thinking`` too, as transformers 5.22+ does per call (timed:
  transformers pays it on every render). Built here, not taken from the tests, so the benchmarks
  do not depend on the tests' layout.
- MiniJinja (PyPI ``minijinja``): configured as close to that as it allows: the same
  ``trim_blocks``/``lstrip_blocks`` (loop controls are built in), ``tojson`` replaced by the same
  ``json.dumps`` call (its own differs: HTML-safe escapes), ``raise_exception`` and
  ``strftime_now`` globals, Python-compatible string methods on (``pycompat``, needed by
  ``.split``/``.startswith`` in the template), the template compiled once and cached by the
  environment.

- Go ``text/template`` for Harmony: the oracle program in ``tests/support/oracle/harmony`` (built once), which
  does per render what Ollama does per request (collate, build the data, execute the template) and
  times itself.

The Jinja engines render with ``render(messages, tools, add_generation_prompt, **options)``, the keyword arguments
transformers passes (``documents=None`` included).
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")

__all__ = [
    "FIXTURES", "TEMPLATES", "GoHarmony", "Renderer", "has_minijinja", "jinja2_renderer", "minijinja_renderer",
    "versions",
]


def _tests_support(module: str) -> Any:
    """The tests' ``tests.support.<module>``, found from the tree's root (the package under test is the
    one already imported: the tree's, or an installed build's)."""
    sys.path.insert(0, str(ROOT))
    try:
        return importlib.import_module(f"tests.support.{module}")
    finally:
        sys.path.remove(str(ROOT))


#: The reference template of each format that Jinja renders (``harmony``'s reference is Go's): the
#: tests' one map of them.
TEMPLATES: dict[str, str] = _tests_support("oracles").JINJA_TEMPLATES

Renderer = Callable[..., str]


def fixture_text(name: str) -> str:
    """A reference template's exact text (no newline translation)."""
    return (FIXTURES / name).read_bytes().decode("utf-8")


def alias_reasoning(messages: list[Any]) -> list[Any]:
    """What transformers 5.22+ does to the messages: the first reasoning field also as
    ``reasoning_content`` and ``thinking``."""
    out = []
    for message in messages:
        reasoning = next((message[k] for k in REASONING_FIELDS if message.get(k) is not None), None)
        if reasoning is not None:
            message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        out.append(message)
    return out


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


def jinja2_renderer(template_name: str) -> Renderer:
    """``render(messages, tools, add_generation_prompt, **options)`` with Jinja2, compiled once."""
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = _strftime_now
    template = env.from_string(fixture_text(template_name))

    def render(messages: Any, tools: Any = None, add_generation_prompt: bool = False, **options: Any) -> str:
        return template.render(
            messages=alias_reasoning(messages), tools=tools, documents=None,
            add_generation_prompt=add_generation_prompt, **options,
        )

    return render


def has_minijinja() -> bool:
    """Whether MiniJinja is installed (``pip install .[bench]``)."""
    try:
        import minijinja  # noqa: F401
    except ImportError:
        return False
    return True


def _tojson(
    x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False
) -> str:
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def minijinja_renderer(template_name: str) -> Renderer:
    """``render(messages, tools, add_generation_prompt, **options)`` with MiniJinja, compiled once."""
    import minijinja

    def raise_exception(message: str) -> None:
        raise minijinja.TemplateError(message)

    env = minijinja.Environment(
        templates={template_name: fixture_text(template_name)},
        filters={"tojson": _tojson},
        globals={"raise_exception": raise_exception, "strftime_now": _strftime_now},
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        debug=False,
        pycompat=True,
    )

    def render(messages: Any, tools: Any = None, add_generation_prompt: bool = False, **options: Any) -> str:
        return env.render_template(  # type: ignore[no-any-return]
            template_name,
            messages=alias_reasoning(messages),
            tools=tools,
            documents=None,
            add_generation_prompt=add_generation_prompt,
            **options,
        )

    return render


class GoHarmony:
    """Go's ``text/template`` rendering the Harmony template as Ollama feeds it: built once, self-timed."""

    RENDERS = 5

    def __init__(self, build_dir: Path) -> None:
        oracle = _tests_support("harmony_oracle")
        self.oracle = oracle.HarmonyOracle(oracle.build_oracle(build_dir))
        self.to_case = oracle.to_case

    def run(self, jobs: Sequence[Any]) -> tuple[list[str | None], float]:
        """Render every ``(messages, tools, options)``; the outputs and Go's own µs per render.

        Go's figure is its mean of ``RENDERS`` renders per case after one untimed one, in wall time
        inside Go: it has no cache to warm (the template is parsed once at start-up, as in Ollama),
        so repeating only steadies its figure on a loaded machine; a warm CPU cache favours Go."""
        cases = [self.to_case(messages, tools, options) for messages, tools, options in jobs]
        outputs = [result.get("output") for result in self.oracle.render_many(cases)]
        timed = self.oracle.bench(cases, self.RENDERS)
        return outputs, sum(float(result["ns_per_render"]) for result in timed) / len(timed) / 1000

    def run_wire(self, wires: Sequence[Any]) -> tuple[list[str | None], float]:
        """:meth:`run` on ``corpus.Wire`` jobs (decoded first: Go times itself)."""
        jobs = []
        for text, prepared, options in wires:
            decoded = json.loads(text)
            jobs.append((decoded["m"], prepared if prepared is not None else decoded["t"], options))
        return self.run(jobs)

    def close(self) -> None:
        self.oracle.close()


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
