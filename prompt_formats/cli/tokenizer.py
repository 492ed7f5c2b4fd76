"""``--tokenizer``: a ``tokenizer.json``, a model directory, or a Hugging Face Hub model name.

A model directory is what transformers users have (``save_pretrained``, a Hub snapshot): a
``tokenizer.json`` and a ``tokenizer_config.json``, whose ``chat_template`` (or a
``chat_template.jinja`` beside it) says which format the prompts must be. Without ``--format`` the
format is the one :func:`prompt_formats.detect_format` recognises the template as; a template that
is not one of this package's formats, or not the one ``--format`` names, stops the run: its prompts
would not be the model's. A name that is neither a file nor a directory is looked up on the Hub
(``huggingface_hub``, its cache first), for those two files only.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, NamedTuple

from .files import UsageError

__all__ = ["ModelTokenizer", "resolve"]

_FILES = ("tokenizer.json", "tokenizer_config.json")
# A Hub model id: a name, or an owner and a name (a path such as /x/y or ./x is never one).
_HUB_NAME = re.compile(r"(?:[\w][\w.-]*/)?[\w][\w.-]*")


class ModelTokenizer(NamedTuple):
    """Where the ``tokenizer.json`` is, and the model's chat template (``None``: a bare file, or none given)."""

    path: str
    chat_template: str | None


def resolve(argument: str) -> ModelTokenizer:
    """The tokenizer ``--tokenizer ARGUMENT`` names; :class:`UsageError` saying what was tried."""
    if os.path.isfile(argument):
        return ModelTokenizer(argument, None)
    if os.path.isdir(argument):
        return _directory(argument, argument)
    if not _HUB_NAME.fullmatch(argument) or argument.endswith(".json"):
        return ModelTokenizer(argument, None)  # a path: loading it says what is wrong with it
    return _directory(_fetch(argument), argument)


def _directory(directory: str, argument: str) -> ModelTokenizer:
    path = os.path.join(directory, "tokenizer.json")
    if not os.path.isfile(path):
        raise UsageError(f"--tokenizer {argument}: a directory without a tokenizer.json")
    return ModelTokenizer(path, _chat_template(directory, argument))


def _chat_template(directory: str, argument: str) -> str | None:
    template_file = os.path.join(directory, "chat_template.jinja")
    if os.path.isfile(template_file):
        with open(template_file, encoding="utf-8") as stream:
            return stream.read()
    config = os.path.join(directory, "tokenizer_config.json")
    if not os.path.isfile(config):
        return None
    try:
        with open(config, encoding="utf-8") as stream:
            template: Any = json.load(stream).get("chat_template")
    except (OSError, ValueError, AttributeError) as exc:
        raise UsageError(f"--tokenizer {argument}: cannot read tokenizer_config.json: {exc}") from None
    return template if isinstance(template, str) or template is None else json.dumps(template)


def _fetch(name: str) -> str:
    """The local directory holding the Hub model ``name``'s tokenizer files (downloaded if need be)."""
    tried = f"not a file or a directory, nor a Hugging Face Hub model whose {' and '.join(_FILES)} could be fetched"
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise UsageError(f"--tokenizer {name}: {tried} (the huggingface_hub package is not installed)") from None
    try:
        paths = [hf_hub_download(name, filename) for filename in _FILES]
    except Exception as exc:  # invalid names, offline mode, network and HTTP errors: each its own class
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UsageError(f"--tokenizer {name}: {tried}: {type(exc).__name__}: {reason}") from None
    return os.path.dirname(paths[0])


def format_name(given: str | None, model: ModelTokenizer, argument: str) -> str:
    """The format of the run: ``given`` (``--format``), checked against the model's template, or the
    format the template is; :class:`UsageError` when they disagree or the template is not one of ours."""
    if model.chat_template is None:
        if given is None:
            raise UsageError(f"--tokenizer {argument}: no chat_template to choose the format by: give --format")
        return given
    from ..detect import match_template  # template recognition: only for a model's tokenizer

    match = match_template(model.chat_template)
    if match.format is None:
        raise UsageError(f"--tokenizer {argument}: its chat_template is not a format of this package: {match.reason}")
    if given is not None and given != match.format:
        raise UsageError(
            f"--tokenizer {argument}: its chat_template is the template of {match.format!r}, not of --format {given}"
        )
    return match.format
