#!/usr/bin/env bash
# Install everything the tests need, then run the whole suite: ruff, mypy, pytest.
#   - a virtualenv in .venv with the package and its `test` and `ray` extras (pinned oracles: jinja2,
#     transformers, oss-harmony; a local Ray cluster for the Ray Data integration);
#   - Go (Debian's golang-go) for the harmony oracle, when `go` is missing.
# Extra arguments go to pytest. PF_HYPOTHESIS_EXAMPLES raises the number of generated cases.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test,ray]'

if ! command -v go >/dev/null 2>&1; then
    echo "scripts/test.sh: installing Go (golang-go) for the harmony oracle" >&2
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq golang-go >/dev/null
fi

.venv/bin/ruff check prompt_formats tests benchmarks
.venv/bin/mypy prompt_formats
.venv/bin/python -m pytest "$@"
