"""Which registered format a chat template is: :func:`detect_format` and :func:`match_template`.

A tool that holds a tokenizer's ``chat_template`` (or an Ollama ``TEMPLATE``) can ask whether a
format of this package renders it byte for byte, and switch to that format only then. The package
does not ship the templates: it keeps the SHA-256 of each format's reference template.

Recognition fails closed. A text is recognised only when the engine reads it as exactly the
reference template:

- Jinja templates are compared after the two rewrites Jinja's lexer makes of every source before
  anything else (with transformers' settings, ``keep_trailing_newline`` off): each ``\\r\\n`` or ``\\r``
  becomes ``\\n``, and one newline at the very end is dropped. Both rewrites give the lexer the same
  string, so the compiled template is the same. Any other difference, even whitespace that
  ``trim_blocks``, ``lstrip_blocks`` or a ``-`` marker would remove, is not recognised: proving
  that needs the template engine, which the package does not use.
- Go templates (the ``harmony`` format's reference, Ollama's) are compared byte for byte: Go's
  ``text/template`` rewrites nothing.
"""

from __future__ import annotations

import hashlib

import attrs

from ..errors import type_name
from .reference_lines import REFERENCE_LINES
from .registry import available_formats

__all__ = ["TemplateMatch", "detect_format", "match_template"]

# SHA-256 of each reference template (UTF-8), after the Jinja rewrites for the Jinja ones. Each is
# pinned against the fixture it comes from by tests/render/test_detect.py.
_JINJA_REFERENCES = {
    # tests/fixtures/chatml_multi_system.jinja: the Qwen3.6 template with the system-merging block.
    "c4c27f52a5ba363750eac9f603b8658cb9b6e3573e3aa20c5c25c32272d40a54": "chatml-multi-system",
    # tests/fixtures/chatml_upstream.jinja: the strict upstream Qwen3.6 template.
    "b4e85b7db29b03df6110dbcdf19525b9ff260c3c993da8bec7db286fd2b80643": "chatml-safety",
    # tests/fixtures/families/: the Qwen models' own templates.
    "a4aee8afcf2e0711942cf848899be66016f8d14a889ff9ede07bca099c28f715": "qwen3.5",
    "273d8e0e683b885071fb17e08d71e5f2a5ddfb5309756181681de4f5a1822d80": "qwen3.5-nothink",
    "e84f32a23fdda27689f868aa4a1a5621f41133e51a48d7f3efcbea2839574259": "qwen3.6",
    "c3cf9e34abf4f9e36c2d72165aa9c132d3e2a725b6c2586aaa3a8af9d7a81041": "qwen3.8",
    "a55ee1b1660128b7098723e0abcd92caa0788061051c62d51cbe87d9cf1974d8": "qwen3",
    "64f85b198065d0fba2a81f37e10ed68161ce2c19a754c7100e67e0ca2ee9c326": "qwen3-instruct-2507",
    "55b2f4a26ac9ee719330a61a0c39d9e538b0e9322212f048326318cff4f8674a": "qwen2.5",
    "9d879ef91075acbfb2df7e441fd79d60bacfca989cf6d511d2af45c681e94f10": "qwen3-vl",
    # tests/fixtures/families/: NVIDIA's Nemotron 3 templates (Ultra's is 3.5's text: one entry).
    "43a92aacc2e169bb37055e4d8b0df31edfdc8657d8c387fcf98254cb246e626a": "nemotron-3-nano",
    "3b74d76d8b903752e764cae114ae8ae2f24cd260466cf672570c745219573d28": "nemotron-3-super",
    "82753bef5cedc4932c1ed509b5c9a12be680fd86d1adb65bc3f7398d11c8eebc": "nemotron-3.5",
    # tests/fixtures/gpt_oss.jinja: OpenAI's gpt-oss template.
    "a4c9919cbbd4acdd51ccffe22da049264b1b73e59055fa58811a99efbd7c8146": "gpt-oss",
    # tests/fixtures/families/gemma3.jinja: Gemma 3's template.
    "8d9e3a3c114fb2053ec500184677af4f7e5f8ec2582443cd535834e68b3ade29": "gemma-3",
    # tests/fixtures/families/gemma4.jinja: Gemma 4's template.
    "523fc86ed4db0357763963f4b0fdbce319903f1f68b2d03f593bef7a56836533": "gemma-4",
    # tests/fixtures/families/deepseekv3.jinja: DeepSeek-V3's template.
    "563b1ce7d61d50a9b4c7439a912a1116f095b712df5b5e4d3e1116049874eb64": "deepseek-v3",
    # tests/fixtures/families/glm4moe.jinja: GLM-4.5's template.
    "44f815868bf02fa458dd2f741a338046f4bf45f398eb6d067766726b9d96cce3": "glm-4.5",
    # tests/fixtures/families/llama3_1.jinja, llama3_2.jinja: Llama 3.1's and 3.2's templates.
    "93c0e9aa3629bbd77e68dbc0f5621f6e6b23aa8d74b932595cdb8d64684526d7": "llama-3.1",
    "d82792f95932f1c9cef5c4bd992f171225e3bf8c7b609b4557c9e1ec96be819f": "llama-3.2",
}
# The exact text's digest of a reference that Jinja reads otherwise than it is (Qwen3.8's, Qwen2.5's,
# Qwen3-VL's, Nemotron 3 Nano's and Super's, Gemma 3's and 4's and Llama 3.1's and 3.2's end in a newline).
_JINJA_EXACT = {
    "7de1c58e208eda46e9c7f86397df37ec49883aeece39fb961e0a6b24088dd3c4": "gemma-3",
    "3beb16a140a78c7bf71cd86609f58e56f1594e670e95fe58bd6022f941d1cb1e": "gemma-4",
    "ab7813c3abdd9cb655905a410728b26c7884eca45ddfab8d9f931553485a7862": "nemotron-3-nano",
    "575fb74f54ed264df9047d0ecce3c98938aae953fb4f50356675706264cbb68a": "nemotron-3-super",
    "514d5304fcac63bda60e6faf860d5657010cf43cbc4c633c8bf678ee184e7a37": "qwen3.8",
    "cd8e9439f0570856fd70470bf8889ebd8b5d1107207f67a5efb46e342330527f": "qwen2.5",
    "3636d0f0bd6bef02654cdffdc447b79cb2cef8ab02cc75267345946291a489e4": "qwen3-vl",
    "e10ca381b1ccc5cf9db52e371f3b6651576caee0a630b452e2816b2d404d4b65": "llama-3.1",
    "5816fce10444e03c2e9ee1ef8a4a1ea61ae7e69e438613f3b17b69d0426223a4": "llama-3.2",
}
_GO_REFERENCES = {
    # tests/fixtures/harmony_gpt_oss.gotmpl: the Ollama template the harmony format reproduces.
    "c870b38e60a4d82acdd3d3b90c4a9ca1ec31c7fded03202b36e30b47121faf3a": "harmony",
}
# What chatml-safety does where its template would not: said with every match, so nobody switches blind.
_CAVEATS = {
    "chatml-safety": "; it matches the template on text without control tokens and, by default, escapes them "
    "where the template would not (docs/safety.md)",
    "nemotron-3.5": ", which is also Nemotron 3 Ultra's (nemotron-3-ultra renders the same)",
}


