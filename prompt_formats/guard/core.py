"""The control-token guard: untrusted text must not be able to forge a prompt's structure.

:class:`ControlTokenGuard` applies a policy (``escape``, ``reject`` or ``allow``) to every piece of
untrusted text *as the format puts it in the prompt* (its :class:`UntrustedReading`). It never
mutates its input: it returns the very objects it was given when nothing was found, and copies of
only what it changed otherwise; it does not validate shapes (the formatter rejects them with its
usual error). The threat, the escape scheme and what each policy guarantees: docs/safety.md.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs

from ..errors import FormatError, refusing_deep_stacks, unreadable
from .policy import resolved
from .scheme import Scanner, check_tokens
from .toolset import ToolsetPolicy
from .vocabulary import FastGuard, TokenFamily, UntrustedReading, declared_families

__all__ = ["ControlTokenGuard", "FastGuard", "Policy"]

Policy = Literal["escape", "reject", "allow"]

_POLICIES = ("escape", "reject", "allow")


def as_token_tuple(tokens: Any) -> tuple[str, ...]:
    """``tokens`` as a tuple (a :class:`~prompt_formats.guard.vocabulary.ControlTokens` kept as it is,
    with its families); none, or one string (not a collection of them), is refused."""
    if tokens is None:
        raise FormatError(
            "tokens: a guard needs the control tokens of the format it guards "
            "(pf.CHATML_CONTROL_TOKENS, pf.HARMONY_CONTROL_TOKENS, or your own)"
        )
    if isinstance(tokens, str):
        raise FormatError("tokens: expected a collection of token strings, got one string")
    return tokens if isinstance(tokens, tuple) else tuple(tokens)


def _families(families: Iterable[TokenFamily]) -> tuple[TokenFamily, ...]:
    return tuple(families)


def _length(messages: Sequence[Any]) -> int:
    """``len(messages)``; a sequence whose length cannot be read is refused (fail closed)."""
    try:
        return len(messages)
    except Exception as error:
        raise unreadable("messages", error) from None


def _listed(messages: Sequence[Any]) -> list[Any]:
    """``list(messages)``; a sequence that cannot be read is refused (fail closed)."""
    try:
        return list(messages)
    except Exception as error:
        raise unreadable("messages", error) from None


@attrs.frozen
class ControlTokenGuard(ToolsetPolicy):
    """Applies ``policy`` to control tokens found in untrusted text (see the module docstring).

    ``tokens``: the control tokens of the format it guards (``pf.CHATML_CONTROL_TOKENS``,
    ``pf.HARMONY_CONTROL_TOKENS``, or your own; there is no default: the guard knows no format);
    every token must be at least two characters long, must not contain :data:`ESCAPE_MARKER`, and
    must not contain the first character of any token after its own first position (true of the
    ChatML and Harmony sets). ``families``: ranges of tokens covered by pattern
    (:class:`TokenFamily`, every ``prefix + digits + suffix``); by default those ``tokens`` declares
    and those of every family's set it holds whole
    (:func:`~prompt_formats.guard.vocabulary.declared_families`: Harmony's ``<|reserved_N|>`` for
    Harmony's tokens, as a ``ControlTokens``, a tuple or a list), else none.
    Immutable, hashable, thread-safe and picklable.
    """

    tokens: tuple[str, ...] = attrs.field(default=None, converter=as_token_tuple)
    policy: Policy = "escape"
    trust_assistant: bool = True
    families: tuple[TokenFamily, ...] = attrs.field(
        default=attrs.Factory(lambda self: declared_families(self.tokens), takes_self=True), converter=_families,
        kw_only=True,
    )
    _scanner: Scanner = attrs.field(init=False, repr=False, eq=False, hash=False)
    _lead: str | None = attrs.field(init=False, repr=False, eq=False, hash=False)
    _lead_bytes: bytes = attrs.field(init=False, repr=False, eq=False, hash=False)
    _cache_key: str = attrs.field(init=False, repr=False, eq=False, hash=False)
    _blob_patterns: dict[str, re.Pattern[bytes] | None] = attrs.field(init=False, repr=False, eq=False, hash=False)
    _fast_for: tuple[Any, FastGuard | None] = attrs.field(init=False, repr=False, eq=False, hash=False)

    def __attrs_post_init__(self) -> None:
        if self.policy not in _POLICIES:
            raise FormatError(f"policy must be one of {', '.join(map(repr, _POLICIES))}, got {self.policy!r}")
        check_tokens(self.tokens, self.families)
        object.__setattr__(self, "_scanner", Scanner.build(self.tokens, self.families))
        object.__setattr__(self, "_blob_patterns", {})
        # One lead character (both families' sets: "<"): a single substring test clears most strings.
        leads = self._scanner.leads
        lead = leads if len(leads) == 1 else None
        object.__setattr__(self, "_lead", lead)
        object.__setattr__(self, "_lead_bytes", leads[0].encode() if lead is not None else b"")
        families = "".join(f"\x1e{family.prefix}\x1f{family.suffix}" for family in self.families)
        object.__setattr__(self, "_cache_key", f"guard.tools:{self.policy}:" + "\x1f".join(self.tokens) + families)
        object.__setattr__(self, "_fast_for", (None, None))

    @refusing_deep_stacks("messages")  # (called with the stack nearly full)
    def guard_messages(
        self, messages: Any, reading: UntrustedReading | None = None, *,
        join_parts: bool | None = None, tool_calls: bool | None = None,
    ) -> Any:
        """Apply the policy to the untrusted fields of every message, in order, as ``reading`` reads them.

        ``reading``: the format's :class:`~prompt_formats.guard.UntrustedReading` (required: how a
        template writes untrusted text is the format's to say);
        ``join_parts`` and ``tool_calls``, when given, override its fields. Untrusted: the content of
        every message whose role is not ``assistant`` (no role included); of an assistant message its
        tool calls (when the reading renders them; names and argument names read as followed by its
        ``name_follower``) and, unless ``trust_assistant``, its content and reasoning. Returns
        ``messages`` itself when nothing changed (a sequence other than a list or tuple: the list
        read from it once, which the renderer must render), else a list holding the original objects
        of unchanged messages and new dicts for changed ones; ``allow`` always returns ``messages``.
        ``reject`` raises :class:`InjectionError` for the first token found, e.g. at
        ``messages[2].tool_calls[0].function.arguments.city``. A message whose reading raises (it
        holds a numpy array where the guard reads a truth value) is refused, never passed on
        unchecked: :class:`InvalidInputError` naming it; so is a stack too deep to check on.
        """
        reading = resolved(self.reading_of(reading), join_parts, tool_calls)
        if self.policy == "allow":
            return messages
        if type(messages) is not list and (  # the ABC checks only for other sequences
            isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence)
        ):
            return messages
        if type(messages) is not list and type(messages) is not tuple:
            # Read once, as a renderer iterates them, and that list passed on: a sequence's own
            # indexing (which the guard reads) could answer otherwise than its iteration.
            messages = _listed(messages)
        try:
            suspects = self._suspect_messages(messages, reading)
        except RecursionError:
            raise
        except Exception:  # a client's object that raised where a prefilter read it: walk each message
            suspects = range(_length(messages))
        out: list[Any] | None = None
        for index in suspects:
            try:
                message = messages[index]
                new = self.guard_message(message, index, reading)
            except (FormatError, RecursionError):
                raise
            except Exception as error:  # fail closed on what cannot be read (a numpy array's truth value)
                raise unreadable(f"messages[{index}]", error) from None
            if new is not message:
                if out is None:
                    out = _listed(messages)
                out[index] = new
        return messages if out is None else out

    def _suspect_messages(self, messages: Sequence[Any], reading: UntrustedReading) -> Sequence[int]:
        """The indices of the messages that may hold a token (all of them, where the template writes roles)."""
        lead = self._lead
        if lead is not None and self.trust_assistant and not reading.roles and self._all_clean(messages, reading, lead):
            return ()
        # The prefilters read no role: where the template writes roles, every message is walked.
        return range(len(messages)) if reading.roles else self._suspects(messages, reading)

    def fast_path(self, reading: UntrustedReading) -> FastGuard | None:
        """The policy for a renderer to apply where it reads each untrusted field, or ``None``.

        Instead of :meth:`guard_messages`, a renderer may pass each untrusted field (those
        :meth:`guard_messages` reads, as ``reading`` reads them), where it reads it, through the
        function :meth:`guard_messages` applies to it: a content holding ``lead`` or not a string
        through ``content``; a tool-call name or argument name holding ``lead`` through
        ``text(name, follower)``; string arguments or an argument value holding it through
        ``json`` (a value not a string: whose JSON text holds ``lead``, or is longer than
        :data:`MAX_NESTING`, or of another type than ``str``, ``int``, ``bool``, ``float``,
        ``None``, ``dict``, ``list``). What it leaves alone the guard leaves as it is, so the prompt
        is the checked path's. Where a function raises (a token under ``reject``, a value too deep
        to check), the renderer must step aside to the checked path, which raises the guard's error
        first. ``suspect`` may clear a string or JSON text before those functions run. ``None``
        where the checked path is all there is: ``allow``, untrusted assistant text, several leads,
        a token holding a character JSON text escapes, or a reading that renders no tool calls.
        """
        seen_reading, fast = self._fast_for
        if seen_reading is reading:
            return fast
        lead = self._lead
        fast = None
        # JSON text writes every character as itself but '"', '\\' and the control characters: the
        # lead and every token must hold none, so that the search finds them in it.
        spelt = "".join(self.tokens) + "".join(family.prefix + family.suffix for family in self.families)
        if (lead is not None and self.policy != "allow" and self.trust_assistant and reading.tool_calls
                and not reading.roles
                and not any(c == '"' or c < " " for c in spelt)):
            content = functools.partial(self._content, reading=reading)
            fast = FastGuard(
                lead, reading.name_follower, self._scanner.needs_escape.search, self._text, content, self._json
            )
        object.__setattr__(self, "_fast_for", (reading, fast))  # one tuple: a racing thread sees a pair
        return fast
