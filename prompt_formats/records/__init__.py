"""JSON records in, JSON records out: the shape the command-line tool and the Ray integration share.

A *render record* is one chat request, as a client sends it to an OpenAI-compatible server::

    {"id": "req-1", "messages": [...], "tools": [...], "enable_thinking": false}

- ``messages`` (required: a completion request's ``prompt`` is not one) and ``tools`` (optional,
  a list or ``null``) as in the OpenAI API;
- format options (``fmt.options``: ``enable_thinking``, ``reasoning_effort``, ...) either at the top
  level or inside ``chat_template_kwargs`` (as vLLM and SGLang accept them), not both for one option;
  they override the options given for the whole run; each of a kind the option takes, unless
  ``template_option_values`` (see :mod:`prompt_formats.records.option_values`);
- ``add_generation_prompt`` (optional bool) overrides the run's setting for this record;
- ``id`` or ``custom_id`` (a string or an integer) names the record in the output and the error
  report; without one, the record is named by its 1-based line number;
- keys that do not change the prompt (sampling and transport: ``model``, ``temperature``,
  ``max_tokens``, ``stream``, ``tool_choice``, ... see :data:`IGNORED_REQUEST_KEYS`) are ignored,
  unless ``strict_keys``; keys that would change it and that no format honours (``functions``, ...)
  fail the record; ``extra_body``'s keys are read as top-level keys (see :mod:`prompt_formats.records.request_keys`);
- any other key is an error (a misspelt option would otherwise be silently ignored).

A line of an OpenAI Batch API input file, ``{"custom_id": ..., "method": ..., "url": ..., "body":
{request}}``, is read as its ``body`` named by its ``custom_id``.

The output record is ``{"id": <id>, "prompt": <text>}``.

A *parse record* is ``{"id": ..., "completion": "<text the model generated>", "tools": [...]}`` plus
the format's parse options; ``prompt`` and ``messages`` (a rendered record with the completion added)
and the ignored request keys are allowed and ignored. The output record is ``{"id": <id>,
"message": <OpenAI assistant message>}``, with ``"malformed": [...]`` added when the parser found
structure it could not read as the format says (that text is kept in the message content or the call
a note names), and ``"notes": [...]`` when it read something worth knowing (a call in ChatML's JSON
form, a call to a tool not offered): ``reply.malformed`` and ``reply.notes``.

A record that cannot be rendered or parsed gives an *error record* instead:
``{"line": <line number>, "id": <id or null>, "error": <exception class>, "message": <text>}``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import orjson

from ..errors import InjectionError, InvalidInputError
from .jsonl import decode_record, has_long_digit_run, json_type, record_id_at, refuse, unwrap_record
from .option_values import check_kinds, merge_kwargs, within
from .request_keys import IGNORED_REQUEST_KEYS, REFUSED_REQUEST_KEYS, merge_extra_body
from .toolsets import KnownToolset, RawToolsets

if TYPE_CHECKING:
    from ..format.chat_format import ChatFormat
    from ..model.messages import AssistantReply

__all__ = [
    "IGNORED_REQUEST_KEYS",
    "BlockResult",
    "RecordParser",
    "RecordRenderer",
    "call_ids",
    "decode_record",
    "error_record",
]

_Rendered = TypeVar("_Rendered")
_WHITESPACE = frozenset(b" \t\r\n\x0b\x0c")
#: Toolsets kept prepared per worker: a corpus usually offers a handful of distinct toolsets.
TOOLS_CACHE_SIZE = 64

_NOT_CHAT = "missing (this command reads chat requests; a completion request's prompt is not one)"
# How a render record's top-level key is read.
_ID, _MESSAGES, _TOOLS, _GENERATION, _KWARGS, _IGNORED, _OPTION, _REFUSED, _STRICT = range(9)


def error_record(line: int, record_id: Any, error: BaseException) -> dict[str, Any]:
    """The error report of one record: line number, id (``None`` if unknown), exception class and message."""
    return {"line": line, "id": record_id, "error": type(error).__name__, "message": str(error)}


def _encode(record: Mapping[str, Any]) -> bytes:
    try:
        return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        # What orjson cannot write, a string with a lone surrogate or an integer beyond 64 bits, the
        # standard library writes exactly: as ASCII JSON, the surrogate as its \u escape (and never
        # NaN, which is not JSON: such a record fails instead).
        return json.dumps(record, allow_nan=False).encode("ascii") + b"\n"


class _RecordJob:
    """Shared by the renderer and the parser: decode a line, run, encode a result or an error report."""

    _tools: RawToolsets

    def handle(self, record: Any, line: int) -> dict[str, Any]:
        raise NotImplementedError

    def process_line(self, line: int, data: bytes | memoryview, long_digits: bool = True) -> tuple[bool, bytes]:
        """``(True, output line)`` or ``(False, error line)`` for one input line (JSON text, no newline needed).

        Never raises for a bad record: any exception while handling it, even an unexpected one,
        becomes its error line, so one record never stops a run. ``long_digits=False`` tells that
        ``data`` has no run of 19 digits (no integer beyond 64 bits), which spares the check.
        """
        try:
            record = decode_record(data, long_digits, line)
        except InvalidInputError as exc:
            return False, _encode(error_record(line, None, exc))
        ok, value = self._handled(record, line, _encode)
        return (True, value) if ok else (False, _encode(error_record(line, *value)))

    def _handled(self, record: Any, line: int, finish: Callable[[dict[str, Any]], Any]) -> tuple[bool, Any]:
        try:
            return True, finish(self.handle(record, line))
        except Exception as exc:
            return False, (_id_of(record), exc)

    def process_range(
        self, block: bytes, start: int, end: int, line: int, long_digits: bool,
        finish: Callable[[dict[str, Any]], Any] = _encode,
    ) -> tuple[bool, Any]:
        """The command's work on the record ``block[start:end]`` (JSON text), numbered ``line``:
        ``(True, finish(output record))``, or ``(False, (id or None, exception))`` when it failed.

        The record is read as :func:`decode_record` reads it (``long_digits=False`` tells that the range
        has no run of 19 digits), its toolset recognised by its bytes when it repeats an earlier
        record's (:mod:`prompt_formats.records.toolsets`): the same result. Never raises for a bad
        record: any exception while handling it or in ``finish``, even an unexpected one, is returned.
        The command's blocks (``finish`` encodes the output line) and the Ray integration's batches
        (``finish`` takes the prompt or message) both go through here.
        """
        tools = self._tools
        record = tools.decode_known(block, start, end, long_digits)
        if record is None:
            try:
                record = decode_record(memoryview(block)[start:end], long_digits, line)
            except InvalidInputError as exc:
                return False, (None, exc)
            holder = _tools_holder(record)
            if holder is not None:
                holder["tools"] = KnownToolset(tools.learn(block, start, end, holder["tools"]))
        return self._handled(record, line, finish)

    def process_block(self, first_line: int, block: bytes) -> BlockResult:
        """Process every non-blank line of ``block`` (whole lines of JSONL; the first is ``first_line``).

        Memory: each encoded line is copied into the block's output (or reports) and freed at once,
        so what stays alive is proportional to the block's output, not to its number of records (a
        small encoded line is allocated far larger than its length).
        """
        output = bytearray()
        reports = bytearray()
        failed = 0
        cut = before_error = -1
        process = self.process_range
        records = 0
        # Lines are decoded from views of the block: splitting it into copies first costs more than
        # the copying itself (the decoder then reads memory that has left the cache).
        find = block.find
        start = 0
        number = first_line
        size = len(block)
        long_digits = has_long_digit_run(block)
        while start < size:
            end = find(b"\n", start)
            if end < 0:
                end = size
            if end > start and (block[start] not in _WHITESPACE or not block[start:end].isspace()):
                records += 1
                ok, value = process(block, start, end, number, long_digits)
                if ok:
                    output += value
                else:
                    if cut < 0:
                        cut, before_error = records - 1, len(output)
                    reports += _encode(error_record(number, *value))
                    failed += 1
            start = end + 1
            number += 1
        return BlockResult(records, bytes(output), bytes(reports), failed, before_error, cut)

    def _toolset(self, tools: Any, prefix: str) -> Any:
        """The toolset a record's ``tools`` (not ``None``) is rendered or parsed with."""
        if type(tools) is KnownToolset:
            return tools.toolset
        if not isinstance(tools, list):
            raise InvalidInputError(prefix + "tools", f"expected an array or null, got {json_type(tools)}")
        return self._tools.get(tools) if tools else None

    def __call__(self, chunk: list[tuple[int, bytes]]) -> list[BlockResult]:
        """:meth:`process_block` for each ``(first line number, block)`` of ``chunk``: a job for
        :func:`~prompt_formats.format.batch.ordered_map`."""
        return [self.process_block(first_line, block) for first_line, block in chunk]


