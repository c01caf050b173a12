"""Conversations for turn-level metrics: DeepEval-style JSON turns or a pasted transcript.

JSON (recognised when the text starts with `[` or `{`): a list of turns, or an object with the
list under "turns" (DeepEval's ConversationalTestCase shape). Each turn is an object with
"role" ("user" or "assistant", any case), "content" (text) and optionally "retrieval_context"
(a list of texts, or null). Other keys are ignored.

Transcript: each turn starts with a label at the start of a line, any case:

    User: / Human:            a user turn
    Assistant: / AI: / Bot:   an assistant turn
    Context: / Contexts: / Retrieval context:   retrieved documents

The text after the label and the following unlabelled lines form the turn. After `Context:`,
each non-empty line is one document (a leading "-", "*" or "•" bullet is removed), until the
next label. A context block belongs to the NEXT assistant turn (retrieval happens before the
answer), so put it between the question and the answer; blocks before the same answer are joined.
A context block with no assistant turn after it is an error, never silently dropped.

Errors (all InputError, naming the line or turn and the field): nothing parseable before the
first label, a `System:` turn, an empty turn, a wrong role, no assistant turn at all.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tempo_eval.core.turn import Turn
from tempo_eval.io.errors import InputError, json_error_text, quote

_USER = ("user", "human")
_ASSISTANT = ("assistant", "ai", "bot")
_CONTEXT = ("context", "contexts", "retrieval context", "retrieval_context")
_LABEL = re.compile(
    r"^\s*(user|human|assistant|ai|bot|system|context|contexts|retrieval[ _]context)\s*:\s?(.*)$",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^(?:[-*•]\s+)")
_EXPECTED = (
    "expected JSON turns like [{\"role\": \"user\", \"content\": \"...\"}, {\"role\": \"assistant\", "
    "\"content\": \"...\", \"retrieval_context\": [\"...\"]}] or a transcript with lines starting "
    "'User:' and 'Assistant:'"
)


def parse_conversation(text: str, *, source: str = "conversation") -> list[Turn]:
    """The turns of a conversation given as JSON or as a transcript (see the module doc).

    `source` names the input in error messages (a file name, for an upload). Raises InputError
    for anything malformed, including a conversation without an assistant turn.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    body = text.lstrip("\ufeff")
    if not body.strip():
        raise InputError(f"the conversation is empty; {_EXPECTED}", source=source)
    is_json = body.lstrip()[0] in "[{"
    turns = _from_json(body, source) if is_json else _from_transcript(body, source)
    if not any(turn.role == "assistant" for turn in turns):
        raise InputError(
            f"the conversation has {len(turns)} turn(s) but no assistant turn; expected at least one "
            "assistant turn to evaluate ('Assistant:' in a transcript, \"role\": \"assistant\" in JSON)",
            source=source,
        )
    return turns


# ---- JSON -----------------------------------------------------------------------------------


def _from_json(text: str, source: str) -> list[Turn]:
    try:
        document = json.loads(text)
    except RecursionError:
        raise InputError(f"the JSON is nested too deeply to read; {_EXPECTED}", source=source) from None
    except json.JSONDecodeError as error:
        raise InputError(
            f"not valid JSON ({json_error_text(error.msg, error.colno)}); {_EXPECTED}",
            source=source,
            line=error.lineno,
        ) from None
    items = document
    if isinstance(document, dict):
        if not isinstance(document.get("turns"), list):
            keys = ", ".join(map(str, list(document)[:10])) or "(none)"
            raise InputError(
                f'found an object with keys {keys}; expected a list of turns or {{"turns": [...]}}',
                source=source,
            )
        items = document["turns"]
    if not isinstance(items, list) or not items:
        raise InputError(f"found no turns; {_EXPECTED}", source=source)
    return [_json_turn(item, number, source) for number, item in enumerate(items, start=1)]


def _json_turn(item: Any, number: int, source: str) -> Turn:
    def fail(problem: str, field: str | None = None) -> InputError:
        return InputError(
            problem, source=source, row=number, column=field, row_label="turn", column_label="field"
        )

    if not isinstance(item, dict):
        raise fail(f"found {_kind(item)}; expected an object with \"role\" and \"content\"")
    role = item.get("role")
    if not isinstance(role, str) or role.strip().lower() not in ("user", "assistant"):
        found = "nothing" if role is None else quote(role) if isinstance(role, str) else _kind(role)
        raise fail(f"found {found}; expected \"user\" or \"assistant\"", "role")
    content = item.get("content")
    if not isinstance(content, str):
        found = "nothing" if content is None else _kind(content)
        raise fail(f"found {found}; expected the text of the turn", "content")
    if not content.strip():
        raise fail("the turn is empty; expected the text of the turn", "content")
    context = item.get("retrieval_context")
    if context is None:
        context = []
    if not isinstance(context, list):
        raise fail(f"found {_kind(context)}; expected a list of texts", "retrieval_context")
    for position, doc in enumerate(context, start=1):
        if not isinstance(doc, str):
            raise fail(f"item {position} is {_kind(doc)}; expected text", "retrieval_context")
    return Turn(role.strip().lower(), content, list(context))


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"the text {quote(value)}"
    if value is None:
        return "null"
    return f"a {type(value).__name__} ({value!r})"


# ---- transcript -----------------------------------------------------------------------------


def _from_transcript(text: str, source: str) -> list[Turn]:
    turns: list[dict[str, Any]] = []  # role, lines, context, line
    pending: list[str] = []  # documents waiting for the next assistant turn
    pending_line = 0
    in_context = False
    for number, line in enumerate(text.splitlines(), start=1):
        match = _LABEL.match(line)
        if match:
            label = match.group(1).lower().replace("_", " ")
            rest = match.group(2).strip()
            if label == "system":
                raise InputError(
                    f"found a system turn {quote(line.strip())}; expected only 'User:' and "
                    "'Assistant:' turns (remove the system prompt)",
                    source=source,
                    line=number,
                )
            if label in _CONTEXT:
                in_context = True
                if not pending:
                    pending_line = number
                if rest:
                    pending.append(_BULLET.sub("", rest))
                continue
            in_context = False
            role = "user" if label in _USER else "assistant"
            turn = {"role": role, "lines": [rest] if rest else [], "context": [], "line": number}
            if role == "assistant" and pending:
                turn["context"], pending = pending, []
            turns.append(turn)
            continue
        if in_context:
            if line.strip():
                pending.append(_BULLET.sub("", line.strip()))
        elif turns:
            turns[-1]["lines"].append(line)
        elif line.strip():
            raise InputError(
                f"found {quote(line.strip())} before any turn label; {_EXPECTED}",
                source=source,
                line=number,
            )
    if pending:
        raise InputError(
            f"the context block has {len(pending)} document(s) but no assistant turn after it; expected "
            "each 'Context:' block before the 'Assistant:' turn it belongs to",
            source=source,
            line=pending_line,
        )
    if not turns:
        raise InputError(f"found no turns; {_EXPECTED}", source=source)
    result: list[Turn] = []
    for turn in turns:
        content = "\n".join(turn["lines"]).strip()
        if not content:
            label = "User" if turn["role"] == "user" else "Assistant"
            raise InputError(
                f"the {label} turn is empty; expected its text after '{label}:' or on the lines below it",
                source=source,
                line=turn["line"],
            )
        result.append(Turn(turn["role"], content, turn["context"]))
    return result
