"""render_batch / parse_batch / iter_render: order, workers, error collection, bounded memory.

Prompts are checked against the Jinja2 oracle; the parallel path must then give exactly the same
list as the serial one (same prompts, same error types and messages, same places).
"""

from __future__ import annotations

import copyreg
import itertools
import pickle
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import prompt_formats as pf
from prompt_formats.format import batch
from prompt_formats.format.chat_format import ChatFormat
from prompt_formats.model.messages import AssistantReply
from tests.support.oracles import render_jinja
from tests.support.strategies import conversation, tools

MULTI = pf.get_format("chatml-multi-system")
TEMPLATE = "chatml_multi_system.jinja"


def comparable(results: list[Any]) -> list[Any]:
    """Prompts as they are; errors as (class name, message), which survive the trip through a worker."""
    return [(type(r).__name__, str(r)) if isinstance(r, Exception) else r for r in results]


def oracle_outcome(messages: list[Any], tool_list: Any, gen: bool, options: dict[str, Any]) -> tuple[str, str]:
    return render_jinja(TEMPLATE, messages, tool_list, gen, **options)


def our_outcome(result: Any) -> tuple[str, str] | None:
    if isinstance(result, pf.TemplateError):
        return ("error", str(result))
    if isinstance(result, str):
        return ("ok", result)
    return None  # an InvalidInputError: input outside the template's domain, no oracle outcome to compare


@pytest.mark.jinja
@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(conversation(), min_size=6, max_size=12),
    tools,
    st.booleans(),
    st.sampled_from([{}, {"enable_thinking": False}]),
)
def test_parallel_batch_equals_serial_and_oracle(drawn, tool_list, gen, options):
    # Repeated so that there are many chunks: generating a long list directly is too much data.
    conversations = drawn * 5
    serial = MULTI.render_batch(conversations, tool_list, gen, errors="collect", **options)
    for messages, result in zip(conversations, serial, strict=True):
        ours = our_outcome(result)
        if ours is not None:
            assert ours == oracle_outcome(messages, tool_list, gen, options)
    parallel = MULTI.render_batch(conversations, tool_list, gen, workers=2, errors="collect", **options)
    assert comparable(parallel) == comparable(serial)
    # Small chunks: many chunks in flight, results must still come back in order.
    small = batch.render_batch(
        MULTI, conversations, tool_list, gen, workers=2, errors="collect", chunk_size=3, **options
    )
    assert comparable(small) == comparable(serial)


GOOD = [{"role": "user", "content": "Hi"}]
BAD_ROLE = [{"role": 3, "content": "x"}]
NO_QUERY = [{"role": "assistant", "content": "x"}]


@pytest.mark.jinja
def test_collect_keeps_every_record_and_its_place():
    conversations = [GOOD, BAD_ROLE, GOOD, NO_QUERY, GOOD]
    for workers in (None, 2):
        results = MULTI.render_batch(conversations, errors="collect", workers=workers, chunk_size=2)
        assert [type(r).__name__ for r in results] == ["str", "InvalidInputError", "str", "TemplateError", "str"]
        assert str(results[1]) == "messages[0].role: expected a string, got int"
        assert str(results[3]) == oracle_outcome(NO_QUERY, None, False, {})[1]
        assert results[0] == oracle_outcome(GOOD, None, False, {})[1]


@pytest.mark.parametrize("workers", [None, 2])
def test_raise_raises_the_first_failure_in_input_order(workers):
    # The second bad conversation is in an earlier-finishing small chunk; the first in order must win.
    conversations = [GOOD] * 7 + [NO_QUERY] + [BAD_ROLE]
    with pytest.raises(pf.TemplateError, match=r"No user query found in messages\."):
        MULTI.render_batch(conversations, workers=workers, chunk_size=1)


def test_options_and_arguments_are_checked_before_any_work():
    with pytest.raises(pf.UnknownOptionError):
        batch.iter_render(MULTI, iter([GOOD]), enable_thinkin=False)
    with pytest.raises(pf.FormatError, match="errors must be"):
        MULTI.render_batch([GOOD], errors="ignore")  # type: ignore[arg-type]
    with pytest.raises(pf.FormatError, match="workers must be"):
        batch.iter_render(MULTI, [GOOD], workers=-1)


