"""The guard's property over a format's generated conversations, for the families whose tests check
it so (Gemma 3, DeepSeek-V3, GLM-4.5): the escaped prompt holds the template's own tokens and no
other, and where the unguarded prompt holds a forged one, ``reject`` refuses it.

The template's own tokens are those of the same conversation with every token's first character
taken out of its strings; tokens are found by a search of the prompt that knows nothing of the guard.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pytest

import prompt_formats as pf

__all__ = ["TokenCheck", "scrubbed"]


def scrubbed(value: Any, leads: str) -> Any:
    """``value`` with each of ``leads`` (the tokens' first characters) replaced by ``(`` in every string."""
    if isinstance(value, str):
        return value.translate({ord(lead): "(" for lead in leads})
    if isinstance(value, dict):
        return {scrubbed(key, leads): scrubbed(item, leads) for key, item in value.items()}
    if isinstance(value, list):
        return [scrubbed(item, leads) for item in value]
    return value


class TokenCheck:
    """The property for the format ``name`` over ``tokens`` (and ``extra``, a regex of the ranges the
    set declares); ``escaped_or_refused``: where the guard refuses what the template prints as Python
    prints it, the refusal's ``InvalidInputError`` passes."""

    def __init__(self, name: str, tokens: Iterable[str], extra: str = "", escaped_or_refused: bool = False) -> None:
        self.name, self.tokens = name, tuple(tokens)
        self.leads = "".join(sorted({token[0] for token in self.tokens}))
        self.found = re.compile("|".join(map(re.escape, self.tokens)) + (f"|{extra}" if extra else ""))
        self.refused = escaped_or_refused

    def guarded(self, policy: str) -> pf.ChatFormat:
        return pf.get_format(self.name, guard=pf.ControlTokenGuard(self.tokens, policy, trust_assistant=False))

    def tokens_in(self, text: str) -> list[str]:
        return sorted(self.found.findall(text))

    def check(self, messages: list[Any]) -> None:
        """The property (the module docstring) on one generated conversation."""
        fmt = pf.get_format(self.name)
        try:
            own = fmt.render(scrubbed(messages, self.leads), add_generation_prompt=True)
        except pf.FormatError:
            return
        try:
            escaped = self.guarded("escape").render(messages, add_generation_prompt=True)
        except pf.InvalidInputError as error:  # printed as Python prints it: refused under a guard
            assert self.refused and "with a guard" in str(error)
            return
        assert self.tokens_in(escaped) == self.tokens_in(own)
        plain = fmt.render(messages, add_generation_prompt=True)
        if self.tokens_in(plain) != self.tokens_in(own):  # unguarded, a token is forged: refused
            with pytest.raises(pf.InjectionError):
                self.guarded("reject").render(messages, add_generation_prompt=True)
