"""The shared contract every registered format keeps, run over ``pf.available_formats()``.

A newly registered format is covered here with no edit, except one: its family's reply markers in
``FAMILY_MARKERS`` (the test fails loudly until they are given, so nobody forgets).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import pickle
import re
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import prompt_formats as pf
from tests.support.odd_values import Touchy
from tests.support.parser_cases import (
    CHATML_MARKERS,
    DEEPSEEK_MARKERS,
    GEMMA4_MARKERS,
    GEMMA_MARKERS,
    GLM_MARKERS,
    HARMONY_MARKERS,
    LLAMA_MARKERS,
    completions,
    counting_ids,
    splits,
    stream,
)
from tests.support.strategies import differential_settings

ROOT = Path(__file__).resolve().parents[2]
FORMAT_NAMES = pf.available_formats()

#: The reply markers of each format family (the package under ``prompt_formats.formats``).
FAMILY_MARKERS: dict[str, list[str]] = {
    "chatml": CHATML_MARKERS,
    "deepseek": DEEPSEEK_MARKERS,
    "gemma": GEMMA_MARKERS + GEMMA4_MARKERS,
    "glm": GLM_MARKERS,
    "harmony": HARMONY_MARKERS,
    "llama": LLAMA_MARKERS,
}

TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                       "required": ["city"]},
    }},
    {"type": "function", "function": {
        "name": "f", "description": "Do f.", "parameters": {"type": "object", "properties": {}},
    }},
]

CONVERSATIONS: list[list[dict[str, Any]]] = [
    [{"role": "user", "content": "Hi"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2+2?"},
     {"role": "assistant", "content": "4"}, {"role": "user", "content": "And 3+3?"}],
    [{"role": "user", "content": "Weather in Paris?"},
     {"role": "assistant", "content": "", "tool_calls": [
         {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
     {"role": "tool", "content": "sunny"}],
    [{"role": "user", "content": [{"type": "text", "text": "Describe é 日本 🙂"}]}],
]

REPLIES = [
    "Hello there.",
    "<think>\nhmm\n</think>\n\nThe answer.<|im_end|>",
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
    "<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>done<|return|>",
    '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>',
    "<|", "<think>", "",
]


def family(fmt: pf.ChatFormat) -> str:
    """The format family: the package under ``prompt_formats.formats`` defining the format's class."""
    parts = type(fmt).__module__.split(".")
    assert parts[:2] == ["prompt_formats", "formats"] and len(parts) >= 3, type(fmt).__module__
    return parts[2]


def markers_of(fmt: pf.ChatFormat) -> list[str]:
    name = family(fmt)
    if name not in FAMILY_MARKERS:
        pytest.fail(f"format {fmt.name!r} (family {name!r}) has no entry in FAMILY_MARKERS: add its markers")
    return FAMILY_MARKERS[name]


def renders(fmt: pf.ChatFormat, tools: Any = TOOLS) -> list[str | type]:
    """Each case's prompt with and without a generation prompt (the error's class when it raises)."""
    results: list[str | type] = []
    for messages in CONVERSATIONS:
        for generation in (False, True):
            try:
                results.append(fmt.render(messages, tools, add_generation_prompt=generation))
            except pf.FormatError as error:
                results.append(type(error))
    return results


def parses(fmt: pf.ChatFormat) -> list[pf.AssistantReply]:
    return [fmt.parse(text, TOOLS, id_factory=counting_ids()) for text in REPLIES]


@pytest.fixture(params=FORMAT_NAMES)
def fmt(request: pytest.FixtureRequest) -> pf.ChatFormat:
    return pf.get_format(request.param)


def test_every_format_family_has_markers(fmt: pf.ChatFormat) -> None:
    assert markers_of(fmt)


def test_cases_render(fmt: pf.ChatFormat) -> None:
    # The other checks compare renders; they must compare prompts, not only errors.
    assert any(isinstance(result, str) and result for result in renders(fmt))


def test_pickles(fmt: pf.ChatFormat) -> None:
    copy = pickle.loads(pickle.dumps(fmt))
    assert type(copy) is type(fmt)
    assert renders(copy) == renders(fmt)
    if fmt.parses:
        assert parses(copy) == parses(fmt)


