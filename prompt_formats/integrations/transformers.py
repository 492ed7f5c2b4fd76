"""Token ids and assistant masks for a Hugging Face tokenizer, as ``apply_chat_template`` gives them.

- :func:`encode` turns a :class:`~prompt_formats.format.spans.RenderedPrompt` into ``input_ids``,
  ``attention_mask`` and ``assistant_masks``: what ``tokenizer.apply_chat_template(messages,
  chat_template=<a template with {% generation %} tags around the generated text>, tokenize=True,
  return_dict=True, return_assistant_tokens_mask=True)`` returns for the same conversation, without
  a tagged template.
- :func:`apply_chat_template` takes ``apply_chat_template``'s arguments and returns what it returns,
  rendering with a format of this package instead of Jinja.
- :class:`~prompt_formats.integrations.segments.SegmentEncoder` returns :func:`encode`'s result with
  the text between the tokenizer's added tokens tokenized once and cached, where that is exact.

The tokenizer is called exactly as transformers calls it (the whole prompt, ``add_special_tokens=False``)
and the mask comes from the tokenizer's own character offsets by transformers' rule: a token is
masked when its offsets overlap a generated range (a token with empty offsets, as byte-level BPE
gives some whitespace tokens with ``trim_offsets``, only when it lies strictly inside one). A fast
tokenizer (one with offsets) is required. Needs ``transformers`` and ``tokenizers`` (the
``transformers`` extra); the module imports transformers only to turn function tools into JSON
schemas, as transformers does. docs/training-data.md describes spans, masks and this integration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import regex

from ..errors import FormatError, InvalidInputError, type_name
from ..format.chat_format import ChatFormat
from ..format.continuation import NOT_WITH_GENERATION, cut_at_tag, tag_final_message
from ..format.registry import get_format
from ..format.spans import Range, RenderedPrompt

__all__ = ["apply_chat_template", "assistant_token_mask", "encode", "encode_with_tokenizer"]

_SURROGATE = regex.compile(r"[\ud800-\udfff]")
# transformers' messages, word for word (continue_final_message's: prompt_formats.format.continuation).
_MASK_NEEDS_DICT = "`return_assistant_tokens_mask=True` requires `return_dict=True` and `tokenize=True`"
_EMPTY = "Cannot apply chat template to an empty conversation. Provide at least one message."
_CONTINUE_AND_MASK = "continue_final_message is not compatible with return_assistant_tokens_mask."


def assistant_token_mask(offsets: Sequence[tuple[int, int]], generated: Sequence[Range]) -> list[int]:
    """1 for each token whose character offsets overlap a generated range, else 0.

    transformers' own loop over sorted, non-empty ranges (``generated`` of a
    :class:`~prompt_formats.format.spans.RenderedPrompt` is such): one pass, both in order.
    """
    mask = [0] * len(offsets)
    span = 0
    for token, (token_start, token_end) in enumerate(offsets):
        while span < len(generated) and token_start >= generated[span][1]:
            span += 1
        if span == len(generated):
            break
        if token_end > generated[span][0]:
            mask[token] = 1
    return mask


def _check_text(text: str, path: str) -> None:
    # A lone surrogate would make the tokenizer raise a TypeError naming neither the prompt nor the place.
    if not text.isascii() and (found := _SURROGATE.search(text)) is not None:
        raise InvalidInputError(path, f"a lone surrogate at character {found.start()}: no tokenizer encodes it")


def _tokenize(
    tokenizer: Any, texts: list[str], generated: list[tuple[Range, ...]] | None, batched: bool, **call: Any
) -> Any:
    """The tokenizer's ``BatchEncoding`` of the texts, called as apply_chat_template calls it, with
    ``assistant_masks`` added from ``generated`` (one tuple of ranges per text) unless it is None."""
    for index, text in enumerate(texts):
        _check_text(text, f"conversation[{index}]" if batched else "text")
    out = tokenizer(texts if batched else texts[0], add_special_tokens=False, **call)
    if generated is not None:
        encodings = out.encodings
        if not encodings:
            raise FormatError(f"assistant masks need a fast tokenizer (with offsets), got {type_name(tokenizer)}")
        found = [
            assistant_token_mask(encoding.offsets, ranges)
            for encoding, ranges in zip(encodings, generated, strict=True)
        ]
        out["assistant_masks"] = found if batched or call.get("return_tensors") else found[0]
        if call.get("return_tensors"):
            out.convert_to_tensors(tensor_type=call["return_tensors"])
    return out


def encode(rendered: RenderedPrompt, tokenizer: Any) -> dict[str, Any]:
    """``input_ids``, ``attention_mask`` (and any other input the tokenizer returns) and
    ``assistant_masks`` of a rendered prompt.

    Exactly what ``tokenizer.apply_chat_template(messages, chat_template=tagged, tokenize=True,
    return_dict=True, return_assistant_tokens_mask=True)`` returns as a dict when ``tagged`` renders
    ``rendered.text`` with generation indices covering ``rendered.generated``. Raises
    :class:`~prompt_formats.errors.FormatError` for a tokenizer without offsets and
    :class:`~prompt_formats.errors.InvalidInputError` for text a tokenizer cannot take.
    """
    if not isinstance(rendered, RenderedPrompt):
        raise InvalidInputError("rendered", f"expected a RenderedPrompt, got {type_name(rendered)}")
    out = _tokenize(tokenizer, [rendered.text], [rendered.generated], False, **_TOKENIZER_DEFAULTS)
    return dict(out)


def encode_with_tokenizer(rendered: RenderedPrompt, tokenizer: Any) -> dict[str, list[int]]:
    """:func:`encode` for a ``tokenizers.Tokenizer`` (a ``tokenizer.json`` loaded without transformers).

    ``input_ids``, ``attention_mask`` and ``assistant_masks`` equal to what :func:`encode` returns
    for ``PreTrainedTokenizerFast(tokenizer_object=tokenizer)``: the same call (the whole prompt,
    ``add_special_tokens=False``) and the same mask rule. :func:`encode` tokenizes with truncation and
    padding off, so a tokenizer that has either set is refused (``no_truncation()``,
    ``no_padding()``) rather than changed behind the caller's back. Raises
    :class:`~prompt_formats.errors.InvalidInputError` for that and for text no tokenizer can take.
    """
    if not isinstance(rendered, RenderedPrompt):
        raise InvalidInputError("rendered", f"expected a RenderedPrompt, got {type_name(rendered)}")
    if tokenizer.truncation is not None or tokenizer.padding is not None:
        raise InvalidInputError(
            "tokenizer", "truncates or pads: call no_truncation() and no_padding() first, as encode's call does"
        )
    _check_text(rendered.text, "text")
    encoding = tokenizer.encode(rendered.text, add_special_tokens=False)
    return {
        "input_ids": list(encoding.ids),
        "attention_mask": list(encoding.attention_mask),
        "assistant_masks": assistant_token_mask(encoding.offsets, rendered.generated),
    }


_TOKENIZER_DEFAULTS: dict[str, Any] = {
    "padding": False,
    "truncation": False,
    "max_length": None,
    "return_tensors": None,
    "sanitize_control_tokens": False,
}


# The configuration under which a detected format renders its reference template on every input, as
# transformers does: chatml-safety's guard escapes control tokens the template would write as they are.
_AS_THE_TEMPLATE: dict[str, dict[str, Any]] = {"chatml-safety": {"policy": "allow"}}


def _resolve_format(tokenizer: Any, fmt: str | ChatFormat | None, chat_template: str | None, tools: Any) -> ChatFormat:
    """The format given, or the one whose reference template the tokenizer would use (fails closed)."""
    if isinstance(fmt, ChatFormat):
        return fmt
    if fmt is not None:
        return get_format(fmt)
    from ..format.detect import match_template

    template = _template_text(tokenizer, chat_template, tools)
    match = match_template(template)
    if match.format is None:
        raise FormatError(
            f"the chat template is not one a format of prompt_formats renders: {match.reason}; pass format= to "
            "choose one, or call tokenizer.apply_chat_template"
        )
    return get_format(match.format, **_AS_THE_TEMPLATE.get(match.format, {}))


def _template_text(tokenizer: Any, chat_template: str | None, tools: Any) -> Any:
    """The template text transformers would use (a named template of a dict picked as it picks it)."""
    try:
        return tokenizer.get_chat_template(chat_template, tools)
    except ValueError as exc:
        raise FormatError(str(exc)) from None


def _tool_schemas(tools: Any) -> Any:
    """Tools as transformers takes them: JSON schemas, or functions turned into schemas by its own
    ``get_json_schema``; anything else (a ``PreparedTools``) is passed to the format as it is."""
    if not isinstance(tools, list) or all(isinstance(tool, dict) for tool in tools):
        return tools
    import inspect

    from transformers.utils.chat_template_utils import get_json_schema

    schemas = []
    for index, tool in enumerate(tools):
        if isinstance(tool, dict):
            schemas.append(tool)
        elif inspect.isfunction(tool) or inspect.ismethod(tool):
            schemas.append(get_json_schema(tool))
        else:
            raise InvalidInputError(f"tools[{index}]", f"expected a JSON schema or a function, got {type_name(tool)}")
    return schemas


def _normalized(conversation: Any, path: str) -> list[Any]:
    """transformers' normalisation: message dicts lose the keys whose value is None (gpt-oss's template
    reads a present ``content: None`` unlike a missing one); other message objects are kept."""
    if not isinstance(conversation, Sequence) or isinstance(conversation, (str, bytes)):
        raise InvalidInputError(path, f"expected a list of messages, got {type_name(conversation)}")
    return [
        {key: value for key, value in message.items() if value is not None} if isinstance(message, Mapping) else message
        for message in conversation
    ]


def _render_one(
    fmt: ChatFormat, chat: list[Any], tools: Any, gen: bool, cont: bool | str, template: str | None,
    options: Mapping[str, Any],
) -> str:
    """One conversation's text, rendered by ``fmt`` as transformers renders it with the format's template."""
    if cont:
        tagged, final_message = tag_final_message(chat, cont if isinstance(cont, str) else "content", template)
        return cut_at_tag(fmt.render(tagged, tools, gen, **options), final_message)
    return fmt.render(chat, tools, gen, **options)


def _render_spans(
    fmt: ChatFormat, chat: list[Any], tools: Any, gen: bool, options: Mapping[str, Any]
) -> RenderedPrompt:
    """The format's spans of one conversation (a format without render_spans raises naming itself)."""
    if not fmt.renders_spans:
        raise FormatError(f"format {fmt.name!r} has no render_spans: assistant masks are not available for it")
    rendered = fmt.render_spans(chat, tools=tools, add_generation_prompt=gen, **options)
    if not isinstance(rendered, RenderedPrompt):
        raise FormatError(f"format {fmt.name!r}: render_spans returned {type_name(rendered)}, not a RenderedPrompt")
    return rendered


