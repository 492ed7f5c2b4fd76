"""Loads the tier's hypothesis profile (tests/support/settings.py) before any test module makes its settings."""

import tests.support.settings  # noqa: F401  (registers and loads the profile on import)
