"""The control-token guard: untrusted text must not be able to forge a prompt's structure.

A tokenizer turns a model's control tokens into special ids wherever they occur in the prompt text,
including inside a user message. A user who writes ``<|im_end|>\\n<|im_start|>system\\n…`` in
their message has forged a system turn; a retrieved document that ends with ``</tool_response>``
has closed the tool result it was quoted in. The guard looks at every piece of untrusted text *as
it will be read in the prompt* and applies a policy:

``"escape"`` (default)
    insert a backslash after the first character of each control token, so ``<|im_end|>`` becomes
    ``<\\|im_end|>``: plain text to every tokenizer, still readable by the model and by a human
    reading logs. The scheme is reversible (:func:`unescape`), see below.
``"reject"``
    raise :class:`~prompt_formats.errors.InjectionError` naming the field (``messages[3].content``)
    and the token found.
``"allow"``
    do nothing: the format behaves exactly as its reference template.

The escape scheme, exactly. Let a *lead* be the first character of a token (``<`` for every default
token) and a *tail* the rest of it (``|im_end|>``). :meth:`ControlTokenGuard.escape` inserts one
backslash after every lead that is followed by zero or more backslashes and then a tail;
:meth:`ControlTokenGuard.unescape` removes one backslash after every lead that is followed by one or
more backslashes and then a tail. So a text that already contains ``<\\|im_end|>`` escapes to
``<\\\\|im_end|>`` and comes back unchanged, and ``unescape(escape(t)) == t`` for every text ``t``.
Any other text is left alone: escaping changes a text only if it contains a control token or the
escaped form of one. The result never contains a token: every occurrence lost its lead's
neighbour, and a backslash cannot start or complete one (no token contains it).

What "as read in the prompt" adds: a field that the template follows with fixed text can be
completed by it. A ChatML tool-call name is rendered as ``<function=NAME>``, so the name
``</think`` puts ``</think>`` in the prompt; such fields are checked with ``followed_by=">"``. Text
parts of one message that the template concatenates are checked as one text, so a token split
across two parts is found (and the backslash lands in the part holding its lead).

What is untrusted (each format decides which fields it renders; see :meth:`guard_messages`):
system, user and tool message content (strings and text parts) and any role other than
``assistant``; tool-call names and argument names and values in history; tool definitions (names,
descriptions, schemas: every string, keys included). An assistant message's content and reasoning
are trusted by default (its ``<think>`` markup is meaningful to the ChatML template);
``trust_assistant=False`` checks them too.

The guard never mutates its input: it returns the very objects it was given when nothing was found,
and copies of only the messages, calls and tools it changed otherwise. It does not validate shapes:
anything it does not recognise (a non-string role, an ``int`` content) is passed through untouched
for the formatter to reject with its usual error.
"""

from __future__ import annotations

import copy
import functools
import marshal
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import attrs
import orjson

from ._walk import MAX_NESTING, walk_strings
from ._walk import Hit as _Hit
from .control_tokens import (
    CHATML_CONTROL_TOKENS,
    ESCAPE_MARKER,
    HARMONY_CONTROL_TOKENS,
    HARMONY_TOKEN_FAMILIES,
    Scanner,
    TokenFamily,
    check_tokens,
    default_families,
)
from .control_tokens import NAME_FOLLOWER as _NAME_FOLLOWER
from .errors import FormatError
from .messages import REASONING_FIELDS, Message, message_dict
from .tools import PLAIN_TOOLS_CACHE, PreparedTools

__all__ = [
    "CHATML_CONTROL_TOKENS",
    "ESCAPE_MARKER",
    "HARMONY_CONTROL_TOKENS",
    "HARMONY_TOKEN_FAMILIES",
    "MAX_NESTING",
    "ControlTokenGuard",
    "Policy",
    "TokenFamily",
    "unescape",
]

Policy = Literal["escape", "reject", "allow"]

_POLICIES = ("escape", "reject", "allow")


def _as_token_tuple(tokens: Any) -> tuple[str, ...]:
    if isinstance(tokens, str):
        raise FormatError("tokens: expected a collection of token strings, got one string")
    return tuple(tokens)


