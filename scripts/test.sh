#!/usr/bin/env bash
# Install everything the tests need, then run the whole suite: ruff, mypy, pytest.
#   - a virtualenv in .venv with the package and its `test` and `ray` extras (pinned oracles: jinja2,
#     transformers, oss-harmony; a local Ray cluster for the Ray Data integration);
#   - Go (Debian's golang-go) for the harmony oracle, when `go` is missing, and Debian's python3-venv
#     when the Python cannot create a virtualenv.
# Three tiers (tests/support/settings.py, docs/contributing.md "Running the tests"):
#   bash scripts/test.sh          the default tier: every test, each property test at a seed derived
#                                 from the test (the same cases every run), sized to finish in minutes;
#   bash scripts/test.sh --quick  in the existing .venv, no installs: ruff, mypy and the tests that need
#                                 no reference engine (pytest markers, checked where the engines run:
#                                 tests/support/oracle_marks.py); about three minutes on two cores;
#   bash scripts/test.sh --deep   the same tests at PF_HYPOTHESIS_EXAMPLES=5000 (unless set) with
#                                 random seeds and hypothesis's example database kept in .hypothesis/.
#   bash scripts/test.sh --compiled   the default tier against the mypyc-compiled build, built into a
#                                 second virtualenv (.venv-compiled, made afresh by the README's command)
#                                 where a C compiler is present (docs/contributing.md, "The compiled
#                                 build"); CI runs it after the pure one.
# pytest runs in worker processes, one per CPU (pytest-xdist; `-n 0` after it runs in one process).
# Other arguments go to pytest. PF_HYPOTHESIS_EXAMPLES scales the number of generated cases.
# The exit status is the first failing step's (pytest's 5, "no tests collected", included).
set -euo pipefail
cd "$(dirname "$0")/.."

tier=default
build=pure
pytest_args=()
for arg in "$@"; do
    case "$arg" in
        --deep) tier=deep ;;
        --quick) tier=quick ;;
        --compiled) build=compiled ;;
        *) pytest_args+=("$arg") ;;
    esac
done
export PF_TEST_TIER=$tier
if [ "$tier" = deep ]; then
    export PF_HYPOTHESIS_EXAMPLES=${PF_HYPOTHESIS_EXAMPLES:-5000}
else
    # Sets and dicts of strings iterate in one order: what the tests generate depends on nothing else.
    export PYTHONHASHSEED=0
fi

say() { echo "scripts/test.sh: $*" >&2; }

if [ "$tier" = quick ]; then
    if [ "$build" = compiled ]; then
        say "--quick tests the source tree in .venv; the compiled build is tested by --compiled alone"
        exit 2
    fi
    if [ ! -x .venv/bin/python ]; then
        say "--quick runs in an existing .venv; make it once with: bash scripts/test.sh"
        exit 1
    fi
    say "quick tier: ruff, mypy, then the tests that need no reference engine"
    .venv/bin/ruff check prompt_formats tests benchmarks build_backend
    .venv/bin/mypy prompt_formats
    exec .venv/bin/python -m pytest -n auto --dist loadgroup ${pytest_args[@]+"${pytest_args[@]}"}
fi

apt_install() {  # Debian packages, as root or through sudo
    local sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

python=${PYTHON:-python3}
# The README's install command may have made .venv already (a plain install, replaced by the editable
# one below), or left it without pip when the system Python has no venv support.
if ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
    if ! "$python" -c 'import ensurepip' >/dev/null 2>&1; then
        say "installing python3-venv to create .venv"
        apt_install python3-venv
    fi
    "$python" -m venv .venv
fi
say "installing the package and its test extras into .venv (pip)"
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test,ray]'

if ! command -v go >/dev/null 2>&1; then
    say "installing Go (golang-go) for the harmony oracle"
    apt_install golang-go
fi

say "ruff, mypy, then pytest ($tier tier)"
.venv/bin/ruff check prompt_formats tests benchmarks build_backend
.venv/bin/mypy prompt_formats
if [ "$build" = pure ]; then
    .venv/bin/python -m pytest -n auto --dist loadgroup ${pytest_args[@]+"${pytest_args[@]}"}
    exit 0
fi

# --- The compiled build (mypyc) -------------------------------------------------------------------
# The same suite against the compiled build in .venv-compiled, where a C compiler is present; without
# one, it says so (the pure build is the one tested). .venv-compiled is made afresh every run and the
# README's compiled-build command, read out of README.md (so the two cannot drift), runs there as
# written, in that virtual environment (its bin/ first on PATH) before anything else is installed:
# the test that it works in a fresh virtual environment, from what the build backend asks pip for.
# Then the test extras (`prompt-formats[test,ray]`: the installed build stays, its extras' requirements
# are added). pytest runs from outside the source tree's import path (-P, no pythonpath,
# --import-mode=append), so the installed, compiled package is the one imported.
if ! command -v "${CC:-cc}" >/dev/null 2>&1; then
    say "no C compiler (${CC:-cc}): the compiled build is not tested, the pure build only"
    exit 0
fi
readme_command=$(grep -o '`PROMPT_FORMATS_COMPILE=[^`]*`' README.md | tr -d '`' || true)
if [ "$(printf '%s' "$readme_command" | grep -c '')" -ne 1 ]; then
    say "README.md shows not one \`PROMPT_FORMATS_COMPILE=...\` command: ${readme_command:-none}"
    exit 1
fi
rm -rf .venv-compiled
"$python" -m venv .venv-compiled
say "README.md's compiled build in a fresh .venv-compiled: $readme_command"
VIRTUAL_ENV="$PWD/.venv-compiled" PATH="$PWD/.venv-compiled/bin:$PATH" bash -c "$readme_command"
.venv-compiled/bin/python -m pip install --quiet --disable-pip-version-check 'prompt-formats[test,ray]'
# -I: the installed package, not the source tree's (which the current directory would put first).
.venv-compiled/bin/python -I -c 'import prompt_formats, sys; sys.exit(not prompt_formats.compiled)'
.venv-compiled/bin/python -P -m pytest -o pythonpath= --import-mode=append -n auto --dist loadgroup \
    ${pytest_args[@]+"${pytest_args[@]}"}
