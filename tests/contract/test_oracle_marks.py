"""The oracle markers' check is in place: every engine entry point is wrapped, and a call from a test
without the marker fails it (tests/support/oracle_marks.py). Runs in every tier; it imports the
engines' modules but runs none of them."""

from __future__ import annotations

import importlib
import importlib.util

import pytest

from tests.support import oracle_marks


@pytest.mark.parametrize("module_name", sorted(oracle_marks.WRAPPED))
def test_every_entry_point_of_an_installed_engine_is_wrapped(module_name: str) -> None:
    if importlib.util.find_spec(module_name.partition(".")[0]) is None:
        pytest.fail(f"{module_name} is not installed: the test extras install every engine")
    module = importlib.import_module(module_name)
    owner = {"jinja2.environment": getattr(module, "Template", None),
             "transformers.tokenization_utils_base": getattr(module, "PreTrainedTokenizerBase", None)}.get(
        module_name, module)
    unwrapped = [name for name in oracle_marks.WRAPPED[module_name]
                 if not hasattr(getattr(owner, name), "__wrapped__")]
    assert unwrapped == [], f"{module_name}: not wrapped (the engine moved its entry points?)"


def test_an_engine_called_by_an_unmarked_test_fails_it() -> None:
    import jinja2

    template = jinja2.Environment().from_string("{{ x }}")  # compiling is not running
    with pytest.raises(pytest.fail.Exception, match=r"not marked @pytest\.mark\.jinja"):
        template.render(x=1)
    with pytest.raises(pytest.fail.Exception, match=r"not marked @pytest\.mark\.go"):
        oracle_marks.require("go")


@pytest.mark.jinja
def test_a_marked_test_runs_its_engine() -> None:
    import jinja2

    assert jinja2.Environment().from_string("{{ x }}").render(x=1) == "1"
