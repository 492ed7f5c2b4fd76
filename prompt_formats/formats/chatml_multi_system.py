"""ChatML-multi-system: the Qwen3.6 template that merges every system message into one leading turn.

Agent clients send several system messages (a base prompt, then reminders between turns); the
upstream template raises ``System message must be at the beginning.`` for them. This variant renders
each system message's content, trims it, drops the empty ones, joins the rest with a blank line and
renders that as the only system turn; every other message keeps its order. Reference:
``tests/fixtures/chatml_multi_system.jinja``.
"""

from __future__ import annotations

from .chatml import ChatMLFormat

__all__ = ["ChatMLMultiSystemFormat"]


class ChatMLMultiSystemFormat(ChatMLFormat):
    """The ``chatml-multi-system`` format (renderer and reply parser)."""

    name = "chatml-multi-system"
    summary = ("Qwen3.6 ChatML as its Jinja template renders it, every system message merged into one leading "
               "system turn (for agent clients that send several)")
    merge_system = True