def run_in_threads(work: Callable[[], Any], count: int = 4) -> list[Any]:
    """``work()`` in ``count`` threads started together; their results in thread order."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count
    failures: list[BaseException] = []

    def run(index: int) -> None:
        try:
            barrier.wait()
            for _ in range(3):
                results[index] = work()
        except BaseException as error:  # reported below, in the main thread
            failures.append(error)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    return results


def test_shareable_across_threads(fmt: pf.ChatFormat) -> None:
    def work() -> tuple[list[str | type], list[pf.AssistantReply]]:
        return renders(fmt), parses(fmt) if fmt.parses else []

    serial = work()
    assert run_in_threads(work) == [serial] * 4


def test_unknown_render_option_refused(fmt: pf.ChatFormat) -> None:
    with pytest.raises(pf.UnknownOptionError):
        fmt.render(CONVERSATIONS[0], no_such_option=True)


def test_unknown_parse_option_refused(fmt: pf.ChatFormat) -> None:
    if not fmt.parses:
        pytest.skip(f"{fmt.name} has no reply parser")
    with pytest.raises(pf.UnknownOptionError):
        fmt.parse("Hello", no_such_option=True)
    with pytest.raises(pf.UnknownOptionError):
        fmt.stream_parser(no_such_option=True)


def test_prepared_tools_render_like_the_plain_list(fmt: pf.ChatFormat) -> None:
    assert renders(fmt, pf.prepare_tools(TOOLS)) == renders(fmt, TOOLS)


def outcome(result: str | BaseException) -> str | tuple[type, str]:
    """A prompt as is, an error as its class and message (error objects do not compare equal)."""
    return (type(result), str(result)) if isinstance(result, BaseException) else result


def test_render_batch_equals_render(fmt: pf.ChatFormat) -> None:
    for tools in (None, TOOLS):
        for generation in (False, True):
            expected = []
            for messages in CONVERSATIONS:
                try:
                    expected.append(outcome(fmt.render(messages, tools, add_generation_prompt=generation)))
                except pf.FormatError as error:
                    expected.append(outcome(error))
            batch = fmt.render_batch(CONVERSATIONS, tools, add_generation_prompt=generation, errors="collect")
            assert [outcome(result) for result in batch] == expected


@pytest.mark.parametrize("name", FORMAT_NAMES)
@pytest.mark.parametrize("with_tools", [False, True], ids=["no-tools", "tools"])
@differential_settings
@given(data=st.data())
def test_stream_equals_parse(name: str, with_tools: bool, data: st.DataObject) -> None:
    fmt = pf.get_format(name)
    if not fmt.parses:
        return
    tools = TOOLS if with_tools else None
    text = data.draw(completions(markers_of(fmt)), label="completion")
    deltas = data.draw(splits(text), label="deltas")
    whole = fmt.parse(text, tools, id_factory=counting_ids())
    _, streamed = stream(lambda: fmt.stream_parser(tools, id_factory=counting_ids()), deltas)
    assert streamed == whole


# Bad input of every kind the interface takes: what is raised for it must be a FormatError.
JUNK = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=4), st.binary(max_size=4))
BAD_CONTENT = st.one_of(
    JUNK,
    st.lists(JUNK, max_size=3),
    st.lists(st.dictionaries(st.sampled_from(["type", "text", "image", "video"]), JUNK, max_size=3), max_size=3),
    st.dictionaries(st.text(max_size=3), JUNK, max_size=2),
)
BAD_MESSAGE = st.one_of(
    JUNK,
    st.lists(JUNK, max_size=2),
    st.fixed_dictionaries({"role": st.one_of(JUNK, st.sampled_from(["user", "system", "assistant", "tool"])),
                           "content": BAD_CONTENT}),
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "tool", "system"])},
                          optional={"content": BAD_CONTENT, "tool_calls": st.one_of(JUNK, st.lists(JUNK, max_size=2)),
                                    "reasoning_content": JUNK, "name": JUNK}),
)
BAD_MESSAGES = st.one_of(
    JUNK, st.dictionaries(st.text(max_size=3), JUNK, max_size=2), st.lists(BAD_MESSAGE, max_size=4),
)
BAD_TOOLS = st.one_of(
    st.integers(), st.text(max_size=3), st.lists(JUNK, min_size=1, max_size=2),
    st.lists(st.fixed_dictionaries({"type": st.one_of(JUNK, st.just("function"))},
                                   optional={"function": st.one_of(JUNK, st.dictionaries(
                                       st.sampled_from(["name", "parameters", "description"]), JUNK, max_size=3))}),
             min_size=1, max_size=2),
)


def raises_only_format_errors(call: Callable[..., Any], *arguments: Any) -> None:
    """Call ``call(*arguments)``: it may return or raise a FormatError; any other exception fails the test."""
    with contextlib.suppress(pf.FormatError):
        call(*arguments)


@pytest.mark.parametrize("name", FORMAT_NAMES)
@differential_settings
@given(messages=BAD_MESSAGES, generation=st.booleans())
def test_bad_messages_raise_format_error(name: str, messages: Any, generation: bool) -> None:
    fmt = pf.get_format(name)
    raises_only_format_errors(lambda: fmt.render(messages, add_generation_prompt=generation))
    raises_only_format_errors(lambda: fmt.render_batch([messages], add_generation_prompt=generation))


@pytest.mark.parametrize("name", FORMAT_NAMES)
@differential_settings
@given(tools=BAD_TOOLS)
def test_bad_tools_raise_format_error(name: str, tools: Any) -> None:
    fmt = pf.get_format(name)
    raises_only_format_errors(lambda: fmt.render(CONVERSATIONS[0], tools))
    raises_only_format_errors(lambda: pf.prepare_tools(tools))
    if fmt.parses:
        raises_only_format_errors(lambda: fmt.parse("Hello", tools))
        raises_only_format_errors(lambda: fmt.stream_parser(tools))


def test_bad_known_junk_is_refused(fmt: pf.ChatFormat) -> None:
    # The generated cases above may all render; these certainly cannot.
    for messages in ("not a list", [3]):
        with pytest.raises(pf.FormatError):
            fmt.render(messages)
    # A role or a content the template cannot write: refused, or (a template that writes nothing for
    # it) its text reported dropped, and refused under strict=True; or (a template that prints any
    # value, as Nemotron's does) written where its range says, as Python prints it.
    for messages in ([{"role": 7, "content": "x"}], [{"role": "user", "content": 3.5}]):
        try:
            fmt.render(messages)
        except pf.FormatError:
            continue
        spans = fmt.render_spans(messages)
        if [[spans.text[a:b] for a, b in found] for found in spans.messages] == [[str(messages[0]["content"])]]:
            assert spans.dropped == ()
            continue
        # (the content, or the whole message where the template writes nothing of a message of that role)
        assert spans.dropped in (("messages[0].content",), ("messages[0]",))
        with pytest.raises(pf.InvalidInputError, match=rf"^{re.escape(spans.dropped[0])}: "):
            fmt.render(messages, strict=True)
    if fmt.parses:
        with pytest.raises(pf.FormatError):
            fmt.parse(3)  # type: ignore[arg-type]


def deeply_nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"a": [value]}
    return value


def test_recursion_deep_input_is_a_format_error(fmt: pf.ChatFormat) -> None:
    # Input nested far deeper than the stack: refused as a FormatError where the format reads it (a
    # format may drop a field, as harmony drops past tool calls), never a RecursionError.
    deep = deeply_nested(100_000)
    cases = [
        [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": deep}}]}],
        [{"role": "user", "content": [deep]}],
        [{"role": "user", "content": deep}],
    ]
    for messages in cases:
        raises_only_format_errors(fmt.render, messages)
        raises_only_format_errors(fmt.render_batch, [messages])
    raises_only_format_errors(
        lambda: fmt.render(CONVERSATIONS[0], [{"type": "function", "function": {"name": "f", "parameters": deep}}])
    )


def stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def raised_inside_the_package(error: BaseException) -> bool:
    """Whether ``error`` came out of ``prompt_formats`` code (not from the test's own call into it)."""
    package = str(Path(pf.__file__).parent)
    trace = error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename.startswith(package):
            return True
        trace = trace.tb_next
    return False


def test_call_too_deep_in_the_stack_is_a_format_error(fmt: pf.ChatFormat) -> None:
    # Called with fewer and fewer frames left, a public entry returns what it returns at the top of
    # the stack or raises a FormatError; a RecursionError leaks from none of them.
    def descend(levels: int, entry: Callable[[], Any]) -> Any:
        return entry() if levels <= 0 else descend(levels - 1, entry)

    # The tool loop, or (a template whose roles alternate user / assistant) a chat.
    case = CONVERSATIONS[1] if isinstance(renders(fmt)[4], type) else CONVERSATIONS[2]
    entries: dict[str, Callable[[], Any]] = {
        "render": lambda: fmt.render(case, TOOLS, add_generation_prompt=True),
        "render_batch": lambda: fmt.render_batch([case], TOOLS),
        "session": lambda: fmt.session(TOOLS).render(case, True),
        "session, warm": lambda: warm.render(case, True),
        "prepare_tools": lambda: pf.prepare_tools(TOOLS) is not None,
    }
    warm = fmt.session(TOOLS)
    warm.render(case[:1], True)  # (what it reuses is there: a render goes the incremental way)
    if fmt.parses:
        entries["parse"] = lambda: fmt.parse(REPLIES[2], TOOLS, id_factory=lambda: "call_0")
        entries["stream_parser"] = lambda: fmt.stream_parser(TOOLS) is not None
    refused = set()
    for name, entry in entries.items():
        expected = entry()
        for margin in [*range(12), *range(12, 120, 3)]:  # (every one of the last frames)
            try:
                assert descend(sys.getrecursionlimit() - stack_depth() - margin, entry) == expected, (name, margin)
            except pf.FormatError:
                refused.add(name)
            except RecursionError as error:
                assert not raised_inside_the_package(error), f"{name} leaked a RecursionError ({margin} frames left)"
    # Rendering cannot finish with almost no stack: the interface's conversion did run.
    assert {"render", "render_batch"} <= refused


def docs_page(fmt: pf.ChatFormat) -> Path:
    """The format's own page (``gpt-oss.md``, ``harmony.md``), else its family's (``chatml.md``)."""
    own = ROOT / "docs" / f"{fmt.name}.md"
    return own if own.is_file() else ROOT / "docs" / f"{family(fmt)}.md"


def test_docs_name_the_format(fmt: pf.ChatFormat) -> None:
    assert fmt.summary.strip()
    table_rows = [line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("|")]
    assert any(line.split("|")[1].strip() == f"`{fmt.name}`" for line in table_rows), "not in README's table"
    page = docs_page(fmt)
    assert page.is_file(), f"no docs page {page.name} for the {family(fmt)} family"
    assert fmt.name in page.read_text()


def test_docs_page_names_every_option(fmt: pf.ChatFormat) -> None:
    text = docs_page(fmt).read_text()
    declared = {option.name for option in (*fmt.option_specs, *fmt.parse_option_specs)}
    missing = sorted(name for name in declared if name not in text)
    assert not missing, f"{docs_page(fmt).name} does not mention {missing}"


# What issue 14's contract lists beyond the checks above: configured instances, parsers mid-stream
# and prepared tools pickle; a prepared toolset is shared by threads; every entry refuses unknown
# options; prepared tools parse and render spans like the plain list; bad option values and bad
# input to render_spans are FormatErrors.

#: The control tokens of each format family, for a guard configured over them.
FAMILY_TOKENS: dict[str, tuple[str, ...]] = {
    "chatml": pf.CHATML_CONTROL_TOKENS, "harmony": pf.HARMONY_CONTROL_TOKENS,
    "gemma": (*pf.GEMMA3_CONTROL_TOKENS, *pf.GEMMA4_CONTROL_TOKENS),
    "deepseek": pf.DEEPSEEK_V3_CONTROL_TOKENS,
    "glm": pf.GLM4_CONTROL_TOKENS,
    "llama": pf.LLAMA3_CONTROL_TOKENS,
}


def guarded(fmt: pf.ChatFormat) -> tuple[pf.ChatFormat, str]:
    """``fmt`` with a rejecting guard over its family's tokens (every format takes ``guard``), and one token."""
    assert "guard" in {spec.name for spec in fmt.config_specs}, f"{fmt.name} takes no guard"
    if family(fmt) not in FAMILY_TOKENS:
        pytest.fail(f"format {fmt.name!r} (family {family(fmt)!r}) has no entry in FAMILY_TOKENS: add its tokens")
    tokens = FAMILY_TOKENS[family(fmt)]
    return pf.get_format(fmt.name, guard=pf.ControlTokenGuard(tokens, "reject")), tokens[0]


class CountingIds:
    """A picklable id factory giving call_0, call_1, ... (a parser pickled mid-stream carries it)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> str:
        self.count += 1
        return f"call_{self.count - 1}"


def test_configured_format_pickles(fmt: pf.ChatFormat) -> None:
    configured, token = guarded(fmt)
    copy = pickle.loads(pickle.dumps(configured))
    assert type(copy) is type(configured) and repr(copy) == repr(configured)
    assert renders(copy) == renders(configured)
    injected = [{"role": "user", "content": "x" + token}]
    for instance in (configured, copy):
        with pytest.raises(pf.InjectionError):
            instance.render(injected)


def test_stream_parser_pickles_mid_stream(fmt: pf.ChatFormat) -> None:
    if not fmt.parses:
        pytest.skip(f"{fmt.name} has no reply parser")
    for text in REPLIES:
        for cut in sorted({0, len(text) // 2, len(text)}):
            parser = fmt.stream_parser(TOOLS, id_factory=CountingIds())
            first = parser.feed(text[:cut])
            copy = pickle.loads(pickle.dumps(parser))
            rest = [each.feed(text[cut:]) + each.close() for each in (parser, copy)]
            assert rest[0] == rest[1], (text, cut)
            assert pf.assemble(first + rest[1]) == fmt.parse(text, TOOLS, id_factory=counting_ids()), (text, cut)


def test_prepared_tools_pickle_and_render_the_same(fmt: pf.ChatFormat) -> None:
    prepared = pf.prepare_tools(TOOLS)
    renders(fmt, prepared)  # the rendered form is built and cached before pickling
    assert renders(fmt, pickle.loads(pickle.dumps(prepared))) == renders(fmt, TOOLS)


def test_one_prepared_toolset_shared_across_threads(fmt: pf.ChatFormat) -> None:
    prepared = pf.prepare_tools(TOOLS)  # fresh: the threads race to build its rendered form
    expected = renders(fmt, TOOLS)
    assert run_in_threads(lambda: renders(fmt, prepared)) == [expected] * 4


def test_unknown_option_refused_by_every_entry(fmt: pf.ChatFormat) -> None:
    entries: list[Callable[[], Any]] = [lambda: fmt.render_batch(CONVERSATIONS[:1], no_such_option=True)]
    if fmt.renders_spans:
        entries.append(lambda: fmt.render_spans(CONVERSATIONS[0], no_such_option=True))
    if fmt.parses:
        entries.append(lambda: fmt.parse_batch(["Hello"], no_such_option=True))
    for entry in entries:
        with pytest.raises(pf.UnknownOptionError, match="no_such_option"):
            entry()
    with pytest.raises(pf.FormatError, match="no_such_key"):
        pf.get_format(fmt.name, no_such_key=True)


def test_prepared_tools_parse_and_render_spans_like_the_plain_list(fmt: pf.ChatFormat) -> None:
    prepared = pf.prepare_tools(TOOLS)
    if fmt.parses:
        assert [fmt.parse(text, prepared, id_factory=counting_ids()) for text in REPLIES] == parses(fmt)
    if fmt.renders_spans:
        for messages in CONVERSATIONS:
            spans = []
            for tools in (prepared, TOOLS):
                try:
                    spans.append(fmt.render_spans(messages, tools, add_generation_prompt=True))
                except pf.FormatError as error:
                    spans.append(outcome(error))
            assert spans[0] == spans[1]


BAD_OPTION_VALUE = st.one_of(JUNK, st.lists(JUNK, max_size=2), st.dictionaries(st.text(max_size=2), JUNK, max_size=2))


@pytest.mark.parametrize("name", FORMAT_NAMES)
@differential_settings
@given(data=st.data())
def test_bad_option_values_raise_format_error(name: str, data: st.DataObject) -> None:
    fmt = pf.get_format(name)
    option = data.draw(st.sampled_from([spec.name for spec in fmt.option_specs]), label="option")
    value = data.draw(BAD_OPTION_VALUE, label="value")
    options = {option: value}
    raises_only_format_errors(lambda: fmt.render(CONVERSATIONS[1], TOOLS, add_generation_prompt=True, **options))
    if fmt.parses and option in fmt.parse_options:
        raises_only_format_errors(lambda: fmt.parse("Hello", TOOLS, **options))


@pytest.mark.parametrize("name", FORMAT_NAMES)
@differential_settings
@given(messages=BAD_MESSAGES, generated=st.one_of(st.sampled_from(["all", "last", "after_last_user"]), JUNK))
def test_bad_messages_to_render_spans_raise_format_error(name: str, messages: Any, generated: Any) -> None:
    fmt = pf.get_format(name)
    raises_only_format_errors(lambda: fmt.render_spans(messages, generated=generated))


def session_or_render(call: Callable[..., str], *arguments: Any) -> str | tuple[type, str]:
    try:
        return call(*arguments)
    except pf.FormatError as error:
        return outcome(error)


def test_session_renders_like_render_as_the_conversation_grows(fmt: pf.ChatFormat) -> None:
    # The reference engines' side of sessions: tests/serving/test_session.py.
    session = fmt.session(TOOLS)
    for messages in CONVERSATIONS:
        grown: list[Any] = []
        for message in messages:
            grown.append(message)
            session = pickle.loads(pickle.dumps(session)) if len(grown) == 2 else session
            for generation in (None, True):
                assert session_or_render(session.render, grown, generation) == session_or_render(
                    fmt.render, grown, TOOLS, generation)


# Issue 26: every format declares `strict`; it refuses exactly the inputs render_spans reports a loss
# for, naming the first, and renders everything else as without it.

#: Conversations with something every family's template leaves out: a mid-conversation system or
#: developer message, a second call, a function tool (harmony), earlier reasoning.
LOSSY: list[list[dict[str, Any]]] = [
    [{"role": "user", "content": "Hi"}, {"role": "developer", "content": "Mode: terse."},
     {"role": "user", "content": "Again"}],
    [{"role": "user", "content": "Hi"},
     {"role": "assistant", "content": "", "reasoning_content": "the plan", "tool_calls": [
         {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
         {"type": "function", "function": {"name": "f", "arguments": {}}}]},
     {"role": "tool", "content": "sunny"}, {"role": "tool", "content": "done"},
     {"role": "assistant", "content": "Sunny.", "reasoning_content": "read it"},
     {"role": "user", "content": "Thanks"}],
    # a second reasoning field: no template reads two (Qwen3.8 keeps every think block, so it loses only this)
    [{"role": "user", "content": "Hi"},
     {"role": "assistant", "content": "A", "reasoning_content": "R", "thinking": "T"}],
]


def test_every_format_declares_strict(fmt: pf.ChatFormat) -> None:
    assert "strict" in fmt.options and "strict" in fmt.parse_options
    assert fmt.parse("Hello", strict=True) == fmt.parse("Hello")


@pytest.mark.parametrize("messages", [*CONVERSATIONS, *LOSSY])
def test_strict_refuses_exactly_what_render_spans_reports_dropped(fmt: pf.ChatFormat, messages: Any) -> None:
    try:
        rendered = fmt.render_spans(messages, TOOLS, add_generation_prompt=True)
    except pf.FormatError as error:
        with pytest.raises(type(error)):
            fmt.render(messages, TOOLS, add_generation_prompt=True, strict=True)
        return
    assert fmt.render(messages, TOOLS, add_generation_prompt=True, strict=False) == rendered.text
    for call in (fmt.render, fmt.render_spans):
        if rendered.dropped:
            with pytest.raises(pf.InvalidInputError) as info:
                call(messages, TOOLS, add_generation_prompt=True, strict=True)
            assert info.value.path == rendered.dropped[0]
        else:
            strict = call(messages, TOOLS, add_generation_prompt=True, strict=True)
            assert (strict if isinstance(strict, str) else strict.text) == rendered.text
    session = fmt.session(TOOLS, strict=True)
    if rendered.dropped:
        with pytest.raises(pf.InvalidInputError):
            session.render(messages, add_generation_prompt=True)
    else:
        assert session.render(messages, add_generation_prompt=True) == rendered.text


def test_a_lossy_conversation_loses_something_in_every_format(fmt: pf.ChatFormat) -> None:
    # Each family drops at least one input of LOSSY (a test of the test: strict is exercised).
    assert any(fmt.render_spans(messages, TOOLS, add_generation_prompt=True).dropped for messages in LOSSY
               if not _raises(fmt, messages))


def _raises(fmt: pf.ChatFormat, messages: Any) -> bool:
    try:
        fmt.render_spans(messages, TOOLS, add_generation_prompt=True)
    except pf.FormatError:
        return True
    return False


class RaisingMapping(Mapping[str, Any]):
    """A mapping whose reading raises (a client object broken in its own way)."""

    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("broken mapping")

    def __iter__(self) -> Any:
        raise RuntimeError("broken mapping")

    def __len__(self) -> int:
        return 1


def _raising_values() -> list[Any]:
    numpy = pytest.importorskip("numpy")
    return [numpy.array([1, 2]), Touchy()]


def _with_value(value: Any, where: str) -> tuple[list[Any], Any]:
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "P"}}}
    user, reply = {"role": "user", "content": "q"}, {"role": "assistant", "content": "a", "tool_calls": [call]}
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "d", "parameters": schema}}]
    if where == "tools":
        tools[0]["function"]["description"] = value
    elif where == "schema":
        schema["properties"]["city"]["type"] = value
    elif where == "arguments":
        call["function"]["arguments"] = value
    else:
        reply[where] = value
    return [user, reply], tools


WHERE_VALUES = ["content", "role", "reasoning_content", "tool_calls", "arguments", "tools", "schema"]


def each_entry(fmt: pf.ChatFormat, messages: list[Any], tools: Any) -> list[Callable[[], Any]]:
    """Every entry a client hands messages and tools to, with these."""
    calls: list[Callable[[], Any]] = [
        functools.partial(fmt.render, messages, tools, True),
        functools.partial(fmt.render_spans, messages, tools, True),
        functools.partial(fmt.render, messages, tools, True, strict=True),
        functools.partial(fmt.render_batch, [messages], tools, True, errors="collect"),
        lambda: fmt.session(tools).render(messages, True),
    ]
    if fmt.parses:
        calls += [functools.partial(fmt.parse, 'Hi <tool_call>\n{"name": "get_weather"}', tools),
                  functools.partial(fmt.stream_parser, tools)]
    return calls


@pytest.mark.parametrize("where", WHERE_VALUES)
def test_values_that_raise_where_read_render_or_give_format_errors(fmt: pf.ChatFormat, where: str) -> None:
    # A numpy array's truth value raises; so do a Touchy's truth value and equality. transformers
    # hands the template their placeholder text; every entry renders it or raises a FormatError.
    for value in _raising_values():
        messages, tools = _with_value(value, where)
        for each in (fmt, guarded(fmt)[0]):
            for call in each_entry(each, messages, tools):
                raises_only_format_errors(call)
        raises_only_format_errors(pf.prepare_tools, tools)


def each_entry_with_option(fmt: pf.ChatFormat, option: str, value: Any) -> list[Callable[[], Any]]:
    """Every entry a client hands options to, with ``option=value`` and an everyday request."""
    messages, tools, given = CONVERSATIONS[1], TOOLS, {option: value}
    session = (lambda: fmt.session(tools).render(messages, value)) if option == "add_generation_prompt" else (
        lambda: fmt.session(tools, **given).render(messages, True))
    calls: list[Callable[[], Any]] = [
        functools.partial(fmt.render, messages, tools, **given),
        functools.partial(fmt.render_spans, messages, tools, **given),
        functools.partial(fmt.render, messages, tools, strict=True, **given),
        lambda: list(fmt.render_batch([messages], tools, errors="collect", **given)),
        session,
    ]
    if fmt.parses and option in fmt.parse_options:
        calls += [functools.partial(fmt.parse, "Hi", tools, **given),
                  lambda: fmt.stream_parser(tools, **given).feed("Hi")]
    return calls


def test_options_that_raise_where_read_render_or_give_format_errors(fmt: pf.ChatFormat) -> None:
    # The templates read add_generation_prompt and most options by truth value or equality, which
    # raise for these: the template fails too, and every entry gives a FormatError (or renders).
    names = ["add_generation_prompt", *(spec.name for spec in fmt.option_specs if spec.name != "strict")]
    for value in _raising_values():
        for option in names:
            for each in (fmt, guarded(fmt)[0]):
                for call in each_entry_with_option(each, option, value):
                    raises_only_format_errors(call)


def test_a_refused_value_read_as_plain_data_is_named_by_the_type_given(fmt: pf.ChatFormat) -> None:
    # Read again as transformers reads it, a numpy array is the text "<ndarray>": an error about
    # it says what the client gave, not only "got str".
    numpy = pytest.importorskip("numpy")
    for where in ("tool_calls", "content", "role"):
        messages, tools = _with_value(numpy.array([1, 2]), where)
        try:
            fmt.render(messages, tools, True)
        except pf.InvalidInputError as error:
            if error.path.startswith(f"messages[1].{where}"):
                assert "given ndarray" in str(error), error
        except pf.FormatError:
            pass


def test_an_option_is_named_only_when_its_own_reading_raises(fmt: pf.ChatFormat) -> None:
    # A numpy boolean reads as a boolean does: where add_generation_prompt's array is what fails,
    # the error names it, not an option of another type than JSON's given beside it.
    numpy = pytest.importorskip("numpy")
    booleans = {spec.name: numpy.bool_(True) for spec in fmt.option_specs if spec.kinds == {"boolean"}}
    for call in (fmt.render, fmt.render_spans):
        try:
            call(CONVERSATIONS[1], TOOLS, numpy.array([1, 2]), **booleans)
        except pf.InvalidInputError as error:
            assert error.path == "add_generation_prompt", error
        except pf.FormatError:
            pass


@pytest.mark.parametrize("at", [0, 1])
def test_a_message_that_cannot_be_read_is_named(fmt: pf.ChatFormat, at: int) -> None:
    messages: list[Any] = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    messages[at] = RaisingMapping()
    for each in (fmt, guarded(fmt)[0]):
        for call in each_entry(each, messages, None)[:2]:
            with pytest.raises(pf.InvalidInputError, match=rf"^messages\[{at}\]"):
                call()


def test_tools_that_cannot_be_read_are_named(fmt: pf.ChatFormat) -> None:
    tools: list[Any] = [{"type": "function", "function": {"name": "f", "parameters": {}}}, RaisingMapping()]
    with pytest.raises(pf.InvalidInputError, match=r"^tools\[1\]"):
        pf.prepare_tools(tools)
    for call in each_entry(fmt, [{"role": "user", "content": "q"}], tools):
        raises_only_format_errors(call)


def test_strict_names_the_first_loss_of_message_objects_as_dropped_does(fmt: pf.ChatFormat) -> None:
    # A message object's reasoning is its ``reasoning`` field (a dict's would be reasoning_content):
    # strict=True refuses the loss render_spans names, by the same path.
    user, later = pf.Message(role="user", content="q", reasoning="why"), pf.Message(role="user", content="q2")
    messages = [user, pf.Message(role="assistant", content="a", reasoning="because"), later]
    options = {"preserve_thinking": False} if "preserve_thinking" in fmt.options else {}
    dropped = fmt.render_spans(messages, **options).dropped
    assert dropped, "the template writes every reasoning here: pick another loss"
    for call in (fmt.render, fmt.render_spans):
        with pytest.raises(pf.InvalidInputError) as refused:
            call(messages, strict=True, **options)
        assert refused.value.path == dropped[0]


def test_a_clients_failing_iterator_fails_the_batch_with_its_own_error(fmt: pf.ChatFormat) -> None:
    # The entries read input of other types again as plain data only for render and render_spans: a
    # batch's iterator, used up, is never read twice (nor its error swallowed).
    class Name(str):
        pass

    tools = [{"type": "function", "function": {"name": Name("f"), "description": "d", "parameters": {}}}]

    def failing(item: Any) -> Any:
        yield item
        raise LookupError("the client's own")

    with pytest.raises(LookupError, match="the client's own"):
        fmt.render_batch(failing(CONVERSATIONS[0]), tools)
    if fmt.parses:
        with pytest.raises(LookupError, match="the client's own"):
            fmt.parse_batch(failing("Hello"), tools)


@pytest.mark.parametrize("empty", [collections.UserList(), range(0), set(), ()], ids=repr)
def test_a_session_with_empty_tools_of_any_type_renders_as_render(fmt: pf.ChatFormat, empty: Any) -> None:
    messages = [{"role": "user", "content": "q"}]
    expected = render_or_error(fmt.render, messages, empty, True)
    assert render_or_error(fmt.session(empty).render, messages, True) == expected


def test_message_objects_with_a_sequence_of_parts_render_as_with_a_tuple(fmt: pf.ChatFormat) -> None:
    parts = (pf.TextPart("hi"), pf.TextPart(" there"))
    as_tuple = render_or_error(fmt.render, [pf.Message(role="user", content=parts)], None, True)
    as_list = render_or_error(fmt.render, [pf.Message(role="user", content=collections.UserList(parts))], None, True)
    assert as_list == as_tuple


def render_or_error(call: Callable[..., str], *arguments: Any) -> tuple[str, str]:
    try:
        return "ok", call(*arguments)
    except pf.FormatError as exc:
        return type(exc).__name__, str(exc)
