"""What GLM-4.5's template prints as Python prints it, refused under a guard: its strings would go
unchecked (the guard reads strings and text parts, not an object's printed text)."""

from __future__ import annotations

from typing import Any

from ...errors import InvalidInputError, type_name

__all__ = ["refuse_printed"]

_REFUSED = "(with a guard, the template's printing of it as Python prints it is refused: its text would go unchecked)"


def _refuse_printed_keys(call: Any, path: str) -> None:
    """An argument key that is no string is printed as Python prints it: refused."""
    body = call.get("function") or call if type(call) is dict else None
    arguments = body.get("arguments") if type(body) is dict else None
    if type(arguments) is dict and any(type(key) is not str for key in arguments):
        raise InvalidInputError(f"{path}.arguments", f"a key that is no string {_REFUSED}")


def refuse_printed(msgs: list[dict[str, Any]]) -> None:
    """Raise :class:`InvalidInputError` at the first content the template would print as Python
    prints it: an object or a list's string item (any role's), a tool result that is no string; and
    at a call whose ``function`` is empty (the template then reads the call's own name and arguments,
    the guard the function's)."""
    for i, message in enumerate(msgs):
        calls = message.get("tool_calls")
        for k, call in enumerate(calls if type(calls) in (list, tuple) and calls else ()):
            if type(call) is dict and "function" in call and not call["function"]:
                empty = type_name(call["function"])
                raise InvalidInputError(f"messages[{i}].tool_calls[{k}].function", f"an empty {empty}: the template "
                                        "reads the call's own name and arguments (with a guard, refused: unchecked)")
            _refuse_printed_keys(call, f"messages[{i}].tool_calls[{k}]")
        content = message.get("content")
        path = f"messages[{i}].content"
        if content is None or type(content) is str or type(content) in (int, float, bool):
            continue
        if message.get("role") == "tool":
            raise InvalidInputError(path, f"expected a string, got {type_name(content)} {_REFUSED}")
        if type(content) not in (list, tuple):
            raise InvalidInputError(path, f"expected a string or a list of parts, got {type_name(content)} {_REFUSED}")
        for j, item in enumerate(content):
            if isinstance(item, str):
                raise InvalidInputError(f"{path}[{j}]", f"a string among the parts {_REFUSED}")
