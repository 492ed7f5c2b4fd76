"""Driver for the Go reference renderer of the Harmony template (``tests/support/oracle/harmony``).

The Go program executes ``tests/fixtures/harmony_gpt_oss.gotmpl`` with ``text/template`` the way
Ollama does (collation, think mapping, ``currentDate``); see the comment at the top of its
``main.go`` for the case format. This module builds it once and talks to it:

- :meth:`HarmonyOracle.render` sends one case to a long-lived process and reads one answer (fast
  enough for hypothesis, which needs answers one example at a time);
- :meth:`HarmonyOracle.render_many` and :meth:`HarmonyOracle.bench` run one process per batch.

Go is required: :func:`build_oracle` raises :class:`OracleUnavailable` when it is missing, so the
tests that depend on it fail rather than skip.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from prompt_formats.model.messages import Message, TextPart

from .oracle_marks import require

ROOT = Path(__file__).resolve().parents[2]
ORACLE_DIR = ROOT / "tests" / "support" / "oracle" / "harmony"
TEMPLATE = ROOT / "tests" / "fixtures" / "harmony_gpt_oss.gotmpl"


# ---------------------------------------------------------------------------------------------------
# The format's input contract, written out plainly: OpenAI-style input -> the oracle's Ollama case.
# ``developer`` is ``system``; reasoning is the first non-None of reasoning_content, thinking,
# reasoning; the tool name is tool_name, else name, else found through tool_call_id as Ollama's
# OpenAI endpoint finds it; text parts are joined with a blank line;
# reasoning_effort maps to a think value; a date object becomes its YYYY-MM-DD text.

EFFORT_TO_THINK: dict[str, Any] = {
    "none": False,
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
}


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n\n".join(part.text if isinstance(part, TextPart) else part["text"] for part in content)


def _calls(message: Any) -> list[tuple[Any, Any]]:
    """``(id, name)`` of each of the message's tool calls (any shape, malformed ones left out)."""
    if isinstance(message, Message):
        return [(call.id, call.name) for call in message.tool_calls]
    out = []
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            function = call.get("function", call)
            out.append((call.get("id"), function.get("name") if isinstance(function, dict) else None))
    return out


def name_from_tool_call_id(messages: Sequence[Any], call_id: str) -> str:
    """Ollama's nameFromToolCallID: the last message first, its calls in order; first match wins."""
    for message in reversed(messages):
        for candidate, name in _calls(message):
            if candidate == call_id:
                return name if isinstance(name, str) else ""
    return ""


def to_oracle_message(message: Any, messages: Sequence[Any] = ()) -> dict[str, str]:
    """One OpenAI-style message (dict or :class:`Message`) as the Ollama api.Message the oracle reads.

    ``messages`` is the whole conversation, searched for the tool call that names a tool result.
    """
    if isinstance(message, Message):
        role, content, thinking, name = message.role, message.content, message.reasoning, message.name
    else:
        role, content = message["role"], message.get("content")
        thinking = next(
            (message[k] for k in ("reasoning_content", "thinking", "reasoning") if message.get(k) is not None),
            None,
        )
        name = message.get("tool_name")
        if name is None:
            name = message.get("name")
    if role == "tool" and not name:
        call_id = message.tool_call_id if isinstance(message, Message) else message.get("tool_call_id")
        if call_id:
            name = name_from_tool_call_id(messages, call_id)
    return {
        "role": "system" if role == "developer" else role,
        "content": _text(content),
        "thinking": thinking or "",
        "tool_name": name or "",
    }


def _tool_name(tool: Any) -> str:
    return str(tool["function"]["name"] if "function" in tool else tool["name"])


