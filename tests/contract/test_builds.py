"""The two builds of one source: pure Python and mypyc-compiled (``PROMPT_FORMATS_COMPILE=1 pip install .``).

These run on either build (scripts/test.sh runs the suite on both): ``PROMPT_FORMATS_PURE=1`` loads the
sources, deep input and deep stacks give a FormatError, formatter and parser objects pickle, a format
written in plain Python can subclass ``StreamParser``, and both builds give the same bytes.
"""

from __future__ import annotations

import importlib.machinery
import importlib.metadata
import importlib.util
import json
import os
import pickle
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

import prompt_formats as pf
from prompt_formats.replies.streaming import StreamParser

PARSING = [name for name in pf.available_formats() if pf.get_format(name).parses]
CITY = {"type": "object", "properties": {"city": {"type": "string"}}}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": CITY}}]
CONVERSATION = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "", "reasoning_content": "Call the tool.",
     "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "content": "Sunny, 21 °C"},
    {"role": "user", "content": "Thanks."},
]
REPLIES = {
    "chatml": "<think>\nhm</think>\n\nSure <tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
              "</parameter>\n</function>\n</tool_call>",
    "harmony": "<|channel|>analysis<|message|>hm<|end|><|start|>assistant<|channel|>commentary to=functions."
               "get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>",
}


def _reply(name: str) -> str:
    return REPLIES["chatml" if name.startswith("chatml") else "harmony"]


# Every render and parse of the corpus as text, in one process: the bytes the two builds must share.
_PROBE = """
import json, re, sys
import prompt_formats as pf
spec = json.loads(sys.stdin.read())
out = {"compiled": pf.compiled, "files": None, "results": []}
for name in pf.available_formats():
    fmt = pf.get_format(name)
    for tools in (None, spec["tools"], pf.prepare_tools(spec["tools"])):
        for generation in (None, True):
            try:
                out["results"].append(fmt.render(spec["conversation"], tools=tools, add_generation_prompt=generation))
            except pf.FormatError as error:  # (Gemma 3 refuses the tool loop; DeepSeek-V3, object arguments)
                out["results"].append(str(error))
    if fmt.parses:
        reply = repr(fmt.parse(spec["replies"][name], tools=spec["tools"]))
        out["results"].append(re.sub(r"id='call_[0-9a-f]*'", "id=<random>", reply))
mine = [m for k, m in sys.modules.items() if k.startswith("prompt_formats")]
out["files"] = sorted(getattr(m, "__file__", "") or "" for m in mine)
print(json.dumps(out))
"""