def apply_chat_template(
    tokenizer: Any,
    conversation: Any,
    *,
    format: str | ChatFormat | None = None,
    tools: Any = None,
    documents: Any = None,
    chat_template: str | None = None,
    add_generation_prompt: bool = False,
    continue_final_message: bool | str = False,
    tokenize: bool = True,
    sanitize_control_tokens: bool = False,
    padding: Any = False,
    truncation: Any = False,
    max_length: int | None = None,
    return_tensors: Any = None,
    return_dict: bool = True,
    return_assistant_tokens_mask: bool = False,
    tokenizer_kwargs: Mapping[str, Any] | None = None,
    **template_kwargs: Any,
) -> Any:
    """``tokenizer.apply_chat_template(conversation, ...)``, rendered by a format of this package.

    Takes transformers' arguments and returns what it returns: the prompt text (``tokenize=False``;
    a list for a batch of conversations), the token ids (``return_dict=False``), or the tokenizer's
    ``BatchEncoding`` with ``assistant_masks`` when asked for: the masks transformers would give
    with a template carrying ``{% generation %}`` tags around what the format counts as generated.
    ``template_kwargs`` are the format's options (``enable_thinking=False``); an option the format
    does not define is refused (transformers passes it to the template, which ignores it).

    ``format`` (a name or a format object) says which format renders; without it, the format whose
    reference template the tokenizer would use (``chat_template`` or the tokenizer's own) is
    :func:`~prompt_formats.format.detect.detect_format`'s answer, configured to render exactly as the
    template does (``chatml-safety`` with ``policy="allow"``: pass ``format=`` to keep its guard),
    and a template no format reproduces raises :class:`~prompt_formats.errors.FormatError` with the
    reason. ``documents`` are ignored, as by
    every reference template. Masks need the format's ``render_spans``. transformers' ``ValueError``
    messages are raised as :class:`~prompt_formats.errors.FormatError` (a ``ValueError``).
    """
    if not tokenize:
        return_dict = False
    _check_arguments(return_dict, tokenize, return_assistant_tokens_mask, sanitize_control_tokens, documents)
    tools = _tool_schemas(tools)
    fmt = _resolve_format(tokenizer, format, chat_template, tools)
    conversations, batched = _split_batch(conversation)
    if continue_final_message:
        if add_generation_prompt:
            raise FormatError(NOT_WITH_GENERATION)
        if return_assistant_tokens_mask:
            raise FormatError(_CONTINUE_AND_MASK)
    texts, generated = _render_all(
        fmt, conversations, batched, tools, add_generation_prompt, continue_final_message,
        return_assistant_tokens_mask, template_kwargs,
        lambda: _template_text(tokenizer, chat_template, tools) if format is None else None,
    )
    if not tokenize:
        return texts if batched else texts[0]
    call = _tokenizer_call(padding, truncation, max_length, return_tensors, tokenizer_kwargs)
    out = _tokenize(tokenizer, texts, generated, batched, **call)
    return out if return_dict else out["input_ids"]


