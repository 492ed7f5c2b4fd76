"""Parsing the completion of a ``continue_final_message`` prompt (issue 29 item 1).

The prompt ends inside the final message's content (or its reasoning), so the completion continues
that text. The reference is the Jinja2 oracle: the history with the continued message, rendered,
is the prompt followed by the completion, and the parsed reply must rebuild that history.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.oracles import render_jinja
from tests.support.parser_cases import CHATML_MARKERS, completions, counting_ids, splits, stream
from tests.support.processes import SAFETY_NET
from tests.support.strategies import differential_settings

FORMATS = [(pf.get_format("chatml-multi-system"), "chatml_multi_system.jinja"),
           (pf.get_format("chatml-safety", policy="allow"), "chatml_upstream.jinja")]
CONTINUING = [fmt for fmt in pf.available_formats() if "continue_final_message" in pf.get_format(fmt).options]
FIELDS = [True, False, None, "content", "reasoning_content", "thinking", "reasoning"]
# Texts of a message: no markers (they would be structure), whitespace at either end.
words = st.text(alphabet=" \nab日🙂.", max_size=8)


def oracle(template: str, messages: list[Any]) -> str:
    status, text = render_jinja(template, messages)
    assert status == "ok", text
    return text


def with_final(messages: list[Any], **fields: Any) -> list[Any]:
    return [*messages[:-1], {**messages[-1], **fields}]


@st.composite
def continued(draw: st.DrawFn) -> tuple[list[Any], list[Any], Any]:
    """``(h, h_prime, field)``: a history whose final message is continued, and the one it becomes."""
    history: list[Any] = [{"role": "user", "content": draw(words)}]
    if draw(st.booleans()):  # continue the user's own message
        history.append({"role": "user", "content": draw(words)})
        return history, with_final(history, content=history[-1]["content"] + draw(words)), True
    reasoning, content = draw(words), draw(words)
    history.append({"role": "assistant", "content": content, "reasoning_content": reasoning})
    field = draw(st.sampled_from([True, "content", "reasoning_content"]))
    if field == "reasoning_content":
        return history, with_final(history, reasoning_content=reasoning + draw(words), content=draw(words)), field
    return history, with_final(history, content=content + draw(words)), field


@pytest.mark.jinja
@pytest.mark.parametrize(("fmt", "template"), FORMATS, ids=["multi", "safety-allow"])
@differential_settings
@given(case=continued(), data=st.data())
def test_the_reply_continues_the_final_message(fmt: pf.ChatFormat, template: str,
                                               case: tuple[list[Any], list[Any], Any], data: st.DataObject) -> None:
    history, target, field = case
    prompt = fmt.render(history, continue_final_message=field)
    expected = oracle(template, target)
    assert expected.startswith(prompt)
    completion = expected[len(prompt):]
    reply = fmt.parse(completion, continue_final_message=field)
    assert not reply.tool_calls and not reply.malformed
    # The continued message: the prefill as the prompt shows it (ChatML trims it), then the reply's text.
    final = history[-1]
    if field == "reasoning_content":
        rebuilt = with_final(history, reasoning_content=final["reasoning_content"].rstrip() + (reply.reasoning or ""),
                             content=reply.content or "")
    else:
        assert reply.reasoning is None
        rebuilt = with_final(history, content=final["content"].rstrip() + (reply.content or ""))
    assert prompt + completion == oracle(template, rebuilt)
    deltas = data.draw(splits(completion))
    assert stream(lambda: fmt.stream_parser(continue_final_message=field), deltas)[1] == reply


@differential_settings
@given(text=completions(CHATML_MARKERS), field=st.sampled_from(FIELDS), data=st.data())
def test_stream_equals_parse_when_continuing(text: str, field: Any, data: st.DataObject) -> None:
    fmt = FORMATS[0][0]
    deltas = data.draw(splits(text))
    expected = fmt.parse(text, id_factory=counting_ids(), continue_final_message=field)
    reply = stream(lambda: fmt.stream_parser(id_factory=counting_ids(), continue_final_message=field), deltas)[1]
    assert reply == expected


@pytest.mark.parametrize("name", CONTINUING)
def test_every_format_that_renders_it_parses_it(name: str) -> None:
    fmt = pf.get_format(name)
    assert "continue_final_message" in fmt.parse_options
    reply = fmt.parse(" glows on the lake<|im_end|>", continue_final_message=True)
    assert (reply.content, reply.reasoning) == (" glows on the lake", None)
    reply = fmt.parse(" glows</think>\n\nYes.<|im_end|>", continue_final_message="reasoning_content")
    assert (reply.reasoning, reply.content) == (" glows", "Yes.")
    # Off, it is the ordinary reply; a wrong value is refused as render refuses it.
    assert fmt.parse("a</think>b", continue_final_message=False) == fmt.parse("a</think>b")
    with pytest.raises(pf.InvalidInputError, match=r"^continue_final_message: expected a bool"):
        fmt.parse("x", continue_final_message="role")


def test_the_command_parses_a_continued_record(tmp_path: Any) -> None:
    record = {"id": "r", "completion": " glows<|im_end|>", "continue_final_message": True}
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(record) + "\n")
    proc = subprocess.run([sys.executable, "-m", "prompt_formats", "parse", "-f", "chatml-multi-system", str(source)],
                          capture_output=True, timeout=SAFETY_NET, check=False)
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    assert json.loads(line)["message"]["content"] == " glows"
