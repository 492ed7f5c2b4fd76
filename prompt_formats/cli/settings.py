"""The command's run-wide settings, read and checked once before any input is read.

``--config KEY=VALUE`` configures the format object, ``--option KEY=VALUE`` sets an option for every
record (``decode_tool_arguments`` is on unless ``--keep-tool-arguments``),
``--add-generation-prompt`` / ``--no-add-generation-prompt`` the generation prompt. Each value is
read by :func:`prompt_formats.format.options.read_value`, with the option's declared kinds, and a value the
format refuses stops the run at start with one line (exit status 2), instead of failing every record
one by one.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import FormatError, InvalidInputError
from ..format.options import Option, read_value
from ..format.registry import format_class, get_format
from ..records import RecordParser, RecordRenderer
from ..records.option_values import check_kinds
from .files import UsageError

if TYPE_CHECKING:
    from ..format.chat_format import ChatFormat
    from .spans import SpansRenderer

__all__ = ["key_text", "make_format", "make_job", "settle_format"]

# The smallest conversation every format renders: the run-wide settings are tried on it once.
_PROBE = [{"role": "user", "content": "x"}]


def key_text(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` split at the first ``=`` (an argparse type); the value is read once the format is known."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def settle_format(args: argparse.Namespace) -> None:
    """``args.format`` and ``args.tokenizer`` as the run uses them: a model's tokenizer (a directory or
    a Hub name) resolved to its ``tokenizer.json``, the format chosen by its chat template when
    ``--format`` is not given (:mod:`prompt_formats.cli.tokenizer`)."""
    argument = getattr(args, "tokenizer", None)
    if argument is not None:
        from .tokenizer import format_name, resolve  # only for --tokenizer

        model = resolve(argument)
        args.format = format_name(args.format, model, argument)
        args.tokenizer = model.path
    elif args.format is None:
        raise UsageError("--format is required (render takes it from --tokenizer's model instead, when given one)")


def make_format(name: str, config: list[tuple[str, str]] | None) -> ChatFormat:
    """The format ``name`` configured by ``--config`` pairs; :class:`UsageError` for what it refuses."""
    try:
        format_class(name)
    except FormatError as exc:  # an unknown format
        raise UsageError(str(exc)) from None
    values = {key: read_value(None, text) for key, text in config or []}
    try:
        return get_format(name, **values)
    except FormatError as exc:
        raise UsageError(f"format {name!r}: {exc}") from None


def _options(pairs: list[tuple[str, str]] | None, specs: tuple[Option, ...], template_values: bool) -> dict[str, Any]:
    """The ``--option`` values, each of a kind its option takes (``0`` is not a boolean), unless
    ``--template-option-values``, as a record's own options are read."""
    declared = {spec.name: spec for spec in specs}
    kinds = {} if template_values else declared
    options: dict[str, Any] = {}
    for key, text in pairs or []:
        try:
            value = read_value(declared.get(key), text)
            check_kinds({key: value}, kinds, "", None)
            options[key] = value
        except InvalidInputError as exc:
            raise UsageError(f"--option {key}={text}: {exc.problem}") from None
    return options


def _settings(options: Mapping[str, Any], pairs: list[tuple[str, str]] | None, generation: Any) -> str:
    """How the run-wide settings were written, for a message: ``--option think=maybe``."""
    written = [f"--option {key}={text}" for key, text in pairs or []]
    if generation is not None:
        written.append("--add-generation-prompt" if generation else "--no-add-generation-prompt")
    return ", ".join(written) if written else "the run's settings"


def _check_render_settings(fmt: ChatFormat, options: dict[str, Any], generation: Any, written: str) -> None:
    """Render the probe with the run-wide settings: what the format refuses is refused now, once.

    Only when the probe renders without them: a format that refuses the probe itself is left to say
    so record by record.
    """
    try:
        fmt.render(_PROBE, None, generation, **options)
    except FormatError as exc:
        try:
            fmt.render(_PROBE)
        except FormatError:
            return
        raise UsageError(f"{written}: {exc}") from None


def _serving_default(fmt: ChatFormat, options: dict[str, Any], keep_tool_arguments: bool) -> None:
    """The command renders OpenAI requests, whose call arguments are JSON text: it decodes them as the
    servers do (``decode_tool_arguments=true``) unless ``--keep-tool-arguments``; a record's own
    ``decode_tool_arguments`` still overrides the run's."""
    declared = "decode_tool_arguments" in fmt.options
    if keep_tool_arguments:
        if options.get("decode_tool_arguments"):
            raise UsageError("--keep-tool-arguments and --option decode_tool_arguments=true contradict each other")
        if declared:
            options["decode_tool_arguments"] = False
    elif declared and "decode_tool_arguments" not in options:
        options["decode_tool_arguments"] = True


def make_job(args: argparse.Namespace, fmt: ChatFormat) -> RecordRenderer | RecordParser:
    """The record renderer or parser of the run; :class:`UsageError` for a run-wide setting the format refuses."""
    if args.command == "render":
        options = _options(args.option, fmt.option_specs, args.template_option_values)
        if args.strict:  # every format declares it: refuse a record the template would lose part of
            options["strict"] = True
        _serving_default(fmt, options, args.keep_tool_arguments)
        generation = args.add_generation_prompt
        try:
            fmt.check_options(options)
        except FormatError as exc:
            raise UsageError(str(exc)) from None
        if args.spans or args.tokenizer is not None:
            return _spans_job(args, fmt, options, generation)
        _check_render_settings(fmt, options, generation, _settings(options, args.option, generation))
        return RecordRenderer(fmt, generation, options, strict_keys=args.strict_keys,
                              template_option_values=args.template_option_values)
    options = _options(args.option, fmt.parse_option_specs, args.template_option_values)
    if not fmt.parses:
        raise UsageError(f"format {fmt.name!r} has no reply parser")
    try:
        fmt.stream_parser(**options)  # a parser is made with the options: a bad one fails here
    except FormatError as exc:
        raise UsageError(f"{_settings(options, args.option, None)}: {exc}") from None
    return RecordParser(fmt, options, strict_keys=args.strict_keys, template_option_values=args.template_option_values)


def _spans_job(args: argparse.Namespace, fmt: ChatFormat, options: dict[str, Any], generation: Any) -> SpansRenderer:
    """The renderer of ``--spans`` / ``--tokenizer``: the format and the tokenizer are checked here, once."""
    from .spans import SpansRenderer, check_spans_format  # the spans and tokenizer machinery: only for them

    check_spans_format(fmt)
    _check_render_settings(fmt, options, generation, _settings(options, args.option, generation))
    job = SpansRenderer(fmt, generation, options, strict_keys=args.strict_keys,
                        template_option_values=args.template_option_values, tokenizer_path=args.tokenizer)
    # Loaded now for a clear usage error before any input is read; kept for a run in this process
    # (a worker process loads its own: the loaded tokenizer is not pickled).
    job.tokenizer()
    return job