@attrs.frozen
class ControlTokenGuard:
    """Applies ``policy`` to control tokens found in untrusted text (see the module docstring).

    ``tokens`` defaults to :data:`CHATML_CONTROL_TOKENS`; every token must be at least two characters
    long, must not contain :data:`ESCAPE_MARKER`, and must not contain the first character of any
    token after its own first position (true of the ChatML and Harmony sets). ``families``: ranges
    of tokens covered by pattern (:class:`TokenFamily`, every ``prefix + digits + suffix``); by
    default :data:`HARMONY_TOKEN_FAMILIES` (``<|reserved_N|>``) when ``tokens`` holds Harmony's
    ``<|channel|>``, else none. Immutable, hashable, thread-safe and picklable.
    """

    tokens: tuple[str, ...] = attrs.field(default=CHATML_CONTROL_TOKENS, converter=_as_token_tuple)
    policy: Policy = "escape"
    trust_assistant: bool = True
    families: tuple[TokenFamily, ...] = attrs.field(
        default=attrs.Factory(lambda self: default_families(self.tokens), takes_self=True), converter=tuple,
        kw_only=True,
    )
    _scanner: Scanner = attrs.field(init=False, repr=False, eq=False, hash=False)
    _lead: str | None = attrs.field(init=False, repr=False, eq=False, hash=False)
    _lead_bytes: bytes = attrs.field(init=False, repr=False, eq=False, hash=False)
    _cache_key: str = attrs.field(init=False, repr=False, eq=False, hash=False)

    def __attrs_post_init__(self) -> None:
        if self.policy not in _POLICIES:
            raise FormatError(f"policy must be one of {', '.join(map(repr, _POLICIES))}, got {self.policy!r}")
        check_tokens(self.tokens, self.families)
        object.__setattr__(self, "_scanner", Scanner.build(self.tokens, self.families))
        # One lead character (both default sets: "<"): a single substring test clears most strings.
        leads = self._scanner.leads
        lead = leads if len(leads) == 1 else None
        object.__setattr__(self, "_lead", lead)
        object.__setattr__(self, "_lead_bytes", leads[0].encode() if lead is not None else b"")
        families = "".join(f"\x1e{family.prefix}\x1f{family.suffix}" for family in self.families)
        object.__setattr__(self, "_cache_key", f"guard.tools:{self.policy}:" + "\x1f".join(self.tokens) + families)

    # -- single strings ------------------------------------------------------------------------------

    def _marked(self, text: str, pattern: re.Pattern[str], followed_by: str) -> list[int]:
        """Start positions in ``text`` of ``pattern``'s matches in ``text + followed_by``."""
        end = len(text)
        return [m.start() for m in pattern.finditer(text + followed_by) if m.start() < end]

    def _contains_lead(self, text: str) -> bool:
        leads = self._scanner.leads
        if len(leads) == 1:
            return leads in text
        return any(lead in text for lead in leads)

    def find(self, text: str, followed_by: str = "") -> tuple[int, str] | None:
        """The first control token that ``text`` puts in the prompt, as ``(start, token)``, or ``None``.

        ``followed_by`` is the fixed text the template writes right after ``text``; a token that
        starts in ``text`` and ends in it counts.
        """
        if not self._contains_lead(text):
            return None
        end = len(text)
        for m in self._scanner.raw_token.finditer(text + followed_by):
            if m.start() >= end:
                break
            return m.start(), m.group()
        return None

    def escape(self, text: str, followed_by: str = "") -> str:
        """``text`` with every control token it puts in the prompt neutralised (see the module docstring).

        Returns ``text`` itself when it holds neither a token nor an escaped one.
        """
        if not self._contains_lead(text):
            return text
        if not followed_by:
            return self._scanner.needs_escape.sub(_insert_marker, text)
        positions = self._marked(text, self._scanner.needs_escape, followed_by)
        return _insert_after(text, positions) if positions else text

    def unescape(self, text: str, followed_by: str = "") -> str:
        """The inverse of :meth:`escape`: ``unescape(escape(t, f), f) == t`` for every ``t`` and ``f``."""
        if not self._contains_lead(text):
            return text
        if not followed_by:
            return self._scanner.escaped_once.sub("", text)
        positions = set(self._marked(text, self._scanner.escaped_once, followed_by))
        return "".join(ch for i, ch in enumerate(text) if i not in positions)

    def guard_text(self, text: str, path: str, followed_by: str = "") -> str:
        """Apply the policy to one untrusted string rendered at ``path``.

        ``escape``: the escaped text; ``reject``: ``text`` unchanged or :class:`InjectionError`;
        ``allow``: ``text``.
        """
        try:
            return self._text(text, followed_by)
        except _Hit as hit:
            raise hit.error(path) from None

    def _text(self, text: str, followed_by: str = "") -> str:
        """The policy applied to one string; a token under ``reject`` raises :class:`_Hit`."""
        lead = self._lead
        if lead is not None and lead not in text:
            return text
        if self.policy == "escape":
            return self.escape(text, followed_by)
        if self.policy == "reject":
            found = self.find(text, followed_by)
            if found is not None:
                raise _Hit(found[1])
        return text

    # -- structures -------------------------------------------------------------------------------------
    #
    # The walkers below build no paths while they look: a token found under ``reject`` raises _Hit,
    # and each level adds its step to the path as the exception passes through it, so clean input
    # pays nothing for error reporting.

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
        return walk_strings(value, self._text)

    def guard_content(self, content: Any, path: str, *, join_parts: bool = True) -> Any:
        """Apply the policy to a message's content: a string, or the text parts of a list of parts.

        ``join_parts``: the format concatenates adjacent text parts with nothing between them (ChatML),
        so they are checked as one text; ``False`` when the format separates them (Harmony). Image and
        video parts are recognised as the ChatML template does and left alone. Returns ``content``
        itself when unchanged.
        """
        try:
            return self._content(content, join_parts)
        except _Hit as hit:
            raise hit.error(path) from None

    def _content(self, content: Any, join_parts: bool) -> Any:
        if isinstance(content, str):
            return self._text(content)
        if not isinstance(content, (list, tuple)):
            return content
        runs: list[list[int]] = []
        run: list[int] = []
        for j, part in enumerate(content):
            if _is_text_part(part):
                run.append(j)
                if not join_parts:
                    runs.append(run)
                    run = []
            elif run:
                runs.append(run)
                run = []
        if run:
            runs.append(run)
        new_texts: dict[int, str] = {}
        for indices in runs:
            texts = [content[j]["text"] for j in indices]
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
                self._run(indices, texts, new_texts)
        if not new_texts:
            return content
        return [{**part, "text": new_texts[j]} if j in new_texts else part for j, part in enumerate(content)]

    def _run(self, indices: list[int], texts: list[str], new_texts: dict[int, str]) -> None:
        """Check text parts that the template concatenates as one text; record the changed parts."""
        joined = "".join(texts)
        offsets = []
        offset = 0
        for text in texts:
            offsets.append(offset)
            offset += len(text)

        def part_of(position: int) -> int:
            # The part holding the character at ``position`` (empty parts hold none).
            k = len(offsets) - 1
            while offsets[k] > position or (offsets[k] == position and not texts[k]):
                k -= 1
            return k

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
            new_texts[indices[k]] = _insert_after(texts[k], local)

    def guard_tool_calls(self, calls: Any, path: str, *, name_followed_by: str = _NAME_FOLLOWER) -> Any:
        """Apply the policy to the names and arguments of an assistant message's tool calls.

        Both shapes (``{"function": {...}}`` and flat) are read; string arguments are one text,
        mapping arguments have their names checked with ``name_followed_by`` (ChatML renders
        ``<function=NAME>`` and ``<parameter=NAME>``) and their values as JSON-like values. Returns
        ``calls`` itself when unchanged.
        """
        try:
            return self._calls(calls, name_followed_by)
        except _Hit as hit:
            raise hit.error(path) from None

    def _calls(self, calls: Any, name_followed_by: str) -> Any:
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
        body = call
        wrapped = "function" in call
        if wrapped:
            body = call["function"]
            if not isinstance(body, Mapping):
                return call
        changes: dict[str, Any] = {}
        try:
            name = body.get("name")
            if isinstance(name, str):
                try:
                    new_name = self._text(name, name_followed_by)
                except _Hit as hit:
                    hit.trail.append(".name")
                    raise
                if new_name is not name:
                    changes["name"] = new_name
            if "arguments" in body:
                arguments = body["arguments"]
                try:
                    new_arguments = self._arguments(arguments, name_followed_by)
                except _Hit as hit:
                    hit.trail.append(".arguments")
                    raise
                if new_arguments is not arguments:
                    changes["arguments"] = new_arguments
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
        self, message: Any, index: int, *, join_parts: bool = True, tool_calls: bool = True
    ) -> Any:
        """Apply the policy to the untrusted fields of one message (see :meth:`guard_messages`)."""
        try:
            return self._message(message, index, join_parts, tool_calls)
        except _Hit as hit:
            raise hit.error(f"messages[{index}]") from None

    def _message(self, message: Any, index: int, join_parts: bool, tool_calls: bool) -> Any:
        if isinstance(message, Mapping):
            data = message
        elif isinstance(message, Message):
            data = message_dict(message, index)  # as the formats read it (a bad field is named here)
        else:
            return message
        role = data.get("role")
        if not isinstance(role, str):
            return message
        changes: dict[str, Any] = {}
        if role != "assistant" or not self.trust_assistant:
            content = data.get("content")
            try:
                new_content = self._content(content, join_parts)
            except _Hit as hit:
                hit.trail.append(".content")
                raise
            if new_content is not content:
                changes["content"] = new_content
        if role == "assistant":
            if not self.trust_assistant:
                # Only the first reasoning field that is not None is rendered (transformers' order).
                key = next((key for key in REASONING_FIELDS if data.get(key) is not None), "")
                value = data.get(key)
                if isinstance(value, str):
                    try:
                        new_value = self._text(value)
                    except _Hit as hit:
                        hit.trail.append(f".{key}")
                        raise
                    if new_value is not value:
                        changes[key] = new_value
            if tool_calls:
                calls = data.get("tool_calls")
                if calls and not self._blob_clean(calls):
                    try:
                        new_calls = self._calls(calls, _NAME_FOLLOWER)
                    except _Hit as hit:
                        hit.trail.append(".tool_calls")
                        raise
                    if new_calls is not calls:
                        changes["tool_calls"] = new_calls
        if not changes:
            return message
        return {**data, **changes}

    def guard_messages(self, messages: Any, *, join_parts: bool = True, tool_calls: bool = True) -> Any:
        """Apply the policy to the untrusted fields of every message, in order.

        Untrusted: the content of every message whose role is not ``assistant``; of an assistant
        message its tool calls (if ``tool_calls``: the format renders them; names and argument names
        are read as followed by ``>``) and, unless ``trust_assistant``, its content and reasoning.
        ``join_parts`` as in :meth:`guard_content`. Returns ``messages`` itself when nothing changed,
        else a list holding the original objects of unchanged messages and new dicts for changed
        ones; ``allow`` always returns ``messages``. ``reject`` raises :class:`InjectionError` for
        the first token found, e.g. at ``messages[2].tool_calls[0].function.arguments.city``.
        """
        if self.policy == "allow":
            return messages
        if type(messages) is not list and (  # the ABC checks only for other sequences
            isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence)
        ):
            return messages
        lead = self._lead
        if lead is not None and self.trust_assistant and self._all_clean(messages, tool_calls, lead):
            return messages
        suspects = self._suspects(messages, tool_calls)
        if not suspects:
            return messages
        out: list[Any] | None = None
        for index in suspects:
            message = messages[index]
            new = self.guard_message(message, index, join_parts=join_parts, tool_calls=tool_calls)
            if new is not message:
                if out is None:
                    out = list(messages)
                out[index] = new
        return messages if out is None else out

    def _suspects(self, messages: Sequence[Any], tool_calls: bool) -> list[int]:
        """Indices of the messages that may hold a token, ascending; the others are certainly clean.

        Like :meth:`_all_clean` (one read of each plain dict message's content: a string without
        the lead character, or whose search finds no token, is clean; the tool calls of all
        messages cleared together by one orjson encoding), but it goes on past the first doubt and
        also reads untrusted reasoning; only the suspects are then walked field by field. Trusted
        assistant content is searched too (cheaper than telling it apart): such a message is then
        walked and found unchanged.
        """
        lead = self._lead
        if lead is None:
            return list(range(len(messages)))
        untrusted_reasoning = not self.trust_assistant
        needs_escape = self._scanner.needs_escape.search
        suspects = []
        call_lists: list[Any] = []
        add_calls = call_lists.append
        for index, message in enumerate(messages):
            if type(message) is dict:
                content = message.get("content")
                if content is None or (type(content) is str and (lead not in content or needs_escape(content) is None)):
                    if untrusted_reasoning and any(message.get(key) is not None for key in REASONING_FIELDS):
                        suspects.append(index)
                    elif tool_calls:
                        calls = message.get("tool_calls")
                        if calls:
                            add_calls(calls)
                    continue
            suspects.append(index)
        if call_lists and not self._blob_clean(call_lists):
            # Rare: find the messages whose calls need the walk.
            known = set(suspects)
            for index, message in enumerate(messages):
                if index not in known:
                    calls = message.get("tool_calls") if tool_calls else None
                    if calls and not self._blob_clean(calls):
                        suspects.append(index)
            suspects.sort()
        return suspects

    def _all_clean(self, messages: Sequence[Any], tool_calls: bool, lead: str) -> bool:
        """The common case (trusted assistant, nothing found), as lean as it can be: True if every
        message is certainly clean; False at the first doubt, and :meth:`_suspects` looks closer.

        Only exact ``dict`` messages and exact ``str`` contents are cleared here (a subclass could
        answer ``get`` or ``strip`` differently from what its data says).
        """
        needs_escape = self._scanner.needs_escape.search
        call_lists: list[Any] = []
        add_calls = call_lists.append
        for message in messages:
            if type(message) is not dict:
                return False
            content = message.get("content")
            if type(content) is str:
                # The pattern runs from the first lead on: its own scan for it is slower than find().
                if lead in content and needs_escape(content, content.find(lead)) is not None:
                    return False
            elif content is not None:
                return False
            if tool_calls and "tool_calls" in message:
                calls = message["tool_calls"]
                if calls:
                    add_calls(calls)
        return not call_lists or self._blob_clean(call_lists)

    def _blob_clean(self, value: Any) -> bool:
        """True if no string in ``value`` (keys included) can put a token in the prompt; False if unsure.

        One orjson encoding (C speed; it writes a string's text verbatim, as UTF-8, except ``"``,
        ``\\`` and control characters, which no token holds, and a backslash shows doubled, which
        is still a run of markers) and one search of it for a lead followed by markers and a token's
        tail or its start (see ``control_tokens.Scanner.blob_suspect``). A value orjson cannot encode (too deep, a
        lone surrogate, an integer beyond 64 bits, another type) answers "unsure".
        """
        pattern = self._scanner.blob_suspect
        if pattern is None:
            return False
        try:
            data = orjson.dumps(value)
        except TypeError:
            try:  # int, float, bool or None dict keys (json.dumps accepts them)
                data = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
            except (TypeError, ValueError, RecursionError):
                return False
        except (ValueError, RecursionError):
            return False
        at = data.find(self._lead_bytes)
        return at < 0 or pattern.search(data, at) is None

    def guard_tools(self, tools: Any) -> Any:
        """Apply the policy to every string of the tool definitions (rendered as JSON), keys included.

        A :class:`~prompt_formats.tools.PreparedTools` is checked once: the verdict (itself, a new
        ``PreparedTools`` of the escaped tools, or the error) is cached on it; it is returned itself
        when unchanged. A plain list is checked on every call (one orjson encoding, one search) and
        returned itself when unchanged, else as a new list.
        """
        if self.policy == "allow" or not tools:
            return tools
        if isinstance(tools, PreparedTools):
            verdict = tools.cached(self._cache_key, self._prepared_verdict)
            if verdict is None:
                return tools
            if isinstance(verdict, FormatError):
                raise copy.copy(verdict)  # a fresh exception each time: no traceback piles up on the cached one
            return verdict
        if type(tools) is not list and (
            isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence)
        ):
            return tools
        if len(tools) >= _LARGE_TOOLSET:
            return PLAIN_TOOLS_CACHE.get(self._cache_key, tools, _SeenToolset.first_sight(self)).tools_for(self, tools)
        return self._checked_tool_list(tools)

    def _checked_tool_list(self, tools: Sequence[Any]) -> Any:
        """A plain list checked on this call: one orjson encoding and one search when it is clean."""
        if self._blob_clean(tools):
            return tools
        return self._tool_list(tools)

    def _tool_list(self, tools: Sequence[Any]) -> Any:
        new_tools = []
        changed = False
        for i, tool in enumerate(tools):
            new_tool = self.guard_json(tool, f"tools[{i}]")
            changed = changed or new_tool is not tool
            new_tools.append(new_tool)
        return new_tools if changed else tools

    def _prepared_verdict(self, tools: tuple[Mapping[str, Any], ...]) -> PreparedTools | FormatError | None:
        if self._blob_clean(tools):
            return None
        try:
            new_tools = self._tool_list(tools)
        except FormatError as error:  # a token under reject, or a value too deep to check
            return error
        return None if new_tools is tools else PreparedTools(new_tools)


