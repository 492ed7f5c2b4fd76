"""The policy over fields: which strings of a message, a tool call or a JSON value the guard checks.

The walkers build no paths while they look: a token found under ``reject`` raises ``Hit``, and each
level adds its step to the path as the exception passes through it, so clean input pays nothing for
error reporting. What a format renders is its :class:`~prompt_formats.guard.UntrustedReading`.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from .._text.plain import of_json_type, plain_data, printed_value
from .._text.walk import MAX_NESTING, walk_strings
from .._text.walk import Hit as _Hit
from .._text.walk import Unreadable as _Unreadable
from ..errors import FormatError
from ..model.messages import Message, message_dict
from ..model.reading import call_body, plain_scalar, reasoning_field
from .prefilter import Prefilters
from .scheme import insert_after
from .vocabulary import UntrustedReading, parts_clean

__all__ = ["FieldPolicy", "resolved"]

_STR_ONLY = frozenset({str})


#: How :meth:`FieldPolicy.guard_content` reads parts: text parts as ChatML's templates do.
_PARTS = {joined: UntrustedReading((), join_parts=joined) for joined in (False, True)}


def resolved(base: UntrustedReading, join_parts: bool | None, tool_calls: bool | None) -> UntrustedReading:
    """``base`` with the fields given as keywords replaced."""
    if join_parts is None and tool_calls is None:
        return base
    return attrs.evolve(
        base,
        join_parts=base.join_parts if join_parts is None else join_parts,
        tool_calls=base.tool_calls if tool_calls is None else tool_calls,
    )


def _written_text(part: Mapping[str, Any]) -> str:
    """The text a template writes for a text part: its ``text`` as printed (none: nothing)."""
    text = part.get("text", "")
    if type(text) is str:
        return text
    try:
        return printed_value(text)
    except FormatError:  # the template fails on it too: refused
        raise _Unreadable(text) from None


def _walk_field(changes: dict[str, Any], key: str, value: Any, walk: Callable[..., Any], *args: Any) -> None:
    """Put ``walk(value, *args)`` in ``changes[key]`` when it is not ``value`` itself; a token found
    under ``reject`` gets the step ``.key`` on its way out."""
    try:
        new = walk(value, *args)
    except _Hit as hit:
        hit.trail.append(f".{key}")
        raise
    if new is not value:
        changes[key] = new


def _plain_items(items: Any, exact: Callable[[Any], bool]) -> Any:
    """``items`` (a content's parts, a message's tool calls) with each item that is not ``exact`` as its
    plain data, as the template is fed it; a sequence other than a list or tuple as a list.

    What is checked is what is passed on: a dict subclass's or a mapping's own ``get`` (which the
    guard reads) could answer otherwise than the ``[]`` a renderer reads, and a sequence's indexing
    otherwise than its iteration. Only the items that need it are read again: the rest stay the same
    objects, however deep (their depth is for the walks that check them to refuse)."""
    if type(items) is not list and type(items) is not tuple:
        return plain_data(items)
    if all(map(exact, items)):
        return items
    return [item if exact(item) else plain_data(item) for item in items]


def _exact_call(call: Any) -> bool:
    """Whether a tool call is a dict whose ``function`` (if any) is of a JSON type, both told by identity."""
    return type(call) is dict and of_json_type(call.get("function"))


def _runs(content: list[Any] | tuple[Any, ...], reading: UntrustedReading) -> list[list[int]]:
    """The indices of the text parts of ``content`` in runs the template writes as one text:
    adjacent ones, or (``reading.silent_part``) ones with only parts that write nothing between
    them; each alone where the template does not join parts."""
    text_part, silent, joined = reading.text_part, reading.silent_part, reading.join_parts
    runs: list[list[int]] = []
    run: list[int] = []
    for j, part in enumerate(content):
        if text_part(part):
            run.append(j)
            if not joined:
                runs.append(run)
                run = []
        elif run and (silent is None or not silent(part)):
            runs.append(run)
            run = []
    if run:
        runs.append(run)
    return runs


class FieldPolicy(Prefilters):
    """The walkers of :class:`~prompt_formats.guard.ControlTokenGuard` (a mixin: it holds no state)."""

    def reading_of(self, reading: UntrustedReading | None) -> UntrustedReading:
        """``reading``; none is a :class:`~prompt_formats.errors.FormatError`: what a name is followed
        by, whether parts are joined, whether calls are written, is the format's to say (ChatML
        writes ``>`` after a tool-call name, which completes ``<tool_call`` into a token)."""
        if reading is None:
            raise FormatError(
                "reading: the guard reads messages as a format renders them; pass the format's "
                "UntrustedReading (e.g. prompt_formats.formats.chatml.untrusted.CHATML_READING)"
            )
        return reading

    def guard_json(self, value: Any, path: str) -> Any:
        """Apply the policy to every string (dict keys included) of a JSON-like value rendered with ``tojson``.

        Only what a JSON encoder serialises is walked (``dict``, ``list``, ``tuple``, ``str``); a
        changed container is rebuilt (a tuple as a list: the same JSON), anything else is returned
        as is, so a value ``tojson`` rejects is still rejected. Returns ``value`` itself when unchanged.
        Under every policy but ``allow``, a value holding more than :data:`MAX_NESTING` nested
        containers raises :class:`~prompt_formats.errors.InvalidInputError` at ``path``: what the
        guard has not read in full is never passed on.
        """
        try:
            return self._json(value)
        except _Hit as hit:
            raise hit.error(path) from None

    def _json(self, value: Any) -> Any:
        if self.policy == "allow":
            return value
        # Iterative, to a fixed depth: a value too deep to read in full raises TooDeep (refused).
        return walk_strings(value, self._text, MAX_NESTING, self._other)

    def _other(self, value: Any) -> Any:
        """A value inside JSON data that is none of its exact types, as the guard passes it on.

        The rule: the guard checks the text the template writes. transformers hands a template a
        subclass of ``int`` or ``float`` as the plain number (so do we, here: a subclass's ``__str__``,
        which a template may print, could say anything); any other object is printed by some
        templates (gpt-oss's ``join``) and refused by others' JSON, so one whose ``str`` or ``repr``
        holds a lead character is refused, unread.
        """
        if isinstance(value, (int, float)):
            return plain_scalar(value)
        try:
            printed = (str(value), repr(value))
        except Exception:  # whatever the object's own code raises: it cannot be checked
            raise _Unreadable(value) from None
        if any(self._contains_lead(text) for text in printed):
            raise _Unreadable(value)
        return value

    def guard_content(self, content: Any, path: str, *, join_parts: bool = True) -> Any:
        """Apply the policy to a message's content: a string, or the text parts of a list of parts.

        ``join_parts``: the format concatenates adjacent text parts with nothing between them (ChatML),
        so they are checked as one text; ``False`` when the format separates them (Harmony). Image and
        video parts are recognised as the ChatML template does and left alone. Returns ``content``
        itself when unchanged.
        """
        try:
            return self._content(content, _PARTS[bool(join_parts)])
        except _Hit as hit:
            raise hit.error(path) from None

    def _content(self, content: Any, reading: UntrustedReading) -> Any:
        if isinstance(content, str):
            return self._text(content)
        if not isinstance(content, (list, tuple)):
            return content
        content = _plain_items(content, of_json_type)
        lead = self._lead
        if lead is not None and parts_clean(content, lead):
            return content
        new_texts: dict[int, str] = {}
        for indices in _runs(content, reading):
            texts = [content[j].get("text", "") for j in indices]
            if not _STR_ONLY.issuperset(map(type, texts)):
                for k, j in enumerate(indices):  # as the template prints it: what _text reads (its docstring)
                    if type(texts[k]) is not str:
                        texts[k] = _written_text(content[j])
                        if isinstance(content[j].get("text"), str):  # a subclass: passed on as its plain data
                            new_texts[j] = texts[k]
            if not any(self._contains_lead(text) for text in texts):
                continue
            if len(indices) == 1:
                j = indices[0]
                try:
                    new = self._text(texts[0])
                except _Hit as hit:
                    hit.trail.append(f"[{j}].text")
                    raise
                if new is not texts[0]:
                    new_texts[j] = new
            else:
                self._run(indices, texts, new_texts, reading.trim_parts)
        if not new_texts:
            return content
        return [{**part, "text": new_texts[j]} if j in new_texts else part for j, part in enumerate(content)]

    def _run(self, indices: list[int], texts: list[str], new_texts: dict[int, str], trim: bool) -> None:
        """Check text parts that the template concatenates as one text (``trim``: each stripped
        first); record the changed parts."""
        written = [text.strip() for text in texts] if trim else texts
        joined = "".join(written)
        starts = []  # where each part's written text starts in joined
        offsets = []  # where each part's own text would start there (before what trimming took off)
        at = 0
        for text, kept in zip(texts, written, strict=True):
            starts.append(at)
            offsets.append(at - (len(text) - len(text.lstrip()) if trim else 0))
            at += len(kept)

        def part_of(position: int) -> int:
            # The part holding the character at ``position``: the last part starting at or before it
            # (an empty part starts where the next one does, so it is never the last). A search, not
            # a scan back from the end: many parts with a token each would make that quadratic.
            return bisect.bisect_right(starts, position) - 1

        if self.policy == "reject":
            found = self.find(joined)
            if found is not None:
                hit = _Hit(found[1])
                hit.trail.append(f"[{indices[part_of(found[0])]}].text")
                raise hit
            return
        if self.policy != "escape":
            return
        by_part: dict[int, list[int]] = {}
        for m in self._scanner.needs_escape.finditer(joined):
            k = part_of(m.start())
            by_part.setdefault(k, []).append(m.start() - offsets[k])
        for k, local in by_part.items():
            new_texts[indices[k]] = insert_after(texts[k], local)

    def guard_tool_calls(self, calls: Any, path: str, *, name_followed_by: str = ">") -> Any:
        """Apply the policy to the names and arguments of an assistant message's tool calls.

        Both shapes (``{"function": {...}}`` and flat) are read; string arguments are one text,
        mapping arguments have their names checked with ``name_followed_by`` (ChatML renders
        ``<function=NAME>`` and ``<parameter=NAME>``) and their values as JSON-like values. Returns
        ``calls`` itself when unchanged.
        """
        try:
            return self._calls(_plain_items(calls, _exact_call), name_followed_by)
        except _Hit as hit:
            raise hit.error(path) from None

    def _tool_calls(self, calls: Any, name_followed_by: str) -> Any:
        """An assistant message's (non-empty) tool calls, the policy applied; cleared in one go
        when their JSON encoding holds nothing to find (the prefilter)."""
        calls = _plain_items(calls, _exact_call)
        if self._blob_clean(calls, name_followed_by):
            return calls
        return self._calls(calls, name_followed_by)

    def _calls(self, calls: Any, name_followed_by: str) -> Any:
        """``calls`` as :func:`_plain_items` gives them (anything else than a list or tuple of them
        is its plain data: an object's text, never an object a walk might iterate unchecked)."""
        if not isinstance(calls, (list, tuple)):
            return calls
        new_calls = []
        changed = False
        for k, call in enumerate(calls):
            try:
                new_call = self._call(call, name_followed_by)
            except _Hit as hit:
                hit.trail.append(f"[{k}]")
                raise
            changed = changed or new_call is not call
            new_calls.append(new_call)
        return new_calls if changed else calls

    def _call(self, call: Any, name_followed_by: str) -> Any:
        if not isinstance(call, Mapping):
            return call
        body = call_body(call)
        wrapped = body is not call
        if wrapped and not isinstance(body, Mapping):
            return call
        changes: dict[str, Any] = {}
        try:
            name = body.get("name")
            if isinstance(name, str):
                _walk_field(changes, "name", name, self._text, name_followed_by)
            if "arguments" in body:
                _walk_field(changes, "arguments", body["arguments"], self._arguments, name_followed_by)
        except _Hit as hit:
            if wrapped:
                hit.trail.append(".function")
            raise
        if not changes:
            return call
        new_body = {**body, **changes}
        return {**call, "function": new_body} if wrapped else new_body

    def _arguments(self, arguments: Any, name_followed_by: str) -> Any:
        if isinstance(arguments, str):
            return self._text(arguments)
        if not isinstance(arguments, Mapping):
            return arguments
        changed = False
        items = []
        for key, value in arguments.items():
            try:
                new_key = self._text(key, name_followed_by) if isinstance(key, str) else key
                new_value = self._json(value)
            except _Hit as hit:
                hit.trail.append(f".{key}")
                raise
            if new_key is not key or new_value is not value:
                changed = True
            items.append((new_key, new_value))
        return dict(items) if changed else arguments

    def guard_message(
        self, message: Any, index: int, reading: UntrustedReading | None = None, *,
        join_parts: bool | None = None, tool_calls: bool | None = None,
    ) -> Any:
        """Apply the policy to the untrusted fields of one message (see :meth:`guard_messages`)."""
        try:
            return self._message(message, index, resolved(self.reading_of(reading), join_parts, tool_calls))
        except _Hit as hit:
            raise hit.error(f"messages[{index}]") from None

    def _message(self, message: Any, index: int, reading: UntrustedReading) -> Any:
        if type(message) is dict:
            data = message
        else:
            # A Message, any other mapping, a dataclass or a pydantic model as the formats read it (a
            # bad field is named here); anything else is refused here as there. What is checked is
            # what is passed on: a mapping's plain data (its own get could answer otherwise).
            data = message_dict(message, index)
            if not isinstance(message, Message):
                message = data
        role = data.get("role")
        changes: dict[str, Any] = {}
        if not isinstance(role, str):  # no role (or none a template compares): its content is untrusted, as a
            role = None  # template may still write it (Llama 3's puts the first message's in the first user turn)
        elif type(role) is not str:  # as its plain data, which the renderer then reads: its __eq__ could lie
            role = changes["role"] = str.__str__(role)
        if reading.roles and role is not None:  # written as given: a role is untrusted text too
            _walk_field(changes, "role", role, self._text)
        if role != "assistant" or not self.trust_assistant:
            _walk_field(changes, "content", data.get("content"), self._content, reading)
        if role == "assistant":
            if not self.trust_assistant:
                key = reasoning_field(data) or ""
                value = data.get(key)
                if isinstance(value, str):
                    _walk_field(changes, key, value, self._text)
            if reading.tool_calls:
                calls = data.get("tool_calls")
                if calls:
                    _walk_field(changes, "tool_calls", calls, self._tool_calls, reading.name_follower)
        if not changes:
            return message
        return {**data, **changes}
