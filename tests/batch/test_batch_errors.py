"""Batch errors say which conversation or completion failed (issue 29 item 3), serial and parallel alike."""

from __future__ import annotations

import functools
import pickle
from typing import Any

import pytest

import prompt_formats as pf
from prompt_formats.format import batch

MULTI = pf.get_format("chatml-multi-system")
GOOD = [{"role": "user", "content": "Hi"}]
BAD_ROLE = [{"role": 3, "content": "x"}]
NO_QUERY = [{"role": "assistant", "content": "x"}]


def raised(call: Any, *args: Any, **kwargs: Any) -> pf.FormatError:
    with pytest.raises(pf.FormatError) as caught:
        call(*args, **kwargs)
    return caught.value


def alone(messages: Any, **kwargs: Any) -> pf.FormatError:
    """The error ``render`` raises for the conversation on its own."""
    return raised(MULTI.render, messages, **kwargs)


@pytest.mark.parametrize("workers", [None, 2])
def test_a_raised_render_error_names_the_conversation(workers: int | None) -> None:
    error = raised(MULTI.render_batch, [GOOD, BAD_ROLE, GOOD], workers=workers, chunk_size=1)
    own = alone(BAD_ROLE)
    assert isinstance(error, pf.InvalidInputError) and isinstance(own, pf.InvalidInputError)
    assert error.index == 1
    assert error.path == "conversations[1]." + own.path == "conversations[1].messages[0].role"
    assert str(error) == f"conversations[1].{own}"
    assert error.problem == own.problem


@pytest.mark.parametrize("workers", [None, 2])
def test_an_error_without_a_path_names_the_conversation_in_its_text(workers: int | None) -> None:
    error = raised(MULTI.render_batch, [GOOD, GOOD, NO_QUERY], workers=workers, chunk_size=1)
    assert type(error) is pf.TemplateError and error.index == 2
    assert str(error) == f"conversations[2]: {alone(NO_QUERY)}"
    # A field that is not the conversation's own (the batch's tools) keeps its path, after the index.
    error = raised(MULTI.render_batch, [GOOD], ["not a tool"], workers=workers)
    assert str(error) == "conversations[0]: tools[0]: expected a tool object, got str" and error.index == 0


def test_iter_render_raises_the_same() -> None:
    results = batch.iter_render(MULTI, iter([GOOD, GOOD, BAD_ROLE]))
    assert next(results) == next(results) == MULTI.render(GOOD)
    with pytest.raises(pf.InvalidInputError, match=r"^conversations\[2\]\.messages\[0\]\.role: ") as caught:
        next(results)
    assert caught.value.index == 2


@pytest.mark.parametrize("workers", [None, 2])
def test_collected_errors_are_render_s_own_with_the_index(workers: int | None) -> None:
    results = MULTI.render_batch([BAD_ROLE, GOOD, NO_QUERY], workers=workers, errors="collect", chunk_size=1)
    first, good, last = results
    assert good == MULTI.render(GOOD)
    for error, messages, index in ((first, BAD_ROLE, 0), (last, NO_QUERY, 2)):
        assert isinstance(error, pf.FormatError)
        assert (type(error), str(error)) == (type(alone(messages)), str(alone(messages)))
        assert error.index == index
    assert alone(BAD_ROLE).index is None  # an error outside a batch has none


@pytest.mark.parametrize("workers", [None, 2])
def test_a_raised_parse_error_names_the_completion(workers: int | None) -> None:
    error = raised(MULTI.parse_batch, ["ok", "fine", 5], workers=workers, chunk_size=1)
    own = raised(MULTI.parse, 5)
    assert isinstance(error, pf.InvalidInputError) and error.index == 2
    assert str(error) == "completions[2]: " + own.problem and error.path == "completions[2]"
    collected = MULTI.parse_batch(["ok", 5], workers=workers, errors="collect")
    assert str(collected[1]) == str(own) and collected[1].index == 1


def test_an_indexed_error_pickles_with_its_index() -> None:
    error = raised(MULTI.render_batch, [GOOD, BAD_ROLE])
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), str(copy), copy.index) == (type(error), str(error), 1)
    error = raised(MULTI.render_batch, [NO_QUERY])
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), str(copy), copy.index) == (type(error), str(error), 0)


@pytest.mark.parametrize("call", ["render_batch", "iter_render", "parse_batch", "iter_parse"])
@pytest.mark.parametrize(("items", "kind"), [(None, "null"), (5, "int"), (object(), "object")],
                         ids=["None", "int", "object"])
def test_a_batch_that_cannot_be_iterated_is_refused_naming_it(call: str, items: Any, kind: str) -> None:
    # (It was the TypeError of iter(), raised at the first result.)
    error = raised(getattr(MULTI, call) if call.endswith("batch") else getattr(batch, call), *(
        (items,) if call.endswith("batch") else (MULTI, items)))
    name = "conversations" if "render" in call else "completions"
    assert isinstance(error, pf.InvalidInputError)
    assert str(error) == f"{name}: expected an iterable, got {kind}"


@pytest.mark.parametrize("call", ["render_batch", "iter_render", "parse_batch", "iter_parse"])
@pytest.mark.parametrize("chunk_size", [0, 1.5, "a", True])
def test_a_chunk_size_that_is_no_positive_integer_is_refused_before_any_work(call: str, chunk_size: Any) -> None:
    # (1.5 was islice's ValueError, "a" a TypeError of <, both from inside the iteration.)
    items = [GOOD] if "render" in call else ["Hi"]
    target = getattr(MULTI, call) if call.endswith("batch") else functools.partial(getattr(batch, call), MULTI)
    error = raised(target, items, chunk_size=chunk_size)
    assert type(error) is pf.FormatError
    assert str(error) == f"chunk_size must be a positive integer or None, got {chunk_size!r}"


def test_a_batch_is_iterated_once() -> None:
    # (Checking that it can be iterated called its __iter__ a second time: a fetch or a loader started twice.)
    calls = []

    class Stream:
        def __iter__(self) -> Any:
            calls.append(1)
            return iter([GOOD, GOOD])

    assert MULTI.render_batch(Stream()) == [MULTI.render(GOOD)] * 2
    assert len(calls) == 1
