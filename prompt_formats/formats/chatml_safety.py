"""ChatML-safety: the strict upstream Qwen3.6 template, with untrusted text unable to forge structure.

On text that holds no control token the prompt is exactly the upstream template's
(``tests/fixtures/chatml_upstream.jinja``: a system message anywhere but first raises ``System
message must be at the beginning.``, and every other rule of :func:`~.chatml.render_chatml` with
``merge_system=False``). Before rendering, a :class:`~prompt_formats.guard.ControlTokenGuard` with the
Qwen3 token set applies its policy to every untrusted field: system, user and tool content, tool-call
names and arguments in history, tool definitions, and assistant content and reasoning too when
``trust_assistant=False``. See ``docs/safety.md`` for the threat and what each policy guarantees.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import FormatError, InvalidInputError, type_name
from ..guard import CHATML_CONTROL_TOKENS, ControlTokenGuard, Policy
from .chatml import ChatMLFormat

__all__ = ["ChatMLSafetyFormat"]


class ChatMLSafetyFormat(ChatMLFormat):
    """The ``chatml-safety`` format: ``get_format("chatml-safety", policy="reject")``.

    ``policy``: ``"escape"`` (default), ``"reject"`` or ``"allow"``; ``tokens``: the control tokens
    (default :data:`~prompt_formats.guard.CHATML_CONTROL_TOKENS`); ``trust_assistant``: leave
    assistant content and reasoning unchecked (default ``True``). Or pass a ready ``guard`` instead
    of those three.
    """

    name = "chatml-safety"
    summary = ("Qwen3.6 ChatML as the strict upstream template renders it, with a guard against control tokens "
               "in untrusted text (--config policy=escape|reject|allow)")
    merge_system = False
    guard: ControlTokenGuard

    def __init__(
        self,
        policy: Policy = "escape",
        *,
        tokens: Iterable[str] = CHATML_CONTROL_TOKENS,
        trust_assistant: bool = True,
        guard: ControlTokenGuard | None = None,
    ) -> None:
        if not isinstance(trust_assistant, bool):  # a truthy string would leave assistant text unchecked
            raise InvalidInputError("trust_assistant", f"expected a boolean, got {type_name(trust_assistant)}")
        if guard is None:
            guard = ControlTokenGuard(tuple(tokens), policy, trust_assistant)
        elif (policy, tuple(tokens), trust_assistant) != ("escape", CHATML_CONTROL_TOKENS, True):
            raise FormatError("chatml-safety: pass either guard or policy/tokens/trust_assistant, not both")
        super().__init__(guard)

    def __repr__(self) -> str:
        guard = self.guard
        return (
            f"{type(self).__name__}(policy={guard.policy!r}, trust_assistant={guard.trust_assistant!r}"
            + ("" if guard.tokens == CHATML_CONTROL_TOKENS else f", tokens={guard.tokens!r}")
            + ")"
        )
