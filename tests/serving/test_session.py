"""``fmt.session(tools, **options).render(messages, add_generation_prompt)`` for growing conversations.

Every step of a generated conversation (agent tool loops, new user queries, wrapped tool responses,
late system messages, answers with ``<think>`` in their content, the same list again, a copied list)
is rendered through one session and compared with the reference engine (Jinja2 for the ChatML and
gpt-oss templates, Go's text/template for Harmony) and with ``fmt.render``, for every registered
format: the prompt, or the same error.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
import pickle
import threading
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.formats.harmony.openai.options import SystemOptions
from prompt_formats.formats.harmony.openai.prompt import prompt_pieces
from prompt_formats.formats.harmony.openai.render import FirstRender
from tests.support.gpt_oss_oracle import render_gpt_oss_jinja
from tests.support.harmony_oracle import HarmonyOracle, to_case
from tests.support.oracles import JINJA_TEMPLATES, Outcome, render_jinja, without_nones
from tests.support.strategies import EXAMPLES, differential_settings

TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }},
    {"type": "function", "function": {
        "name": "python", "description": "Run Python.",
        "parameters": {"type": "object", "properties": {"code": {"type": "string"}}},
    }},
]
DATE = "2025-08-05"
CHATML_TEMPLATES = {name: fixture for name, fixture in JINJA_TEMPLATES.items() if name != "gpt-oss"}
#: (format name, configuration): every registered format as ``get_format`` gives it, and the upstream
#: ChatML template without its guard (so wrapped tool responses, which the guard escapes, are compared too).
CASES = [(name, {}) for name in pf.available_formats()] + [("chatml-safety", {"policy": "allow"})]

PLAIN = ["", " ", "\n", "hi", "Paris", "é", "日本", "🙂", "a\n\nb", "  x  ", "42"]
TOKENS = ["<think>", "</think>", "<tool_response>", "</tool_response>", "<|im_end|>", "<|end|>"]


def texts(tokens: bool) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(PLAIN + TOKENS if tokens else PLAIN), max_size=3).map("".join)


STEP_KINDS = ("tool loop", "tool loop", "tool loop", "tool result", "user", "wrapped", "system", "answer", "same",
              "copy")


@st.composite
def steps(draw: st.DrawFn, guarded: bool, kinds: Sequence[str] = STEP_KINDS, both: bool = True) -> list[Any]:
    """One step: the messages it appends, or ``"same"`` / ``"copy"`` (render the list again / a deep copy).
    ``both``: whether a tool call may have both content and reasoning (gpt-oss's template refuses it)."""
    text = texts(False)
    trusted = texts(True)  # assistant text is trusted by the guard's default policy
    untrusted = texts(not guarded)
    kind = draw(st.sampled_from(kinds))
    if kind in ("same", "copy"):
        return [kind]
    if kind == "tool result":  # one more result: a run of them is one turn, so the previous one changes
        return [{"role": "tool", "tool_call_id": "call_0", "name": "python", "content": draw(untrusted)}]
    if kind == "user":
        content = draw(st.one_of(untrusted, st.builds(lambda t: [{"type": "text", "text": t}], untrusted)))
        return [{"role": "user", "content": content}]
    if kind == "wrapped":
        if guarded:
            return [{"role": "user", "content": draw(text)}]
        return [{"role": "user", "content": f"<tool_response>\n{draw(text)}\n</tool_response>"}]
    if kind == "system":
        return [{"role": "system", "content": draw(untrusted)}]
    reasoning = draw(st.one_of(st.none(), trusted))
    answer: dict[str, Any] = {"role": "assistant", "content": draw(trusted)}
    if reasoning is not None:
        answer["reasoning_content"] = reasoning
    if kind == "answer":
        return [answer]
    if not both and reasoning is not None:
        answer["content"] = ""
    names = draw(st.lists(st.sampled_from(["get_weather", "python"]), min_size=1, max_size=2))
    answer["tool_calls"] = [
        {"id": f"call_{k}", "type": "function", "function": {"name": name, "arguments": {"city": draw(text)}}}
        for k, name in enumerate(names)
    ]
    return [answer, *({"role": "tool", "tool_call_id": f"call_{k}", "name": name, "content": draw(untrusted)}
                      for k, name in enumerate(names))]


def ours(call: Any, *arguments: Any) -> tuple[str, ...]:
    """``call(*arguments)``'s outcome: ``("ok", text)``, ``("error", message)`` for a TemplateError,
    ``("invalid", class, message)`` for another FormatError."""
    try:
        return ("ok", call(*arguments))
    except pf.TemplateError as error:
        return ("error", str(error))
    except pf.FormatError as error:
        return ("invalid", type(error).__name__, str(error))


def reference(name: str, messages: list[Any], generation: bool | None, options: dict[str, Any],
              oracle: HarmonyOracle, tools: list[dict[str, Any]] | None = TOOLS) -> Outcome | None:
    """The reference engine's outcome; ``None`` where it has no answer (Harmony's template has no switch for False)."""
    if name == "harmony":
        if generation is False:
            return None
        result = oracle.render(to_case(messages, tools, options))
        return ("ok", result["output"]) if "output" in result else None
    if name == "gpt-oss":
        return render_gpt_oss_jinja(messages, tools, bool(generation), **options)
    return render_jinja(CHATML_TEMPLATES[name], without_nones(messages), tools, bool(generation), **options)


@st.composite
def format_options(draw: st.DrawFn, name: str) -> dict[str, Any]:
    if name == "harmony":
        return {"current_date": DATE, **draw(st.sampled_from([{}, {"think": False}, {"reasoning_effort": "high"}]))}
    if name == "gpt-oss":
        return {"current_date": DATE, **draw(st.sampled_from([{}, {"reasoning_effort": "low"}]))}
    if name == "gemma-3":  # the tokenizer's bos_token, which transformers passes the template
        return {"bos_token": draw(st.sampled_from(["<bos>", ""]))}
    if name == "deepseek-v3":
        return {"bos_token": draw(st.sampled_from(["<｜begin▁of▁sentence｜>", ""]))}
    if name.startswith("llama-"):  # (a date given: 3.2's default, today's, is the clock's on both sides)
        return {"bos_token": "<|begin_of_text|>", "date_string": DATE,
                **draw(st.sampled_from([{}, {"tools_in_user_message": False}]))}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    if "enable_thinking" in pf.get_format(name).options:
        optional["enable_thinking"] = st.booleans()
    if "preserve_thinking" in pf.get_format(name).options:
        optional["preserve_thinking"] = (st.sampled_from([True, False, None]) if name in ("qwen3.8", "gemma-4")
                                         else st.just(True))
    if "reasoning_effort" in pf.get_format(name).options:
        optional["reasoning_effort"] = st.sampled_from(["xhigh", "medium", "low"])
    fixed = {"bos_token": "<bos>"} if name == "gemma-4" else {}  # (the tokenizer's, as for gemma-3)
    return {**fixed, **draw(st.fixed_dictionaries({}, optional=optional))}


@pytest.mark.jinja
@pytest.mark.go
@pytest.mark.parametrize(("name", "config"), CASES, ids=["-".join((n, *c.values())) for n, c in CASES])
@settings(differential_settings, max_examples=max(1, EXAMPLES // 10))
@given(data=st.data())
def test_session_renders_like_the_reference_at_every_step(
    name: str, config: dict[str, str], data: st.DataObject, oracle: HarmonyOracle
) -> None:
    fmt = pf.get_format(name, **config)
    guarded = getattr(fmt, "guard", None) is not None and fmt.guard.policy != "allow"
    options = data.draw(format_options(name), label="options")
    session = fmt.session(TOOLS, **options)
    conversation: list[Any] = data.draw(st.sampled_from([
        [{"role": "user", "content": "Weather in Paris?"}],
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"}],
    ]), label="start")
    start = ours(session.render, conversation, True)
    assert start[0] == "ok" and start == reference(name, conversation, True, options, oracle)
    for step in data.draw(st.lists(steps(guarded), min_size=1, max_size=8), label="steps"):
        if step == ["copy"]:
            conversation = copy.deepcopy(conversation)
        elif step != ["same"]:
            conversation.extend(step)  # the same list object grows, as in an agent loop
        if data.draw(st.booleans(), label="pickle the session"):
            session = pickle.loads(pickle.dumps(session))
        generation = data.draw(st.sampled_from([None, False, True]), label="add_generation_prompt")
        got = ours(session.render, conversation, generation)
        assert got == ours(lambda: fmt.render(conversation, TOOLS, generation, **options))  # noqa: B023
        if got[0] == "invalid":  # input outside the template's documented shape: no reference answer
            continue
        expected = reference(name, conversation, generation, options, oracle)
        if expected is not None:
            # No control token reaches a guarded format's untrusted fields here: its guard changes nothing.
            assert got == expected, (name, conversation)


@st.composite
def history_steps(draw: st.DrawFn, guarded: bool) -> list[Any]:
    """A step of :func:`steps`, or one weighted to what changes earlier turns: a late system message
    (blank or not), a tool result named only by its ``tool_call_id``, or an edit that does not extend
    the history: ``["shrink", n]`` (a shorter list: the last messages dropped), ``["replace", n]``
    (a new list with one message changed), ``["tuple", 0]`` (the same messages, not a list)."""
    kind = draw(st.sampled_from(["late system", "edit", "grow", "grow", "named by id"]))
    if kind == "late system":
        return [{"role": draw(st.sampled_from(["system", "system", "developer"])), "content": draw(texts(not guarded))}]
    if kind == "named by id":  # Harmony names a tool result by the last call with its id
        call_id = draw(st.sampled_from(["call_0", "call_1", "call_9"]))
        return [{"role": "tool", "tool_call_id": call_id, "content": draw(texts(not guarded))}]
    if kind == "edit":
        return [draw(st.sampled_from(["shrink", "replace", "tuple"])), draw(st.integers(0, 1000))]
    return draw(steps(guarded))


def next_request(conversation: list[Any], step: list[Any]) -> tuple[list[Any], Any]:
    """The conversation after ``step`` (:func:`history_steps`) and the request to render."""
    if step == ["same"]:
        return conversation, conversation
    if step == ["copy"]:
        conversation = copy.deepcopy(conversation)
    elif type(step[0]) is str:
        kind, n = step
        if kind == "tuple":
            return conversation, tuple(conversation)
        if kind == "shrink":
            conversation = conversation[:max(1, len(conversation) - 1 - n % 4)]  # the last one to four dropped
        else:
            at = n % len(conversation)
            conversation = [*conversation[:at], {**conversation[at], "content": "changed"}, *conversation[at + 1:]]
    else:
        conversation.extend(step)
    return conversation, conversation


def check_history(name: str, config: dict[str, str], data: st.DataObject, oracle: HarmonyOracle,
                  history: Callable[[bool], st.SearchStrategy[list[list[Any]]]],
                  under_way: Callable[[bool], st.SearchStrategy[list[list[Any]]]] | None = None) -> None:
    """Render each step of ``history(guarded)`` through one session; compare with render and the reference.
    ``under_way``: steps already taken when the session's first request comes (its first render writes them)."""
    fmt = pf.get_format(name, **config)
    guarded = getattr(fmt, "guard", None) is not None and fmt.guard.policy != "allow"
    options = data.draw(format_options(name), label="options")
    tools = data.draw(st.sampled_from([TOOLS, None]), label="tools")
    session = fmt.session(tools, **options)
    conversation: list[Any] = data.draw(st.sampled_from([
        [{"role": "tool", "tool_call_id": "call_0", "name": "python", "content": "early"},
         {"role": "user", "content": "Weather in Paris?"}],
        [{"role": "system", "content": " "}, {"role": "user", "content": "Weather in Paris?"}],
        [{"role": "user", "content": "Weather in Paris?"}],
    ]), label="start")
    if under_way is not None:
        conversation += [message for step in data.draw(under_way(guarded), label="under way") for message in step]
    steps_ = data.draw(history(guarded), label="steps")
    for step in [["same"], *steps_]:
        conversation, request = next_request(conversation, step)
        generation = data.draw(st.sampled_from([None, False, True]), label="add_generation_prompt")
        got = ours(session.render, request, generation)
        assert got == ours(lambda: fmt.render(request, tools, generation, **options))  # noqa: B023
        if got[0] == "invalid":
            continue
        expected = reference(name, list(request), generation, options, oracle, tools)
        if expected is not None:
            assert got == expected, (name, request)


@pytest.mark.jinja
@pytest.mark.go
@pytest.mark.parametrize(("name", "config"), CASES, ids=["-".join((n, *c.values())) for n, c in CASES])
@settings(differential_settings, max_examples=max(1, EXAMPLES // 10))
@given(data=st.data())
def test_session_renders_like_the_reference_when_earlier_turns_change(
    name: str, config: dict[str, str], data: st.DataObject, oracle: HarmonyOracle
) -> None:
    # Late system messages (the first one gives a conversation its leading system turn, which
    # changes how a tool result first in it opens), reasoning dropped before a new query, and
    # histories that shrink, change or are not lists: each step through one session, as render does.
    check_history(name, config, data, oracle, lambda guarded: st.lists(history_steps(guarded), min_size=1, max_size=10))


@pytest.mark.jinja
@pytest.mark.go
@pytest.mark.parametrize(("name", "config"), CASES, ids=["-".join((n, *c.values())) for n, c in CASES])
@settings(differential_settings, max_examples=max(1, EXAMPLES // 40))
@given(data=st.data())
def test_session_renders_like_the_reference_over_long_conversations(
    name: str, config: dict[str, str], data: st.DataObject, oracle: HarmonyOracle
) -> None:
    # Dozens of messages, valid for the format, few queries and answers: the session then keeps the
    # stable turns joined in chunks, which a new query, a final answer, a late system message or a
    # shorter history must reach into.
    late_system = ("system",) if name in ("chatml-multi-system", "harmony") else ()
    kinds = ("tool loop",) * 8 + ("tool result", "user", "answer", "wrapped", *late_system)
    shrink = st.tuples(st.just("shrink"), st.integers(0, 1000)).map(list)

    def history(guarded: bool) -> st.SearchStrategy[list[list[Any]]]:
        grow = steps(guarded, kinds, both=name != "gpt-oss")
        one = st.integers(0, 12).flatmap(lambda k: shrink if k == 0 else grow)  # a shorter history now and then
        return st.lists(one, min_size=15, max_size=40)

    check_history(name, config, data, oracle, history)


@pytest.mark.jinja
@pytest.mark.go
@pytest.mark.parametrize(("name", "config"), CASES, ids=["-".join((n, *c.values())) for n, c in CASES])
@settings(differential_settings, max_examples=max(1, EXAMPLES // 10))
@given(data=st.data())
def test_session_whose_first_request_is_under_way_renders_like_the_reference(
    name: str, config: dict[str, str], data: st.DataObject, oracle: HarmonyOracle
) -> None:
    # A server's first request of an agent loop already under way: the session's first render writes
    # the whole history in one walk (tool loops, analyses a final answer drops, queries), and each
    # follow-up takes its texts from that walk's pieces: a new final answer, a new query, more calls.
    kinds = ("tool loop",) * 4 + ("tool result", "user", "answer")
    both = name != "gpt-oss"

    def under_way(guarded: bool) -> st.SearchStrategy[list[list[Any]]]:
        return st.lists(steps(guarded, kinds, both=both), min_size=1, max_size=12)

    def history(guarded: bool) -> st.SearchStrategy[list[list[Any]]]:
        return st.lists(steps(guarded, (*kinds, "answer", "answer"), both=both), min_size=1, max_size=6)

    check_history(name, config, data, oracle, history, under_way)


@settings(differential_settings, max_examples=max(1, EXAMPLES // 4))
@given(history=st.lists(steps(False, ("tool loop", "tool loop", "answer", "user", "tool result"), both=False),
                        min_size=1, max_size=12))
def test_the_gpt_oss_walk_notes_where_each_message_starts(history: list[list[Any]]) -> None:
    # A session's first render cuts the walk's pieces into its messages' texts where the walk noted
    # they start, analyses a final answer took out included: each message's content, where
    # render_spans places it, lies between its start and the next one's.
    messages = [{"role": "user", "content": "Weather in Paris?"}, *(message for step in history for message in step)]
    calls = [message for message in messages if message.get("tool_calls")]
    for k, message in enumerate(calls):  # most calls with an analysis: runs of them before a final answer
        if k % 3 != 2:
            message.update(content="", reasoning_content=f"plan {k}")
    options = {"current_date": DATE}
    first = FirstRender()
    try:
        spans = pf.get_format("gpt-oss").render_spans(messages, TOOLS, True, **options)
    except pf.FormatError as error:
        with pytest.raises(type(error)):
            prompt_pieces(messages, TOOLS, True, SystemOptions(options), noting=False, first=first)
        return
    head = prompt_pieces(messages, TOOLS, True, SystemOptions(options), noting=False, first=first)
    starts = first.starts
    assert "".join(head.pieces) == spans.text
    offsets = list(itertools.accumulate(map(len, head.pieces), initial=0))
    bounds = [offsets[at] for at in starts]  # each loop message's first character, then the end of the last
    assert len(bounds) == len(messages) - head.start + 1
    for index, ranges in enumerate(spans.messages[head.start:]):
        assert all(bounds[index] <= begin <= end <= bounds[index + 1] for begin, end in ranges), index


def _call_loop(k: int, name: str = "get_weather") -> list[dict[str, Any]]:
    """A call with its analysis (which a later final answer drops) and its result."""
    call = {"id": f"call_{k}", "type": "function", "function": {"name": name, "arguments": {"city": f"c{k}"}}}
    return [{"role": "assistant", "content": "", "reasoning_content": f"plan {k}", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{k}", "content": f"sunny {k}"}]


@pytest.mark.jinja
def test_a_gpt_oss_session_drops_the_analysis_of_every_call_a_final_answer_follows() -> None:
    # A first request whose many calls are still open (no final answer after them), its last call
    # not yet answered; then its result (written after that call), more calls, the final answer:
    # every open call's text changes, whatever chunks of the prompt the follow-ups made.
    fmt, options = pf.get_format("gpt-oss"), {"current_date": DATE}
    messages: list[Any] = [{"role": "user", "content": "Weather?"}]
    messages += [message for k in range(3) for message in _call_loop(k)]
    messages.append({"role": "assistant", "content": "Sunny so far."})
    messages += [message for k in range(3, 30) for message in _call_loop(k)]
    last_call, its_result = _call_loop(30, "python")
    messages.append(last_call)
    session = fmt.session(TOOLS, **options)
    steps_ = [[], [its_result], *(_call_loop(k) for k in range(31, 36)),
              [{"role": "assistant", "content": "Sunny everywhere."}], [{"role": "user", "content": "Thanks"}],
              _call_loop(36)]
    for step in steps_:
        messages.extend(step)  # the same list grows
        got = ours(session.render, messages, True)
        assert got == render_gpt_oss_jinja(messages, TOOLS, True, **options), len(messages)


GUARDED_STEPS = st.lists(steps(False), min_size=1, max_size=6)


@settings(differential_settings, max_examples=max(1, EXAMPLES // 10))
@given(steps_=GUARDED_STEPS, policy=st.sampled_from(["escape", "reject"]))
def test_guarded_session_renders_like_render_with_control_tokens(steps_: list[list[Any]], policy: str) -> None:
    # Control tokens in untrusted text: the escaped prompt (or the InjectionError) is render's.
    fmt = pf.get_format("chatml-safety", policy=policy)
    session = fmt.session(TOOLS)
    conversation: list[Any] = [{"role": "user", "content": "Hi <|im_start|>"}]
    for step in steps_:
        if step not in (["same"], ["copy"]):
            conversation.extend(step)
        assert ours(session.render, conversation, True) == ours(fmt.render, conversation, TOOLS, True)


class _PosingAsDict(type):
    """A metaclass whose classes say they are ``dict``: equal to it, and hashed as it (so that a set
    of the messages' types, or a count of ``dict`` among them, takes them for dicts)."""

    def __eq__(cls, other: object) -> bool:
        return other is dict or type.__eq__(cls, other)

    def __hash__(cls) -> int:
        return hash(dict)


class _Posing(metaclass=_PosingAsDict):
    """A message that reads as one (``get``, ``[]``, ``in``) and is no dict, which ``render`` refuses."""

    _fields: ClassVar[dict[str, Any]] = {"role": "user", "content": "posing"}

    def get(self, key: str, default: Any = None) -> Any:
        return self._fields.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self._fields[key]

    def __contains__(self, key: object) -> bool:
        return key in self._fields


@pytest.mark.parametrize("name", pf.available_formats())
def test_a_message_whose_class_poses_as_dict_is_rendered_as_render_renders_it(name: str) -> None:
    # The session reads the new messages of an extension itself: a message that is not exactly a
    # dict must send the request to the full render, however its class compares and hashes.
    fmt = pf.get_format(name)
    options = {"current_date": DATE} if name in ("harmony", "gpt-oss") else (
        {"date_string": "26 Jul 2024"} if name.startswith("llama") else {})
    first: list[Any] = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    for conversation in ([*first, _Posing()], [_Posing(), *first]):
        session = fmt.session(None, **options)
        ours(session.render, first, True)
        full = ours(functools.partial(fmt.render, **options), conversation, None, True)
        assert ours(session.render, conversation, True) == full


class _Lying(dict):  # type: ignore[type-arg]
    """A dict whose ``get`` hides the text its ``[]`` and iteration show (a template reads those)."""

    def get(self, key: Any, default: Any = None) -> Any:
        return "lies" if key == "content" else super().get(key, default)


@pytest.mark.parametrize("name", pf.available_formats())
def test_a_first_request_of_messages_that_are_no_dicts_renders_as_render_then_extends(name: str) -> None:
    # A first render reads its messages as render reads them, whatever their type (some walks are
    # handed the list unchecked); the follow-ups that extend it reuse that reading.
    fmt = pf.get_format(name)
    options = {"current_date": DATE} if name in ("harmony", "gpt-oss") else (
        {"date_string": "26 Jul 2024"} if name.startswith("llama") else {})
    render = functools.partial(fmt.render, **options)
    conversation: list[Any] = [
        pf.Message(role="user", content="what is 2+2?"), _Lying(role="assistant", content="4"),
        {"role": "user", "content": "and 3+3?"}, _Lying(role="assistant", content="6")]
    session = fmt.session(None, **options)
    assert ours(session.render, conversation, True) == ours(render, conversation, None, True)
    for text in ("and 4+4?", "8", "and 5+5?"):
        conversation = [*conversation, {"role": "user" if text.startswith("and") else "assistant", "content": text}]
        assert ours(session.render, conversation, True) == ours(render, conversation, None, True)
    assert "lies" not in ours(render, conversation, None, True)[-1]  # (what the case is about)


@dataclasses.dataclass
class _DataMessage:
    role: str
    content: str


def test_a_session_whose_walk_failed_on_a_message_checks_the_types_of_the_next_first() -> None:
    # A dataclass message: Harmony's walk refuses it where render reads it a second time, as plain
    # data. After one such request, a session checks that the messages are dicts before its walk
    # (history.extension's own tests show what that check does); the prompts are render's throughout.
    fmt = pf.get_format("harmony")
    options = {"current_date": DATE}
    session = fmt.session(None, **options)
    renderer: Any = session._incremental
    assert not getattr(renderer, "_stepped_aside", False)
    conversation: list[Any] = [{"role": "user", "content": "hi"}, _DataMessage("assistant", "yo")]
    for _ in range(3):
        conversation = [*conversation, {"role": "user", "content": "and?"}]
        assert ours(session.render, conversation, True) == ours(functools.partial(fmt.render, **options),
                                                                conversation, None, True)
        assert session._incremental is renderer and renderer._stepped_aside is True
        conversation = [*conversation, _DataMessage("assistant", "so")]
    plain: list[Any] = [{"role": "user", "content": "hi"}]  # ... and dicts are still rendered by the walk
    assert session.render(plain, True) == fmt.render(plain, None, True, **options)
    assert renderer._rendered == plain


def test_session_refuses_unknown_options_when_made() -> None:
    for name in pf.available_formats():
        with pytest.raises(pf.UnknownOptionError, match="no_such_option"):
            pf.get_format(name).session(TOOLS, no_such_option=True)


def test_declared_capability() -> None:
    for name in pf.available_formats():
        fmt = pf.get_format(name)
        assert fmt.renders_incrementally, name


@pytest.mark.go
def test_a_harmony_session_knows_the_ids_naming_tool_results(oracle: HarmonyOracle) -> None:
    # A tool result named only by its tool_call_id takes the name of the last call with that id: a
    # later call with the same id renames it, which a session made for the history must see.
    options = {"current_date": DATE}
    fmt = pf.get_format("harmony")
    session = fmt.session(TOOLS, **options)

    def call(name: str) -> dict[str, Any]:
        return {"role": "assistant", "content": "",
                "tool_calls": [{"id": "call_7", "type": "function", "function": {"name": name, "arguments": {}}}]}

    conversation: list[Any] = [{"role": "user", "content": "Weather?"}, call("get_weather"),
                               {"role": "tool", "tool_call_id": "call_7", "content": "18"}]
    assert session.render(conversation, True) == fmt.render(conversation, TOOLS, True, **options)
    conversation += [call("python"), {"role": "tool", "name": "python", "content": "ok"}]
    got = session.render(conversation, True)
    assert got == fmt.render(conversation, TOOLS, True, **options)
    assert ("ok", got) == reference("harmony", conversation, True, options, oracle)
    # A new result named only by the id of an earlier call: its name is that call's.
    conversation.append({"role": "tool", "tool_call_id": "call_7", "content": "again"})
    got = session.render(conversation, True)
    assert got == fmt.render(conversation, TOOLS, True, **options)
    assert ("ok", got) == reference("harmony", conversation, True, options, oracle)


@pytest.mark.go
def test_harmony_extensions_are_rendered_by_the_incremental_path(oracle: HarmonyOracle) -> None:
    # The session's fast path itself (not the full render it may step aside to) gives Go's prompt
    # for the extensions it is there for: a tool loop, a new query (reasoning dropped), a late system
    # message, messages render's one loop steps aside for.
    options = {"current_date": DATE}
    session = pf.get_format("harmony").session(TOOLS, **options)
    incremental = session._incremental
    assert incremental is not None
    conversation: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    appended = [
        [{"role": "assistant", "content": "", "reasoning_content": "run it",
          "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "python", "arguments": {}}}]},
         {"role": "tool", "tool_call_id": "call_0", "name": "python", "content": "18"}],
        [{"role": "assistant", "content": "18 °C", "reasoning_content": "done"},
         {"role": "user", "content": "And Rome?"}],
        [{"role": "system", "content": "Be brief."}],
        [{"role": "user", "content": "Now."}],
        # render's one loop writes the first and steps aside at the second (a part without "type"):
        # what it wrote is taken back and the writers' loop writes both.
        [{"role": "assistant", "content": "ok", "reasoning_content": "r"},
         {"role": "user", "content": [{"text": "?"}]}],
    ]
    for step in [[], *appended]:
        conversation = [*conversation, *step]
        got = incremental.render(conversation, True)
        assert got is not None and got == oracle.render(to_case(conversation, TOOLS, options))["output"], step


def test_earlier_messages_are_not_mutated_by_the_session() -> None:
    fmt = pf.get_format("chatml-multi-system")
    conversation = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"},
                    {"role": "assistant", "content": "a", "reasoning_content": "r"}]
    snapshot = copy.deepcopy(conversation)
    session = fmt.session(TOOLS)
    session.render(conversation, True)
    conversation += [{"role": "system", "content": "late"}, {"role": "user", "content": "q2"}]
    assert session.render(conversation, True) == fmt.render(conversation, TOOLS, True)
    assert conversation[:3] == snapshot


def test_one_session_shared_by_threads_renders_each_request_exactly() -> None:
    fmt = pf.get_format("chatml-multi-system")
    base = [{"role": "user", "content": "q"}]
    requests = [base + [{"role": "assistant", "content": str(i)}, {"role": "user", "content": "more"}] * i
                for i in range(1, 6)]
    session = fmt.session(TOOLS)
    barrier = threading.Barrier(4)
    failures: list[str] = []

    def run() -> None:
        barrier.wait()
        for messages in requests * 3:
            if session.render(messages, True) != fmt.render(messages, TOOLS, True):
                failures.append(repr(messages))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


@pytest.mark.parametrize("name", ["gemma-3", "glm-4.5", "llama-3.1", "llama-3.2"])
@pytest.mark.parametrize("generation", [True, False])
def test_a_session_s_second_prompt_starts_from_its_first_joined_once(name: str, generation: bool) -> None:
    # The pieces of the first prompt were joined into it, and again into the chunk the follow-ups
    # reuse: that chunk is the first prompt itself, and the second prompt is the same as render's.
    fmt = pf.get_format(name)
    first = [{"role": "user", "content": "Hi there"}]
    second = [*first, {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Again"}]
    session = fmt.session()
    before = session.render(first, generation)
    assert session.render(second, generation) == fmt.render(second, None, generation)
    chunks = session._incremental._chunks  # type: ignore[union-attr]
    assert len(chunks) == 1 and chunks[0] is before


@pytest.mark.parametrize("name", ["gemma-4", "qwen3.6", "chatml-multi-system", "nemotron-3-nano"])
def test_a_session_that_cannot_take_its_last_prompt_as_a_chunk_does_not_hold_it(name: str) -> None:
    # Their next prompt never starts from the last one (a turn re-rendered, a reply's turn longer than
    # the generation prompt): a conversation's last prompt held would be memory for nothing.
    session = pf.get_format(name).session()
    session.render([{"role": "user", "content": "Hi there"}], True)
    assert session._incremental._last is None  # type: ignore[union-attr]


#: A conversation whose later user queries change earlier turns (their reasoning is dropped) and
#: whose system message sits mid-conversation (multi-system merges it into the prologue).
CHANGING: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": "", "reasoning_content": "look it up", "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "content": "sunny"},
    {"role": "assistant", "content": "Sunny.", "reasoning_content": "read it"},
    {"role": "user", "content": "And tomorrow?"},
    {"role": "assistant", "content": "Rain.", "reasoning_content": "guess"},
    {"role": "user", "content": "Thanks"},
]
FIRST_RENDER_UNSPLIT = [name for name in pf.available_formats() if name.startswith(("chatml", "qwen", "nemotron"))]


@pytest.mark.parametrize("name", FIRST_RENDER_UNSPLIT)
def test_a_first_render_s_texts_are_joined_from_its_pieces_when_a_later_request_needs_them(name: str) -> None:
    # A first render joins only its prompt; the requests after it take the texts they need from its
    # pieces: as the first chunk, which a later query can drop after one request or after two. Every
    # sequence of four lengths (the same list again included) renders as render does.
    fmt = pf.get_format(name)
    messages = CHANGING if name == "chatml-multi-system" else [m for m in CHANGING if m["role"] != "system"]
    if name == "chatml-multi-system":
        messages = [*messages[:4], {"role": "system", "content": "Note."}, *messages[4:]]
    lengths = range(2, len(messages) + 1)
    for steps_ in itertools.combinations_with_replacement(lengths, 4):
        session = fmt.session(TOOLS)
        for count in steps_:
            assert session.render(messages[:count], True) == fmt.render(messages[:count], TOOLS, True), steps_
    session = fmt.session(TOOLS)
    session.render(messages, True)
    texts_ = session._incremental._texts  # type: ignore[union-attr]
    assert all(text is pf.format.history.UNSPLIT for text in texts_)  # no text joined apart


@pytest.mark.parametrize("name", FIRST_RENDER_UNSPLIT)
def test_a_request_whose_prompt_is_never_joined_leaves_the_state_right(name: str) -> None:
    # Every change of state is made before the prompt is joined: a request stopped in between (an
    # error, a timeout) leaves the renderer as right as a request that returned its prompt.
    fmt = pf.get_format(name)
    messages = [m for m in CHANGING if m["role"] != "system"]
    for stopped in range(2, len(messages)):
        incremental = fmt.session(TOOLS)._incremental
        assert incremental is not None
        incremental.render(messages[:stopped - 1], True)
        incremental._stable(messages[:stopped])  # type: ignore[attr-defined]  # (its prompt never joined)
        for count in range(stopped, len(messages) + 1):
            assert incremental.render(messages[:count], True) == fmt.render(messages[:count], TOOLS, True)


class _Ambiguous:
    def __bool__(self) -> bool:
        raise ValueError("the truth value is ambiguous")


@pytest.mark.parametrize("name", pf.available_formats())
def test_a_session_whose_renderer_raised_renders_the_next_request_as_render(name: str) -> None:
    # A renderer that raised may have been stopped halfway through changing its state: the session
    # answers with the full render's error and renders later requests with a new renderer.
    fmt = pf.get_format(name)
    messages = [m for m in CHANGING if m["role"] != "system"]
    for primed in (0, 2, 4):  # (the request that raises: a first render, or one that extends)
        session = fmt.session(TOOLS)
        if primed:
            ours(session.render, messages[:primed], True)
        with pytest.raises(pf.FormatError):
            session.render(messages[:primed + 1], _Ambiguous())  # type: ignore[arg-type]
        for count in range(primed + 2, len(messages) + 1):
            assert ours(session.render, messages[:count], True) == ours(fmt.render, messages[:count], TOOLS, True)
