"""chatml-multi-system's merge of system messages: errors in the order the template meets them.

The merge renders every system message's content in message order; a role that is not a string is
refused where the message is met. So whichever comes first in the list is the error raised. Expected
messages: the template's own text (TemplateError) and the package's documented field error.
"""

from __future__ import annotations

from typing import Any

import pytest

import prompt_formats as pf

IMAGE_SYSTEM = {"role": "system", "content": [{"type": "image"}]}
BAD_ROLE = {"role": 3, "content": "x"}
USER = {"role": "user", "content": "hi"}


class Role(str):
    """A role that is a string, but not exactly ``str``."""


@pytest.mark.parametrize(
    ("messages", "error", "message"),
    [
        ([IMAGE_SYSTEM, BAD_ROLE, USER], pf.TemplateError, "System message cannot contain images."),
        ([USER, BAD_ROLE, IMAGE_SYSTEM], pf.InvalidInputError, "messages[1].role: expected a string, got int"),
        ([USER, {"role": "system", "content": "a"}, BAD_ROLE, IMAGE_SYSTEM], pf.InvalidInputError,
         "messages[2].role: expected a string, got int"),
    ],
)
def test_the_first_error_in_message_order_is_raised(messages: list[Any], error: type, message: str) -> None:
    with pytest.raises(error) as raised:
        pf.get_format("chatml-multi-system").render(messages)
    assert str(raised.value) == message


def test_roles_that_are_string_subclasses_merge_like_strings() -> None:
    fmt = pf.get_format("chatml-multi-system")
    plain = [{"role": "system", "content": "a"}, USER, {"role": "system", "content": "b"},
             {"role": "user", "content": "c"}]
    subclassed = [{**message, "role": Role(message["role"])} for message in plain]
    assert fmt.render(subclassed, None, True) == fmt.render(plain, None, True)
    spans = fmt.render_spans(subclassed, None, True)
    assert [[spans.text[a:b] for a, b in ranges] for ranges in spans.messages] == [["a"], ["hi"], ["b"], ["c"]]
