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
    """The directory's chat template: ``chat_template.jinja``, else ``tokenizer_config.json``'s
    ``chat_template``; :class:`UsageError` naming the file that cannot be read."""
    template_file = os.path.join(directory, "chat_template.jinja")
    if os.path.isfile(template_file):
        try:
            # As transformers reads it: UTF-8, a byte-order mark kept (it is then text of every prompt).
            with open(template_file, encoding="utf-8") as stream:
                return stream.read()
        except UnicodeDecodeError as exc:
            raise UsageError(f"--tokenizer {argument}: cannot read chat_template.jinja: {_not_utf8(exc)}") from None
        except OSError as exc:
            raise UsageError(f"--tokenizer {argument}: cannot read chat_template.jinja: {exc.strerror}") from None
    config = os.path.join(directory, "tokenizer_config.json")
    if not os.path.isfile(config):
        return None
    try:
        # utf-8-sig: a byte-order mark at the start of the file is no part of its JSON.
        with open(config, encoding="utf-8-sig") as stream:
            settings: Any = json.load(stream)
        if not isinstance(settings, dict):
            raise ValueError("not a JSON object")
        template = settings.get("chat_template")
        return template if isinstance(template, str) or template is None else json.dumps(template)
    except RecursionError:
        reason = "its JSON is nested too deeply to read"
    except UnicodeDecodeError as exc:
        reason = _not_utf8(exc)
    except OSError as exc:
        reason = exc.strerror or str(exc)
    except ValueError as exc:  # not JSON, or not an object
        reason = str(exc)
    raise UsageError(f"--tokenizer {argument}: cannot read tokenizer_config.json: {reason}")


def _not_utf8(exc: UnicodeDecodeError) -> str:
    """Why a file is not read as text, naming the first byte (1-based) that is not UTF-8."""
    return f"not UTF-8 text (invalid byte {exc.start + 1})"


def _fetch(name: str) -> str:
    """The local directory holding the Hub model ``name``'s tokenizer files (downloaded if need be)."""
    tried = "not a file or a directory, so it was looked up as a Hugging Face Hub model"
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise UsageError(f"--tokenizer {name}: {tried}, but the huggingface_hub package is not installed") from None
    paths = []
    for filename in _FILES:
        try:
            paths.append(hf_hub_download(name, filename))
        except Exception as exc:  # invalid names, offline mode, network and HTTP errors: each its own class
            raise UsageError(f"--tokenizer {name}: {tried}: {_not_fetched(exc, filename)}") from None
    return os.path.dirname(paths[0])


def _not_fetched(exc: Exception, filename: str) -> str:
    """Why the Hub's ``filename`` could not be had, in this command's words (huggingface_hub's error
    classes, by name: their module differs between its versions)."""
    classes = {cls.__name__ for cls in type(exc).__mro__}
    if "HFValidationError" in classes:
        return "not a valid model name (an owner/name, or a name)"
    if "GatedRepoError" in classes:
        return "a gated model: accept its terms on its Hub page and log in (hf auth login)"
    if "RepositoryNotFoundError" in classes:
        return "no such model on the Hub (or a private one: log in with hf auth login)"
    if "LocalEntryNotFoundError" in classes:
        from huggingface_hub import constants

        missing = f"its {filename} is not in the local Hugging Face cache"
        if getattr(constants, "HF_HUB_OFFLINE", False):
            return f"{missing}, and downloads are off (HF_HUB_OFFLINE is set)"
        return f"{missing}, and it could not be downloaded (no connection?)"
    if "EntryNotFoundError" in classes:
        return f"the model has no {filename}"
    reason = str(exc).splitlines()[0] if str(exc) else ""
    return f"its {filename} could not be fetched ({type(exc).__name__}{': ' + reason if reason else ''})"


def format_name(given: str | None, model: ModelTokenizer, argument: str) -> str:
    """The format of the run: ``given`` (``--format``), checked against the model's template, or the
    format the template is; :class:`UsageError` when they disagree or the template is not one of ours."""
    if model.chat_template is None:
        if given is None:
            raise UsageError(f"--tokenizer {argument}: no chat_template to choose the format by: give --format")
        return given
    from ..format.detect import match_template

    match = match_template(model.chat_template)
    if match.format is None:
        raise UsageError(f"--tokenizer {argument}: its chat_template is not a format of this package: {match.reason}")
    if given is not None and given != match.format:
        raise UsageError(
            f"--tokenizer {argument}: its chat_template is the template of {match.format!r}, not of --format {given}"
        )
    return match.format
