"""The floor under the command's row: the least Python that turns its records file into prompts.

``python floor_command.py RECORDS OUT ERRORS`` does what ``prompt-formats render -f
chatml-multi-system -q`` does to the records of ``run_all_extra.write_records`` (the held-out everyday
corpus) and nothing more: each line decoded with orjson, each tool call's JSON-string arguments
decoded (as the command does by default), the prompt written by ``floor_chatml.floor_render`` (no
checks, no spans) and encoded with orjson as ``{"id": …, "prompt": …}``; a line that fails, whatever
the reason, gets an error line. It reads and writes plain buffered files (no rename, no sync) and
imports only orjson, the floor renderer and the two package modules that renderer uses: the least
start-up too.
``bench_command.py --floor`` runs it beside the command and stops unless its prompts file equals
the command's byte for byte. It is a measurement, never a tool to use.

Compiled with mypyc beside ``floor_chatml.py`` (``bench_command.py --floor-from DIR``), it is the
compiled build's floor::

    mkdir /tmp/floor && cp benchmarks/floor_chatml.py benchmarks/floor_command.py /tmp/floor && cd /tmp/floor
    /path/to/.venv-compiled/bin/python -m mypyc floor_chatml.py floor_command.py   # mypy in that venv
"""

from __future__ import annotations

import sys
from typing import Any

import orjson
from floor_chatml import floor_render

#: The record keys the everyday corpus passes to the template as options.
OPTIONS = ("enable_thinking", "preserve_thinking", "add_vision_id")


def render_record(line: bytes) -> bytes:
    """One record's output line (anything the corpus does not hold: a raise)."""
    record: dict[str, Any] = orjson.loads(line)
    messages: list[dict[str, Any]] = record["messages"]
    for message in messages:
        calls = message.get("tool_calls")
        if calls:
            for call in calls:
                function = call["function"]
                arguments = function["arguments"]
                if type(arguments) is str:
                    function["arguments"] = orjson.loads(arguments)
    options = {key: record[key] for key in OPTIONS if key in record}
    prompt = floor_render(messages, record.get("tools"), False, **options)
    return orjson.dumps({"id": record.get("id"), "prompt": prompt}, option=orjson.OPT_APPEND_NEWLINE)


def main(argv: list[str]) -> int:
    """Render ``argv[1]``'s records into ``argv[2]``, an error line each for the others into ``argv[3]``."""
    failed = 0
    with open(argv[1], "rb") as records, open(argv[2], "wb") as out, open(argv[3], "wb") as errors:
        for number, line in enumerate(records, 1):
            try:
                out.write(render_record(line))
            except Exception as exc:  # the floor reports every failure alike
                failed += 1
                errors.write(orjson.dumps({"line": number, "error": type(exc).__name__},
                                          option=orjson.OPT_APPEND_NEWLINE))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
