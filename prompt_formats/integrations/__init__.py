"""Integrations with data-processing engines. Each module imports its engine only when used."""
