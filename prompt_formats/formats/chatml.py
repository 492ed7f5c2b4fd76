"""The ChatML turn rules of the Qwen3.6 chat template, shared by both ChatML formats.

:func:`render_chatml` is a line-by-line transcription of the template's control flow into Python:
same checks in the same order (so the same input raises the same message first), same quirks. The
two ChatML formats differ only in what happens before it (system messages merged, or the guard).

Reading guide, in template order:

1. (multi-system only) every system message's content is rendered, trimmed, empty ones dropped,
   the rest joined with a blank line into one leading system message;
2. ``No messages provided.`` if nothing is left;
3. the system turn, with the tools block when tools are offered;
4. a backwards scan finds the last *real* user query (a user message whose trimmed text is
   wrapped in ``<tool_response>…</tool_response>`` does not count); none raises;
5. the turns, in order; assistant turns after that query keep their ``<think>`` block;
6. the generation prompt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._json import tojson_at
from ..errors import InvalidInputError, TemplateError, type_name
from ..format import ChatFormat, Conversation, Tools
from ..messages import REASONING_FIELDS, Message
from ..tools import PreparedTools

if TYPE_CHECKING:
    from ..guard import ControlTokenGuard

__all__ = ["ChatMLFormat", "render_chatml"]

_IMAGE = "<|vision_start|><|image_pad|><|vision_end|>"
_VIDEO = "<|vision_start|><|video_pad|><|vision_end|>"

_TOOLS_HEADER = "<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>"
_TOOLS_FOOTER = (
    "\n</tools>"
    "\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n"
    "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n"
    "</parameter>\n<parameter=example_parameter_2>\nThis is the value for the second parameter\n"
    "that can span\nmultiple lines\n</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n"
    "- Function calls MUST follow the specified format: an inner <function=...></function> block must be "
    "nested within <tool_call></tool_call> XML tags\n- Required parameters MUST be specified\n"
    "- You may provide optional reasoning for your function call in natural language BEFORE the function "
    "call, but NOT after\n- If there is no function call available, answer the question like normal with "
    "your current knowledge and do not tell the user about function calls\n</IMPORTANT>"
)

_OPTIONS = {
    "enable_thinking": "only exactly False disables thinking in the generation prompt (empty think block)",
    "preserve_thinking": "only exactly True keeps the <think> block of every assistant turn",
    "add_vision_id": "truthy: number images and videos ('Picture 1: ', 'Video 1: ')",
}


class _VisionCount:
    """The template's ``image_count``/``video_count`` namespaces: one per render call."""

    __slots__ = ("images", "videos")

    def __init__(self) -> None:
        self.images = 0
        self.videos = 0


