"""Chat-model prompt formats rendered and parsed in pure Python, byte-identical to their templates.

>>> import prompt_formats as pf
>>> fmt = pf.get_format("chatml-multi-system")
>>> fmt.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True)
'<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\n<think>\\n'

Every public name is imported from its module on first use (PEP 562), so ``import prompt_formats``
and the command (``prompt_formats.cli``) load only the modules their work needs.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from . import _pure

# Chosen before any other module of the package is imported: this file is never compiled.
if os.environ.get("PROMPT_FORMATS_PURE", "") not in ("", "0"):
    _pure.install()

#: ``True`` when the modules run compiled (the mypyc build, ``PROMPT_FORMATS_COMPILE=1 pip install .``),
#: ``False`` for the pure-Python package or under ``PROMPT_FORMATS_PURE=1``.
compiled: bool = _pure.is_compiled(__path__)

# The error classes are bound at import (a small module): an ``except pf.InvalidInputError`` clause
# can run where the stack has no room left for the first-use import below.
from .errors import FormatError, InjectionError, InvalidInputError, ParseError, TemplateError, UnknownOptionError  # noqa: E402

if TYPE_CHECKING:
    from .format.chat_format import ChatFormat
    from .format.detect import TemplateMatch, detect_format, match_template
    from .format.registry import available_formats, get_format
    from .format.spans import RenderedPrompt
    from .formats.chatml.tokens import CONTROL_TOKENS as CHATML_CONTROL_TOKENS
    from .formats.deepseek.tokens import DEEPSEEK_V3_CONTROL_TOKENS
    from .formats.gemma.tokens import GEMMA3_CONTROL_TOKENS, GEMMA4_CONTROL_TOKENS
    from .formats.glm.tokens import GLM4_CONTROL_TOKENS
    from .formats.harmony.tokens import CONTROL_TOKENS as HARMONY_CONTROL_TOKENS
    from .formats.llama.tokens import LLAMA3_CONTROL_TOKENS
    from .guard import ControlTokenGuard, unescape
    from .model.messages import AssistantReply, ImagePart, Message, TextPart, ToolCall, ToolDefinition, VideoPart
    from .model.tools import PreparedTools, prepare_tools
    from .replies.streaming import (
        ContentDelta,
        Event,
        Malformed,
        Note,
        ReasoningDelta,
        StreamParser,
        ToolCallArgumentsDelta,
        ToolCallEnd,
        ToolCallStart,
        assemble,
    )

__version__ = "0.1.0"

# Public name -> the module (relative to this package) that defines it, and its name there if other.
_HOMES: dict[str, str] = {
    **dict.fromkeys(("TemplateMatch", "detect_format", "match_template"), ".format.detect"),
    "ChatFormat": ".format.chat_format",
    "CHATML_CONTROL_TOKENS": ".formats.chatml.tokens:CONTROL_TOKENS",
    "HARMONY_CONTROL_TOKENS": ".formats.harmony.tokens:CONTROL_TOKENS",
    "GEMMA3_CONTROL_TOKENS": ".formats.gemma.tokens",
    "GEMMA4_CONTROL_TOKENS": ".formats.gemma.tokens",
    "DEEPSEEK_V3_CONTROL_TOKENS": ".formats.deepseek.tokens",
    "GLM4_CONTROL_TOKENS": ".formats.glm.tokens",
    "LLAMA3_CONTROL_TOKENS": ".formats.llama.tokens",
    **dict.fromkeys(("ControlTokenGuard", "unescape"), ".guard"),
    **dict.fromkeys(("AssistantReply", "ImagePart", "Message", "TextPart", "ToolCall", "ToolDefinition",
                     "VideoPart"), ".model.messages"),
    **dict.fromkeys(("available_formats", "get_format"), ".format.registry"),
    "RenderedPrompt": ".format.spans",
    **dict.fromkeys(("ContentDelta", "Event", "Malformed", "Note", "ReasoningDelta", "StreamParser",
                     "ToolCallArgumentsDelta", "ToolCallEnd", "ToolCallStart", "assemble"), ".replies.streaming"),
    **dict.fromkeys(("PreparedTools", "prepare_tools"), ".model.tools"),
}

__all__ = [
    "CHATML_CONTROL_TOKENS",
    "DEEPSEEK_V3_CONTROL_TOKENS",
    "GEMMA3_CONTROL_TOKENS",
    "GEMMA4_CONTROL_TOKENS",
    "GLM4_CONTROL_TOKENS",
    "HARMONY_CONTROL_TOKENS",
    "LLAMA3_CONTROL_TOKENS",
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
    "Note",
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


def __getattr__(name: str) -> Any:
    """A public name, imported from its module the first time it is asked for (then a plain attribute)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attribute = home.partition(":")
    value = getattr(importlib.import_module(module, __name__), attribute or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
