"""One package per format family: ``chatml`` (the Qwen and Nemotron templates), ``harmony``
(``harmony``, Ollama's gpt-oss template, in ``harmony.ollama``; ``gpt-oss``, OpenAI's, in
``harmony.openai``), ``deepseek``, ``glm``, ``llama`` and ``gemma``."""
