"""Render and parse a Ray Dataset of JSON records with ``map_batches``: the CLI's job on a cluster.

Each row holds one record as JSON text in ``column``, exactly as ``ray.data.read_text("x.jsonl")``
gives a JSONL file (column ``"text"``); the record shapes are those of the command-line tool
(:mod:`prompt_formats.records`). The result is the same dataset with two columns added:

- ``prompt`` (``render_dataset``) or ``message`` (``parse_dataset``, the OpenAI assistant message as
  JSON text), ``None`` where the record failed;
- ``error``: ``None``, or ``"<ExceptionClass>: <message>"`` for a record that failed. No record is
  dropped: filter on ``error`` to split the good from the bad.

A row gets what the command gives the same line, by the command's own per-record work
(:meth:`~prompt_formats.records.RecordRenderer.process_range`): the same reading (strict JSON,
integers beyond 64 bits exact, UTF-8 checked), a toolset repeated byte for byte recognised by its
bytes, the same error messages. A batch's texts are read from the column's Arrow buffers as one block
of bytes, not converted row by row; the column holds strings or binaries (a view or dictionary column
is cast to one). A null row fails with ``ValueError: <column>: null``. A record without an id is
numbered by its row in the batch, from 1 (as the command numbers it by its line).

Records stay JSON text on purpose. Ray stores nested Python values as Arrow structs, and Arrow gives
every struct in a column the union of all their keys, filling the missing ones with ``null``: a tool
call's arguments would gain ``null`` parameters from other rows' calls, and the prompt would change.
JSON text keeps each record exactly as it was written.

Prompts are the same bytes as :meth:`~prompt_formats.format.chat_format.ChatFormat.render` (and so
:meth:`~prompt_formats.format.chat_format.ChatFormat.render_batch`) gives for the same messages, tools and options.
Requires ``ray[data]`` (the ``ray`` extra: ``pip install 'prompt-formats[ray]'``).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from typing import Any

import orjson

from .._text.tojson import compact_json
from ..errors import InvalidInputError
from ..format.registry import get_format
from ..records import RecordParser, RecordRenderer
from ..records.jsonl import has_long_digit_run

# Ray and pyarrow are optional: their types are named in the docstrings, and are ``Any`` to mypy so
# that the package type-checks without them.
Dataset = Any
Table = Any

__all__ = ["parse_dataset", "render_dataset"]

#: Rows per batch handed to a worker: enough to amortise the per-batch overhead of Ray.
BATCH_SIZE = 1024


def _frozen(mapping: Mapping[str, Any] | None) -> bytes:
    # A hashable, exact key for the worker-side cache (option values are JSON values).
    return orjson.dumps(dict(mapping or {}), option=orjson.OPT_SORT_KEYS)


@functools.lru_cache(maxsize=16)
def _renderer(name: str, config: bytes, add_generation_prompt: Any, options: bytes) -> RecordRenderer:
    # One per worker process and run settings, so its toolset cache lasts across batches.
    return RecordRenderer(get_format(name, **orjson.loads(config)), add_generation_prompt, orjson.loads(options))


@functools.lru_cache(maxsize=16)
def _parser(name: str, config: bytes, context: bytes) -> RecordParser:
    return RecordParser(get_format(name, **orjson.loads(config)), orjson.loads(context))


def _text_chunks(pa: Any, table: Table, column: str) -> list[Any]:
    """The chunks of ``column``: arrays of strings or binaries laid out as offsets into one data buffer
    (``string``, ``large_string``, ``binary``, ``large_binary``; a view or dictionary column is cast
    to one), or of ``null`` type (every row null). Raises for a missing column or another type."""
    if column not in table.column_names:
        raise KeyError(f"prompt_formats: the dataset has no column {column!r} (columns: {table.column_names})")
    chunked = table.column(column)
    kind = chunked.type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
        chunked = chunked.cast(kind)
    if str(kind) in ("string_view", "binary_view"):
        kind = pa.large_string() if str(kind) == "string_view" else pa.large_binary()
        chunked = chunked.cast(kind)
    if kind not in (pa.string(), pa.large_string(), pa.binary(), pa.large_binary(), pa.null()):
        raise TypeError(f"prompt_formats: column {column!r} holds {kind}, not JSON text (strings)")
    chunks: list[Any] = chunked.chunks
    return chunks


def _block(pa: Any, chunk: Any) -> tuple[bytes, list[int]]:
    """The texts of ``chunk`` (not of ``null`` type) as one block of bytes, and the ``len(chunk) + 1``
    offsets in it where they start and end: the chunk's own buffers, copied once, not row by row."""
    _, offsets_buffer, data = chunk.buffers()
    large = chunk.type in (pa.large_string(), pa.large_binary())
    # Offsets are 32-bit integers (64-bit for the large types) in the machine's byte order, as cast reads them.
    offsets: list[int] = memoryview(offsets_buffer).cast("q" if large else "i")[
        chunk.offset:chunk.offset + len(chunk) + 1].tolist()
    first = offsets[0]
    block = b"" if data is None else memoryview(data)[first:offsets[-1]].tobytes()
    if first:
        offsets = [offset - first for offset in offsets]
    return block, offsets


