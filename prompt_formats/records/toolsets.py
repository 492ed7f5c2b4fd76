"""The command's toolsets recognised by their raw bytes: a repeated ``"tools"`` array is neither
decoded nor prepared again.

Records of one corpus repeat a few toolsets, byte for byte. The first record with a toolset's
content is decoded whole and its toolset prepared (:class:`~prompt_formats.model.tools.ToolsetCache`, by
content); from the second on, the array's exact bytes in the line are remembered. A later line
whose first ``"tools"`` key holds those very bytes is decoded with a placeholder string in their
place, and the placeholder is replaced by the prepared toolset.

Why a record gets exactly what decoding it whole would give it:

- A JSON array is never a prefix of another JSON text, so a line that holds the remembered bytes at
  a value position holds that array there, and it decodes to the content it decoded to before.
- The placeholder is a complete JSON value too: putting it in the array's place changes nothing
  else of the line's reading. It is a random string of letters chosen per process, so no line can
  carry it by chance or design, and its letters cannot make a run of digits. Only when the
  record's (or its Batch API ``body``'s) ``tools`` value is the placeholder did it replace the
  array the record is read with (not a nested object's ``tools``, nor a key given twice whose
  other value wins); anything else steps aside to the whole decode: the placeholder elsewhere, a
  line that does not decode with it (the whole line then decodes, or fails, as it always did), or
  a run of 19 digits in the rest of the line (read by the exact decoder).
- Bytes are remembered only when they decode, by orjson, to the content of the toolset they are
  remembered for (the first ``"tools"`` of a line may be a nested object's), and only without a
  19-digit run, so what they stand for is what orjson reads.
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import orjson

from .jsonl import has_long_digit_run

if TYPE_CHECKING:
    from ..model.tools import PreparedTools, ToolsetCache

__all__ = ["KnownToolset", "RawToolsets"]

_TOOLS_KEY = b'"tools"'
_JSON_SPACE = b" \t\r\n"
#: Bytes of an array's start that index it; an array must be longer to be remembered.
_FINGERPRINT = 64
_NONCE = "".join(chr(ord("a") + byte % 26) for byte in os.urandom(24))
_PLACEHOLDER = b'"' + _NONCE.encode("ascii") + b'"'


class KnownToolset:
    """A record's ``tools`` value recognised by its bytes: the toolset prepared for its content."""

    __slots__ = ("toolset",)

    def __init__(self, toolset: PreparedTools | list[Any]) -> None:
        self.toolset = toolset


def _value_start(block: bytes, start: int, end: int) -> int:
    """Where the value after the line's first bytes ``"tools"`` and a colon starts; -1 when there is none."""
    at = block.find(_TOOLS_KEY, start, end)
    if at < 0:
        return -1
    pos = at + len(_TOOLS_KEY)
    while pos < end and block[pos] in _JSON_SPACE:
        pos += 1
    if pos >= end or block[pos] != 0x3A:  # ":"
        return -1
    pos += 1
    while pos < end and block[pos] in _JSON_SPACE:
        pos += 1
    return pos


class RawToolsets:
    """A worker's toolsets by content (:class:`ToolsetCache`) and by raw bytes; bounded, one per job."""

    __slots__ = ("_by_prefix", "_raw", "_size", "by_content")

    def __init__(self, size: int) -> None:
        # Imported with the first job, not with the command: a run refused at its start never needs it.
        from ..model.tools import ToolsetCache

        self._size = size
        self.by_content: ToolsetCache = ToolsetCache(size)
        # raw bytes -> toolset, oldest first; and the raw bytes by their first _FINGERPRINT bytes.
        self._raw: OrderedDict[bytes, PreparedTools | list[Any]] = OrderedDict()
        self._by_prefix: dict[bytes, list[bytes]] = {}

    def get(self, tools: list[Any]) -> PreparedTools | list[Any]:
        """The toolset of a decoded tool list (see :meth:`ToolsetCache.get`)."""
        return self.by_content.get(tools)

    def decode_known(self, block: bytes, start: int, end: int, long_digits: bool) -> Any:
        """The record of ``block[start:end]`` with its ``tools`` a :class:`KnownToolset`, when its
        array's bytes are remembered; ``None`` when the line must be decoded whole."""
        if not self._raw:
            return None
        pos = _value_start(block, start, end)
        if pos < 0:
            return None
        for raw in self._by_prefix.get(block[pos:pos + _FINGERPRINT], ()):
            if block.startswith(raw, pos):
                break
        else:
            return None
        rest = b"".join((block[start:pos], _PLACEHOLDER, block[pos + len(raw):end]))
        if long_digits and has_long_digit_run(rest):
            return None
        try:
            record = orjson.loads(rest)
        except orjson.JSONDecodeError:
            return None
        holder = _placeholder_holder(record)
        if holder is None:
            return None
        holder["tools"] = KnownToolset(self._raw[raw])
        return record

    def learn(self, block: bytes, start: int, end: int, tools: list[Any]) -> PreparedTools | list[Any]:
        """The toolset of the non-empty ``tools``, decoded from the line ``block[start:end]``; from the
        second sighting of its content on, the bytes of the line's first ``tools`` array are
        remembered when they decode to that content."""
        prepared, seen = self.by_content.lookup(tools)
        toolset = tools if prepared is None else prepared
        if seen and self._size > 0:
            pos = _value_start(block, start, end)
            raw = _array_bytes(block, pos, end) if pos >= 0 else None
            if raw is not None and _encodes_as(raw, tools):
                self._remember(raw, toolset)
        return toolset

    def _remember(self, raw: bytes | None, toolset: PreparedTools | list[Any]) -> None:
        if raw is None or len(raw) <= _FINGERPRINT or raw in self._raw or has_long_digit_run(raw):
            return
        self._raw[raw] = toolset
        self._by_prefix.setdefault(raw[:_FINGERPRINT], []).append(raw)
        if len(self._raw) > self._size:
            old, _ = self._raw.popitem(last=False)
            bucket = self._by_prefix[old[:_FINGERPRINT]]
            bucket.remove(old)
            if not bucket:
                del self._by_prefix[old[:_FINGERPRINT]]


def _placeholder_holder(record: Any) -> dict[str, Any] | None:
    """The dict whose ``tools`` is the placeholder: the record, or its Batch API ``body``."""
    if type(record) is not dict:
        return None
    if record.get("tools") == _NONCE:
        return record
    body = record.get("body")
    if type(body) is dict and body.get("tools") == _NONCE:
        return body
    return None


def _encodes_as(raw: bytes, tools: list[Any]) -> bool:
    """Whether the array ``raw`` holds the content of ``tools`` (not, say, a nested object's ``tools``)."""
    try:
        return orjson.dumps(orjson.loads(raw)) == orjson.dumps(tools)
    except (orjson.JSONDecodeError, TypeError):
        return False


def _array_bytes(block: bytes, pos: int, end: int) -> bytes | None:
    """The bytes of the JSON array at ``block[pos]`` (a line orjson decoded: valid UTF-8 and JSON)."""
    if block[pos:pos + 1] != b"[":
        return None
    try:
        text = block[pos:end].decode("utf-8")
        _, stop = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return None
    return text[:stop].encode("utf-8")
