"""``format.history.extension``: the check every incremental renderer makes before it reuses anything
(docs/serving.md, "Sessions"). Its answer decides whether a session reuses its pieces, so it is
tested directly: a session's output is the same either way, and cannot tell a wrong answer."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest

from prompt_formats import Message
from prompt_formats.format.history import extension, joined_with


def _messages(count: int) -> list[dict[str, Any]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(count)]


def test_a_list_that_starts_with_the_rendered_objects_extends_them() -> None:
    rendered = _messages(3)
    assert extension(rendered, [*rendered, {"role": "user", "content": "next"}]) is True
    assert extension(rendered, list(rendered)) is True  # nothing new: extends all the same


def test_a_list_of_dicts_that_does_not_start_with_them_is_rendered_from_the_start() -> None:
    rendered = _messages(3)
    assert extension([], rendered) is False  # the first request
    assert extension(rendered, [dict(m) for m in rendered]) is False  # equal, not the same objects
    assert extension(rendered, rendered[:2]) is False  # shorter
    assert extension(rendered, [rendered[1], rendered[0], rendered[2]]) is False


@pytest.mark.parametrize("odd", [
    Message(role="user", content="x"), OrderedDict(role="user", content="x"), None, "user: x", ("user", "x"),
], ids=["message", "dict-subclass", "none", "str", "tuple"])
def test_a_message_that_is_not_an_exact_dict_steps_aside_to_a_full_render(odd: Any) -> None:
    rendered = _messages(3)
    assert extension([], [*rendered, odd]) is None  # first request
    assert extension([], [odd, *rendered]) is None
    assert extension(rendered, [*rendered, {"role": "user", "content": "y"}, odd]) is None  # among the new ones
    assert extension(rendered, [odd, *rendered]) is None  # a request rendered from the start


class _PosingAsDict(type):
    """A metaclass whose classes say they equal ``dict`` (an equality test would take them for it)."""

    def __eq__(cls, other: object) -> bool:
        return other is dict or type.__eq__(cls, other)

    __hash__ = type.__hash__


class _HashedAsDict(_PosingAsDict):
    """... and hash as ``dict`` (a set of the types would hold one of them for both)."""

    def __hash__(cls) -> int:
        return hash(dict)


class _Posing(metaclass=_PosingAsDict):
    def get(self, key: str, default: Any = None) -> Any:
        return {"role": "user", "content": "posing"}.get(key, default)


class _Hashed(_Posing, metaclass=_HashedAsDict):
    pass


@pytest.mark.parametrize("posing", [_Posing, _Hashed])
def test_a_class_that_says_it_equals_dict_is_no_dict(posing: type) -> None:
    rendered = _messages(2)
    assert posing == dict  # noqa: E721  (what it says)
    assert extension(rendered, [*rendered, posing()]) is None
    assert extension(rendered, [*rendered, posing(), {"role": "user", "content": "after"}]) is None
    assert extension(rendered, [*rendered, {"role": "user", "content": "before"}, posing()]) is None
    assert extension([], [posing()]) is None
    assert extension([], [{"role": "user", "content": "before"}, posing()]) is None


def test_an_earlier_message_that_is_no_dict_is_not_read_again() -> None:
    # (only the new messages are the session's to check: the old ones were rendered already)
    rendered: list[Any] = [Message(role="user", content="x"), *_messages(2)]
    assert extension(rendered, [*rendered, {"role": "user", "content": "y"}]) is True


@pytest.mark.parametrize("odd", [
    Message(role="user", content="x"), OrderedDict(role="user", content="x"), None, "user: x",
], ids=["message", "dict-subclass", "none", "str"])
def test_a_renderer_whose_first_render_reads_any_message_takes_every_list_it_does_not_extend(odd: Any) -> None:
    # (its walk reads a message of any type as render's does: it is handed the list as it is)
    rendered = _messages(3)
    assert extension([], [*rendered, odd], first_reads_any=True) is False
    assert extension(rendered, [odd, *rendered], first_reads_any=True) is False
    # ... but the new messages of an extension are the session's own to read: still checked
    assert extension(rendered, [*rendered, odd], first_reads_any=True) is None
    assert extension(rendered, tuple(rendered), first_reads_any=True) is None


def test_what_is_not_a_list_steps_aside() -> None:
    rendered = _messages(2)
    assert extension(rendered, tuple(rendered)) is None
    assert extension([], iter(rendered)) is None


def test_joined_with_leaves_the_pieces_as_they_were() -> None:
    pieces = ["a", "b", "c"]
    assert joined_with(pieces, "!") == "abc!"
    assert pieces == ["a", "b", "c"]
    assert joined_with(pieces, "") == "abc"
    assert pieces == ["a", "b", "c"]
