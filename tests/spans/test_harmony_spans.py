"""Harmony render_spans against the Go oracle and by construction (issue 16).

For every generated conversation of tests/support/harmony_strategies.py:

- ``.text`` is the Go oracle's text (Ollama's template run by Go's text/template) and ``render``'s;
- ``.generated`` (policy ``"all"``) is the generation ranges the Go oracle records running
  tests/fixtures/harmony_gpt_oss_generation.gotmpl: a copy of the template with ``{{ generation }}``
  and ``{{ endgeneration }}`` around each assistant Harmony message, from right after
  ``<|start|>assistant`` through its ``<|end|>`` (where written), except the message a prefill leaves
  open (as transformers' ``{% generation %}`` tags, recorded as the Go template executes);
- message ranges, by construction: each message's ranges hold exactly the texts the template prints
  of it (its content; the first message of an assistant run also its reasoning where the template
  writes the analysis message), in input order, system messages in the header; every gap between
  ranges is made of the template's literal strings (header, markers, roles, channel names, the date
  and reasoning lines, the python block, the ``"\\n\\n"`` joins);
- generated ranges: with ``generated="all"``, one range per assistant Harmony message the template
  writes (read off its branches below), each starting right after a literal ``<|start|>assistant``,
  holding the channel header and the message's text, and ending after ``<|end|>`` or at the text's
  end where the template leaves it off; the open message of a prefill is not one; under every policy
  ``.generated`` is ``prompt_formats.format.spans.select_generated`` over those per message.

Expected values come from the oracle, the inputs and the template's literals typed here, never from
our renderer.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given

import prompt_formats as pf
from prompt_formats.format.spans import GENERATED_POLICIES, Range, select_generated
from prompt_formats.formats.harmony.ollama import spans as harmony_spans
from tests.support.harmony_oracle import ROOT, HarmonyOracle, build_oracle, to_case
from tests.support.harmony_strategies import conversation, options, tools
from tests.support.strategies import differential_settings

FMT = pf.get_format("harmony")
TAGGED_TEMPLATE = ROOT / "tests" / "fixtures" / "harmony_gpt_oss_generation.gotmpl"
START_ASSISTANT = "<|start|>assistant"
END = "<|end|>"
HEADS = {"analysis": "<|channel|>analysis<|message|>", "final": "<|channel|>final<|message|>"}
PYTHON_BLOCK = (
    "\n# Tools\n## python\nUse this tool to execute Python code in your chain of thought. The code will not "
    "be shown to the user. This tool should be used for internal reasoning, but not for code that is intended "
    "to be visible to the user (e.g. plots/tables/files).\nWhen you send a message containing Python code to "
    "python, it will be executed in a stateful Jupyter notebook environment and respond with its output. "
    "Internet access may be unavailable."
)
LITERALS = frozenset(
    {
        "<|start|>system<|message|>",
        "\nCurrent date: ",
        "\nReasoning: low",
        "\nReasoning: medium",
        "\nReasoning: high",
        PYTHON_BLOCK,
        "\n# Valid channels: analysis, commentary, final. Channel must be included for every message.\n<|end|>",
        "<|start|>python to=assistant<|message|>",
        "<|start|>user<|message|>",
        START_ASSISTANT + HEADS["analysis"],
        START_ASSISTANT + HEADS["final"],
        START_ASSISTANT,
        END,
        "\n\n",
    }
)


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HarmonyOracle, HarmonyOracle]]:
    """The Go oracle on the template and on its tagged copy (fails, does not skip, when Go is missing)."""
    binary = build_oracle(tmp_path_factory.mktemp("harmony_spans_oracle"))
    plain, tagged = HarmonyOracle(binary), HarmonyOracle(binary, TAGGED_TEMPLATE)
    yield plain, tagged
    plain.close()
    tagged.close()


def made_of(text: str, words: frozenset[str]) -> bool:
    """Whether ``text`` is a concatenation of ``words`` (word break, by dynamic programming)."""
    reachable = [True] + [False] * len(text)
    for end in range(1, len(text) + 1):
        reachable[end] = any(reachable[end - len(w)] and text.endswith(w, 0, end) for w in words if len(w) <= end)
    return reachable[-1]


def runs(fed: list[dict[str, str]]) -> list[list[int]]:
    """Ollama's collation: runs of consecutive messages of one role (each tool message alone)."""
    out: list[list[int]] = []
    for index, message in enumerate(fed):
        if out and fed[out[-1][0]]["role"] == message["role"] != "tool":
            out[-1].append(index)
        else:
            out.append([index])
    return out