# Tool lists that prepare_tools refuses and the ChatML template renders: it writes each tool as JSON.
LAX_TOOLS = [
    [{"type": "function", "function": {"name": 5}}],
    [{"type": "function", "function": {"description": "a tool without a name"}}],
    [{"type": "function", "function": {"name": "f", "parameters": 5}}],
]


@pytest.mark.jinja
@pytest.mark.parametrize("tool_list", LAX_TOOLS)
def test_tools_prepare_tools_refuses_are_rendered_as_render_renders_them(tool_list):
    with pytest.raises(pf.InvalidInputError):
        pf.prepare_tools(tool_list)
    conversations = [GOOD, NO_QUERY, GOOD]
    expected = [oracle_outcome(messages, tool_list, True, {}) for messages in conversations]
    assert [o[0] for o in expected] == ["ok", "error", "ok"]
    for workers in (None, 2) if tool_list is LAX_TOOLS[0] else (None,):
        results = MULTI.render_batch(conversations, tool_list, True, workers=workers, errors="collect")
        assert [our_outcome(r) for r in results] == expected
        assert list(batch.iter_render(MULTI, conversations[:1], iter(tool_list), True)) == [expected[0][1]]
    with pytest.raises(pf.TemplateError, match=r"No user query found in messages\."):
        MULTI.render_batch(conversations, tool_list, True)


def test_tools_render_refuses_fail_each_conversation_as_render_does():
    harmony = pf.get_format("harmony")
    nameless = [{"type": "function", "function": {"description": "a tool without a name"}}]
    for fmt, tool_list, message in [
        (MULTI, ["not a tool"], "tools[0]: expected a tool object, got str"),
        (harmony, nameless, "tools[0].function.name: expected a string, got null"),
    ]:
        with pytest.raises(pf.InvalidInputError) as raised:
            fmt.render(GOOD, tool_list, True)
        assert str(raised.value) == message
        results = fmt.render_batch([GOOD, GOOD], tool_list, True, errors="collect")
        assert comparable(results) == [("InvalidInputError", message)] * 2
        with pytest.raises(pf.InvalidInputError, match=re.escape(message)):
            fmt.render_batch([GOOD], tool_list, True, workers=2)


@pytest.mark.jinja
def test_shared_tools_are_pickled_once_per_worker_not_per_conversation(monkeypatch: pytest.MonkeyPatch) -> None:
    tool_list = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    toolset = pf.PreparedTools(tool_list)
    pickled = 0

    def counted(tools: pf.PreparedTools) -> Any:  # how a PreparedTools pickles, counted
        nonlocal pickled
        pickled += 1
        return tools.__reduce__()

    # The pickler's table, not a subclass: the compiled build's PreparedTools takes no Python subclass.
    monkeypatch.setitem(copyreg.dispatch_table, pf.PreparedTools, counted)
    conversations = [[{"role": "user", "content": f"question {i}"}] for i in range(200)]
    results = MULTI.render_batch(conversations, toolset, True, workers=2)
    assert 1 <= pickled <= 2
    assert results == [oracle_outcome(c, tool_list, True, {})[1] for c in conversations]


@pytest.mark.jinja
def test_iterator_input_is_consumed_in_bounded_memory():
    consumed = 0

    def endless() -> Iterator[list[dict[str, str]]]:
        nonlocal consumed
        for i in itertools.count():
            consumed += 1
            yield [{"role": "user", "content": str(i)}]

    results = batch.iter_render(MULTI, endless(), workers=2, chunk_size=4)
    first = list(itertools.islice(results, 100))
    assert first[99] == oracle_outcome([{"role": "user", "content": "99"}], None, False, {})[1]
    # At most max_in_flight (3 per worker) chunks beyond what was yielded, plus the chunk being cut.
    assert consumed <= 100 + 4 * (3 * 2 + 1)
    results.close()  # stops the workers; must not hang


@pytest.mark.jinja
def test_workers_zero_means_one_per_cpu():
    assert batch.cpu_count() >= 1
    assert MULTI.render_batch([GOOD, GOOD], workers=0) == [oracle_outcome(GOOD, None, False, {})[1]] * 2


def test_jobs_pickle():
    job = batch.RenderJob(MULTI, pf.prepare_tools([{"name": "f"}]), True, {"enable_thinking": False})
    copy = pickle.loads(pickle.dumps(job))
    assert copy([GOOD]) == job([GOOD])


