"""The ChatML reply grammar's markers and patterns, as the parser's states look for them."""

from __future__ import annotations

import enum
import re
import sys

import regex

from ...replies.streaming import Terminator
from . import tokens as t


class State(enum.IntEnum):
    """Where the ChatML reply parser is in the reply."""

    REASONING_START = 0  # before the reasoning (thinking on): a repeated "<think>" may come
    CONTENT_START = 1  # before the content (thinking off): "<think>" may open reasoning
    REASONING = 2
    CONTENT = 3
    FUNCTION = 4  # inside <function=NAME>, between parameters
    VALUE = 5  # inside a parameter's value
    AFTER = 6  # after </function>: </tool_call> or another <function=…>
    DONE = 7  # after <|im_end|>/<|endoftext|>: the reply has ended
    JSON = 8  # inside "<tool_call>{…": a call in the JSON form, up to "</tool_call>"


#: Every character ``str.isspace`` accepts (``\\s`` of ``re`` misses some).
WS = r"[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
#: Possessive quantifiers (3.11+) make a failed call-start match give up at once instead of backtracking.
PLUS = "+" if sys.version_info >= (3, 11) else ""
NAME = "[^<>]{1,256}"
CALL_START_PATTERN = (
    re.escape(t.TOOL_CALL_OPEN) + WS + "{0,32}" + PLUS + re.escape(t.FUNCTION_OPEN) + "(" + NAME + PLUS + ")>"
)
CALL_START = Terminator.regex(
    t.TOOL_CALL_OPEN, CALL_START_PATTERN, len(t.TOOL_CALL_OPEN) + 32 + len(t.FUNCTION_OPEN) + 256 + 1
)
THINK_END = Terminator.marker(t.THINK_CLOSE)
IM_END = Terminator.marker(t.IM_END)
END_OF_TEXT = Terminator.marker(t.END_OF_TEXT)
PARAMETER_END = Terminator.marker(t.PARAMETER_CLOSE)
# A function block the model wrote without "<tool_call>" (read in the content only, as vLLM and SGLang do):
# "<function=NAME>" followed by a parameter or the function's end, so that prose naming a tag stays text.
BARE_CALL_START = Terminator.regex(
    t.FUNCTION_OPEN,
    re.escape(t.FUNCTION_OPEN) + "(" + NAME + PLUS + ")>" + WS + "{0,32}" + PLUS
    + "(?:" + re.escape(t.PARAMETER_OPEN) + "|" + re.escape(t.FUNCTION_CLOSE) + ")",
    len(t.FUNCTION_OPEN) + 256 + 1 + 32 + len(t.FUNCTION_CLOSE),
)
# A value whose "</parameter>" is missing ends at the next parameter or at the function's end.
NEXT_PARAMETER = Terminator.regex(
    t.PARAMETER_OPEN, re.escape(t.PARAMETER_OPEN) + NAME + PLUS + ">", len(t.PARAMETER_OPEN) + 256 + 1
)
FUNCTION_END = Terminator.marker(t.FUNCTION_CLOSE)
# The JSON form of a call (Qwen2.5, Qwen3): "<tool_call>", then a JSON object of "name" and "arguments".
JSON_CALL_START = Terminator.regex(
    t.TOOL_CALL_OPEN, re.escape(t.TOOL_CALL_OPEN) + WS + "{0,32}" + PLUS + r"\{", len(t.TOOL_CALL_OPEN) + 32 + 1
)
TOOL_CALL_END = Terminator.marker(t.TOOL_CALL_CLOSE)
TOOL_CALL_MARK = Terminator.marker(t.TOOL_CALL_OPEN)
REASONING_ENDS = (THINK_END, CALL_START, JSON_CALL_START, IM_END, END_OF_TEXT)
CONTENT_ENDS = (CALL_START, JSON_CALL_START, BARE_CALL_START, IM_END, END_OF_TEXT)
# Content after a tool call that ended the reasoning: the reasoning's own "</think>" may still come.
CONTENT_ENDS_THINK_OPEN = (THINK_END, CALL_START, JSON_CALL_START, BARE_CALL_START, IM_END, END_OF_TEXT)
# Where a JSON call's text ends: its "</tool_call>", or (not closed) another "<tool_call>" or a stop
# marker; read in the reasoning, its "</think>" too.
JSON_ENDS = (TOOL_CALL_END, TOOL_CALL_MARK, IM_END, END_OF_TEXT)
JSON_ENDS_THINK_OPEN = (THINK_END, *JSON_ENDS)
VALUE_ENDS = (PARAMETER_END, NEXT_PARAMETER, FUNCTION_END, IM_END, END_OF_TEXT)
# After a next-parameter or function-end tag inside a value: does "</parameter>" still come?
CLOSE_ENDS = (PARAMETER_END, IM_END, END_OF_TEXT)

