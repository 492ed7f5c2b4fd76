"""The Harmony family: OpenAI's gpt-oss prompt format, and the two templates that write it.

Shared here: the o200k_harmony vocabulary (:mod:`.tokens`), how a message header reads
(:mod:`.header`), the reply parser (:mod:`.parse`, with :mod:`.tolerant`) and the date both print
(:mod:`.dates`); here too, how Ollama's template reads untrusted text (:mod:`.untrusted`; gpt-oss's
guard reads its fields in :mod:`.openai.guarding`). The renderers, each byte-exact with its
template:

- :mod:`.ollama`: the ``harmony`` format, Ollama's Go template (``HarmonyFormat``);
- :mod:`.openai`: the ``gpt-oss`` format, OpenAI's Jinja template as transformers renders it
  (``GptOssFormat``).
"""

from __future__ import annotations

from .parse import HarmonyReplyParser, parse_header

__all__ = ["HarmonyReplyParser", "parse_header"]
