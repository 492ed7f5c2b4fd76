"""``prompt-formats render --spans`` and ``--tokenizer PATH``: training data from the command.

With ``--spans`` each output record also has ``generated``, the ``[start, end]`` character ranges
the model generates, and ``messages``, per input message the ``[start, end]`` ranges it produced:
the format's ``render_spans`` of the record, read exactly as a plain render reads it (its options
too: a ChatML record's ``continue_final_message`` cuts the prompt and its ranges where the prompt
ends, docs/training-data.md). With
``--tokenizer PATH`` (a local ``tokenizer.json``, read by the optional ``tokenizers`` package) it
also has ``input_ids`` and ``assistant_masks``: exactly what
:func:`prompt_formats.integrations.transformers.encode_with_tokenizer` gives, by one
:class:`~prompt_formats.integrations.segments.SegmentEncoder` per process (its cache shared by the
process's records; it steps aside to that call where its cached path is not exact for the tokenizer).
Each worker process loads the tokenizer once, at its first record: the job carries only the path,
so it stays picklable.
"""

from __future__ import annotations

import codecs
from typing import Any

from ..errors import FormatError, type_name
from ..format.chat_format import ChatFormat
from ..format.spans import RenderedPrompt
from ..records import RecordRenderer
from .files import UsageError

__all__ = ["SpansRenderer", "check_spans_format", "load_tokenizer"]


def check_spans_format(fmt: ChatFormat) -> None:
    """Raise :class:`UsageError` unless the format declares ``render_spans``."""
    if not fmt.renders_spans:
        raise UsageError(f"format {fmt.name!r} has no render_spans: --spans and --tokenizer are not available for it")


def load_tokenizer(path: str) -> Any:
    """The ``tokenizers.Tokenizer`` of a ``tokenizer.json``, with truncation and padding off (as
    ``encode`` calls it); :class:`UsageError` when the package is missing or the file cannot be loaded."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise UsageError(
            "--tokenizer needs the optional 'tokenizers' package (pip install tokenizers)"
        ) from None
    try:
        tokenizer = _with_bom(path, Tokenizer) or Tokenizer.from_file(path)
    except Exception as exc:  # the library raises a bare Exception for a missing or malformed file
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UsageError(f"--tokenizer {path}: cannot load it as a tokenizer.json: {reason}") from None
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def _with_bom(path: str, tokenizer_class: Any) -> Any:
    """The tokenizer of a file that begins with a UTF-8 byte-order mark, read without it (the library
    refuses the mark, which is no part of the JSON); ``None`` for any other file, left to the library."""
    try:
        with open(path, "rb") as stream:
            if stream.read(len(codecs.BOM_UTF8)) != codecs.BOM_UTF8:
                return None
            text = stream.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # the library's own reading says what is wrong
    return tokenizer_class.from_str(text)


class SpansRenderer(RecordRenderer):
    """A :class:`RecordRenderer` whose output records add the spans (and token ids and masks when
    ``tokenizer_path`` is given) of each prompt. Picklable: the tokenizer is loaded lazily, once per process."""

    def __init__(self, fmt: ChatFormat, *args: Any, tokenizer_path: str | None = None, **kwargs: Any) -> None:
        """``RecordRenderer``'s arguments, and ``tokenizer_path``, the ``tokenizer.json`` to encode with."""
        check_spans_format(fmt)
        super().__init__(fmt, *args, **kwargs)
        self.tokenizer_path = tokenizer_path
        self._tokenizer: Any = None
        self._encoder: Any = None

    def __getstate__(self) -> tuple[Any, ...]:
        return (*super().__getstate__(), self.tokenizer_path)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        *args, strict_keys, template_values, tokenizer_path = state
        self.__init__(*args, strict_keys=strict_keys, template_option_values=template_values,  # type: ignore[misc]
                      tokenizer_path=tokenizer_path)

    def tokenizer(self) -> Any:
        """The tokenizer of ``tokenizer_path``, loaded at the first call in this process."""
        if self._tokenizer is None and self.tokenizer_path is not None:
            self._tokenizer = load_tokenizer(self.tokenizer_path)
        return self._tokenizer

    def encoder(self) -> Any:
        """This process's ``SegmentEncoder`` of :meth:`tokenizer`, made at the first call."""
        if self._encoder is None:
            from ..integrations.segments import SegmentEncoder  # the regex-built matchers: only with --tokenizer

            self._encoder = SegmentEncoder(self.tokenizer())
        return self._encoder

    def handle(self, record: Any, line: int) -> dict[str, Any]:
        """``{"id", "prompt", "generated", "messages"}`` (plus ``input_ids`` and ``assistant_masks``
        with a tokenizer) of one decoded record."""
        record_id, rendered = self.render_request_with(record, line, self.fmt.render_spans)
        if not isinstance(rendered, RenderedPrompt):
            raise FormatError(
                f"format {self.fmt.name!r}: render_spans returned {type_name(rendered)}, not a RenderedPrompt"
            )
        out: dict[str, Any] = {
            "id": record_id,
            "prompt": rendered.text,
            "generated": rendered.generated,
            "messages": rendered.messages,
        }
        if self.tokenizer_path is not None:
            encoded = self.encoder().encode(rendered)
            out["input_ids"] = encoded["input_ids"]
            out["assistant_masks"] = encoded["assistant_masks"]
        return out
