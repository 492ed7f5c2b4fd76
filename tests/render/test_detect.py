"""detect_format / match_template: the reference templates are recognised, exactly or as Jinja reads
them, and nothing else is.

A rewrite that is still recognised is proven harmless by rendering it and the original with
transformers' own renderer and comparing the outputs.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers.utils.chat_template_utils import render_jinja_template

import prompt_formats as pf
import prompt_formats.format.detect
from tests.support.oracles import JINJA_TEMPLATES, fixture_text
from tests.support.spans_oracle import fixed_today
from tests.support.strategies import EXAMPLES, chatml_options, conversation, differential_settings, tools

REFERENCES = {**{fixture: name for name, fixture in JINJA_TEMPLATES.items()}, "harmony_gpt_oss.gotmpl": "harmony",
              # Nemotron 3 Ultra's template is Nemotron 3.5's text: one answer for both, which renders the same
              "families/nemotron_3_ultra.jinja": "nemotron-3.5"}
# The rewrites Jinja ignores are the same for every template: those of the seeds stand for them.
JINJA = [name for name in REFERENCES if name.endswith(".jinja") and not name.startswith("families/")]
ALL_FORMATS = sorted({*pf.available_formats(), *REFERENCES.values()})


@pytest.fixture
def every_format_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry as it is once gpt-oss is registered, whatever this branch registers."""
    monkeypatch.setattr(prompt_formats.format.detect, "available_formats", lambda: ALL_FORMATS)


@pytest.mark.usefixtures("every_format_registered")
@pytest.mark.parametrize(("fixture", "name"), REFERENCES.items())
def test_each_reference_template_is_recognised(fixture: str, name: str) -> None:
    match = pf.match_template(fixture_text(fixture))
    assert match.format == name
    assert match.reason.startswith(f"an exact copy of the reference template of {name!r}")
    assert pf.detect_format(fixture_text(fixture)) == name


def test_a_reference_template_of_a_format_not_registered_is_not_recognised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prompt_formats.format.detect, "available_formats", lambda: ["chatml-safety"])
    match = pf.match_template(fixture_text("gpt_oss.jinja"))
    assert match == pf.TemplateMatch(
        None, "the reference template of 'gpt-oss', a format this version does not register"
    )
    assert pf.detect_format(fixture_text("chatml_upstream.jinja")) == "chatml-safety"


def test_detection_follows_the_real_registry() -> None:
    for fixture, name in REFERENCES.items():
        assert pf.detect_format(fixture_text(fixture)) == (name if name in pf.available_formats() else None)


def test_chatml_safety_match_says_what_differs() -> None:
    assert "escapes them" in pf.match_template(fixture_text("chatml_upstream.jinja")).reason


# Rewrites Jinja's lexer undoes: line endings, one final newline.
REWRITES = {
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "cr": lambda t: t.replace("\n", "\r"),
    "final newline": lambda t: t + "\n",
    "final crlf": lambda t: t + "\r\n",
    "crlf and final newline": lambda t: t.replace("\n", "\r\n") + "\r\n",
}