def _field_text(field: str, result: dict[str, Any]) -> str:
    value = result[field]
    return value if isinstance(value, str) else compact_json(value)


def _run(
    table: Table, column: str, job: RecordRenderer | RecordParser, out_column: str, field: str
) -> Table:
    """``table`` with ``out_column`` and ``error`` added: each row's record handled by the command's own
    per-record work (:meth:`~prompt_formats.records.RecordRenderer.process_range`), numbered by its
    row in the batch from 1; a null row fails as ``ValueError: <column>: null``."""
    pa: Any = importlib.import_module("pyarrow")
    values: list[str | None] = []
    errors: list[str | None] = []
    finish = functools.partial(_field_text, field)
    process = job.process_range
    null = _row_error(ValueError(f"{column}: null"))
    line = 1
    for chunk in _text_chunks(pa, table, column):
        size = len(chunk)
        if chunk.null_count == size:  # also a column of null type, which has no offsets
            values += [None] * size
            errors += [null] * size
            line += size
            continue
        block, offsets = _block(pa, chunk)
        valid = chunk.is_valid().to_pylist() if chunk.null_count else None
        long_digits = has_long_digit_run(block)
        for i in range(size):
            if valid is not None and not valid[i]:
                values.append(None)
                errors.append(null)
            else:
                # One record never fails the dataset: process_range returns its exception, reported in its row.
                ok, value = process(block, offsets[i], offsets[i + 1], line + i, long_digits, finish)
                values.append(value if ok else None)
                errors.append(None if ok else _row_error(value[1]))
        line += size
    table = table.append_column(out_column, _string_column(pa, values, errors, field))
    return table.append_column("error", pa.array(errors, type=pa.large_string()))


def _row_error(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


def _string_column(pa: Any, values: list[str | None], errors: list[str | None], field: str) -> Any:
    """``values`` as an Arrow column of strings; a row whose value Arrow cannot hold is reported in ``errors``.

    An Arrow string is UTF-8, which cannot hold a lone surrogate (from a ``"\\ud800"`` escape in the
    record): Arrow then refuses the whole column, so only then are the values checked one by one
    (encoding each to UTF-8 costs as much again as Arrow's own conversion), and such a row is
    reported rather than the batch failing.
    """
    try:
        return pa.array(values, type=pa.large_string())
    except UnicodeEncodeError:
        pass
    for row, value in enumerate(values):
        if value is None:
            continue
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            values[row] = None
            errors[row] = _row_error(
                InvalidInputError(field, "holds a lone surrogate, which a column of UTF-8 strings cannot hold")
            )
    return pa.array(values, type=pa.large_string())


def _render_batch(
    table: Table, *, name: str, config: bytes, column: str, add_generation_prompt: Any, options: bytes
) -> Table:
    return _run(table, column, _renderer(name, config, add_generation_prompt, options), "prompt", "prompt")


def _parse_batch(table: Table, *, name: str, config: bytes, column: str, context: bytes) -> Table:
    return _run(table, column, _parser(name, config, context), "message", "message")


def render_dataset(
    dataset: Dataset,
    format: str,
    *,
    column: str = "text",
    add_generation_prompt: bool | None = None,
    options: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
    batch_size: int = BATCH_SIZE,
) -> Dataset:
    """``dataset`` with ``prompt`` and ``error`` columns added; the rendering runs lazily, in Ray's workers.

    ``format`` is a registered name (``config`` configures it, as :func:`~prompt_formats.get_format`
    does); ``add_generation_prompt`` and ``options`` apply to every record that does not set them.
    Unknown options and format names raise here, before any work is scheduled.
    """
    RecordRenderer(get_format(format, **dict(config or {})), add_generation_prompt, options)
    return dataset.map_batches(
        _render_batch,
        batch_format="pyarrow",
        batch_size=batch_size,
        fn_kwargs={
            "name": format, "config": _frozen(config), "column": column,
            "add_generation_prompt": add_generation_prompt, "options": _frozen(options),
        },
    )


def parse_dataset(
    dataset: Dataset,
    format: str,
    *,
    column: str = "text",
    context: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
    batch_size: int = BATCH_SIZE,
) -> Dataset:
    """``dataset`` with ``message`` (the OpenAI assistant message as JSON text) and ``error`` columns added.

    ``context`` holds parse options for every record that does not set them.
    """
    fmt = get_format(format, **dict(config or {}))
    RecordParser(fmt, context)
    if not fmt.parses:
        raise NotImplementedError(f"format {fmt.name!r} has no reply parser")
    return dataset.map_batches(
        _parse_batch,
        batch_format="pyarrow",
        batch_size=batch_size,
        fn_kwargs={"name": format, "config": _frozen(config), "column": column, "context": _frozen(context)},
    )
