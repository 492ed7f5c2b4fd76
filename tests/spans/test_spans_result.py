"""RenderedPrompt, the generated= policies and the canonical form of ranges (prompt_formats.format.spans).

Expected values come from a model that works on sets of character positions, never from the code
under test.
"""

from __future__ import annotations

import itertools
import pickle
from collections.abc import Iterator, Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prompt_formats import FormatError, InvalidInputError, RenderedPrompt
from prompt_formats.format.spans import check_generated_policy, holds_text, normalize_ranges, select_generated
from tests.support.strategies import differential_settings

ranges = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=8)


def positions(pairs: object) -> set[int]:
    return {i for start, end in pairs for i in range(start, end)}  # type: ignore[attr-defined]


@differential_settings
@given(ranges)
def test_normalize_ranges_keeps_the_characters_in_canonical_form(pairs: list[tuple[int, int]]) -> None:
    canonical = normalize_ranges(pairs)
    assert positions(canonical) == positions(pairs)
    assert all(start < end for start, end in canonical)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(canonical))  # sorted, neither overlapping nor touching


def test_normalize_ranges_by_hand() -> None:
    assert normalize_ranges([(5, 7), (0, 2), (2, 3), (4, 4), (6, 9)]) == ((0, 3), (5, 9))
    assert normalize_ranges([]) == ()


CASES = [
    # roles, generated ranges per message, policy, the messages whose ranges count
    (["user", "assistant", "user", "assistant"], "all", [1, 3]),
    (["user", "assistant", "user", "assistant"], "last", [3]),
    (["user", "assistant", "user", "assistant"], "after_last_user", [3]),
    (["user", "assistant", "tool", "assistant", "tool"], "after_last_user", [1, 3]),
    (["user", "assistant", "tool", "assistant", "tool"], "last", [3]),
    (["system", "user", "assistant", "user"], "after_last_user", []),
    (["system", "user", "assistant", "user"], "last", [2]),
    (["system", "user"], "last", []),
    (["assistant", "assistant"], "after_last_user", [0, 1]),
    (["user", "Assistant", "assistant "], "all", []),
]


@pytest.mark.parametrize(("roles", "policy", "selected"), CASES)
def test_select_generated_by_hand(roles: list[str], policy: str, selected: list[int]) -> None:
    # Message i generates (10 i, 10 i + 5), so the result names the messages chosen.
    per_message = [[(10 * i, 10 * i + 5)] for i in range(len(roles))]
    assert select_generated(roles, per_message, policy) == tuple((10 * i, 10 * i + 5) for i in selected)


roles = st.lists(st.sampled_from(["system", "user", "assistant", "tool", "developer"]), max_size=8)


@differential_settings
@given(roles, st.data())
def test_select_generated_matches_the_definitions(role_list: list[str], data: st.DataObject) -> None:
    per_message = [data.draw(ranges) for _ in role_list]
    assistants = [i for i, role in enumerate(role_list) if role == "assistant"]
    users = [i for i, role in enumerate(role_list) if role == "user"]
    expected = {
        "all": assistants,
        "last": assistants[-1:],
        "after_last_user": [i for i in assistants if not users or i > users[-1]],
    }
    for policy, chosen in expected.items():
        result = select_generated(role_list, per_message, policy)
        assert result == normalize_ranges(pair for i in chosen for pair in per_message[i])


@pytest.mark.parametrize("policy", ["first", "ALL", "", None, 1, ["all"], b"all"])
def test_unknown_policy_is_refused(policy: object) -> None:
    with pytest.raises(InvalidInputError, match=r"^generated: expected one of 'all', 'last', 'after_last_user', got"):
        check_generated_policy(policy)
    with pytest.raises(FormatError):
        select_generated(["assistant"], [[(0, 1)]], policy)


def test_select_generated_refuses_mismatched_lengths() -> None:
    with pytest.raises(InvalidInputError, match="2 roles but 1 entries"):
        select_generated(["user", "assistant"], [[]])


def test_assistant_mask_marks_exactly_the_generated_characters() -> None:
    prompt = RenderedPrompt("abcdefghij", ((), ((0, 4),), ((5, 10),)), ((1, 3), (6, 10)))
    assert prompt.assistant_mask() == bytearray([0, 1, 1, 0, 0, 0, 1, 1, 1, 1])
    assert RenderedPrompt("", (), ()).assistant_mask() == bytearray()


