"""Chat-model prompt formats rendered and parsed in pure Python, byte-identical to their templates.

>>> import prompt_formats as pf
>>> fmt = pf.get_format("chatml-multi-system")
>>> fmt.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True)
'<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\n<think>\\n'
"""

from __future__ import annotations

from .detect import TemplateMatch, detect_format, match_template
from .errors import (
    FormatError,
    InjectionError,
    InvalidInputError,
    ParseError,
    TemplateError,
    UnknownOptionError,
)
from .format import ChatFormat
from .guard import CHATML_CONTROL_TOKENS, HARMONY_CONTROL_TOKENS, ControlTokenGuard, unescape
from .messages import (
    AssistantReply,
    ImagePart,
    Message,
    TextPart,
    ToolCall,
    ToolDefinition,
    VideoPart,
)
from .registry import available_formats, get_format
from .spans import RenderedPrompt
from .streaming import (
    ContentDelta,
    Event,
    Malformed,
    ReasoningDelta,
    StreamParser,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
    assemble,
)
from .tools import PreparedTools, prepare_tools

__version__ = "0.1.0"

__all__ = [
    "CHATML_CONTROL_TOKENS",
    "HARMONY_CONTROL_TOKENS",
    "AssistantReply",
    "ChatFormat",
    "ContentDelta",
    "ControlTokenGuard",
    "Event",
    "FormatError",
    "ImagePart",
    "InjectionError",
    "InvalidInputError",
    "Malformed",
    "Message",
    "ParseError",
    "PreparedTools",
    "ReasoningDelta",
    "RenderedPrompt",
    "StreamParser",
    "TemplateError",
    "TemplateMatch",
    "TextPart",
    "ToolCall",
    "ToolCallArgumentsDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolDefinition",
    "UnknownOptionError",
    "VideoPart",
    "assemble",
    "available_formats",
    "detect_format",
    "get_format",
    "match_template",
    "prepare_tools",
    "unescape",
]
