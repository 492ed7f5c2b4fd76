"""The registry of formats by name. Modules are imported on first use, so importing the package stays cheap."""

from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING, Any

from ..errors import FormatError

if TYPE_CHECKING:
    from .chat_format import ChatFormat

__all__ = ["available_formats", "format_class", "get_format"]

# name -> "module:Class"; a format module is imported only when its name is first asked for.
_FORMATS: dict[str, str] = {
    "chatml-multi-system": "prompt_formats.formats.chatml:ChatMLMultiSystemFormat",
    "chatml-safety": "prompt_formats.formats.chatml:ChatMLSafetyFormat",
    "qwen3.5": "prompt_formats.formats.chatml:Qwen35Format",
    "qwen3.5-nothink": "prompt_formats.formats.chatml:Qwen35NoThinkFormat",
    "qwen3.6": "prompt_formats.formats.chatml:Qwen36Format",
    "qwen3.8": "prompt_formats.formats.chatml:Qwen38Format",
    "qwen3": "prompt_formats.formats.chatml.json_calls:Qwen3Format",
    "qwen3-instruct-2507": "prompt_formats.formats.chatml.json_calls:Qwen3Instruct2507Format",
    "qwen3-vl": "prompt_formats.formats.chatml.json_calls:Qwen3VLFormat",
    "qwen2.5": "prompt_formats.formats.chatml.json_calls:Qwen25Format",
    "nemotron-3-nano": "prompt_formats.formats.chatml.nemotron:Nemotron3NanoFormat",
    "nemotron-3-super": "prompt_formats.formats.chatml.nemotron:Nemotron3SuperFormat",
    "nemotron-3-ultra": "prompt_formats.formats.chatml.nemotron:Nemotron3UltraFormat",
    "nemotron-3.5": "prompt_formats.formats.chatml.nemotron:Nemotron35Format",
    "gpt-oss": "prompt_formats.formats.harmony.openai:GptOssFormat",
    "harmony": "prompt_formats.formats.harmony.ollama:HarmonyFormat",
    "gemma-3": "prompt_formats.formats.gemma:Gemma3Format",
    "gemma-4": "prompt_formats.formats.gemma.gemma4:Gemma4Format",
    "deepseek-v3": "prompt_formats.formats.deepseek:DeepSeekV3Format",
    "glm-4.5": "prompt_formats.formats.glm:Glm45Format",
    "llama-3.1": "prompt_formats.formats.llama:Llama31Format",
    "llama-3.2": "prompt_formats.formats.llama:Llama32Format",
}
_DEFAULT_INSTANCES: dict[str, ChatFormat] = {}
_LOCK = threading.Lock()


def available_formats() -> list[str]:
    """The registered format names, sorted."""
    return sorted(_FORMATS)


def format_class(name: str) -> type[ChatFormat]:
    """The class registered under ``name``; raises :class:`FormatError` for an unknown name."""
    try:
        target = _FORMATS[name]
    except KeyError:
        raise FormatError(
            f"unknown format {name!r} (available: {', '.join(available_formats())})"
        ) from None
    module_name, _, class_name = target.partition(":")
    cls: type[ChatFormat] = getattr(importlib.import_module(module_name), class_name)
    return cls


def get_format(name: str, **config: Any) -> ChatFormat:
    """The format registered under ``name``.

    Without ``config`` the same shared instance is returned every time (formats are stateless);
    with ``config`` (for example ``policy="reject"``) a new instance configured with it. An unknown
    configuration key or a wrong value raises :class:`FormatError` here, not at the first render.
    """
    if config:
        cls = format_class(name)
        accepted = [spec.name for spec in cls.config_specs]
        unknown = sorted(set(config) - set(accepted))
        if unknown:
            raise FormatError(
                f"unknown configuration key {', '.join(map(repr, unknown))} (configuration: {', '.join(accepted)})"
            )
        return cls(**config)
    instance = _DEFAULT_INSTANCES.get(name)
    if instance is None:
        with _LOCK:
            instance = _DEFAULT_INSTANCES.get(name)
            if instance is None:
                instance = _DEFAULT_INSTANCES[name] = format_class(name)()
    return instance
