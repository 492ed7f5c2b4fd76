"""Serving helpers: parser events as OpenAI deltas."""
