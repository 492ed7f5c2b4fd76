"""The build hook: a pure-Python package by default, mypyc-compiled modules on request.

``pip install .`` installs the pure-Python package. ``PROMPT_FORMATS_COMPILE=1 pip install .``
(or building a wheel with that variable set) compiles the modules of ``COMPILED_MODULES`` with
mypyc into C extensions placed beside their ``.py`` sources, which stay in the package as the
fallback (``PROMPT_FORMATS_PURE=1`` loads them instead). mypy (which ships mypyc) is needed only
in that mode, at build time; the runtime dependencies do not change.
"""

from __future__ import annotations

import os
import shutil

from setuptools import setup

# The modules compiled, as paths from the repository root: the one list the build reads. What is left
# out, and why, is in docs/contributing.md ("The compiled build"). The command's packages (cli/,
# records/) are left out: their cost is startup, not throughput.
COMPILED_MODULES: tuple[str, ...] = (
    "prompt_formats/_text/tojson.py",
    "prompt_formats/format/history.py",
    "prompt_formats/model/reading.py",
    "prompt_formats/model/tools.py",
    "prompt_formats/formats/chatml/content.py",
    "prompt_formats/formats/chatml/drops.py",
    "prompt_formats/formats/chatml/incremental.py",
    "prompt_formats/formats/chatml/json_calls/incremental.py",
    "prompt_formats/formats/chatml/json_calls/render.py",
    "prompt_formats/formats/chatml/lean.py",
    "prompt_formats/formats/chatml/nemotron/incremental.py",
    "prompt_formats/formats/chatml/nemotron/render.py",
    "prompt_formats/formats/chatml/nemotron/tool_spec.py",
    "prompt_formats/formats/chatml/read.py",
    "prompt_formats/formats/chatml/render.py",
    "prompt_formats/formats/chatml/schema.py",
    "prompt_formats/formats/chatml/spans.py",
    "prompt_formats/formats/harmony/openai/incremental.py",
    "prompt_formats/formats/harmony/openai/render.py",
    "prompt_formats/formats/harmony/openai/spans.py",
    "prompt_formats/formats/deepseek/incremental.py",
    "prompt_formats/formats/deepseek/render.py",
    "prompt_formats/formats/gemma/gemma3/incremental.py",
    "prompt_formats/formats/glm/incremental.py",
    "prompt_formats/formats/glm/render.py",
    "prompt_formats/formats/llama/incremental.py",
    "prompt_formats/formats/llama/render.py",
    "prompt_formats/formats/gemma/gemma3/render.py",
    "prompt_formats/formats/gemma/gemma4/incremental.py",
    "prompt_formats/formats/gemma/gemma4/notation.py",
    "prompt_formats/formats/gemma/gemma4/render.py",
    "prompt_formats/formats/harmony/ollama/drops.py",
    "prompt_formats/formats/harmony/ollama/incremental.py",
    "prompt_formats/formats/harmony/ollama/render.py",
    "prompt_formats/formats/harmony/ollama/spans.py",
)


def _compiling() -> bool:
    return os.environ.get("PROMPT_FORMATS_COMPILE", "") not in ("", "0")


def _extensions() -> list[object]:
    if not _compiling():
        return []
    from mypyc.build import mypycify  # build-time only: mypy is not a runtime dependency

    return list(mypycify(list(COMPILED_MODULES), opt_level=os.environ.get("MYPYC_OPT_LEVEL", "3")))


# One build directory per mode, the compiled one emptied first: setuptools packs whatever its build
# directory holds, so an extension left there by an earlier build (or a module since taken off the
# list) would otherwise end up in a pure wheel, or in a compiled one that no longer compiles it.
_BUILD_BASE = os.path.join("build", "compiled" if _compiling() else "pure")
if _compiling():
    shutil.rmtree(_BUILD_BASE, ignore_errors=True)

setup(ext_modules=_extensions(), options={"build": {"build_base": _BUILD_BASE}})
