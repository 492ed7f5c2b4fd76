"""Writes ``prompt_formats/format/reference_lines.py``: each Jinja reference template's lines, as short
digests, so that ``match_template`` can name the nearest format of a template that is close to one
but not equal (the package does not ship the templates). ``python -m tests.support.reference_lines``
writes it from the fixtures; ``tests/render/test_detect.py`` checks that it is what this writes."""

from __future__ import annotations

from pathlib import Path

from prompt_formats.format.detect import line_digests, normalize_jinja_source
from tests.support.oracles import JINJA_TEMPLATES, fixture_text

TARGET = Path(__file__).resolve().parents[2] / "prompt_formats" / "format" / "reference_lines.py"
#: Each Jinja format's reference template (``harmony``'s is Go's, recognised byte for byte only).
#: One entry per text: Nemotron 3 Ultra's is Nemotron 3.5's, which is named for both (detect.py).
REFERENCES = {name: fixture for name, fixture in JINJA_TEMPLATES.items() if name != "nemotron-3-ultra"}


def source() -> str:
    """The module's text."""
    lines = [
        '"""Each Jinja reference template\'s lines as short digests (``detect.line_digests``), for naming the',
        "nearest format of a template close to one. Written by ``python -m tests.support.reference_lines``;",
        'do not edit."""',
        "",
        "REFERENCE_LINES: dict[str, tuple[str, ...]] = {",
    ]
    for name, fixture in REFERENCES.items():
        digests = line_digests(normalize_jinja_source(fixture_text(fixture)))
        lines.append(f"    {name!r}: (")
        for start in range(0, len(digests), 8):
            lines.append("        " + " ".join(f"{d!r}," for d in digests[start:start + 8]))
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    TARGET.write_text(source(), encoding="utf-8")
    print(TARGET)