def test_rendered_prompt_is_immutable_hashable_and_picklable() -> None:
    prompt = RenderedPrompt("abc", (((0, 1),), ()), ((1, 3),))
    assert pickle.loads(pickle.dumps(prompt)) == prompt
    assert hash(prompt) == hash(RenderedPrompt("abc", (((0, 1),), ()), ((1, 3),)))
    with pytest.raises(AttributeError):
        prompt.text = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("messages", "generated", "error"),
    [
        ((), [(0, 1)], r"^generated: expected a tuple"),
        ((), ((0, 4),), r"^generated\[0\]: expected 0 <= start < end <= 3, got \(0, 4\)"),
        ((), ((1, 1),), r"^generated\[0\]: expected 0 <= start < end"),
        ((), ((2, 3), (0, 1)), r"^generated\[1\]: starts at 0, inside or touching"),
        ((), ((0, 1), (1, 2)), r"^generated\[1\]: starts at 1, inside or touching"),
        ((), ((0, True),), r"^generated\[0\]: expected a \(start, end\) pair of ints"),
        ((), ((0, 1, 2),), r"^generated\[0\]: expected a \(start, end\) pair"),
        ([], (), r"^messages: expected a tuple, got list"),
        ((((0, 2),), ((1, 3),)), (), r"^messages\[1\]: overlaps a range of messages\[0\] at character 1"),
        ((((0, 1), (1, 2)),), (), r"^messages\[0\]\[1\]: starts at 1"),
        (([(0, 1)],), (), r"^messages\[0\]: expected a tuple of \(start, end\) ranges, got list"),
    ],
)
def test_rendered_prompt_refuses_ranges_that_break_its_guarantees(
    messages: object, generated: object, error: str
) -> None:
    with pytest.raises(InvalidInputError, match=error):
        RenderedPrompt("abc", messages, generated)  # type: ignore[arg-type]


def test_rendered_prompt_refuses_a_text_that_is_not_a_string() -> None:
    with pytest.raises(InvalidInputError, match=r"^text: expected a string, got bytes"):
        RenderedPrompt(b"abc", (), ())  # type: ignore[arg-type]


def test_messages_of_different_messages_may_touch() -> None:
    prompt = RenderedPrompt("abcd", (((0, 2),), ((2, 4),)), ())
    assert prompt.messages == (((0, 2),), ((2, 4),))


def test_the_renderers_unchecked_constructor_makes_the_same_object() -> None:
    checked = RenderedPrompt("abcd", (((0, 2),), ()), ((1, 3),))
    unchecked = RenderedPrompt.unchecked("abcd", (((0, 2),), ()), ((1, 3),))
    assert unchecked == checked and hash(unchecked) == hash(checked)
    assert unchecked.assistant_mask() == checked.assistant_mask()
    assert pickle.loads(pickle.dumps(unchecked)) == checked
    with pytest.raises(AttributeError):
        unchecked.text = "x"  # type: ignore[misc]


def _holding_itself(key: str) -> tuple[dict[str, object], list[object]]:
    mapping: dict[str, object] = {}
    mapping[key] = mapping
    listed: list[object] = [key]
    listed.append(listed)
    return mapping, listed


@pytest.mark.parametrize(("key", "held"), [("", False), ("  ", False), ("a", True)])
def test_holds_text_ends_on_a_value_that_holds_itself(key: str, held: bool) -> None:
    # (found by a review: the walk went round a mapping holding itself under a blank key for ever)
    mapping, listed = _holding_itself(key)
    assert holds_text(mapping) is held
    assert holds_text(listed) is held
    assert holds_text([mapping, listed, {"x": None}]) is True  # (a key that is text)
    assert holds_text([mapping, mapping, (listed,)]) is held


class _HoldingItself(Mapping[str, object]):
    """A mapping holding itself under a blank key, which counts the walks of it (and stops a walk
    that would go round for ever, so the test fails rather than hangs)."""

    def __init__(self) -> None:
        self.walks = 0

    def __getitem__(self, key: str) -> object:
        if key != "":
            raise KeyError(key)
        return self

    def __len__(self) -> int:
        return 1

    def __iter__(self) -> Iterator[str]:
        self.walks += 1
        if self.walks > 4:  # (its keys and its values: two walks a visit)
            raise AssertionError("walked round a value that holds itself")
        return iter([""])


def test_holds_text_walks_a_value_that_holds_itself_once() -> None:
    mapping = _HoldingItself()
    assert holds_text(mapping) is False
    assert holds_text([mapping, [mapping]]) is False
