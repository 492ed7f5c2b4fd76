"""``continue_final_message``: the prompt ends inside the final message, so the model continues it.

Shared by the ChatML formats' option and the transformers integration's ``apply_chat_template``.
transformers' semantics (``render_jinja_template``), step for step, so the cut lands where it cuts:
the field to continue (``content`` by default, or a reasoning field named by the option) gets a tag
appended (in a list of parts, the last part with ``text``); the conversation is rendered; the
prompt is cut at the last occurrence of the tag, and when the template trimmed the tag's trailing
space (ChatML trims content and reasoning) the text before it is right-stripped too. Where
transformers raises ``ValueError`` this raises :class:`~prompt_formats.errors.FormatError` with
its text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import FormatError, InvalidInputError, type_name
from ..model.messages import message_dict
from ..model.reading import REASONING_FIELDS, is_list

__all__ = ["CONTINUABLE_FIELDS", "NOT_WITH_GENERATION", "TAG_TEXT", "continued_field", "cut_at_tag",
           "render_continued", "tag_final_message"]

_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
#: The tag's text, where the prompt is cut (its last occurrence): text that holds it moves the cut.
TAG_TEXT = _TAG.strip()
#: The fields ``continue_final_message`` may name (``True`` is ``"content"``).
CONTINUABLE_FIELDS = ("content", *REASONING_FIELDS)

NOT_WITH_GENERATION = (
    "continue_final_message and add_generation_prompt are not compatible. Use continue_final_message when you "
    "want the model to continue the final message, and add_generation_prompt when you want to add a header that "
    "will prompt it to start a new assistant message instead."
)


def continued_field(value: Any, add_generation_prompt: Any) -> str | None:
    """The field the option continues (``None``: off), checked; raises as transformers does."""
    if value is None or value is False:
        return None
    if value is True:
        field = "content"
    elif isinstance(value, str) and value in CONTINUABLE_FIELDS:
        field = value
    else:
        # transformers would append its tag to whatever field is named (a role, a name): refused here.
        got = repr(value) if isinstance(value, str) else type_name(value)
        expected = ", ".join(map(repr, CONTINUABLE_FIELDS))
        raise InvalidInputError("continue_final_message", f"expected a bool, null or one of {expected}, got {got}")
    if add_generation_prompt:  # apply_chat_template's check
        raise FormatError(NOT_WITH_GENERATION)
    return field


def _aliased(message: Mapping[str, Any]) -> dict[str, Any]:
    """The message as transformers hands it on: its ``None``-valued keys dropped, then the first
    reasoning also as ``thinking`` and ``reasoning_content`` (so a ``thinking: None`` takes the alias)."""
    plain = {key: value for key, value in message.items() if value is not None}
    reasoning = next((plain[key] for key in REASONING_FIELDS if key in plain), None)
    if reasoning is None:
        return plain
    return {"thinking": reasoning, **plain, "reasoning_content": reasoning}


def _tagged_text(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(path, f"expected a string to continue, got {type_name(value)}")
    return value + _TAG


def tag_final_message(messages: Any, field: str, template: str | None = None) -> tuple[list[Any], str]:
    """The messages with transformers' tag appended to the final message's ``field`` (in a list or
    tuple of parts, to the last part with text; any other value is left as render meets it, so render
    raises its own error), and the text it was appended to; the caller's messages are not changed.
    ``template``: the template's text, which must name the field (transformers' check)."""
    if type(messages) is not list and isinstance(messages, (list, tuple)):
        messages = list(messages)  # (its items, read once by iteration: its own indexing or length could lie)
    if not is_list(messages) or not messages:
        if is_list(messages):
            raise FormatError("continue_final_message is set but the conversation is empty!")
        raise InvalidInputError("messages", f"expected a list of messages, got {type_name(messages)}")
    index = len(messages) - 1
    final = _aliased(message_dict(messages[index], index))
    text = final.get(field)
    path = f"messages[{index}].{field}"
    if text is None:
        raise FormatError(f'continue_final_message is set but the final message has no "{field}" to continue!')
    fields = [name for name in REASONING_FIELDS if final.get(name) == text] if field in REASONING_FIELDS else [field]
    if template is not None and not any(name in template for name in fields):
        raise FormatError(
            f'continue_final_message is set to "{field}" but this is not an accepted field in the chat_template'
        )
    if field in REASONING_FIELDS:
        for name in fields:
            final[name] = _tagged_text(final[name], f"messages[{index}].{name}")
    elif not isinstance(text, (str, list, tuple)):
        # transformers tags a string or a list or tuple of parts; the templates meet any other value
        # as render meets it, untagged, so render raises its own error for it (or the cut refuses).
        return list(messages), ""
    elif isinstance(text, (list, tuple)):
        parts = list(text)
        for k in range(len(parts) - 1, -1, -1):
            part = parts[k]
            if isinstance(part, Mapping) and "text" in part:
                text = part["text"]
                parts[k] = {**part, "text": _tagged_text(text, f"{path}[{k}].text")}
                break
        else:
            raise FormatError("continue_final_message is set but we could not find any text to continue in the final "
                              "message!")
        final[field] = parts
    else:
        final[field] = _tagged_text(text, path)
    return [*messages[:index], final], text


def render_continued(render: Callable[[Any], str], messages: Any, field: str, template: str | None = None) -> str:
    """``render(tagged messages)`` cut where transformers cuts it for ``continue_final_message``;
    ``template``: the fields the template reads, as :func:`tag_final_message` takes them."""
    tagged, text = tag_final_message(messages, field, template)
    return cut_at_tag(render(tagged), text)


def cut_at_tag(prompt: str, text: str) -> str:
    """transformers' cut of a prompt rendered with the tag after ``text``: everything before the tag
    (right-stripped where the template trimmed the tag's own space)."""
    tag = _TAG.strip()
    if text.strip() not in prompt or tag not in prompt:
        raise FormatError(
            "continue_final_message is set but the final message does not appear in the chat after applying the chat "
            "template! This can happen if the chat template deletes portions of the final message. Please verify the "
            "chat template and final message in your chat to ensure they are compatible."
            f"Final message to continue: {text.strip()}\nRendered chat:\n{prompt}"
        )
    at = prompt.rindex(tag)
    if prompt[at:at + len(_TAG)] == _TAG:
        return prompt[:at]
    return prompt[:at].rstrip()