def render_both(original: str, rewritten: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    def one(template: str) -> Any:
        try:
            return render_jinja_template(
                conversations=[args[0]], tools=args[1], chat_template=template, add_generation_prompt=args[2], **kwargs
            )[0][0]
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"

    return one(original), one(rewritten)


@pytest.mark.jinja
@pytest.mark.usefixtures("every_format_registered")
@pytest.mark.parametrize("rewrite", REWRITES)
@pytest.mark.parametrize("fixture", JINJA)
def test_rewrites_jinja_ignores_are_recognised_and_render_the_same(fixture: str, rewrite: str) -> None:
    original = fixture_text(fixture)
    rewritten = REWRITES[rewrite](original)
    assert rewritten != original
    match = pf.match_template(rewritten)
    assert match.format == REFERENCES[fixture]
    assert match.reason.startswith("the same to Jinja as")

    if fixture.startswith("gpt_oss"):
        samples = [
            [
                {"role": "system", "content": "S\r\nx"},
                {"role": "user", "content": "Hi\n"},
                {"role": "assistant", "content": "A", "thinking": "T"},
            ],
            [
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "tool_calls": [{"name": "f", "arguments": {"a": 1}}]},
                {"role": "tool", "content": "r"},
            ],
        ]
        tool_list = [
            {
                "type": "function",
                "function": {
                    "name": "f",
                    "description": "d",
                    "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
                },
            }
        ]
        with fixed_today():
            for messages in samples:
                for gen in (False, True):
                    first, second = render_both(original, rewritten, messages, tool_list, gen, builtin_tools=["python"])
                    assert first == second and "<|start|>" in first
        return

    # Ten rewrites of two templates: a tenth of the differential cases each.
    @settings(max_examples=max(50, EXAMPLES // 10), deadline=None)
    @given(conversation(), tools, st.booleans(), chatml_options)
    def check(messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> None:
        first, second = render_both(original, rewritten, messages, tool_list, gen, **options)
        assert first == second

    check()


def test_go_template_is_recognised_only_byte_for_byte() -> None:
    # Go's text/template keeps a final newline and carriage returns: they would be in the output.
    original = fixture_text("harmony_gpt_oss.gotmpl")
    for rewrite in REWRITES.values():
        assert pf.match_template(rewrite(original)).format is None


def jinja_reads_the_same(original: str, position: int, character: str, edit: str) -> bool:
    r"""Whether the edit only makes a line ending ``\r``/``\r\n``, or adds or takes away the one final
    newline (the fixtures hold no ``\r``; most end without a newline, Qwen3.8's with one)."""
    at_newline = original[position : position + 1] == "\n"
    ends = original.endswith("\n")
    if edit == "replace":
        return at_newline and character == "\r"
    if edit == "insert":
        return (at_newline and character == "\r") or (position == len(original) and character in "\r\n" and not ends)
    return ends and position == len(original) - 1


@pytest.mark.usefixtures("every_format_registered")
@pytest.mark.parametrize("fixture", list(REFERENCES))
def test_one_changed_character_is_not_recognised(fixture: str) -> None:
    original = fixture_text(fixture)

    @differential_settings
    @given(st.integers(0, len(original)), st.characters(), st.sampled_from(["replace", "insert", "delete"]))
    def check(position: int, character: str, edit: str) -> None:
        if edit != "insert" and position == len(original):
            return
        if edit == "replace":
            edited = original[:position] + character + original[position + 1 :]
        elif edit == "insert":
            edited = original[:position] + character + original[position:]
        else:
            edited = original[:position] + original[position + 1 :]
        if edited == original:
            return
        if fixture.endswith(".jinja") and jinja_reads_the_same(original, position, character, edit):
            return  # a line ending or a final newline: the rewrites Jinja ignores, tested above
        match = pf.match_template(edited)
        assert match.format is None
        assert match.reason.startswith("not the reference template of any format")

    check()


@pytest.mark.usefixtures("every_format_registered")
@pytest.mark.parametrize(
    "edit",
    [
        # Whitespace that lstrip_blocks or a "-" marker removes: harmless, but proving it needs Jinja.
        lambda t: t.replace("\n    {%- if content is string %}", "\n      {%- if content is string %}"),
        lambda t: t + "\n\n",
        lambda t: " " + t,
        lambda t: t + " ",
    ],
    ids=["indent before a block tag", "two final newlines", "leading space", "final space"],
)
def test_other_whitespace_is_not_recognised(edit: Any) -> None:
    original = fixture_text("chatml_multi_system.jinja")
    assert edit(original) != original
    assert pf.detect_format(edit(original)) is None


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (None, "expected the template's text, a string, got null"),
        (b"x", "expected the template's text, a string, got bytes"),
        (
            {"default": "x"},
            "expected the template's text, a string, got dict (several named templates: pass the text of one)",
        ),
    ],
)
def test_what_is_not_a_string_is_not_recognised(value: object, reason: str) -> None:
    assert pf.match_template(value) == pf.TemplateMatch(None, reason)
    assert pf.detect_format(value) is None


def test_reasons_for_near_misses() -> None:
    tagged = pf.match_template(fixture_text("chatml_upstream_generation.jinja"))
    assert tagged.format is None
    assert "ChatML markers" in tagged.reason and "{% generation %} tags" in tagged.reason
    assert "Harmony markers" in pf.match_template(fixture_text("gpt_oss_generation.jinja")).reason
    assert pf.match_template("{{ messages }}").reason == (
        "not the reference template of any format: only exact copies are recognised, up to line endings "
        "and a final newline"
    )


@differential_settings
@given(st.text())
def test_any_text_is_answered_without_raising(text: str) -> None:
    match = pf.match_template(text)
    assert match.format is None and match.reason


def test_the_reference_lines_are_the_fixtures() -> None:
    from tests.support.reference_lines import TARGET, source

    assert TARGET.read_text(encoding="utf-8") == source()  # python -m tests.support.reference_lines rewrites it


@pytest.mark.parametrize(("fixture", "name"), [(f, n) for f, n in REFERENCES.items() if f.endswith(".jinja")])
def test_a_template_close_to_a_reference_names_it_as_the_nearest(fixture: str, name: str) -> None:
    lines = fixture_text(fixture).removesuffix("\n").split("\n")  # (Qwen3.8's ends in a newline)
    edited = "\n".join([*lines[:5], "{#- a local change -#}", *lines[6:]])
    match = pf.match_template(edited)
    assert match.format is None  # never switched to: only the same template is
    pattern = rf"; nearest: {re.escape(repr(name))} \((\d+) of its (\d+) distinct lines in common\)"
    found = re.search(pattern, match.reason)
    assert found, match.reason
    distinct = {line.strip() for line in lines}
    kept = {line.strip() for k, line in enumerate(lines) if k != 5}
    assert (int(found[1]), int(found[2])) == (len(kept & distinct), len(distinct))


def test_an_unrelated_template_names_no_nearest() -> None:
    match = pf.match_template("{% for m in messages %}{{ m.content }}\n{% endfor %}")
    assert match.format is None and "nearest" not in match.reason
