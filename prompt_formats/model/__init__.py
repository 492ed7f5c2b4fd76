"""The message model and the one reading of OpenAI-style chat dicts, tool definitions and the toolset cache."""
