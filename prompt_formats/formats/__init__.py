"""One package per format family: ``chatml`` (``chatml-multi-system``, ``chatml-safety``), ``harmony``
(Ollama's gpt-oss template) and ``gpt_oss`` (OpenAI's); ``reply_values`` reads the values a parsed
reply carries, for every family."""