# From this many tools on, a plain list goes through the content-keyed cache (see _SeenToolset).
_LARGE_TOOLSET = 16


class _SeenToolset:
    """What the guard keeps, in :data:`~prompt_formats.tools.PLAIN_TOOLS_CACHE`, about a large plain
    tool list it has checked: that its content is clean (or needs escaping), and from its second
    sighting on a :class:`PreparedTools` of it.

    Agents resend the same large toolset on every request. Checking it costs an encoding of the
    whole list each time; handing the format a ``PreparedTools`` instead lets the guard's cache
    lookup replace the format's own (one ``marshal`` dump either way) and the tools block be
    rendered once. The deep copy a ``PreparedTools`` makes is paid on the second sighting, so a
    toolset seen only once never pays it. Entries are keyed by content, so every call builds from
    its own list: nothing of an earlier caller's list is handed out.
    """

    __slots__ = ("clean", "prepared")

    def __init__(self, clean: bool) -> None:
        self.clean = clean
        self.prepared: PreparedTools | None = None

    @staticmethod
    def first_sight(guard: ControlTokenGuard) -> Callable[[Sequence[Any]], _SeenToolset]:
        def build(tools: Sequence[Any]) -> _SeenToolset:
            seen = _SeenToolset(guard._blob_clean(tools))
            if not seen.clean:
                guard._tool_list(tools)  # under reject, raises (and nothing is cached)
            seen.prepared = _FIRST_SIGHT
            return seen

        return build

    def tools_for(self, guard: ControlTokenGuard, tools: Sequence[Any]) -> Any:
        prepared = self.prepared
        if prepared is _FIRST_SIGHT:  # the call that just built this entry: no copy yet
            self.prepared = None
            return tools if self.clean else guard._tool_list(tools)
        if prepared is None:
            try:
                # Built from a marshal copy, not from the caller's list: a deep copy shares the
                # list's strings, which would change its marshal dump (and so its cache keys).
                own = marshal.loads(marshal.dumps(list(tools)))
                prepared = PreparedTools(own if self.clean else guard._tool_list(own))
            except (FormatError, ValueError):  # not preparable (a tool without a name): a list every time
                prepared = _UNPREPARABLE
            self.prepared = prepared
        if prepared is _UNPREPARABLE:
            return tools if self.clean else guard._tool_list(tools)
        return prepared