def _content_text(
    content: Any, path: str, vision: _VisionCount, count: bool, is_system: bool, add_vision_id: Any
) -> str:
    """The template's ``render_content`` macro (untrimmed)."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if not isinstance(content, (list, tuple)):
        # A mapping or a scalar: the macro's final ``else`` branch.
        raise TemplateError("Unexpected content type.")
    pieces = []
    for j, item in enumerate(content):
        if not isinstance(item, Mapping):
            raise InvalidInputError(f"{path}[{j}]", f"expected a content part object, got {type_name(item)}")
        if "image" in item or "image_url" in item or item.get("type") == "image":
            if is_system:
                raise TemplateError("System message cannot contain images.")
            if count:
                vision.images += 1
            if add_vision_id:
                pieces.append(f"Picture {vision.images}: ")
            pieces.append(_IMAGE)
        elif "video" in item or item.get("type") == "video":
            if is_system:
                raise TemplateError("System message cannot contain videos.")
            if count:
                vision.videos += 1
            if add_vision_id:
                pieces.append(f"Video {vision.videos}: ")
            pieces.append(_VIDEO)
        elif "text" in item:
            text = item["text"]
            if not isinstance(text, str):
                raise InvalidInputError(f"{path}[{j}].text", f"expected a string, got {type_name(text)}")
            pieces.append(text)
        else:
            raise TemplateError("Unexpected item type in content.")
    return "".join(pieces)


def _role(message: Mapping[str, Any], index: int | None) -> str:
    role = message.get("role")
    if not isinstance(role, str):
        raise InvalidInputError(f"messages[{index}].role", f"expected a string, got {type_name(role)}")
    return role


def _as_dicts(messages: Conversation) -> list[Mapping[str, Any]]:
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        raise InvalidInputError("messages", f"expected a list of messages, got {type_name(messages)}")
    out = []
    for i, message in enumerate(messages):
        if isinstance(message, Mapping):
            out.append(message)
        elif isinstance(message, Message):
            out.append(message.to_openai())
        else:
            raise InvalidInputError(f"messages[{i}]", f"expected a message object, got {type_name(message)}")
    return out


def _tools_block_from(tools: Sequence[Mapping[str, Any]]) -> str:
    pieces = [_TOOLS_HEADER]
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise InvalidInputError(f"tools[{i}]", f"expected a tool object, got {type_name(tool)}")
        pieces.append("\n")
        pieces.append(tojson_at(tool, f"tools[{i}]"))
    pieces.append(_TOOLS_FOOTER)
    return "".join(pieces)


def tools_block(tools: Tools) -> str:
    """The system turn's tools text (without the system prompt), or ``""`` when no tools are offered.

    A :class:`PreparedTools` renders it once and caches it.
    """
    if not tools:
        return ""
    if isinstance(tools, PreparedTools):
        return tools.cached("chatml.tools_block", _tools_block_from)
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        raise InvalidInputError("tools", f"expected a list of tool objects, got {type_name(tools)}")
    return _tools_block_from(tools)


def _reasoning(message: Mapping[str, Any], index: int | None) -> Any:
    # transformers passes the first non-None of reasoning_content, thinking, reasoning as reasoning_content.
    for key in REASONING_FIELDS:
        value = message.get(key)
        if value is not None:
            if not isinstance(value, str):
                raise InvalidInputError(f"messages[{index}].{key}", f"expected a string, got {type_name(value)}")
            return value
    return None


def _render_tool_calls(out: list[str], calls: Any, content: str, index: int | None) -> None:
    if not isinstance(calls, (list, tuple)):
        raise InvalidInputError(f"messages[{index}].tool_calls", f"expected a list, got {type_name(calls)}")
    for k, call in enumerate(calls):
        path = f"messages[{index}].tool_calls[{k}]"
        if not isinstance(call, Mapping):
            raise InvalidInputError(path, f"expected an object, got {type_name(call)}")
        if "function" in call:
            call = call["function"]
            path += ".function"
            if not isinstance(call, Mapping):
                raise InvalidInputError(path, f"expected an object, got {type_name(call)}")
        name = call.get("name")
        if not isinstance(name, str):
            raise InvalidInputError(path + ".name", f"expected a string, got {type_name(name)}")
        if k:
            out.append("\n<tool_call>\n<function=" + name + ">\n")
        elif content.strip():
            out.append("\n\n<tool_call>\n<function=" + name + ">\n")
        else:
            out.append("<tool_call>\n<function=" + name + ">\n")
        if "arguments" in call:
            arguments = call["arguments"]
            if isinstance(arguments, str):
                out.append("<parameter=arguments>\n" + arguments + "\n</parameter>\n")
            elif isinstance(arguments, Mapping):
                for key, value in arguments.items():
                    if not isinstance(key, str):
                        raise InvalidInputError(
                            path + ".arguments", f"expected string keys, got {type_name(key)} key {key!r}"
                        )
                    if not isinstance(value, str):
                        value = tojson_at(value, f"{path}.arguments.{key}")
                    out.append("<parameter=" + key + ">\n" + value + "\n</parameter>\n")
            elif arguments is not None:
                raise InvalidInputError(
                    path + ".arguments", f"expected an object or a JSON string, got {type_name(arguments)}"
                )
        out.append("</function>\n</tool_call>")


def render_chatml(
    messages: Conversation,
    tools: Tools = None,
    add_generation_prompt: Any = False,
    *,
    merge_system: bool,
    enable_thinking: Any = None,
    preserve_thinking: Any = None,
    add_vision_id: Any = None,
) -> str:
    """Render ``messages`` exactly as the Qwen3.6 template does.

    ``merge_system=True`` is the multi-system template (every system message merged into one leading
    system turn); ``False`` the upstream one (a system message anywhere but first raises).
    Options have the template's semantics: ``enable_thinking`` disables only when it ``is False``,
    ``preserve_thinking`` enables only when it ``is True``, ``add_vision_id`` by truthiness.
    """
    msgs = _as_dicts(messages)
    vision = _VisionCount()
    # `origins[pos]` is the caller's index of msgs[pos] (None for the merged system message), for errors.
    origins: list[int | None]
    if merge_system:
        system_texts = []
        kept: list[Mapping[str, Any]] = []
        origins = []
        for i, message in enumerate(msgs):
            if _role(message, i) == "system":
                text = _content_text(
                    message.get("content"), f"messages[{i}].content", vision, False, True, add_vision_id
                ).strip()
                if text:
                    system_texts.append(text)
            else:
                kept.append(message)
                origins.append(i)
        if system_texts:
            kept.insert(0, {"role": "system", "content": "\n\n".join(system_texts)})
            origins.insert(0, None)
        msgs = kept
    else:
        origins = list(range(len(msgs)))
    if not msgs:
        raise TemplateError("No messages provided.")
    n = len(msgs)
    roles = [_role(message, origins[pos]) for pos, message in enumerate(msgs)]

    out: list[str] = []
    block = tools_block(tools)
    if roles[0] == "system":
        first = msgs[0]
        system_text = _content_text(
            first.get("content"), f"messages[{origins[0]}].content", vision, False, True, add_vision_id
        ).strip()
    if block:
        out.append(block)
        if roles[0] == "system" and system_text:
            out.append("\n\n" + system_text)
        out.append("<|im_end|>\n")
    elif roles[0] == "system":
        out.append("<|im_start|>system\n" + system_text + "<|im_end|>\n")

    last_query = -1
    for pos in range(n - 1, -1, -1):
        if roles[pos] == "user":
            text = _content_text(
                msgs[pos].get("content"), f"messages[{origins[pos]}].content", vision, False, False, add_vision_id
            ).strip()
            if not (text.startswith("<tool_response>") and text.endswith("</tool_response>")):
                last_query = pos
                break
    if last_query < 0:
        raise TemplateError("No user query found in messages.")

    keep_all_thinking = preserve_thinking is True
    for pos in range(n):
        message = msgs[pos]
        role = roles[pos]
        index = origins[pos]
        content = _content_text(
            message.get("content"), f"messages[{index}].content", vision, True, False, add_vision_id
        ).strip()
        if role == "user":
            out.append("<|im_start|>user\n" + content + "<|im_end|>\n")
        elif role == "assistant":
            reasoning = _reasoning(message, index)
            if reasoning is None:
                reasoning = ""
                if "</think>" in content:
                    reasoning = content.split("</think>")[0].rstrip("\n").split("<think>")[-1].lstrip("\n")
                    content = content.split("</think>")[-1].lstrip("\n")
            if keep_all_thinking or pos > last_query:
                out.append(
                    "<|im_start|>assistant\n<think>\n" + reasoning.strip() + "\n</think>\n\n" + content
                )
            else:
                out.append("<|im_start|>assistant\n" + content)
            calls = message.get("tool_calls")
            if calls:
                _render_tool_calls(out, calls, content, index)
            out.append("<|im_end|>\n")
        elif role == "tool":
            if pos and roles[pos - 1] != "tool":
                out.append("<|im_start|>user")
            out.append("\n<tool_response>\n" + content + "\n</tool_response>")
            if pos == n - 1 or roles[pos + 1] != "tool":
                out.append("<|im_end|>\n")
        elif role == "system":
            if pos:
                raise TemplateError("System message must be at the beginning.")
        else:
            raise TemplateError("Unexpected message role.")

    if add_generation_prompt:
        out.append("<|im_start|>assistant\n<think>\n\n</think>\n\n" if enable_thinking is False
                   else "<|im_start|>assistant\n<think>\n")
    return "".join(out)


class ChatMLFormat(ChatFormat):
    """Base of the two ChatML formats: the Qwen3.6 template's options and turn rules.

    ``guard``: an optional :class:`~prompt_formats.guard.ControlTokenGuard` applied to the messages
    and tools before rendering (off by default: the output is then exactly the template's).
    """

    merge_system: bool = False
    options = _OPTIONS

    def __init__(self, guard: ControlTokenGuard | None = None) -> None:
        self.guard = guard

    def render(
        self,
        messages: Conversation,
        tools: Tools = None,
        add_generation_prompt: bool = False,
        **options: Any,
    ) -> str:
        """Render ``messages`` byte-identically to the reference template (see :func:`render_chatml`).

        With a guard, its policy is applied first to every untrusted field (it may raise
        :class:`~prompt_formats.errors.InjectionError`).
        """
        if options:
            self.check_options(options)
        guard = self.guard
        if guard is not None:
            tools = guard.guard_tools(tools)
            messages = guard.guard_messages(messages)
        return render_chatml(
            messages, tools, add_generation_prompt, merge_system=self.merge_system, **options
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}()" if self.guard is None else f"{type(self).__name__}(guard={self.guard!r})"
