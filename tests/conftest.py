import sys
from pathlib import Path

# The shared test helpers (oracles, strategies) are plain modules beside the tests.
sys.path.insert(0, str(Path(__file__).parent))
