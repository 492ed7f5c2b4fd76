"""What the record readers do with each key of a chat request that is not the conversation itself.

A render record is a chat request as a client sends it to an OpenAI-compatible server (OpenAI, vLLM,
SGLang). Its keys fall in three groups besides ``messages``, ``tools``, the id, the format's options,
``chat_template_kwargs`` and ``add_generation_prompt``:

- :data:`IGNORED_REQUEST_KEYS`: keys that do not change the prompt (sampling, decoding, output
  shape, transport, tool choice). They are ignored, so a request file made for a server renders as
  it is. ``reasoning_effort`` and ``verbosity`` are among them for a format that has no such option
  (ChatML): the server renders the same prompt with or without them, since the template never reads
  them; a format that has the option (Harmony's ``reasoning_effort``) reads it as its option.
- :data:`REFUSED_REQUEST_KEYS`: keys that would change the prompt and that the format cannot
  honour; each fails the record with the reason, rather than render a prompt without it. A format
  that declares one of them as an option (the ChatML formats' ``continue_final_message``) reads it
  as that option instead.
- ``extra_body``: what the OpenAI SDK merges into the request; its keys are read as top-level keys
  (a key in both places fails the record).

Any other key fails the record (a misspelt option is never silently ignored), and with
``--strict-keys`` so does every ignored key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InvalidInputError

__all__ = ["IGNORED_REQUEST_KEYS", "REFUSED_REQUEST_KEYS", "merge_extra_body", "refusal"]

#: Chat-request keys that do not change the prompt (OpenAI's and vLLM's), ignored by the record readers.
IGNORED_REQUEST_KEYS = frozenset({
    # OpenAI chat completions
    "model", "temperature", "top_p", "n", "stream", "stream_options", "stop", "seed", "max_tokens",
    "max_completion_tokens", "presence_penalty", "frequency_penalty", "logit_bias", "logprobs",
    "top_logprobs", "user", "metadata", "store", "service_tier", "tool_choice", "function_call",
    "parallel_tool_calls", "response_format", "modalities", "audio", "prediction", "prompt_cache_key",
    "safety_identifier", "reasoning_effort", "verbosity", "web_search_options",
    # vLLM and SGLang sampling, decoding and scheduling parameters
    "top_k", "min_p", "repetition_penalty", "length_penalty", "min_tokens", "stop_token_ids",
    "include_stop_str_in_output", "ignore_eos", "skip_special_tokens", "spaces_between_special_tokens",
    "truncate_prompt_tokens", "prompt_logprobs", "allowed_token_ids", "bad_words", "best_of",
    "use_beam_search", "echo", "add_special_tokens", "guided_json", "guided_regex", "guided_choice",
    "guided_grammar", "guided_decoding_backend", "guided_whitespace_pattern", "structured_outputs",
    "priority", "request_id", "return_tokens_as_token_ids", "return_token_ids", "cache_salt",
    "kv_transfer_params", "vllm_xargs", "mm_processor_kwargs", "logits_processors",
})

#: Keys that would change the prompt and that the formats cannot honour: the reason each is refused.
REFUSED_REQUEST_KEYS: Mapping[str, str] = {
    "functions": "legacy function definitions would add tools to the prompt; send them as 'tools'",
    "chat_template": "a request's own chat template would replace the format's template",
    "documents": "the format's template does not read documents, so they would be missing from the prompt",
    "continue_final_message": "the format cannot leave the final message open to be continued "
    "(accepted only as false or null)",
}
# A refused key whose value says "off" changes nothing, so it is accepted.
_ACCEPTED_WHEN_OFF = frozenset({"continue_final_message"})


def refusal(key: str, value: Any, path: str) -> InvalidInputError | None:
    """The error for a refused key at ``path`` (``None`` when its value changes nothing)."""
    if key in _ACCEPTED_WHEN_OFF and (value is None or value is False):
        return None
    return InvalidInputError(path, REFUSED_REQUEST_KEYS[key])


def merge_extra_body(request: Mapping[str, Any], prefix: str) -> Mapping[str, Any]:
    """``request`` with the keys of its ``extra_body`` (as the OpenAI SDK sends them) at the top level."""
    extra = request.get("extra_body")
    if extra is None:
        return {key: value for key, value in request.items() if key != "extra_body"}
    if not isinstance(extra, Mapping):
        raise InvalidInputError(prefix + "extra_body", "expected an object")
    merged = {key: value for key, value in request.items() if key != "extra_body"}
    for key, value in extra.items():
        if key in merged or key == "extra_body":
            raise InvalidInputError(prefix + "extra_body." + key, "also given at the top level of the request")
        merged[key] = value
    return merged
