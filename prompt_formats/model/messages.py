"""The message model shared by every format: OpenAI-style chat dicts in, typed objects, dicts out.

Formatters read plain dicts directly (converting every request into objects would cost more than
rendering it), so these classes are the *documented shape* of a conversation and a convenient way to
build one; ``Message.from_openai(d).to_openai()`` normalises a dict without changing what any format
renders from it.

What is accepted, as real clients send it:

- ``content``: a string, ``None``, or a list of parts: ``{"type": "text", "text": ...}``, images
  (``{"type": "image", ...}``, ``{"type": "image_url", "image_url": ...}``, any part with an
  ``"image"`` key) and videos (``{"type": "video", ...}`` or a ``"video"`` key);
- ``tool_calls``: ``{"id", "type": "function", "function": {"name", "arguments"}}`` or the flat
  ``{"name", "arguments"}``; ``arguments`` as a mapping or as a JSON string (kept as given: templates
  render the two differently);
- reasoning under ``reasoning_content``, ``thinking`` or ``reasoning`` (the first that is not ``None``,
  in that order, as transformers 5.22+ resolves them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .._text.plain import plain_data, require_plain
from .._text.tojson import compact_json
from .._text.unbounded import unbounded_compact_json
from ..errors import InvalidInputError, type_name
from .reading import REASONING_FIELDS as REASONING_FIELDS
from .reading import call_body, is_list, part_kind, reasoning_field
from .reading import reasoning_of as reasoning_of

__all__ = [
    "REASONING_FIELDS",
    "AssistantReply",
    "ContentPart",
    "ImagePart",
    "Message",
    "TextPart",
    "ToolCall",
    "ToolDefinition",
    "VideoPart",
    "message_dict",
    "message_dicts",
    "reasoning_of",
    "role_of",
]

@attrs.frozen
class TextPart:
    """A text part of a message's content."""

    text: str

    def to_openai(self) -> dict[str, Any]:
        """The part as an OpenAI content-part dict."""
        return {"type": "text", "text": self.text}


@attrs.frozen
class ImagePart:
    """An image part. ``source`` is the part dict as the client sent it; formats only mark its place."""

    source: Mapping[str, Any] = attrs.field(factory=lambda: {"type": "image"})

    def to_openai(self) -> dict[str, Any]:
        """The part dict as it was given."""
        return dict(self.source)


@attrs.frozen
class VideoPart:
    """A video part. ``source`` is the part dict as the client sent it; formats only mark its place."""

    source: Mapping[str, Any] = attrs.field(factory=lambda: {"type": "video"})

    def to_openai(self) -> dict[str, Any]:
        """The part dict as it was given."""
        return dict(self.source)


ContentPart = TextPart | ImagePart | VideoPart


def _part_from_openai(part: Any, path: str) -> ContentPart:
    if not isinstance(part, Mapping):
        raise InvalidInputError(path, f"expected a content part object, got {type_name(part)}")
    kind = part_kind(part)
    if kind == "image":
        return ImagePart(dict(part))
    if kind == "video":
        return VideoPart(dict(part))
    if kind == "text":
        text = part["text"]
        if not isinstance(text, str):
            raise InvalidInputError(path + ".text", f"expected a string, got {type_name(text)}")
        return TextPart(text)
    raise InvalidInputError(path, f"unknown content part type {part.get('type')!r}")


def named_function(data: Mapping[str, Any], path: str) -> tuple[Mapping[str, Any], str, str]:
    """The function object of a tool or tool call (OpenAI nests it under ``"function"``), its path and name.

    Raises ``InvalidInputError`` at ``path`` when the nested object is not a mapping or has no string name.
    """
    body = call_body(data)
    if body is not data:
        path += ".function"
        if not isinstance(body, Mapping):
            raise InvalidInputError(path, f"expected an object, got {type_name(body)}")
    name = body.get("name")
    if not isinstance(name, str):
        raise InvalidInputError(path + ".name", f"expected a string, got {type_name(name)}")
    return body, path, name


