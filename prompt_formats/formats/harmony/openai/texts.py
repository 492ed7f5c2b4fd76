"""The fixed text of the gpt-oss template's messages, built from the Harmony family's tokens.

The atomic control tokens and the headers both templates write are Harmony's
(:mod:`prompt_formats.formats.harmony.tokens`, where they are spelt once); the combinations below
are the gpt-oss template's own.
"""

from __future__ import annotations

from ..tokens import ANALYSIS, CALL, CHANNEL, END, FINAL, GENERATION, MESSAGE, RETURN, START, USER

__all__ = [
    "ANALYSIS", "BROWSER_TOOL", "CALL", "CALL_CHANNEL", "CALL_HEAD", "CHANNEL", "CHANNELS", "CHANNEL_TAGS", "DEVELOPER",
    "END", "FINAL", "FUNCTIONS_CHANNEL", "GENERATION", "MESSAGE", "PYTHON_TOOL", "RESULT_CHANNEL", "RESULT_HEAD",
    "RETURN", "START", "SYSTEM", "USER",
]

SYSTEM = START + "system" + MESSAGE
DEVELOPER = START + "developer" + MESSAGE
#: An assistant tool call: ``CALL_HEAD + name + CALL_CHANNEL + content_type + MESSAGE + arguments + CALL``.
CALL_HEAD = START + "assistant to=functions."
CALL_CHANNEL = CHANNEL + "commentary "
#: A tool result: ``RESULT_HEAD + name + RESULT_CHANNEL + json + END``.
RESULT_HEAD = START + "functions."
RESULT_CHANNEL = " to=assistant" + CHANNEL + "commentary" + MESSAGE

#: The texts whose presence in an assistant message's content or thinking the template refuses.
CHANNEL_TAGS = (CHANNEL + "analysis" + MESSAGE, CHANNEL + "final" + MESSAGE)

#: The system message's texts (the template's ``build_system_message``): its built-in tools' descriptions,
#: the valid channels, and the line it adds when functions are offered.
BROWSER_TOOL = (
    "## browser\n\n"
    "// Tool for browsing.\n"
    "// The `cursor` appears in brackets before each browsing display: `[{cursor}]`.\n"
    "// Cite information from the tool using the following format:\n"
    "// `【{cursor}†L{line_start}(-L{line_end})?】`, for example: `【6†L9-L11】` or `【8†L3】`.\n"
    "// Do not quote more than 10 words directly from the tool output.\n"
    "// sources=web (default: web)\n"
    "namespace browser {\n\n"
    "// Searches for information related to `query` and displays `topn` results.\n"
    "type search = (_: {\n"
    "query: string,\n"
    "topn?: number, // default: 10\n"
    "source?: string,\n"
    "}) => any;\n\n"
    "// Opens the link `id` from the page indicated by `cursor` starting at line number `loc`, "
    "showing `num_lines` lines.\n"
    "// Valid link ids are displayed with the formatting: `【{id}†.*】`.\n"
    "// If `cursor` is not provided, the most recent page is implied.\n"
    "// If `id` is a string, it is treated as a fully qualified URL associated with `source`.\n"
    "// If `loc` is not provided, the viewport will be positioned at the beginning of the document or "
    "centered on the most relevant passage, if available.\n"
    "// Use this function without `id` to scroll to a new location of an opened page.\n"
    "type open = (_: {\n"
    "id?: number | string, // default: -1\n"
    "cursor?: number, // default: -1\n"
    "loc?: number, // default: -1\n"
    "num_lines?: number, // default: -1\n"
    "view_source?: boolean, // default: false\n"
    "source?: string,\n"
    "}) => any;\n\n"
    "// Finds exact matches of `pattern` in the current page, or the page given by `cursor`.\n"
    "type find = (_: {\n"
    "pattern: string,\n"
    "cursor?: number, // default: -1\n"
    "}) => any;\n\n"
    "} // namespace browser\n\n"
)
PYTHON_TOOL = (
    "## python\n\n"
    "Use this tool to execute Python code in your chain of thought. The code will not be shown to the user. "
    "This tool should be used for internal reasoning, but not for code that is intended to be visible to the "
    "user (e.g. when creating plots, tables, or files).\n\n"
    "When you send a message containing Python code to python, it will be executed in a stateful Jupyter "
    "notebook environment. python will respond with the output of the execution or time out after 120.0 "
    "seconds. The drive at '/mnt/data' can be used to save and persist user files. Internet access for this "
    "session is UNKNOWN. Depends on the cluster.\n\n"
)
CHANNELS = "# Valid channels: analysis, commentary, final. Channel must be included for every message."
FUNCTIONS_CHANNEL = "\nCalls to these tools must go to the commentary channel: 'functions'."