@attrs.frozen
class TemplateMatch:
    """The answer of :func:`match_template`: ``format`` is the registered format's name, or ``None``;
    ``reason`` says in one sentence why (how it matched, or why nothing did)."""

    format: str | None
    reason: str


def normalize_jinja_source(text: str) -> str:
    """``text`` as Jinja's lexer sees it before it reads a token (``keep_trailing_newline`` off):
    line endings made ``\\n``, one final newline dropped. Two sources with the same normal form
    compile to the same template."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text[:-1] if text.endswith("\n") else text


def line_digests(text: str) -> tuple[str, ...]:
    """Each line of ``text`` (its surrounding whitespace taken off) as 8 hex digits of its SHA-256."""
    return tuple(_digest(line.strip())[:8] for line in text.split("\n"))


def _nearest(text: str) -> str:
    """``; nearest: NAME (K of its N distinct lines in common)`` for the reference template with the
    largest share of distinct lines in common with ``text`` among the lines of either (so a template
    that adds a line to another, as Nemotron 3 Super's to Nano's, is nearer a copy of itself), if at
    least half of its own, else nothing. (Distinct: a line every template repeats, ``{%- endif %}``,
    counts once.)"""
    found = set(line_digests(normalize_jinja_source(text)))
    registered = set(available_formats())
    best, best_shared, best_total, best_union = "", 0, 1, 1
    for name, lines in REFERENCE_LINES.items():
        distinct = set(lines)
        shared = len(distinct & found)
        union = len(distinct | found)
        if shared * best_union > best_shared * union and name in registered:
            best, best_shared, best_total, best_union = name, shared, len(distinct), union
    if not best or 2 * best_shared < best_total:
        return ""
    return f"; nearest: {best!r} ({best_shared} of its {best_total} distinct lines in common), not the same template"


def _digest(text: str) -> str:
    # surrogatepass: a lone surrogate cannot be in a reference template, but must not raise either.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def match_template(chat_template: object) -> TemplateMatch:
    """Which registered format renders ``chat_template`` exactly as its engine does, and why.

    ``format`` is set only when the text is a format's reference template, exactly or as Jinja
    reads it (see the module documentation), and that format is registered in this version;
    otherwise ``None``, with the reason. Never raises.
    """
    if not isinstance(chat_template, str):
        hint = " (several named templates: pass the text of one)" if isinstance(chat_template, (dict, list)) else ""
        return TemplateMatch(None, f"expected the template's text, a string, got {type_name(chat_template)}{hint}")
    exact = _digest(chat_template)
    name = _GO_REFERENCES.get(exact) or _JINJA_REFERENCES.get(exact) or _JINJA_EXACT.get(exact)
    how = "an exact copy of"
    if name is None:
        name = _JINJA_REFERENCES.get(_digest(normalize_jinja_source(chat_template)))
        how = "the same to Jinja as (differing only in line endings or a final newline)"
    if name is None:
        return TemplateMatch(None, _unknown_reason(chat_template))
    if name not in available_formats():
        return TemplateMatch(None, f"the reference template of {name!r}, a format this version does not register")
    return TemplateMatch(name, f"{how} the reference template of {name!r}{_CAVEATS.get(name, '')}")


def detect_format(chat_template: object) -> str | None:
    """The registered format whose reference template ``chat_template`` is, or ``None``.

    Exact match, or equal as Jinja reads it (line endings, one final newline); ``None`` for any
    other text, and for anything that is not a string. :func:`match_template` gives the reason.
    Rendering with the returned format gives the template's output byte for byte (``chatml-safety``:
    on text without control tokens, see docs/safety.md).
    """
    return match_template(chat_template).format


def _unknown_reason(text: str) -> str:
    family = ""
    if "<|im_start|>" in text:
        family = " (it writes ChatML markers, but is not the template of any ChatML format)"
    elif "<|start|>" in text:
        family = " (it writes Harmony markers, but is not the template of gpt-oss or harmony)"
    if "generation %}" in text:
        family += "; it carries {% generation %} tags, which no reference template has"
    return (
        "not the reference template of any format: only exact copies are recognised, up to line endings "
        f"and a final newline{family}{_nearest(text)}"
    )