WS_RUN = re.compile(WS + "*")
THINK_OPEN = regex.compile(re.escape(t.THINK_OPEN))
# What may follow inside a function block, after whitespace: a parameter, the function's end, a stop
# marker, or (tolerated) the block's end where the model left out "</function>".
FUNCTION_ITEM = regex.compile(
    re.escape(t.PARAMETER_OPEN) + "(" + NAME + ")>|(" + re.escape(t.FUNCTION_CLOSE) + ")|("
    + re.escape(t.IM_END) + "|" + re.escape(t.END_OF_TEXT) + ")|(" + re.escape(t.TOOL_CALL_CLOSE) + ")"
)
# What makes a "</parameter>" the value's end: after whitespace, a parameter's tag (group 1: its name),
# the function's or the block's end, or a stop marker. Followed by anything else, it is the value's text.
AFTER_VALUE = regex.compile(
    WS + "{0,32}" + PLUS + "(?:" + re.escape(t.PARAMETER_OPEN) + "(" + NAME + ")>|" + re.escape(t.FUNCTION_CLOSE) + "|"
    + re.escape(t.TOOL_CALL_CLOSE) + "|" + re.escape(t.IM_END) + "|" + re.escape(t.END_OF_TEXT) + ")"
)
#: More whitespace than this after a "</parameter>" ends the value without looking further.
AFTER_VALUE_WS = 32
# What may follow a function's end: the block's end, or another function in the same block.
AFTER_FUNCTION = regex.compile(
    WS + "{0,32}(?:(" + re.escape(t.TOOL_CALL_CLOSE) + ")|" + re.escape(t.FUNCTION_OPEN) + "(" + NAME + ")>)"
)

#: What a tool's name cannot hold (besides ``<>``, which ``NAME`` excludes): a name with these is an
#: unrendered template or prose (``<function={{ tc.name }}>``), so when no tool offered has it, it is
#: no call; vLLM rejects such names too.
_NOT_IN_A_NAME = frozenset("{}\"'")


def could_name_a_tool(name: str) -> bool:
    """Whether ``name`` (read in ``<function=NAME>``) could be a tool's name: no braces, quotes or whitespace."""
    return not any(c in _NOT_IN_A_NAME or c.isspace() for c in name)


JUNK_CALL_NOTE = "'<tool_call>' not followed by '<function=NAME>': kept as text"


def value_end_past(buf: str, pos: int, read: tuple[str, ...]) -> int:
    """Where a value's next terminator is, at or after ``pos``, other than a tag of a ``read``
    parameter (``-1`` if none). One search, so that a value repeating such tags costs no step per tag.
    """
    names = "|".join(re.escape(name) for name in read)
    ends = re.compile(
        "|".join(re.escape(m) for m in (t.PARAMETER_CLOSE, t.FUNCTION_CLOSE, t.IM_END, t.END_OF_TEXT))
        + "|" + re.escape(t.PARAMETER_OPEN) + "(?!(?:" + names + ")>)" + NAME + ">"
    )
    found = ends.search(buf, pos)
    return -1 if found is None else found.start()