def _tokenizer_call(
    padding: Any, truncation: Any, max_length: int | None, return_tensors: Any, extra: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The keyword arguments transformers calls the tokenizer with (an argument given twice refused)."""
    call = {"padding": padding, "truncation": truncation, "max_length": max_length, "return_tensors": return_tensors}
    call["sanitize_control_tokens"] = False
    if clash := sorted(set(extra or {}) & {*call, "add_special_tokens"}):
        raise InvalidInputError("tokenizer_kwargs", f"{', '.join(clash)}: given as an argument of its own as well")
    return {**call, **(extra or {})}


def _render_all(
    fmt: ChatFormat, conversations: list[Any], batched: bool, tools: Any, gen: bool, cont: bool | str, masks: bool,
    options: Mapping[str, Any], template: Callable[[], str | None],
) -> tuple[list[str], list[tuple[Range, ...]] | None]:
    """Each conversation's text, and its generated ranges when ``masks``; ``template`` gives the
    template's text, against which transformers checks the field ``continue_final_message`` names."""
    chats = [
        _normalized(chat, f"conversation[{index}]" if batched else "conversation")
        for index, chat in enumerate(conversations)
    ]
    if masks:
        rendered = [_render_spans(fmt, chat, tools, gen, options) for chat in chats]
        return [prompt.text for prompt in rendered], [prompt.generated for prompt in rendered]
    text_of_template = template() if cont else None
    return [_render_one(fmt, chat, tools, gen, cont, text_of_template, options) for chat in chats], None


def _check_arguments(return_dict: bool, tokenize: bool, masks: bool, sanitize: bool, documents: Any) -> None:
    """transformers' own refusals (as FormatError), and what this integration does not support."""
    if masks and not (return_dict and tokenize):
        raise FormatError(_MASK_NEEDS_DICT)
    if sanitize:
        raise FormatError(
            "sanitize_control_tokens is not supported: the chatml-safety format's guard escapes control tokens in "
            "untrusted text (docs/safety.md)"
        )
    if documents is not None and not all(isinstance(document, dict) for document in documents):
        raise InvalidInputError("documents", "Documents should be a list of dicts with 'title' and 'text' keys!")


def _split_batch(conversation: Any) -> tuple[list[Any], bool]:
    """transformers' test for a batch: a list whose first item is a list (or has ``messages``)."""
    if isinstance(conversation, (list, tuple)) and len(conversation) == 0:
        raise FormatError(_EMPTY)
    if isinstance(conversation, (list, tuple)) and (
        isinstance(conversation[0], (list, tuple)) or hasattr(conversation[0], "messages")
    ):
        return [getattr(chat, "messages", chat) for chat in conversation], True
    return [getattr(conversation, "messages", conversation)], False