_FIRST_SIGHT: Any = object()
_UNPREPARABLE: Any = object()


def _insert_after(text: str, positions: list[int]) -> str:
    """``text`` with :data:`ESCAPE_MARKER` inserted after each of the (ascending) ``positions``."""
    pieces = []
    start = 0
    for pos in positions:
        pieces.append(text[start : pos + 1])
        pieces.append(ESCAPE_MARKER)
        start = pos + 1
    pieces.append(text[start:])
    return "".join(pieces)


def _insert_marker(match: re.Match[str]) -> str:
    return match.group() + ESCAPE_MARKER


def _is_text_part(part: Any) -> bool:
    """A part the ChatML template renders as its ``text`` (same dispatch order as the template)."""
    return (
        isinstance(part, Mapping)
        and not ("image" in part or "image_url" in part or part.get("type") == "image")
        and not ("video" in part or part.get("type") == "video")
        and isinstance(part.get("text"), str)
    )


@functools.lru_cache(maxsize=16)
def _escaping_guard(tokens: tuple[str, ...]) -> ControlTokenGuard:
    return ControlTokenGuard(tokens)


def unescape(text: str, tokens: Sequence[str] = CHATML_CONTROL_TOKENS, *, followed_by: str = "") -> str:
    """Undo :meth:`ControlTokenGuard.escape` for ``tokens`` (default: the ChatML set).

    Pass ``followed_by=">"`` for the text of a ChatML tool-call name or argument name, which the
    guard escapes as it reads in the prompt, followed by ``>``. The token families are those a
    guard over ``tokens`` has by default (Harmony's reserved range for the Harmony set); for other
    families, use the guard's own :meth:`ControlTokenGuard.unescape`.
    """
    return _escaping_guard(_as_token_tuple(tokens)).unescape(text, followed_by)
