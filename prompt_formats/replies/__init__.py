"""Replies: the parser events, the shared scanning machinery, and reading the values a model wrote."""
