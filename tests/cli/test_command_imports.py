"""The command imports only what its work needs, the error path included; every public name of the
package still resolves (imported from its module on first use)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import prompt_formats as pf

# Modules a render in one process has no use for: the worker processes' machinery, template
# detection, the tokenizer integration.
NOT_FOR_A_RENDER = ("multiprocessing", "concurrent.futures", "prompt_formats.format.batch",
                    "prompt_formats.format.detect",
                    "prompt_formats.integrations.transformers", "prompt_formats.cli.spans")


def modules_after(args: list[str], tmp_path: Path) -> tuple[int, set[str]]:
    """The exit status of ``prompt-formats ARGS`` run in a fresh interpreter, and the modules it had loaded."""
    driver = (
        "import json, sys\n"
        "from prompt_formats.cli import main\n"
        f"status = main({args!r})\n"
        f"open({str(tmp_path / 'modules.json')!r}, 'w').write(json.dumps(sorted(sys.modules)))\n"
        "sys.exit(status)\n"
    )
    done = subprocess.run([sys.executable, "-c", driver], capture_output=True, timeout=120, check=False)
    return done.returncode, set(json.loads((tmp_path / "modules.json").read_text()))


def test_a_render_in_one_process_imports_no_worker_machinery(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"messages": [{"role": "user", "content": "Hi"}]}) + "\n")
    status, modules = modules_after(["render", "-f", "chatml-multi-system", "-q", str(source),
                                     "-o", str(tmp_path / "out.jsonl")], tmp_path)
    assert status == 0
    assert "prompt_formats.formats.chatml" in modules  # the probe: the driver did run the command
    assert sorted(name for name in NOT_FOR_A_RENDER if name in modules) == []


def test_an_unknown_format_is_refused_without_importing_any_format(tmp_path: Path) -> None:
    status, modules = modules_after(["render", "-f", "no-such-format", "-q", "/dev/null"], tmp_path)
    assert status == 2
    assert sorted(name for name in modules if name.startswith("prompt_formats.format.chat_format")) == []
    assert "prompt_formats.model.messages" not in modules


def test_every_public_name_resolves() -> None:
    for name in pf.__all__:
        assert getattr(pf, name) is not None
    assert sorted(pf.__all__) == sorted(set(pf.__all__))
    assert set(pf.__all__) <= set(dir(pf))
