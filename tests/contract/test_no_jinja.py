"""The package never needs a template engine: it imports and renders with jinja2 unimportable."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import prompt_formats as pf


def test_imports_and_renders_without_jinja2() -> None:
    script = textwrap.dedent(
        """
        import sys

        class BlockJinja:
            def find_spec(self, name, path=None, target=None):
                if name == "jinja2" or name.startswith("jinja2.") or name in ("minijinja", "transformers"):
                    raise ImportError("blocked for this test: " + name)
                return None

        sys.meta_path.insert(0, BlockJinja())
        try:
            import jinja2  # noqa: F401
        except ImportError:
            pass
        else:
            raise SystemExit("the import blocker does not work")

        import prompt_formats as pf

        for name in pf.available_formats():
            fmt = pf.get_format(name)
            text = fmt.render([{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}],
                              add_generation_prompt=True)
            assert "hi" in text, (name, text)
        assert not any(m == "jinja2" or m.startswith("jinja2.") for m in sys.modules)
        print("rendered", len(pf.available_formats()))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"rendered {len(pf.available_formats())}"