def _probe(pure: bool) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PROMPT_FORMATS_PURE"}
    if pure:
        env["PROMPT_FORMATS_PURE"] = "1"
    spec = {"tools": TOOLS, "conversation": CONVERSATION,
            "replies": {name: _reply(name) for name in PARSING}}
    # Run outside the repository, so the package imported is the one installed, not the source tree.
    done = subprocess.run([sys.executable, "-c", _PROBE], input=json.dumps(spec), capture_output=True, text=True,
                          env=env, check=True, timeout=300, cwd=tempfile.gettempdir())
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _extension_beside(module: str) -> bool:
    """Whether the installed package holds a compiled extension for ``module`` (read from the files)."""
    directory = Path(pf.__file__).parent.joinpath(*module.split(".")[1:-1])
    leaf = module.rpartition(".")[2]
    return any((directory / (leaf + suffix)).exists() for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def test_the_flag_tells_the_build_from_the_files() -> None:
    assert pf.compiled is _extension_beside("prompt_formats._text.tojson")


def test_pure_loads_only_sources() -> None:
    """``PROMPT_FORMATS_PURE=1``: no module of the package comes from an extension, whichever the build."""
    probe = _probe(pure=True)
    assert probe["compiled"] is False
    assert probe["files"], "the probe loaded no module of the package"
    assert all(file.endswith(".py") for file in probe["files"]), probe["files"]


def test_both_builds_give_the_same_bytes() -> None:
    if not pf.compiled:
        pytest.skip("the pure build is installed: no compiled build to compare with")
    compiled, pure = _probe(pure=False), _probe(pure=True)
    assert compiled["compiled"] is True
    assert any(not file.endswith(".py") for file in compiled["files"])
    assert compiled["results"] == pure["results"]


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


DEEP_INPUTS = {
    "arguments": lambda deep: ([{"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"a": deep}}}]},
        {"role": "user", "content": "go on"}], None),
    "tools": lambda deep: ([{"role": "user", "content": "hi"}],
                           [{"type": "function", "function": {"name": "f", "parameters": {"a": deep}}}]),
    "content": lambda deep: ([{"role": "user", "content": deep}], None),
}


def _follow_up(fmt: pf.ChatFormat, messages: list[Any], tools: Any) -> str:
    """``messages`` rendered through a session as a follow-up: after a request they extend."""
    opening: list[Any] = [{"role": "user", "content": "start"}]
    session = fmt.session(tools)
    session.render(opening, True)
    return session.render([*opening, *messages], True)


RENDERS = {
    "render": lambda fmt, messages, tools: fmt.render(messages, tools=tools),
    "session follow-up": _follow_up,
}


@pytest.mark.parametrize("name", pf.available_formats())
@pytest.mark.parametrize("where", sorted(DEEP_INPUTS))
@pytest.mark.parametrize("stack", [0, 900])
@pytest.mark.parametrize("how", sorted(RENDERS))
def test_deep_input_gives_a_format_error(name: str, where: str, stack: int, how: str) -> None:
    """Input nested past any stack, from a shallow or a deep caller, rendered or met by a session's
    incremental renderer: a FormatError, never a RecursionError."""
    fmt = pf.get_format(name)
    messages, tools = DEEP_INPUTS[where](_nested(200_000))
    render = RENDERS[how]

    def descend(left: int) -> Any:
        if left:
            return descend(left - 1)
        try:
            return render(fmt, messages, tools)
        except pf.FormatError as error:
            return error

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 1000))
    try:
        outcome = descend(stack)
    finally:
        sys.setrecursionlimit(limit)
    # A RecursionError (or a crash of the compiled build's C stack) would not get here.
    assert isinstance(outcome, (pf.FormatError, str))
    if name.startswith("chatml"):  # its templates read every one of these fields
        assert isinstance(outcome, pf.FormatError)


def _call_id() -> str:
    return "call_1"


@pytest.mark.parametrize("name", PARSING)
def test_a_parser_pickled_mid_stream_goes_on_as_the_original(name: str) -> None:
    fmt = pf.get_format(name)
    reply = _reply(name)
    half = len(reply) // 2
    original = fmt.stream_parser(tools=TOOLS, id_factory=_call_id)
    first = original.feed(reply[:half])
    copy = pickle.loads(pickle.dumps(original))
    rest = original.feed(reply[half:]) + original.close()
    assert copy.feed(reply[half:]) + copy.close() == rest
    assert first + rest, "the reply gave no event"


@pytest.mark.parametrize("name", pf.available_formats())
def test_a_formatter_and_a_toolset_pickle(name: str) -> None:
    fmt = pf.get_format(name)
    prepared = pf.prepare_tools(TOOLS)
    fmt_copy, prepared_copy = pickle.loads(pickle.dumps((fmt, prepared)))
    assert prepared_copy.tools == prepared.tools
    assert _rendered(fmt_copy, prepared_copy) == _rendered(fmt, TOOLS)


def _rendered(fmt: pf.ChatFormat, tools: Any) -> str | tuple[str, str]:
    """The prompt, or the template's error (Gemma 3's refuses the tool loop's roles) as its message."""
    try:
        return fmt.render(CONVERSATION, tools=tools)
    except pf.FormatError as error:  # (DeepSeek-V3's template refuses object arguments)
        return ("error", str(error))


