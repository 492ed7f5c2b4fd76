"""Every file in ``examples/`` runs through the command, every record of it rendered (parsed), and
every registered format has an example of its own, ``examples/<format>.jsonl``
(``prompt-formats render -f gpt-oss examples/gpt-oss.jsonl``). The command runs as a subprocess.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import prompt_formats as pf
from tests.support.processes import SAFETY_NET

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: The examples beside each format's own, and the runs each is for (as docs/guide.md pairs them).
OTHER_EXAMPLES: dict[str, list[tuple[str, str]]] = {
    "agent_requests.jsonl": [("render", "chatml-multi-system")],
    "tool_loop.jsonl": [("render", "chatml-multi-system"), ("render", "chatml-safety")],
    "completions_chatml.jsonl": [("parse", "chatml-multi-system")],
    "completions_harmony.jsonl": [("parse", "harmony"), ("parse", "gpt-oss")],
}

RUNS = [(f"{name}.jsonl", "render", name) for name in pf.available_formats()] + [
    (example, command, name) for example, runs in OTHER_EXAMPLES.items() for command, name in runs
]


def test_every_format_has_its_own_example_and_every_example_a_run() -> None:
    own = {f"{name}.jsonl" for name in pf.available_formats()}
    files = {path.name for path in EXAMPLES.iterdir()}
    assert sorted(own - files) == []  # a format without its example
    assert sorted(files - own - set(OTHER_EXAMPLES)) == []  # an example that no test runs


@pytest.mark.parametrize(("example", "command", "name"), RUNS)
def test_the_example_runs_and_every_record_succeeds(example: str, command: str, name: str) -> None:
    path = EXAMPLES / example
    assert path.is_file(), f"format {name!r} has no example: {path}"
    proc = subprocess.run([sys.executable, "-m", "prompt_formats", command, "-f", name, str(path)],
                          capture_output=True, timeout=SAFETY_NET, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    ids = [json.loads(line)["id"] for line in path.read_bytes().splitlines() if line.strip()]
    assert ids  # an example holds records
    assert [json.loads(line)["id"] for line in proc.stdout.splitlines()] == ids
    verb = "rendered" if command == "render" else "parsed"
    assert f": {len(ids)} of {len(ids)} records {verb}, 0 failed" in proc.stderr.decode()


def test_every_example_the_documents_name_exists() -> None:
    root = EXAMPLES.parent
    documents = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    named = {(document.name, name) for document in documents
             for name in re.findall(r"examples/([\w.-]+\.jsonl)", document.read_text("utf-8"))}
    assert named  # the scan did find the documents' examples
    assert sorted((document, name) for document, name in named if not (EXAMPLES / name).is_file()) == []
