"""ChatML's serving options under render_spans: the same options and errors as render."""

from __future__ import annotations

import json

import pytest

from prompt_formats import FormatError, get_format

MESSAGES = [
    {"role": "user", "content": "What is the weather in Paris?"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": json.dumps({"city": "Paris"})}},
    ]},
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    {"role": "assistant", "content": "It is sunny."},
]


@pytest.mark.parametrize("name", ["chatml-multi-system", "chatml-safety"])
@pytest.mark.parametrize("decode", [True, False])
def test_render_spans_takes_decode_tool_arguments_as_render_does(name: str, decode: bool) -> None:
    fmt = get_format(name)
    rendered = fmt.render_spans(MESSAGES, decode_tool_arguments=decode)
    assert rendered.text == fmt.render(MESSAGES, decode_tool_arguments=decode)
    # Decoded, the call's argument is a parameter of its own; as given, the JSON text is printed whole.
    assert ("<parameter=city>" in rendered.text) is decode
    generated = [rendered.text[start:end] for start, end in rendered.generated]
    assert generated[-1].endswith("It is sunny.<|im_end|>")
    assert len(generated) == 2 and "<tool_call>" in generated[0]


@pytest.mark.parametrize("name", ["chatml-multi-system", "chatml-safety"])
def test_render_spans_takes_continue_final_message_as_render_does(name: str) -> None:
    fmt = get_format(name)
    rendered = fmt.render_spans(MESSAGES, continue_final_message=True)
    assert rendered.text == fmt.render(MESSAGES, continue_final_message=True)
    assert rendered.text.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\nIt is sunny.")  # left open
    start = rendered.text.rindex("<|im_start|>assistant\n") + len("<|im_start|>assistant\n")
    assert rendered.messages[-1] == ((start, len(rendered.text)),) == rendered.generated[-1:]
    with pytest.raises(FormatError, match=r"^continue_final_message and add_generation_prompt are not compatible"):
        fmt.render_spans(MESSAGES, add_generation_prompt=True, continue_final_message=True)