class EchoFormat(ChatFormat):
    """A test format whose parser splits 'reasoning|content' (the batch machinery, not a real parser)."""

    name = "echo"

    def render(self, messages: Any, tools: Any = None, add_generation_prompt: bool = False, **options: Any) -> str:
        return ""

    def parse(self, completion: str, tools: Any = None, **context: Any) -> AssistantReply:
        if completion == "bad":
            raise pf.InvalidInputError("completion", "bad")
        reasoning, _, content = completion.rpartition("|")
        return AssistantReply(content=content, reasoning=reasoning or None)


def test_parse_batch_keeps_order_and_collects_errors():
    completions = [f"r{i}|c{i}" for i in range(50)] + ["bad", "x"]
    fmt = EchoFormat()
    serial = fmt.parse_batch(completions, errors="collect")
    assert serial[3] == AssistantReply(content="c3", reasoning="r3")
    assert str(serial[50]) == "completion: bad"
    assert comparable(fmt.parse_batch(completions, errors="collect", workers=2)) == comparable(serial)
    with pytest.raises(pf.InvalidInputError):
        fmt.parse_batch(completions, workers=2)


def test_parse_batch_without_a_parser_fails_before_any_work():
    class NoParser(EchoFormat):
        parse = ChatFormat.parse

    with pytest.raises(NotImplementedError):
        batch.iter_parse(NoParser(), iter(["x"]))


