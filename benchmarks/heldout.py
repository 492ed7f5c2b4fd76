"""Held-out corpora for the headline benchmarks: the everyday and the agent mix of issue 18.

Generated here from a seeded :class:`random.Random` (the tests' hypothesis strategies are not used,
so the corpus is not the input the code was tuned on); the same arguments always give the same
jobs. Each :class:`Job` is one request as a server receives it, decoded from its own JSON text
(:func:`as_received`): the messages, the tool list (a repeated tool list is equal, never the same
object) and the render options passed as keywords.

The proportions are written in ``docs/performance.md``; the constants below are the source.

``flavour`` says which format family the corpus must be valid for: ``"chatml"`` (every feature),
``"chatml-strict"`` (one leading system message: the later ones become ``<system-reminder>``
text in the next user message, as for the upstream template), ``"harmony"`` (no images: the
format is text only; options ``current_date``/``reasoning_effort``), ``"gpt-oss"`` (as harmony,
with one leading system message as ``chatml-strict`` and string content only, since the published
template reads ``message.content`` as a string; an assistant tool call with reasoning loses its
preamble, which that template refuses beside reasoning).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple

import corpus

__all__ = [
    "Flavour", "Job", "Wire", "agent_jobs", "as_received", "everyday_jobs", "rendered_as_received", "to_wire",
    "without_call_preambles",
]

Flavour = Literal["chatml", "chatml-strict", "harmony", "gpt-oss"]
Message = dict[str, Any]

# Proportions (per request unless said otherwise).
TEXT_PARTS = 0.30  # of user and system messages: content given as a list of text parts
IMAGES = 0.12  # of requests: one user message carries one or two image parts (ChatML only)
EXTRA_SYSTEM = 0.20  # of requests: one or two later system messages (reminders)
RICH_ARGUMENTS = 0.50  # of tool calls: a float, a nested object or list, and a bool argument added
REASONING = 0.45  # of assistant turns: reasoning in history (a tenth of them inline as <think>)
KEYWORD_OPTIONS = 0.50  # of requests: render options passed as keywords
SHARED_TOOLSETS = 6  # tool-using requests draw their tool list from this many app toolsets
AGENT_IMAGES = 0.5  # of agent sessions: one user message carries one or two image parts (ChatML only)


class Job(NamedTuple):
    """One request: messages, tools (``None``: no tools) and the keyword options of the render."""

    messages: list[Message]
    tools: list[dict[str, Any]] | None
    options: dict[str, Any]


def as_received(jobs: list[Job]) -> list[Job]:
    """Each job as a server holds it: decoded from its own JSON text (fresh, compact objects).

    Generated objects are scattered over memory among the generator's garbage; a request decoded
    from the wire is not, and the benchmark should not charge either engine for the difference.
    A ``PreparedTools`` (not JSON) is kept as it is."""
    out = []
    for messages, tools, options in jobs:
        plain = tools is None or isinstance(tools, list)
        decoded = json.loads(json.dumps({"m": messages, "t": tools if plain else None, "o": options}))
        out.append(Job(decoded["m"], decoded["t"] if plain else tools, decoded["o"]))
    return out


class Wire(NamedTuple):
    """A job as it arrives: the JSON text of its messages and plain tools, a ``PreparedTools`` kept
    aside (it is not JSON), and the options."""

    text: str
    prepared: Any
    options: dict[str, Any]


def to_wire(jobs: Sequence[Job]) -> list[Wire]:
    """Each job's JSON text (a ``PreparedTools`` kept as it is)."""
    out = []
    for messages, tools, options in jobs:
        plain = tools is None or isinstance(tools, list)
        out.append(Wire(json.dumps({"m": messages, "t": tools if plain else None}), None if plain else tools, options))
    return out


def rendered_as_received(
    render: Callable[..., str],
) -> Callable[[Sequence[Wire]], tuple[list[str], float]]:
    """A self-timed pass for ``timing.straight``: each request decoded just before it is rendered
    (untimed), as a server does, then its render timed; the outputs and CPU µs per request.

    Every engine so meets each request fresh from the decoder, in the same state of the CPU's
    caches, whatever ran before it on a shared machine."""
    clock = time.thread_time_ns

    def work(wires: Sequence[Wire]) -> tuple[list[str], float]:
        outputs = []
        total = 0
        for text, prepared, options in wires:
            decoded = json.loads(text)
            tools = prepared if prepared is not None else decoded["t"]
            start = clock()
            outputs.append(render(decoded["m"], tools, True, **options))
            total += clock() - start
        return outputs, total / len(wires) / 1000

    return work


def _parts(rng: random.Random, text: str) -> list[dict[str, Any]]:
    cut = rng.randrange(len(text)) if text else 0
    pieces = [text[:cut], text[cut:]] if 0 < cut < len(text) else [text]
    return [{"type": "text", "text": piece} for piece in pieces]


def _image(rng: random.Random) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"https://example.com/img/{rng.randrange(10**6)}.png"}}


def _rich_arguments(rng: random.Random, arguments: Any) -> Any:
    if not isinstance(arguments, dict) or rng.random() >= RICH_ARGUMENTS:
        return arguments
    return {
        **arguments,
        "temperature": round(rng.uniform(0, 2), 3),
        "filters": {"since": f"2025-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}", "limit": rng.randint(1, 100),
                    "tags": rng.sample(("a", "b", "ops", "db", "ui"), 2), "strict": rng.random() < 0.5},
        "dry_run": rng.random() < 0.5,
    }