class BlockResult(NamedTuple):
    """What became of a block of lines: records seen, output lines, error lines, in order.

    ``errors`` holds ``failed`` error lines, each ending with a newline (JSON lines: no other
    newline). ``before_error`` is the length of ``output`` written before the first failed record, and
    ``first_error`` that record's position among the block's records (both -1: none failed).
    """

    records: int
    output: bytes
    errors: bytes
    failed: int
    before_error: int
    first_error: int


def _tools_holder(record: Any) -> dict[str, Any] | None:
    """The dict holding a record's non-empty ``tools`` list: the record, or its Batch API ``body``."""
    if type(record) is not dict:
        return None
    holder = record
    if "tools" not in record:
        body = record.get("body")
        if type(body) is not dict:
            return None
        holder = body
    tools = holder.get("tools")
    return holder if type(tools) is list and tools else None


def _id_of(record: Any) -> Any:
    """The record's id for an error report, when it has a readable one."""
    if not isinstance(record, Mapping):
        return None
    for key in ("id", "custom_id"):
        value = record.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return value
    return None


class RecordRenderer(_RecordJob):
    """Turns render records into ``{"id", "prompt"}`` records with one format (see the module docstring).

    ``add_generation_prompt`` and ``options`` apply to every record that does not set them itself.
    Picklable (the toolset cache is not carried over); one instance per thread.
    """

    def __init__(
        self,
        fmt: ChatFormat,
        add_generation_prompt: Any = None,
        options: Mapping[str, Any] | None = None,
        tools_cache_size: int = TOOLS_CACHE_SIZE,
        *,
        strict_keys: bool = False,
        template_option_values: bool = False,
    ) -> None:
        self.fmt = fmt
        self.add_generation_prompt = add_generation_prompt
        self.template_option_values = template_option_values
        self._specs = {} if template_option_values else {spec.name: spec for spec in fmt.option_specs}
        self.options = dict(options or {})
        fmt.check_options(self.options)
        self.tools_cache_size = tools_cache_size
        self.strict_keys = strict_keys
        self._tools = RawToolsets(tools_cache_size)
        kinds = {"id": _ID, "custom_id": _ID, "messages": _MESSAGES, "tools": _TOOLS,
                 "add_generation_prompt": _GENERATION, "chat_template_kwargs": _KWARGS}
        kinds.update(dict.fromkeys(IGNORED_REQUEST_KEYS, _STRICT if strict_keys else _IGNORED))
        kinds.update(dict.fromkeys(REFUSED_REQUEST_KEYS, _REFUSED))
        kinds.update(dict.fromkeys(fmt.options, _OPTION))
        self._kinds = kinds

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.fmt, self.add_generation_prompt, self.options, self.tools_cache_size, self.strict_keys,
                self.template_option_values)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        *args, strict_keys, template_values = state
        self.__init__(*args, strict_keys=strict_keys, template_option_values=template_values)  # type: ignore[misc]

    def render_request(self, record: Any, line: int) -> tuple[Any, str]:
        """``(id, prompt)`` for one decoded record; raises a :class:`FormatError` naming the bad field."""
        return self.render_request_with(record, line, self.fmt.render)

    def render_request_with(self, record: Any, line: int, render: Callable[..., _Rendered]) -> tuple[Any, _Rendered]:
        """``(id, render(messages, tools, add_generation_prompt, **options))`` for one decoded record,
        read exactly as :meth:`render_request` reads it (``render`` is ``fmt.render`` or ``fmt.render_spans``)."""
        request, prefix, record_id = unwrap_record(record)
        if "extra_body" in request:
            request = merge_extra_body(request, prefix)
        messages: Any = None
        tools: Any = None
        add_generation_prompt = self.add_generation_prompt
        options = self.options
        own_options: dict[str, Any] | None = None
        kwargs: Any = None
        kinds = self._kinds
        for key, value in request.items():
            kind = kinds.get(key)
            if kind == _MESSAGES:
                messages = value
            elif kind == _TOOLS:
                tools = value
            elif kind == _OPTION:
                if own_options is None:
                    own_options = {}
                own_options[key] = value
            elif kind == _ID:
                if record_id is None:
                    record_id = record_id_at(request, key, prefix)
            elif kind == _GENERATION:
                if value is not None and not isinstance(value, bool):
                    raise InvalidInputError(prefix + key, f"expected a boolean, got {json_type(value)}")
                add_generation_prompt = value
            elif kind == _KWARGS:
                kwargs = value
            elif kind in (_REFUSED, _STRICT):
                refuse(kind == _STRICT, key, value, prefix)
            elif kind is None:
                if key == "prompt" and "messages" not in request:
                    raise InvalidInputError(prefix + "messages", _NOT_CHAT)
                known = ", ".join(sorted(self.fmt.options)) or "none"
                raise InvalidInputError(
                    prefix + key,
                    f"unknown key: not a chat request key the template reads, nor an option of format "
                    f"{self.fmt.name!r} (options: {known})",
                )
        if "messages" not in request:
            raise InvalidInputError(prefix + "messages", "missing")
        if kwargs is not None:
            if own_options is None:
                own_options = {}
            merge_kwargs(own_options, kwargs, prefix)
        if own_options:
            check_kinds(own_options, self._specs, prefix, kwargs)
            options = {**options, **own_options}
        if tools is not None:
            tools = self._toolset(tools, prefix)
        if record_id is None:
            record_id = line
        try:
            return record_id, render(messages, tools, add_generation_prompt, **options)
        except (InvalidInputError, InjectionError) as error:
            raise within(prefix, error) from None

    def handle(self, record: Any, line: int) -> dict[str, Any]:
        """The output record ``{"id", "prompt"}`` of one decoded record."""
        record_id, prompt = self.render_request(record, line)
        return {"id": record_id, "prompt": prompt}


