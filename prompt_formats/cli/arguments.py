"""The command line's arguments (``prompt-formats --help``): one function per group, so that a new
argument is one line in the group it belongs to."""

from __future__ import annotations

import argparse

from .. import __version__
from .settings import key_text

__all__ = ["BLOCK_SIZE", "build_parser"]

#: Bytes of input per unit of work: large enough that inter-process overhead per record is small.
BLOCK_SIZE = 1 << 20


#: The largest ``--block-size`` (1 GiB): a block is held in memory whole, and read as one buffer.
MAX_BLOCK_SIZE = 1 << 30
#: The most processes ``-j`` starts: far beyond any machine's cores, within what the process pool takes.
MAX_WORKERS = 4096


def _count(text: str, least: int, most: int) -> int:
    """``text`` as an integer from ``least`` to ``most``, or the usage error saying which bound it crosses."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"expected {least} or more, got {value}")
    if value > most:
        raise argparse.ArgumentTypeError(f"expected at most {most:,}, got {value:,}")
    return value


def _workers(text: str) -> int:
    return _count(text, 0, MAX_WORKERS)


def _block_size(text: str) -> int:
    return _count(text, 1, MAX_BLOCK_SIZE)


def _add_render_arguments(render: argparse.ArgumentParser) -> None:
    """The arguments only ``render`` takes."""
    generation = render.add_mutually_exclusive_group()
    generation.add_argument("--add-generation-prompt", dest="add_generation_prompt", action="store_const",
                            const=True, default=None, help="end each prompt with the assistant turn's opening")
    generation.add_argument("--no-add-generation-prompt", dest="add_generation_prompt", action="store_const",
                            const=False, help="explicitly no generation prompt (default: the format's default)")
    render.add_argument("--keep-tool-arguments", action="store_true",
                        help="render a tool call's JSON-string arguments as the template's string branch "
                        "(default: decoded first, as OpenAI-compatible servers do: decode_tool_arguments=true)")
    render.add_argument("--spans", action="store_true",
                        help="add each prompt's generated ranges and each message's ranges (render_spans)")
    render.add_argument("--tokenizer", metavar="PATH",
                        help="a tokenizer.json, a model directory (tokenizer.json and tokenizer_config.json) or a "
                        "Hub model name: add input_ids and assistant_masks (implies --spans; needs the tokenizers "
                        "package); a model's chat_template chooses the format when --format is not given")


def build_parser() -> argparse.ArgumentParser:
    """The command line parser (``prompt-formats --help``)."""
    parser = argparse.ArgumentParser(
        prog="prompt-formats",
        description="Render chat requests to prompts and parse completions, byte-identical to the models' "
        "chat templates. Input and output are JSON Lines; '-' is standard input or output.",
        epilog="Exit status: 0 every record succeeded; 1 some records failed (reported, the rest written); "
        "2 usage error or the run could not be carried out; 130 interrupted; 128 + N stopped by signal N "
        "(143 SIGTERM, 129 SIGHUP); 141 the reader of the output went away (| head).",
    )
    parser.add_argument("--version", action="version", version=f"prompt-formats {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add_run_arguments(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--format", "-f", metavar="NAME",
                         help="the format (see 'formats'); required, but for render with a model's --tokenizer")
        sub.add_argument("input", nargs="?", default="-", metavar="INPUT", help="JSONL input file (default: -)")
        sub.add_argument("-o", "--output", default="-", metavar="FILE", help="JSONL output file (default: -)")
        sub.add_argument("--errors", metavar="FILE",
                         help="write an error record per failed record to FILE (JSONL) instead of standard error")
        sub.add_argument("--fail-fast", action="store_true",
                         help="stop at the first failed record; no output file is written")
        sub.add_argument("--workers", "-j", type=_workers, default=1, metavar="N",
                         help="processes that render: this one and N - 1 workers (default 1: this one; 0: one per CPU)")
        sub.add_argument("--block-size", type=_block_size, default=BLOCK_SIZE, metavar="BYTES",
                         help=f"input sent to a worker at a time, in whole lines (default {BLOCK_SIZE}, "
                         f"at most {MAX_BLOCK_SIZE})")
        sub.add_argument("--option", action="append", type=key_text, metavar="KEY=VALUE",
                         help="a format option for every record (records may override it); repeatable")
        sub.add_argument("--config", action="append", type=key_text, metavar="KEY=VALUE",
                         help="configure the format object itself (for example a guard policy); repeatable")
        sub.add_argument("--strict-keys", action="store_true",
                         help="refuse every record key that is not read (by default keys that do not change the "
                         "prompt, such as temperature or stream, are ignored)")
        sub.add_argument("--template-option-values", action="store_true",
                         help="pass an option value of a kind the option does not take (\"enable_thinking\": \"no\" "
                         "or 0) to the template, which reads it by its truth; by default it fails the record "
                         "(an --option value: the run)")
        sub.add_argument("--strict", action="store_true",
                         help="render: fail a record the template would leave part of out of the prompt (the "
                         "format's strict option: a dropped message or field), naming the field")
        sub.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                         help="progress line on standard error (auto: when it is a terminal)")
        sub.add_argument("--quiet", "-q", action="store_true", help="no progress line and no summary")

    render = commands.add_parser("render", help="render chat requests to prompts",
                                 description="Render chat requests ({'messages', 'tools', options}) to prompts "
                                 "({'id', 'prompt'}).")
    add_run_arguments(render)
    _add_render_arguments(render)

    parse = commands.add_parser("parse", help="parse completions to OpenAI assistant messages",
                                description="Parse completions ({'completion', 'tools'}) to OpenAI assistant "
                                "messages ({'id', 'message'}).")
    add_run_arguments(parse)

    formats = commands.add_parser("formats", help="list the formats and their options")
    formats.add_argument("--json", action="store_true", help="as JSON")
    return parser