def _dress_message(rng: random.Random, message: Message, flavour: Flavour) -> Message:
    message = dict(message)
    role = message["role"]
    if role == "assistant":
        if "tool_calls" in message:
            message["tool_calls"] = [
                {**call, "function": {**call["function"],
                                      "arguments": _rich_arguments(rng, call["function"]["arguments"])}}
                for call in message["tool_calls"]
            ]
        reasoning = message.pop("reasoning_content", None)
        if reasoning is not None and rng.random() < REASONING / 0.5:  # corpus.py gives about half
            if rng.random() < 0.1 and flavour.startswith("chatml") and message.get("content"):
                message["content"] = f"<think>\n{reasoning}\n</think>\n\n{message['content']}"
            else:
                message["reasoning_content"] = reasoning
                if flavour == "gpt-oss" and message.get("tool_calls"):
                    message["content"] = ""  # the template refuses content and reasoning beside a tool call
    elif role in ("user", "system") and flavour != "gpt-oss" and rng.random() < TEXT_PARTS:
        message["content"] = _parts(rng, message["content"])
    return message


def without_call_preambles(messages: list[Message]) -> list[Message]:
    """An assistant tool call with reasoning loses its content (the gpt-oss template refuses both)."""
    return [{**m, "content": ""} if m["role"] == "assistant" and m.get("tool_calls") and m.get("reasoning_content")
            else m for m in messages]


def _add_image(rng: random.Random, messages: list[Message]) -> None:
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    if not users:
        return
    i = rng.choice(users)
    content = messages[i]["content"]
    parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
    messages[i] = {**messages[i], "content": [*(_image(rng) for _ in range(rng.randint(1, 2))), *parts]}


def _options(rng: random.Random, flavour: Flavour, has_image: bool) -> dict[str, Any]:
    if rng.random() >= KEYWORD_OPTIONS:
        return {}
    if flavour.startswith("chatml"):
        options: dict[str, Any] = {"enable_thinking": rng.random() < 0.6}
        if rng.random() < 0.3:
            options["preserve_thinking"] = True
        if has_image:
            options["add_vision_id"] = True
        return options
    effort = rng.choice(("low", "medium", "high"))
    return {"reasoning_effort": effort} if flavour == "gpt-oss" else {"reasoning_effort": effort,
                                                                       "current_date": "2025-08-05"}


def _extra_system(rng: random.Random, messages: list[Message]) -> list[Message]:
    later = [i for i, m in enumerate(messages) if i and m["role"] == "user"]
    for i in sorted(rng.sample(later, min(len(later), rng.randint(1, 2))), reverse=True):
        text = "<system-reminder>" + corpus._sentence(rng, 12) + "</system-reminder>"
        messages.insert(i, {"role": "system", "content": text})
    return messages


def _dress(
    rng: random.Random, messages: list[Message], flavour: Flavour, agent: bool = False
) -> tuple[list[Message], bool]:
    """The features of issue 18 laid over a generated conversation; also whether it holds images.

    An everyday conversation gets its later system messages from ``EXTRA_SYSTEM`` alone; an agent
    session keeps the system reminders it was generated with."""
    if not agent:
        messages = [m for i, m in enumerate(messages) if m["role"] != "system" or i == 0]
        if rng.random() < EXTRA_SYSTEM:
            messages = _extra_system(rng, messages)
    if flavour == "chatml-strict":  # its template raises on a later system message (gpt-oss drops it)
        messages = corpus._inline_reminders(messages)
    messages = [_dress_message(rng, m, flavour) for m in messages]
    has_image = flavour.startswith("chatml") and rng.random() < (AGENT_IMAGES if agent else IMAGES)
    if has_image:
        _add_image(rng, messages)
    return messages, has_image


def everyday_jobs(n: int, seed: int = 0, flavour: Flavour = "chatml") -> list[Job]:
    """``n`` everyday requests in the proportions above (``corpus.realistic_requests`` underneath)."""
    rng = random.Random(f"everyday-{flavour}-{seed}")
    apps = [corpus._small_tools(rng) for _ in range(SHARED_TOOLSETS)]
    weights = [1 / (k + 1) for k in range(SHARED_TOOLSETS)]
    jobs = []
    for request in corpus.realistic_requests(n, seed + 1000):
        messages, has_image = _dress(rng, request.messages, flavour)
        tools = None
        if request.tools is not None:
            tools = rng.choices(apps, weights)[0] if rng.random() < 0.7 else request.tools
        jobs.append(Job(messages, tools, _options(rng, flavour, has_image)))
    return as_received(jobs)


def agent_jobs(sessions: int = 2, seed: int = 0, flavour: Flavour = "chatml", every: int = 24) -> list[Job]:
    """Follow-up requests of ``sessions`` coding-agent sessions (257 messages, 40 tools each).

    A session sends its growing history: a request after about every ``every`` messages, each
    with a fresh copy of the session's tool list (a repeated tool list) and the session's options.
    """
    rng = random.Random(f"agent-{flavour}-{seed}")
    jobs = []
    for s in range(sessions):
        request = corpus.agent_request(257, 40, seed + 1000 + s)
        messages, has_image = _dress(rng, request.messages, flavour, agent=True)
        options = _options(rng, flavour, has_image)
        cuts = [i + 1 for i, m in enumerate(messages) if m["role"] in ("user", "tool")
                and (i + 1 == len(messages) or messages[i + 1]["role"] == "assistant")]
        chosen = [cut for k, cut in enumerate(cuts) if cut == cuts[-1] or k % max(1, every // 4) == 0]
        for cut in dict.fromkeys(c for c in chosen if c >= every // 2):
            jobs.append(Job(messages[:cut], request.tools, options))
    return as_received(jobs)