def call_ids(record_id: Any) -> Callable[[], str]:
    """Tool-call ids for one parsed record: ``call_`` and 24 hex digits, derived from the record's id.

    The same record always gets the same ids, in every run and worker; different records get
    different ones (the digest of the id's JSON text and the call's position).
    """
    import hashlib  # only the parser needs it

    seed = orjson.dumps(record_id)
    position = itertools.count()

    def next_id() -> str:
        digest = hashlib.blake2b(seed + b"\x00" + str(next(position)).encode(), digest_size=12)
        return "call_" + digest.hexdigest()

    return next_id


class RecordParser(_RecordJob):
    """Turns parse records into ``{"id", "message"}`` records with one format (see the module docstring).

    ``context`` (parse options) applies to every record that does not set them itself. Tool-call ids
    are derived from the record's id (:func:`call_ids`), so the output is the same in every run.
    Picklable.
    """

    _PASSTHROUGH = frozenset({"prompt", "messages", "add_generation_prompt"})

    def __init__(
        self,
        fmt: ChatFormat,
        context: Mapping[str, Any] | None = None,
        tools_cache_size: int = TOOLS_CACHE_SIZE,
        *,
        strict_keys: bool = False,
        template_option_values: bool = False,
    ) -> None:
        self.fmt = fmt
        self.context = dict(context or {})
        self.template_option_values = template_option_values
        self._specs = {} if template_option_values else {spec.name: spec for spec in fmt.parse_option_specs}
        fmt.check_options(self.context, fmt.parse_options)
        self.tools_cache_size = tools_cache_size
        self.strict_keys = strict_keys
        self._passthrough = self._PASSTHROUGH if strict_keys else self._PASSTHROUGH | IGNORED_REQUEST_KEYS
        self._tools = RawToolsets(tools_cache_size)

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.fmt, self.context, self.tools_cache_size, self.strict_keys, self.template_option_values)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        *args, strict_keys, template_values = state
        self.__init__(*args, strict_keys=strict_keys, template_option_values=template_values)  # type: ignore[misc]

    def parse_request(self, record: Any, line: int) -> tuple[Any, AssistantReply]:
        """``(id, AssistantReply)`` for one decoded record; raises a :class:`FormatError` naming the bad field."""
        request, prefix, record_id = unwrap_record(record)
        if "extra_body" in request:
            request = merge_extra_body(request, prefix)
        context = self.context
        own: dict[str, Any] = {}
        kwargs: Any = None
        parse_options = self.fmt.parse_options
        for key, value in request.items():
            if key in ("id", "custom_id"):
                if record_id is None:
                    record_id = record_id_at(request, key, prefix)
            elif key in parse_options:
                own[key] = value
            elif key == "chat_template_kwargs":
                kwargs = value
            elif key in REFUSED_REQUEST_KEYS or (self.strict_keys and key in IGNORED_REQUEST_KEYS):
                refuse(key not in REFUSED_REQUEST_KEYS, key, value, prefix)
            elif key not in ("completion", "tools") and key not in self._passthrough:
                known = ", ".join(sorted(parse_options)) or "none"
                raise InvalidInputError(
                    prefix + key, f"unknown key: not completion, tools, id, nor a parse option of format "
                    f"{self.fmt.name!r} (parse options: {known})",
                )
        if "completion" not in request:
            raise InvalidInputError(prefix + "completion", "missing")
        completion = request["completion"]
        if not isinstance(completion, str):
            raise InvalidInputError(prefix + "completion", f"expected a string, got {json_type(completion)}")
        if kwargs is not None:
            merge_kwargs(own, kwargs, prefix)
        tools = request.get("tools")
        if tools is not None:
            tools = self._toolset(tools, prefix)
        if own:
            check_kinds(own, self._specs, prefix, kwargs)
            context = {**context, **own}
        if record_id is None:
            record_id = line
        try:
            return record_id, self.fmt.parse(completion, tools, id_factory=call_ids(record_id), **context)
        except (InvalidInputError, InjectionError) as error:
            raise within(prefix, error) from None

    def handle(self, record: Any, line: int) -> dict[str, Any]:
        """The output record ``{"id", "message"}`` (plus ``malformed`` and ``notes``, each when not empty)
        of one decoded record."""
        record_id, reply = self.parse_request(record, line)
        out: dict[str, Any] = {"id": record_id, "message": reply.to_openai()}
        if reply.malformed:
            out["malformed"] = list(reply.malformed)
        if reply.notes:
            out["notes"] = list(reply.notes)
        return out