class Counter:
    """A picklable id factory: call_0, call_1, ... in the process that uses it."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return f"call_{self.n - 1}"


def test_parse_batch_with_a_real_parser_serial_and_parallel():
    tools_ = [{"type": "function", "function": {"name": "grep", "parameters": {
        "type": "object", "properties": {"pattern": {"type": "string"}, "limit": {"type": "integer"}}}}}]
    completions = []
    for i in range(40):
        if i % 4 == 3:
            completions.append(f"look {i}\n</think>\n\n<tool_call>\n<function=grep>\n<parameter=pattern>\nx{i}\n"
                               f"</parameter>\n<parameter=limit>\n{i}\n</parameter>\n</function>\n</tool_call>")
        else:
            completions.append(f"think {i}\n</think>\n\nanswer {i}")
    serial = MULTI.parse_batch(completions, tools_, id_factory=Counter())
    for i, reply in enumerate(serial):
        if i % 4 == 3:
            assert reply.reasoning == f"look {i}"
            assert [(c.name, c.arguments) for c in reply.tool_calls] == [("grep", {"pattern": f"x{i}", "limit": i})]
        else:
            assert (reply.reasoning, reply.content, reply.tool_calls) == (f"think {i}", f"answer {i}", ())
    assert [c.id for r in serial for c in r.tool_calls] == [f"call_{k}" for k in range(10)]

    def without_ids(replies: list[Any]) -> list[Any]:
        return [(r.content, r.reasoning, [(c.name, c.arguments) for c in r.tool_calls], r.malformed, r.notes)
                for r in replies]

    parallel = MULTI.parse_batch(completions, tools_, workers=2, id_factory=Counter())
    assert without_ids(parallel) == without_ids(serial)


def _with_argument(value: Any) -> list[dict[str, Any]]:
    call = {"type": "function", "function": {"name": "f", "arguments": {"a": value}}}
    return [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "user", "content": "go on"}]


def test_results_do_not_depend_on_workers_for_values_that_cannot_travel_to_a_worker():
    # Issue 13: with workers=2 a conversation holding an unpicklable or too-deep value made the whole
    # batch raise TypeError/RecursionError (pickling it for the worker), where the serial path
    # returns that conversation's own result.
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(RecursionError):
        pickle.dumps(deep)  # (rendered or refused depending on the format and the Python version)
    # (a lambda is handed to the template as "<function>"; under a tuple key, JSON cannot encode it)
    # (and items that hold themselves, or one object twice)
    cyclic: list[Any] = ["x"]
    cyclic.append(cyclic)
    shared = {"role": "user", "content": "twice"}
    parts: Any = "leaf"
    for _ in range(40):  # (two million million paths to its leaf: sent as written, each part once)
        parts = [parts, parts]
    conversations = [GOOD, _with_argument(deep), GOOD, _with_argument(lambda: 0), GOOD, _with_argument([["ok"]]),
                     _with_argument({(1,): lambda: 0}), _with_argument(cyclic), [shared, GOOD[0], shared],
                     [{"role": "user", "content": "hi", "meta": parts}]]
    safety = pf.get_format("chatml-safety")
    for fmt in (MULTI, safety):
        serial = comparable(fmt.render_batch(conversations, None, True, errors="collect"))
        assert "<function>" in serial[3]  # the lambda: handed to the template as "<function>"
        assert comparable(fmt.render_batch(conversations, None, True, errors="collect", workers=2)) == serial
        with pytest.raises(pf.InvalidInputError) as serial_error:
            fmt.render_batch(conversations, None, True)
        with pytest.raises(pf.InvalidInputError) as parallel_error:
            fmt.render_batch(conversations, None, True, workers=2, chunk_size=1)
        assert str(parallel_error.value) == str(serial_error.value)
    # Tools that cannot be pickled: every conversation gets what render gives with them.
    unpicklable_tools = [{"type": "function", "function": {"name": "f", "parameters": {"default": lambda: 0}}}]
    serial = comparable(MULTI.render_batch([GOOD, GOOD], unpicklable_tools, True, errors="collect"))
    assert '"<function>"' in serial[0]
    assert comparable(MULTI.render_batch([GOOD, GOOD], unpicklable_tools, True, errors="collect", workers=2)) == serial


# add_generation_prompt has one meaning in batches: what render makes of it (issue 14, item 5). ------


class GenerationPromptEcho(ChatFormat):
    """A format whose prompt is the add_generation_prompt value it was given."""

    name = "generation-echo"

    def render(self, messages: Any, tools: Any = None, add_generation_prompt: Any = False, **options: Any) -> str:
        return repr(add_generation_prompt)


def test_render_batch_passes_add_generation_prompt_through_unset_as_none():
    fmt = GenerationPromptEcho()
    assert fmt.render_batch([GOOD]) == ["None"]
    assert fmt.render_batch([GOOD], add_generation_prompt=False) == ["False"]
    assert fmt.render_batch([GOOD], add_generation_prompt=True, workers=2) == ["True"]
    assert list(batch.iter_render(fmt, [GOOD])) == ["None"]


def test_no_format_overrides_render_batch_and_unset_is_each_formats_default():
    user = [{"role": "user", "content": "Hi"}]
    for name in pf.available_formats():
        fmt = pf.get_format(name)
        assert type(fmt).render_batch is ChatFormat.render_batch, name
        options = {"current_date": "2025-08-05"} if name == "harmony" else {}
        assert fmt.render_batch([user], **options) == [fmt.render(user, **options)], name
        assert list(batch.iter_render(fmt, [user], **options)) == [fmt.render(user, **options)], name


# Workers that pay for themselves (issue 43): a batch first runs here, and starts workers only once
# SERIAL_FIRST_SECONDS of work are done and conversations are left. --------------------------------


def test_a_batch_done_before_the_serial_time_is_up_starts_no_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pool(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a worker pool was started")

    monkeypatch.setattr(batch, "SERIAL_FIRST_SECONDS", 1e9)
    monkeypatch.setattr(batch, "ProcessPoolExecutor", no_pool)
    conversations = [GOOD] * 40
    expected = [MULTI.render(GOOD, None, True)] * 40
    assert MULTI.render_batch(conversations, None, True, workers=2, chunk_size=3) == expected
    assert list(batch.iter_render(MULTI, iter(conversations), None, True, workers=2, chunk_size=3)) == expected
    replies = MULTI.parse_batch(["hello"] * 5, workers=2, chunk_size=2)
    assert replies == [MULTI.parse("hello")] * 5


def test_past_the_serial_time_the_conversations_left_go_to_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    real = batch.ProcessPoolExecutor
    started: list[int] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        started.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(batch, "SERIAL_FIRST_SECONDS", 1e-12)  # up once the first chunk is done
    monkeypatch.setattr(batch, "ProcessPoolExecutor", counting)
    conversations = [GOOD, _with_argument([["ok"]])] * 6
    expected = [MULTI.render(c, None, True) for c in conversations]
    assert MULTI.render_batch(conversations, None, True, workers=2, chunk_size=4) == expected
    assert started == [1]
    assert MULTI.render_batch(conversations[:4], None, True, workers=2, chunk_size=4) == expected[:4]
    assert started == [1]  # one chunk, done here: no conversation left for a worker