class _Echo(StreamParser):
    """A parser written in plain Python: every character is content."""

    def _advance(self, buf: str, final: bool) -> int:
        if buf:
            self._out.append(pf.ContentDelta(buf))
        return len(buf)


def test_a_plain_python_parser_subclasses_stream_parser() -> None:
    parser = _Echo()
    events = parser.feed("ab") + parser.close()
    assert events == [pf.ContentDelta("ab")]
    assert pickle.loads(pickle.dumps(_Echo())).feed("c") == [pf.ContentDelta("c")]


ROOT = Path(__file__).resolve().parents[2]


def _backend() -> Any:
    """build_backend/prompt_formats_build.py, loaded from the source tree (it is not installed)."""
    path = ROOT / "build_backend" / "prompt_formats_build.py"
    spec = importlib.util.spec_from_file_location("prompt_formats_build", path)
    assert spec is not None and spec.loader is not None
    backend = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(backend)
    return backend


def test_the_build_backend_asks_for_mypy_only_when_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    # pip's isolated build environment holds what the backend asks for: mypyc comes with mypy.
    backend = _backend()
    monkeypatch.setenv("PROMPT_FORMATS_COMPILE", "1")
    for hook in (backend.get_requires_for_build_wheel, backend.get_requires_for_build_editable):
        assert hook() == backend.COMPILE_REQUIRES
        assert any(requirement.startswith("mypy") for requirement in hook())
    monkeypatch.setenv("PROMPT_FORMATS_COMPILE", "0")
    monkeypatch.chdir(ROOT)  # setuptools' own hook runs setup.py from the project's root
    assert not any(requirement.startswith("mypy") for requirement in backend.get_requires_for_build_wheel())


def _runtime_dependencies() -> dict[str, str]:
    """The package's runtime requirements (pyproject.toml's ``dependencies``, as installed) by name."""
    requirements = [r for r in importlib.metadata.requires("prompt-formats") or [] if ";" not in r]
    return {re.split(r"[<>=!~\[ ]", r, maxsplit=1)[0]: r for r in requirements}


def test_a_compiled_build_gets_the_types_of_every_runtime_dependency() -> None:
    """mypyc type-checks the package, in pip's isolated environment: each runtime dependency is there
    when it ships its types (``py.typed``), its ``types-`` stubs when it does not (``regex``)."""
    requires = _backend().COMPILE_REQUIRES
    dependencies = _runtime_dependencies()
    assert set(dependencies) >= {"attrs", "regex", "orjson"}
    for name, requirement in dependencies.items():
        typed = any(file.name == "py.typed" for file in importlib.metadata.files(name) or [])
        assert (requirement if typed else f"types-{name}") in requires, (requirement, typed, requires)


COMMAND = re.compile(r"`(PROMPT_FORMATS_COMPILE=[^`]*)`")


def test_the_readme_shows_one_compiled_build_command_the_contributing_guide_shows_too() -> None:
    """scripts/test.sh --compiled runs the README's command as written, in a fresh virtual environment."""
    commands = COMMAND.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(commands) == 1, commands
    assert commands[0] in (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")


def test_the_no_build_isolation_route_installs_what_the_build_needs() -> None:
    """docs/contributing.md's ``--no-build-isolation`` commands: pip installs what pip's isolated build
    would have had (pyproject.toml's build requirements and the backend's), then builds."""
    guide = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    block = re.search(r"^```text\n(pip install .*)\nPROMPT_FORMATS_COMPILE=1 pip install --no-build-isolation \.\n```$",
                      guide, re.M)
    assert block, "docs/contributing.md shows no --no-build-isolation commands"
    installed = set(shlex.split(block.group(1))[2:])
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    build_system = re.search(r"^\[build-system\]\nrequires = (\[.*\])$", pyproject, re.M)
    assert build_system, "pyproject.toml's build-system requires, on the line after [build-system]"
    assert installed == {*json.loads(build_system.group(1)), *_backend().COMPILE_REQUIRES}