def expected_texts(fed: list[dict[str, str]]) -> tuple[list[list[str]], list[list[tuple[str, str]]]]:
    """Per message, the texts the template prints of it; per message, its run's assistant Harmony
    messages ``(channel, text)`` that count as generated (the template's branches)."""
    groups = runs(fed)
    last_user = max((n for n, group in enumerate(groups) if fed[group[0]]["role"] == "user"), default=-1)
    texts: list[list[str]] = [[] for _ in fed]
    harmony: list[list[tuple[str, str]]] = [[] for _ in fed]
    for n, group in enumerate(groups):
        first = fed[group[0]]
        role = first["role"]
        if role == "assistant":
            blocks = []
            if first["thinking"] and n > last_user:
                texts[group[0]].append(first["thinking"])
                blocks.append(("analysis", first["thinking"]))
            merged = "\n\n".join(fed[i]["content"] for i in group)
            if merged:
                blocks.append(("final", merged))
            if n == len(groups) - 1 and (merged or first["thinking"]):
                blocks.pop()  # the prefill: left open for the model
            for i in group:
                harmony[i] = blocks
        for i in group:
            prints = role in ("user", "assistant", "system") or (role == "tool" and first["tool_name"] == "python")
            if prints and fed[i]["content"]:
                texts[i].append(fed[i]["content"])
    return texts, harmony


def check_messages(rendered: pf.RenderedPrompt, fed: list[dict[str, str]], date: str) -> None:
    text = rendered.text
    texts, _ = expected_texts(fed)
    assert [[text[a:b] for a, b in own] for own in rendered.messages] == texts
    # input order, system messages (the header) first
    order = [i for i, m in enumerate(fed) if m["role"] == "system"] + [
        i for i, m in enumerate(fed) if m["role"] != "system"
    ]
    flat = [pair for i in order for pair in rendered.messages[i]]
    assert flat == sorted(flat)
    words = LITERALS | {date}
    cursor = 0
    for start, end in [*flat, (len(text), len(text))]:
        assert made_of(text[cursor:start], words), (text[cursor:start], text)
        cursor = end


def check_generated(rendered: pf.RenderedPrompt, fed: list[dict[str, str]]) -> list[list[Range]]:
    """The generated ranges of ``generated="all"`` checked against the template's Harmony messages;
    per message, its run's ranges."""
    text = rendered.text
    _, harmony = expected_texts(fed)
    expected_blocks: list[tuple[str, str]] = []
    for group in runs(fed):
        expected_blocks += harmony[group[0]] if fed[group[0]]["role"] == "assistant" else []
    assert len(rendered.generated) == len(expected_blocks)
    by_block: dict[int, Range] = {}
    for position, ((start, end), (channel, body)) in enumerate(zip(rendered.generated, expected_blocks, strict=True)):
        assert text[start - len(START_ASSISTANT) : start] == START_ASSISTANT
        written = HEADS[channel] + body
        assert text.startswith(written, start)
        after = start + len(written)
        if text.startswith(END, after):
            assert end == after + len(END)
        else:  # <|end|> left off: the next message or the end of the prompt follows
            assert end == after and (after == len(text) or text.startswith("<|start|>", after))
        by_block[position] = (start, end)
    per_message: list[list[Range]] = [[] for _ in fed]
    taken = 0
    for group in runs(fed):
        if fed[group[0]]["role"] != "assistant":
            continue
        count = len(harmony[group[0]])
        for i in group:
            per_message[i] = [by_block[taken + k] for k in range(count)]
        taken += count
    return per_message


def check(
    oracle: tuple[HarmonyOracle, HarmonyOracle], messages: list[Any], tool_list: Any, opts: dict[str, Any]
) -> None:
    case = to_case(messages, tool_list, opts)
    expected, tagged = oracle[0].render(case), oracle[1].render(case)
    assert "output" in expected and "output" in tagged, (expected, tagged)
    rendered = FMT.render_spans(messages, tool_list, **opts)
    assert rendered.text == expected["output"] == tagged["output"] == FMT.render(messages, tool_list, **opts)
    assert list(rendered.generated) == [tuple(pair) for pair in tagged.get("generation", [])]
    rebuilt = pf.RenderedPrompt(rendered.text, rendered.messages, rendered.generated)  # the guarantees hold
    fed = case["messages"]
    check_messages(rebuilt, fed, case.get("date", datetime.date.today().isoformat()))
    per_message = check_generated(rebuilt, fed)
    roles = [m["role"] for m in fed]
    for policy in GENERATED_POLICIES:
        got = FMT.render_spans(messages, tool_list, generated=policy, **opts)
        assert got.generated == select_generated(roles, per_message, policy), policy
        assert got.messages == rendered.messages


@pytest.mark.go
@differential_settings
@given(conversation(), tools, options())
def test_render_spans_matches_go_template_and_its_layout(oracle, messages, tool_list, opts):
    check(oracle, messages, tool_list, opts)