@attrs.frozen
class ToolCall:
    """A call of a tool by the assistant.

    ``arguments`` is a mapping, a string (as given by a client that sends JSON text), or ``None``.
    Parsers always produce a mapping unless the model wrote arguments that are not valid JSON.
    ``arguments_text`` is set by parsers: the arguments' JSON text exactly as the stream sent it in
    its argument deltas (Harmony: as the model wrote it); :meth:`arguments_json` returns it, so a
    client's accumulated deltas equal ``to_openai()``. It takes no part in equality or ``repr``.
    """

    name: str
    arguments: Mapping[str, Any] | str | None = None
    id: str | None = None
    arguments_text: str | None = attrs.field(default=None, eq=False, repr=False, kw_only=True)

    @classmethod
    def from_openai(cls, data: Any, path: str = "tool_call") -> ToolCall:
        """Read a tool call with or without the ``"function"`` wrapper; raise ``InvalidInputError`` if malformed."""
        if not isinstance(data, Mapping):
            raise InvalidInputError(path, f"expected an object, got {type_name(data)}")
        call_id = data.get("id")
        if call_id is not None and not isinstance(call_id, str):
            raise InvalidInputError(path + ".id", f"expected a string, got {type_name(call_id)}")
        body, path, name = named_function(data, path)
        arguments = body.get("arguments")
        if arguments is not None and not isinstance(arguments, (str, Mapping)):
            raise InvalidInputError(
                path + ".arguments", f"expected an object or a JSON string, got {type_name(arguments)}"
            )
        return cls(name=name, arguments=arguments, id=call_id)

    def arguments_json(self) -> str:
        """The arguments as a JSON string, as the OpenAI API carries them (``"{}"`` when there are none).

        Integers of any size and nesting of any depth are written exactly (not limited by
        ``sys.get_int_max_str_digits()`` or the stack); a value JSON cannot hold raises as ``json.dumps`` does.
        A parsed call returns its :attr:`arguments_text`, the text its stream sent.
        """
        if self.arguments_text is not None:
            return self.arguments_text
        if self.arguments is None:
            return "{}"
        if isinstance(self.arguments, str):
            return self.arguments
        # (Parsed replies can hold integers beyond 64 bits and lone surrogates: compact_json keeps them.)
        try:
            return compact_json(self.arguments)
        except (ValueError, RecursionError):
            # An integer beyond Python's digit limit, or nesting beyond the stack: written without either.
            return unbounded_compact_json(self.arguments)

    def to_openai(self) -> dict[str, Any]:
        """The call in the wrapped OpenAI shape; ``arguments`` is kept as given (mapping or string)."""
        function: dict[str, Any] = {"name": self.name}
        if self.arguments is not None:
            function["arguments"] = self.arguments
        out: dict[str, Any] = {"type": "function", "function": function}
        if self.id is not None:
            out = {"id": self.id, **out}
        return out


