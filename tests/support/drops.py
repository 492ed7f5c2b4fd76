"""Proving ``RenderedPrompt.dropped`` exactly right with the reference engine, for any format.

:func:`assert_dropped_exactly` takes an oracle (a callable rendering ``(messages, tools)`` with the
reference engine) and the paths a format reported, and checks them against what the oracle does
when the input is perturbed. Nothing of the package is used: what is lost is decided by the
reference engine alone.

The units of text. A *unit* is one character of a string the candidate fields hold that is not
whitespace (``str.isspace``, as ``|trim`` counts it) and not part of a marker occurrence (structure
the template reacts to, such as ``<think>``: ``content_markers``, found in a content string or in a
run of consecutive text parts), or one number or boolean (not ``None``). The candidate fields of
message ``i`` are ``fields`` (content: the string, or each text part's ``text``; a tool call: its
name, and its arguments' keys and values); with ``check_tools``, each tool's keys and values.

A unit is *present* when changing it changes the oracle's output at that character: each unit is
replaced by a sentinel (a printable CJK character, or for a number a 16-digit integer) that occurs
nowhere in the input, and the sentinel is looked for in the output. Characters JSON or Python's repr
escapes (``"``, ``\\``, ``'``, control and other unprintable characters) are replaced one render
each; the others all in one render, which is checked to be the original output once every sentinel
is mapped back (the template took the same branches). Fields of an alias group (``aliases``) that
hold equal values are one input: they are perturbed together.

The checks, which together make ``dropped`` exact:

1. every unit under no reported path is present (nothing lost goes unreported);
2. every reported path resolves in the input, holds a unit, and some unit under it is absent (a
   path that lost nothing is not reported); when all of them are absent, replacing all of them
   leaves the oracle's output unchanged; a reported whole message (``messages[i]``) is also removed,
   leaving the output unchanged;
3. no path is reported twice, and tools (and any non-message path) come before messages, messages
   in index order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

__all__ = ["Oracle", "assert_dropped_exactly", "call_holds_units", "holds_units", "parse_path"]

#: Renders ``(messages, tools)`` with the reference engine: the text, or ``None`` where it raises.
Oracle = Callable[[list[Any], Any], "str | None"]

Leaf = tuple[Any, ...]
_KEY = "<key>"  # a path component: the key (not the value) of the dict entry after it, by position
# CJK Unified Ideographs Extension B: printable (Python's repr of a printed list keeps it), without
# case, not whitespace, and JSON keeps it as it is.
_SENTINEL_BASE = 0x20000
_NUMBER_BASE = 8_123_456_789_000_000
_PATH_PART = re.compile(r"\.?([A-Za-z_][A-Za-z_0-9]*)|\[(\d+)\]")
_NON_TEXT_PART_KEYS = ("image", "image_url", "video")


def parse_path(path: str) -> Leaf:
    """``'messages[2].tool_calls[0].function.arguments'`` as ``('messages', 2, 'tool_calls', 0, ...)``."""
    out: list[Any] = []
    at = 0
    while at < len(path):
        match = _PATH_PART.match(path, at)
        assert match is not None and match.end() > at, f"not a path: {path!r}"
        out.append(match.group(1) if match.group(1) is not None else int(match.group(2)))
        at = match.end()
    return tuple(out)


def holds_units(value: Any) -> bool:
    """Whether ``value`` holds a unit: a string's character that is not whitespace (a mapping's keys
    included), a number or a boolean, at any depth; any other object counts as one."""
    if value is None:
        return False
    if isinstance(value, str):
        return not value.isspace() and value != ""
    if isinstance(value, Mapping):
        return any(holds_units(key) or holds_units(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return any(holds_units(item) for item in value)
    return True


def call_holds_units(call: Any, fields: Sequence[str] = ("name", "arguments")) -> bool:
    """Whether a tool call holds a unit in the ``fields`` of its ``function`` (when it has one) or,
    in the flat shape, of itself; a value that is no call, in itself."""
    body = call.get("function", call) if isinstance(call, Mapping) else call
    if not isinstance(body, Mapping):
        return holds_units(body)
    return any(holds_units(body.get(key)) for key in fields)


def _escaped(char: str) -> bool:
    """Whether JSON escapes ``char`` (``"``, ``\\``, a control character), or Python's repr of a
    string holding it (a template printing a list) escapes it or may quote the string otherwise."""
    return char in "\"\\'" or not char.isprintable()


def _is_text_part(part: Any) -> bool:
    return (isinstance(part, Mapping) and isinstance(part.get("text"), str)
            and not any(key in part for key in _NON_TEXT_PART_KEYS) and part.get("type") not in ("image", "video"))


def _marked(text: str, markers: Sequence[str]) -> set[int]:
    """The positions of ``text`` inside an occurrence of a marker (left to right, not overlapping)."""
    positions: set[int] = set()
    for marker in markers:
        at = text.find(marker)
        while at >= 0:
            positions.update(range(at, at + len(marker)))
            at = text.find(marker, at + len(marker))
    return positions


def _value_leaves(value: Any, path: Leaf) -> Iterator[tuple[Leaf, Any]]:
    """Every string, number and boolean under ``value`` (keys included), with its leaf path."""
    if isinstance(value, Mapping):
        for position, (key, item) in enumerate(value.items()):
            yield (*path, _KEY, position), key
            yield from _value_leaves(item, (*path, key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _value_leaves(item, (*path, index))
    elif value is not None:
        yield path, value


def _content_leaves(content: Any, path: Leaf, markers: Sequence[str],
                    string_items: bool = False) -> Iterator[tuple[Leaf, Any, set[int]]]:
    """A content's text leaves with their marked positions (markers found across runs of text parts);
    ``string_items``: a string in a list of parts is a leaf too."""
    if isinstance(content, str):
        yield path, content, _marked(content, markers)
        return
    if not isinstance(content, (list, tuple)):  # an object or a scalar: its keys and values
        for leaf, value in _value_leaves(content, path):
            yield leaf, value, set()
        return
    run: list[tuple[Leaf, str]] = []
    for index, part in enumerate([*content, None]):
        if part is not None and _is_text_part(part):
            run.append(((*path, index, "text"), part["text"]))
            continue
        marked, offset = _marked("".join(text for _, text in run), markers), 0
        for leaf, text in run:
            yield leaf, text, {p - offset for p in marked if offset <= p < offset + len(text)}
            offset += len(text)
        run = []
        if string_items and isinstance(part, str):
            yield (*path, index), part, _marked(part, markers)


def _leaves(messages: list[Any], tools: Any, fields: Sequence[str], markers: Sequence[str],
            check_tools: bool, string_items: bool = False) -> Iterator[tuple[Leaf, Any, set[int]]]:
    """Every leaf of the candidate fields, with the positions that are markers."""
    if check_tools and isinstance(tools, (list, tuple)):
        for k, tool in enumerate(tools):
            for leaf, value in _value_leaves(tool, ("tools", k)):
                yield leaf, value, set()
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            continue
        for field in fields:
            value = message.get(field)
            path: Leaf = ("messages", i, field)
            if field == "content":
                yield from _content_leaves(value, path, markers, string_items)
            elif field == "tool_calls" and isinstance(value, (list, tuple)):
                for k, call in enumerate(value):
                    for leaf, item in _call_leaves(call, (*path, k)):
                        yield leaf, item, set()
            else:
                for leaf, item in _value_leaves(value, path):
                    yield leaf, item, set()


def _call_leaves(call: Any, path: Leaf) -> Iterator[tuple[Leaf, Any]]:
    """A tool call's name and arguments with their leaf paths (its other fields are identifiers)."""
    if not isinstance(call, Mapping):
        return
    body = call.get("function", call)
    if "function" in call:
        path = (*path, "function")
    if not isinstance(body, Mapping):
        return
    for key in ("name", "arguments"):
        if key in body:
            yield from _value_leaves(body[key], (*path, key))


class _Units:
    """The units of one input, their sentinels, and the substitutions that put them in."""

    def __init__(self, messages: list[Any], tools: Any, fields: Sequence[str], markers: Sequence[str],
                 aliases: Sequence[Sequence[str]], check_tools: bool, string_items: bool = False) -> None:
        used = set(json.dumps([messages, tools], default=repr, ensure_ascii=False))
        self._next_char = _SENTINEL_BASE
        self._used = used
        self._next_number = _NUMBER_BASE
        self.units: list[tuple[Leaf, int | None, str]] = []  # leaf, character index (None: a number), sentinel
        self.original: dict[str, str] = {}  # sentinel -> its original text, as the output would hold it
        self.python: dict[str, str] = {}  # a number sentinel -> its unit as Python prints it
        shared: dict[tuple[Any, ...], str] = {}
        groups = {field: tuple(group) for group in aliases for field in group}
        for leaf, value, marked in _leaves(messages, tools, fields, markers, check_tools, string_items):
            twin = self._twin(messages, leaf, value, groups)
            if isinstance(value, str):
                for index, char in enumerate(value):
                    if char.isspace() or index in marked:
                        continue
                    key = (twin, index) if twin is not None else (leaf, index)
                    if key not in shared:
                        shared[key] = self._char()
                        self.original[shared[key]] = char
                    self.units.append((leaf, index, shared[key]))
            elif isinstance(value, (bool, int, float)):
                sentinel = str(self._number())
                self.original[sentinel] = json.dumps(value)
                self.python[sentinel] = str(value)  # (the templates that print it as Python does)
                self.units.append((leaf, None, sentinel))

    @staticmethod
    def _twin(messages: list[Any], leaf: Leaf, value: Any, groups: Mapping[str, tuple[str, ...]]) -> Leaf | None:
        """The first field of ``leaf``'s alias group in the same message holding the same value."""
        if len(leaf) != 3 or leaf[0] != "messages" or leaf[2] not in groups:
            return None
        message = messages[leaf[1]]
        for field in groups[leaf[2]]:
            if field in message and message[field] == value:
                return ("messages", leaf[1], field)
        return None

    def _char(self) -> str:
        while chr(self._next_char) in self._used:
            self._next_char += 1
        self._next_char += 1
        return chr(self._next_char - 1)

    def _number(self) -> int:
        self._next_number += 1
        return self._next_number

    def substituted(self, data: Any, chosen: Sequence[tuple[Leaf, int | None, str]]) -> Any:
        """``data`` (``{"messages": ..., "tools": ...}``) with the ``chosen`` units replaced."""
        by_leaf: dict[Leaf, dict[int | None, str]] = {}
        for leaf, index, sentinel in chosen:
            by_leaf.setdefault(leaf, {})[index] = sentinel
        return _rebuild(data, (), by_leaf)


def _replaced(value: Any, changes: Mapping[int | None, str]) -> Any:
    if None in changes:
        return int(changes[None])
    chars = list(value)
    for index, sentinel in changes.items():
        assert index is not None
        chars[index] = sentinel
    return "".join(chars)


def _rebuild(value: Any, path: Leaf, by_leaf: Mapping[Leaf, Mapping[int | None, str]]) -> Any:
    if path in by_leaf:
        return _replaced(value, by_leaf[path])
    if not any(leaf[:len(path)] == path for leaf in by_leaf):
        return value
    if isinstance(value, Mapping):
        items = []
        for position, (key, item) in enumerate(value.items()):
            key_leaf = (*path, _KEY, position)
            new_key = _replaced(key, by_leaf[key_leaf]) if key_leaf in by_leaf else key
            items.append((new_key, _rebuild(item, (*path, key), by_leaf)))
        return dict(items)
    if isinstance(value, (list, tuple)):
        return type(value)(_rebuild(item, (*path, index), by_leaf) for index, item in enumerate(value))
    return value


def _under(leaf: Leaf, path: Leaf) -> bool:
    return leaf[:len(path)] == path


def _render(oracle: Oracle, data: Any) -> str | None:
    return oracle(data["messages"], data["tools"])


def _restores(text: str, sentinels: set[str], units: _Units, expected: str) -> bool:
    """Whether ``text`` with each sentinel mapped back to its unit is ``expected``: a character as
    itself, a number or boolean as JSON or as Python spells it (a template may print either)."""
    if not sentinels:
        return text == expected
    spellings = {sentinel: {units.original[sentinel], units.python.get(sentinel, units.original[sentinel])}
                 for sentinel in sentinels}
    pattern = "|".join(re.escape(sentinel) for sentinel in sorted(sentinels, key=len, reverse=True))
    parts = re.split(f"({pattern})", text)
    regex = "".join("(?:" + "|".join(map(re.escape, sorted(spellings[part]))) + ")" if part in spellings
                    else re.escape(part) for part in parts)
    return re.fullmatch(regex, expected, re.DOTALL) is not None


def _present_units(oracle: Oracle, data: Any, units: _Units, expected: str) -> set[str]:
    """The sentinels the oracle's output holds: the plain units in one render, checked against the
    original output; each unit JSON escapes in a render of its own."""
    plain = [unit for unit in units.units if unit[1] is None or not _escaped(units.original[unit[2]])]
    escaped = [unit for unit in units.units if unit not in plain]
    present: set[str] = set()
    if plain:
        text = _render(oracle, units.substituted(data, plain))
        assert text is not None, "the sentinels made the template raise: it reacts to a unit's characters"
        sentinels = {unit[2] for unit in plain if unit[2] in text}
        present |= sentinels
        assert _restores(text, sentinels, units, expected), (
            "the sentinels changed the template's branches: a marker is missing")
    for sentinel in {unit[2] for unit in escaped}:
        text = _render(oracle, units.substituted(data, [unit for unit in escaped if unit[2] == sentinel]))
        if text is not None and sentinel in text:
            present.add(sentinel)
    return present


def assert_dropped_exactly(
    oracle: Oracle,
    messages: list[Any],
    tools: Any,
    dropped: Sequence[str],
    *,
    fields: Sequence[str] = ("content", "reasoning_content", "thinking", "reasoning", "tool_calls"),
    content_markers: Sequence[str] = (),
    aliases: Sequence[Sequence[str]] = (("reasoning_content", "thinking", "reasoning"),),
    check_tools: bool = True,
    string_items: bool = False,
) -> None:
    """Assert that ``dropped`` names exactly the inputs the oracle leaves out (the module docstring);
    ``string_items``: a string in a list of content parts is a unit of text too (Gemma 3 reads such
    a list and writes nothing for it).

    ``oracle(messages, tools)`` must render the input as the format's reference does with the same
    options and generation prompt (a closure binds them), returning ``None`` where it raises; the
    input must be one it renders.
    """
    expected = oracle(messages, tools)
    assert expected is not None, "the oracle raises for this input: there is no prompt to lose anything from"
    data = {"messages": messages, "tools": tools}
    units = _Units(messages, tools, fields, content_markers, aliases, check_tools, string_items)
    assert not any(sentinel in expected for sentinel in units.original), "a sentinel is in the prompt already"
    present = _present_units(oracle, data, units, expected)
    reported = [parse_path(path) for path in dropped]
    assert len(set(reported)) == len(reported), f"a path reported twice: {dropped}"
    kinds = [path[0] == "messages" for path in reported]
    assert kinds == sorted(kinds), f"tools and options come before messages: {dropped}"
    indexes = [path[1] for path in reported if path[0] == "messages"]
    assert indexes == sorted(indexes), f"messages in index order: {dropped}"
    for leaf, index, sentinel in units.units:
        if not any(_under(leaf, path) for path in reported):
            assert sentinel in present, f"{_name(leaf, index)} is left out of the prompt but not reported: {dropped}"
    for path, name in zip(reported, dropped, strict=True):
        under = [unit for unit in units.units if _under(unit[0], path)]
        assert under, f"{name} is reported but holds no text (or does not exist)"
        lost = [unit for unit in under if unit[2] not in present]
        assert lost, f"{name} is reported but all of its text is in the prompt"
        if len(lost) == len(under):
            twins = [unit for unit in units.units if unit[2] in {u[2] for u in under}]
            replaced = _render(oracle, units.substituted(data, twins))
            assert replaced == expected, f"{name}: replacing it changes the prompt"
        if len(path) == 2 and path[0] == "messages":
            rest = [m for i, m in enumerate(messages) if i != path[1]]
            assert oracle(rest, tools) == expected, f"{name}: removing it changes the prompt"


def _name(leaf: Leaf, index: int | None) -> str:
    parts = [f"[{part}]" if isinstance(part, int) else f".{part}" for part in leaf]
    where = "" if index is None else f" (character {index})"
    return "".join(parts).lstrip(".") + where