def to_case(messages: Sequence[Any], tools: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The oracle case for rendering ``messages`` with ``tools`` and the format's ``options``."""
    case: dict[str, Any] = {"messages": [to_oracle_message(m, messages) for m in messages]}
    if tools:
        case["tools"] = [_tool_name(tool) for tool in tools]
    if options.get("reasoning_effort") is not None:
        case["think"] = EFFORT_TO_THINK[options["reasoning_effort"]]
    elif "think" in options:
        case["think"] = options["think"]
    date = options.get("current_date")
    if date is not None:
        case["date"] = date if isinstance(date, str) else f"{date.year:04d}-{date.month:02d}-{date.day:02d}"
    return case


class OracleUnavailable(RuntimeError):
    """The Go toolchain is missing or the oracle does not build."""


def build_oracle(dest_dir: Path) -> Path:
    """Compile the oracle into ``dest_dir`` and return the binary's path.

    Uses only the standard library (no module download: ``GOPROXY=off``). Raises
    :class:`OracleUnavailable` if ``go`` is not on ``PATH`` or the build fails.
    """
    require("go")
    go = shutil.which("go")
    if go is None:
        raise OracleUnavailable(
            "the Go toolchain (`go`) is required for the Harmony oracle tests; "
            "install it (Debian: apt-get install golang-go)"
        )
    dest_dir.mkdir(parents=True, exist_ok=True)
    binary = dest_dir / "harmonyoracle"
    env = dict(os.environ)
    env.update({"GO111MODULE": "on", "GOPROXY": "off", "GOTOOLCHAIN": "local", "GOFLAGS": "-buildvcs=false"})
    if "GOCACHE" not in env and not env.get("HOME"):
        env["GOCACHE"] = str(dest_dir / "gocache")
    proc = subprocess.run(
        [go, "build", "-o", str(binary), "."],
        cwd=ORACLE_DIR,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise OracleUnavailable(f"go build of the Harmony oracle failed:\n{proc.stdout}{proc.stderr}")
    return binary


def _line(case: dict[str, Any]) -> bytes:
    return json.dumps(case, ensure_ascii=False).encode("utf-8") + b"\n"


class HarmonyOracle:
    """A built oracle binary, with a lazily started long-lived process for one-at-a-time use."""

    def __init__(self, binary: Path, template: Path = TEMPLATE) -> None:
        self.binary = binary
        self.template = template
        self._proc: subprocess.Popen[bytes] | None = None

    def _args(self, bench: int = 0) -> list[str]:
        args = [str(self.binary), "-template", str(self.template)]
        if bench:
            args += ["-bench", str(bench)]
        return args

    def render(self, case: dict[str, Any]) -> dict[str, Any]:
        """Render one case; return ``{"output": str}`` or ``{"error": str}``."""
        require("go")
        proc = self._proc
        if proc is None or proc.poll() is not None:
            proc = self._proc = subprocess.Popen(self._args(), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(_line(case))
        proc.stdin.flush()
        answer = proc.stdout.readline()
        if not answer:
            raise OracleUnavailable(f"the Harmony oracle exited (code {proc.wait()})")
        result: dict[str, Any] = json.loads(answer)
        return result

    def _batch(self, cases: Iterable[dict[str, Any]], bench: int = 0) -> list[dict[str, Any]]:
        require("go")
        cases = list(cases)
        data = b"".join(_line(case) for case in cases)
        proc = subprocess.run(self._args(bench), input=data, capture_output=True, check=False)
        if proc.returncode != 0:
            raise OracleUnavailable(f"the Harmony oracle failed: {proc.stderr.decode(errors='replace')}")
        results = [json.loads(line) for line in proc.stdout.splitlines()]
        if len(results) != len(cases):
            raise OracleUnavailable(f"the Harmony oracle answered {len(results)} of {len(cases)} cases")
        return results

    def render_many(self, cases: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Render many cases through one process; one result per case, in order."""
        return self._batch(cases)

    def bench(self, cases: Sequence[dict[str, Any]], renders: int) -> list[dict[str, Any]]:
        """Time each case ``renders`` times inside Go; ``{"ns_per_render": float, ...}`` per case."""
        return self._batch(cases, bench=renders)

    def close(self) -> None:
        """Stop the long-lived process, if one was started."""
        proc, self._proc = self._proc, None
        if proc is not None:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            proc.stdout.close()


@contextlib.contextmanager
def running_oracle(directory: Path) -> Iterator[HarmonyOracle]:
    """The oracle built into ``directory``, its process closed on the way out."""
    oracle = HarmonyOracle(build_oracle(directory))
    try:
        yield oracle
    finally:
        oracle.close()
