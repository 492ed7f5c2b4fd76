"""One package per format family: ``chatml`` (``chatml-multi-system``, ``chatml-safety``) and ``harmony``
(``harmony``, Ollama's gpt-oss template, in ``harmony.ollama``; ``gpt-oss``, OpenAI's, in
``harmony.openai``)."""