def _optional_str(data: Mapping[str, Any], key: str, path: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise InvalidInputError(f"{path}.{key}", f"expected a string, got {type_name(value)}")
    return value


@attrs.frozen
class Message:
    """One chat message. ``content`` is a string, a tuple of parts, or ``None``."""

    role: str
    content: str | tuple[ContentPart, ...] | None = None
    reasoning: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    @classmethod
    def from_openai(cls, data: Any, index: int = 0) -> Message:
        """Read an OpenAI-style message dict, validating every field.

        Raises ``InvalidInputError`` whose path starts with ``messages[index]``.
        """
        path = f"messages[{index}]"
        if isinstance(data, Message):
            return data
        if not isinstance(data, Mapping):
            raise InvalidInputError(path, f"expected a message object, got {type_name(data)}")
        role = data.get("role")
        if not isinstance(role, str):
            raise InvalidInputError(path + ".role", f"expected a string, got {type_name(role)}")
        raw_content = data.get("content")
        content: str | tuple[ContentPart, ...] | None
        if raw_content is None or isinstance(raw_content, str):
            content = raw_content
        elif is_list(raw_content):
            content = tuple(
                _part_from_openai(part, f"{path}.content[{i}]") for i, part in enumerate(raw_content)
            )
        else:
            raise InvalidInputError(
                path + ".content", f"expected a string, a list of parts or null, got {type_name(raw_content)}"
            )
        reasoning = reasoning_of(data)
        if reasoning is not None and not isinstance(reasoning, str):
            field = reasoning_field(data)
            raise InvalidInputError(f"{path}.{field}", f"expected a string, got {type_name(reasoning)}")
        raw_calls = data.get("tool_calls")
        calls: tuple[ToolCall, ...] = ()
        if raw_calls is not None:
            if not is_list(raw_calls):
                raise InvalidInputError(path + ".tool_calls", f"expected a list, got {type_name(raw_calls)}")
            calls = tuple(
                ToolCall.from_openai(call, f"{path}.tool_calls[{i}]") for i, call in enumerate(raw_calls)
            )
        return cls(
            role=role,
            content=content,
            reasoning=reasoning,
            tool_calls=calls,
            tool_call_id=_optional_str(data, "tool_call_id", path),
            name=_optional_str(data, "name", path),
        )

    def to_openai(self) -> dict[str, Any]:
        """The message as an OpenAI-style dict (reasoning under ``reasoning_content``; absent fields left out)."""
        content = self.content
        return self._openai(
            content if content is None or isinstance(content, str) else [part.to_openai() for part in content],
            [call.to_openai() for call in self.tool_calls],
        )

    def _openai(self, content: Any, calls: list[Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": content}
        if self.reasoning is not None:
            out["reasoning_content"] = self.reasoning
        if calls:
            out["tool_calls"] = calls
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out


def message_dict(message: Any, index: int) -> dict[str, Any]:
    """What formatters render from: a dict as it is, a :class:`Message` as its OpenAI dict, and any
    other mapping, a dataclass or a pydantic model as the dict transformers hands the template (its
    plain data, :func:`~prompt_formats._text.plain.plain_data`).

    A ``Message`` is not validated when it is built: a content or tool-call list of the wrong type
    raises ``InvalidInputError`` here, naming the field (``messages[2].content[0]``); the other
    fields are passed on for the format to check as it checks a dict's. Raises
    ``InvalidInputError`` for anything that is neither.
    """
    if type(message) is dict:
        return message
    if isinstance(message, Message):
        return _checked_message_dict(message, f"messages[{index}]")
    plain = message if isinstance(message, (list, tuple)) else plain_data(message)  # (a list is never one)
    if type(plain) is dict:
        return plain
    raise InvalidInputError(f"messages[{index}]", f"expected a message object, got {type_name(message)}")


def _checked_message_dict(message: Message, path: str) -> dict[str, Any]:
    content: Any = message.content  # typed, but not checked when the object was built
    if content is not None and not isinstance(content, str):
        if not is_list(content):
            raise InvalidInputError(
                path + ".content", f"expected a string, a list of parts or null, got {type_name(content)}"
            )
        content = [_part_dict(part, f"{path}.content[{j}]") for j, part in enumerate(content)]
    calls: Any = message.tool_calls
    if calls is None:
        calls = ()
    elif not is_list(calls):
        raise InvalidInputError(path + ".tool_calls", f"expected a list of tool calls, got {type_name(calls)}")
    return message._openai(content, [_call_dict(call, f"{path}.tool_calls[{k}]") for k, call in enumerate(calls)])


def _part_dict(part: Any, path: str) -> Any:
    if isinstance(part, Mapping):
        return part
    source: Any = getattr(part, "source", None)
    if isinstance(part, (ImagePart, VideoPart)) and not isinstance(source, Mapping):
        kind = "image" if isinstance(part, ImagePart) else "video"
        raise InvalidInputError(path, f"expected the {kind} part's source to be an object, got {type_name(source)}")
    if isinstance(part, (TextPart, ImagePart, VideoPart)):
        return part.to_openai()
    raise InvalidInputError(path, f"expected a content part object, got {type_name(part)}")


def _call_dict(call: Any, path: str) -> Any:
    if isinstance(call, Mapping):
        return call
    if isinstance(call, ToolCall):
        return call.to_openai()
    raise InvalidInputError(path, f"expected a tool call object, got {type_name(call)}")


@attrs.frozen
class ToolDefinition:
    """A tool offered to the model. ``raw`` is the tool dict exactly as given; formats render it."""

    name: str
    description: str | None
    parameters: Mapping[str, Any] | None
    raw: Mapping[str, Any]

    @classmethod
    def from_openai(cls, data: Any, index: int = 0) -> ToolDefinition:
        """Read ``{"type": "function", "function": {...}}`` or a bare function dict; validate name and schema."""
        name, description, parameters = tool_fields(data, index)
        return cls(name=name, description=description, parameters=parameters, raw=data)

    def to_openai(self) -> dict[str, Any]:
        """The tool dict as it was given."""
        return dict(self.raw)


def tool_fields(data: Any, index: int = 0) -> tuple[str, str | None, Mapping[str, Any] | None]:
    """A tool's ``(name, description, parameters)``, checked as :meth:`ToolDefinition.from_openai` checks them.

    Raises ``InvalidInputError`` at ``tools[index]`` for a malformed tool; builds no object, so
    that validating a toolset costs little more than reading it.
    """
    body = data.get("function") if type(data) is dict else None
    if type(body) is dict:  # the usual OpenAI shape, exact types: nothing to report, read directly
        name = body.get("name")
        description = body.get("description")
        parameters = body.get("parameters")
        if (type(name) is str and (description is None or type(description) is str)
                and (parameters is None or type(parameters) is dict)):
            return name, description, parameters
    return checked_tool_fields(data, index)


def checked_tool_fields(data: Any, index: int) -> tuple[str, str | None, Mapping[str, Any] | None]:
    """:func:`tool_fields` without its fast path: the one checked reading, for any tool value.

    Returns what :func:`tool_fields` returns and raises what it raises for the same ``data``; the
    tests hold the fast path to it.
    """
    path = f"tools[{index}]"
    if not isinstance(data, Mapping):
        raise InvalidInputError(path, f"expected a tool object, got {type_name(data)}")
    body, path, name = named_function(data, path)
    description = _optional_str(body, "description", path)
    parameters = body.get("parameters")
    if parameters is not None and not isinstance(parameters, Mapping):
        raise InvalidInputError(path + ".parameters", f"expected an object, got {type_name(parameters)}")
    return name, description, parameters


@attrs.frozen
class AssistantReply:
    """What a reply parser makes of a completion.

    ``content`` and ``reasoning`` are ``None`` when the model wrote none; ``tool_calls`` carry typed
    arguments. ``malformed`` lists, in order, a note for every piece of the completion that could not
    be read as the format says (structure not well formed, a call cut off by the end of the
    completion, arguments that are not a JSON object): its text is kept in ``content`` or in the call
    the note names, never dropped. ``notes`` lists, in order, what was read as the format says but is
    worth knowing (a call in the JSON form, a call to a tool not offered, a value kept as text, text
    after the reply's end); a reply whose ``malformed`` is empty was read whole, whatever its ``notes``.
    Neither is part of :meth:`to_openai`.
    """

    content: str | None = None
    reasoning: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    malformed: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def to_openai(self) -> dict[str, Any]:
        """The reply as an OpenAI assistant message; tool-call arguments as JSON strings.

        ``content`` is ``None`` for a reply of tool calls without text (OpenAI's form), and ``""`` for a
        reply without text or calls: every format renders that message as the empty reply the model
        wrote, where the templates that join the content to text refuse ``None``.
        """
        content = self.content if self.content is not None or self.tool_calls else ""
        out: dict[str, Any] = {"role": "assistant", "content": content}
        if self.reasoning is not None:
            out["reasoning_content"] = self.reasoning
        if self.tool_calls:
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_json()},
                }
                for call in self.tool_calls
            ]
        return out


def message_dicts(messages: Any) -> list[dict[str, Any]]:
    """The messages as dicts (:func:`message_dict` of each), for a walk that reads them so; raises
    :class:`InvalidInputError` at ``messages`` for anything that is not a list of them."""
    if not is_list(messages):
        raise InvalidInputError("messages", f"expected a list of messages, got {type_name(messages)}")
    return [m if type(m) is dict else message_dict(m, i) for i, m in enumerate(messages)]


def role_of(message: dict[str, Any], index: int) -> Any:
    """A message's role as a template compares it (``None``: none): a value of another type than
    JSON's is read as its plain data (raising ``NotPlainData``), since its ``==`` could say anything."""
    role = message.get("role")
    if type(role) is not str and role is not None:
        require_plain(role, f"messages[{index}].role")
    return role