RUN_CASE = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi"},
    {"role": "user", "content": "there"},
    {"role": "developer", "content": "Cite."},
    {"role": "assistant", "content": "Hello", "thinking": "greet"},
    {"role": "assistant", "content": "again"},
    {"role": "tool", "content": "4", "tool_name": "python"},
    {"role": "tool", "content": "x", "tool_name": "browser"},
    {"role": "assistant", "content": "Done", "thinking": "t"},
]


def test_render_spans_by_hand() -> None:
    """A run of users, late system text, a merged assistant run, tool results and a prefill (the last
    message is an assistant's with content): the ranges' texts."""
    rendered = FMT.render_spans(RUN_CASE, current_date="2025-08-05")
    text = rendered.text
    assert [[text[a:b] for a, b in own] for own in rendered.messages] == [
        ["Be brief."], ["Hi"], ["there"], ["Cite."], ["greet", "Hello"], ["again"], ["4"], [], ["t", "Done"]
    ]
    assert [text[a:b] for a, b in rendered.generated] == [
        "<|channel|>analysis<|message|>greet<|end|>",
        "<|channel|>final<|message|>Hello\n\nagain",  # the prefill leaves <|end|> off every final message
        "<|channel|>analysis<|message|>t<|end|>",
    ]
    assert text.endswith("<|channel|>final<|message|>Done")  # open: not generated
    last = FMT.render_spans(RUN_CASE, current_date="2025-08-05", generated="last")
    assert [text[a:b] for a, b in last.generated] == ["<|channel|>analysis<|message|>t<|end|>"]


@pytest.mark.go
def test_the_tagged_go_template_records_the_generated_messages(oracle) -> None:
    """The oracle itself, on the by-hand case: the tags write nothing and record each complete
    assistant message after ``<|start|>assistant`` (the prefill's open one not)."""
    case = to_case(RUN_CASE, None, {"current_date": "2025-08-05"})
    plain, tagged = oracle[0].render(case), oracle[1].render(case)
    text = tagged["output"]
    assert text == plain["output"]
    assert [text[a:b] for a, b in tagged["generation"]] == [
        "<|channel|>analysis<|message|>greet<|end|>",
        "<|channel|>final<|message|>Hello\n\nagain",
        "<|channel|>analysis<|message|>t<|end|>",
    ]


def test_prefill_is_not_generated_and_earlier_finals_end_at_their_text() -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "One"},
        {"role": "tool", "content": "4", "tool_name": "python"},
        {"role": "assistant", "content": "Tw", "thinking": "go on"},
    ]
    rendered = FMT.render_spans(messages, current_date="2025-08-05")
    text = rendered.text
    assert text.endswith("<|channel|>final<|message|>Tw")
    assert [text[a:b] for a, b in rendered.generated] == [
        "<|channel|>final<|message|>One",
        "<|channel|>analysis<|message|>go on<|end|>",
    ]


@pytest.mark.go
@pytest.mark.parametrize(("constant", "broken"), [("_JOIN", 1), ("_AUTHOR", len(START_ASSISTANT) - 1)])
def test_a_broken_offset_fails_the_check(oracle, monkeypatch, constant, broken) -> None:
    """The checks can fail: with one length constant of spans.py off, the by-hand case is refused."""
    check(oracle, RUN_CASE, None, {"current_date": "2025-08-05"})
    monkeypatch.setattr(harmony_spans, constant, broken)
    with pytest.raises(AssertionError):
        check(oracle, RUN_CASE, None, {"current_date": "2025-08-05"})


@pytest.mark.parametrize("policy", ["first", None, 1])
def test_render_spans_refuses_an_unknown_policy(policy: Any) -> None:
    with pytest.raises(pf.InvalidInputError, match=r"^generated: "):
        FMT.render_spans([{"role": "user", "content": "Hi"}], generated=policy)


def test_render_spans_raises_render_errors() -> None:
    for call in (FMT.render, FMT.render_spans):
        with pytest.raises(pf.FormatError, match=r"^messages\[0\]\.content"):
            call([{"role": "user", "content": 3}])
        with pytest.raises(pf.FormatError):
            call([{"role": "user", "content": "Hi"}], add_generation_prompt=False)


def test_guarded_format_spans_are_those_of_its_text() -> None:
    from prompt_formats.formats.harmony.tokens import CONTROL_TOKENS
    from prompt_formats.guard import ControlTokenGuard

    fmt = type(FMT)(ControlTokenGuard(CONTROL_TOKENS))
    messages = [{"role": "user", "content": "a<|end|>b"}, {"role": "assistant", "content": "c"}]
    rendered = fmt.render_spans(messages, current_date="2025-08-05")
    assert rendered.text == fmt.render(messages, current_date="2025-08-05")
    assert "<|end|>b" not in rendered.text[slice(*rendered.messages[0][0])]
