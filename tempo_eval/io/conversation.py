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

import io
import json
import re
import tokenize
from typing import Any

from tempo_eval.core.turn import Turn
from tempo_eval.io.errors import InputError, json_error_text, parse_json_document, quote
from tempo_eval.io.jsonlines import read_json_lines

_USER = ("user", "human")
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
    document = parse_json_document(text, source, _EXPECTED)
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
    context = [] if item.get("retrieval_context") is None else item["retrieval_context"]
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
                    source=source, line=number,
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
                source=source, line=number,
            )
    if pending:
        raise InputError(
            f"the context block has {len(pending)} document(s) but no assistant turn after it; expected "
            "each 'Context:' block before the 'Assistant:' turn it belongs to",
            source=source, line=pending_line,
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


# ---- files of many conversations --------------------------------------------------------------

#: fields that name a conversation, in order of preference
_ID_FIELDS = ("conversation_id", "id", "name")
#: RAGAS message types -> our roles ("tool" messages become retrieval context)
_RAGAS_ROLES = {"human": "user", "ai": "assistant"}
_FILE_EXPECTED = (
    "expected DeepEval conversational goldens or test cases (objects with \"turns\"), RAGAS "
    "multi-turn samples (objects with \"user_input\" holding human / ai / tool messages), or one "
    "conversation"
)


def load_conversations(source: Any, *, name: str | None = None, max_bytes: int | None = None) -> Any:
    """Conversations from a file, as a `Dataset` with one row per conversation.

    Columns: `conversation_id` (from the file's conversation_id / id / name field, else "c1",
    "c2", ... by position) and `turns` (a list of {"role", "content", "retrieval_context"}).
    Reads DeepEval conversational goldens and test cases (`save_as` json, jsonl, csv: one object
    per element or line, turns in a JSON cell), RAGAS `MultiTurnSample` datasets (`to_jsonl`,
    `to_csv`, and `to_hf_dataset()` written as CSV, JSON Lines or Parquet, whose CSV cells are
    numpy reprs: a tool message's content becomes the retrieval context of the next assistant turn;
    an assistant message with no text, a tool call, is dropped), and a single conversation as
    `parse_conversation` reads it (JSON turns or a transcript, in a .json/.txt file). Raises
    InputError naming the file, the conversation and the turn. `max_bytes` is the input size
    limit, as for `load_dataset`.
    """
    import hashlib
    from pathlib import PurePath

    import pandas as pd

    from tempo_eval.io._source import decode_text, gunzip_if_needed, read_input
    from tempo_eval.io.dataset import Dataset

    raw = read_input(source, name=name, default_name="conversations", max_bytes=max_bytes)
    warnings: list[str] = []
    data = gunzip_if_needed(raw)
    suffixes = [s.lower() for s in PurePath(raw.name).suffixes if s.lower() != ".gz"]
    ext = suffixes[-1] if suffixes else ""
    if ext in (".parquet", ".pq"):
        from tempo_eval.io.jsonfiles import _read_parquet

        table = _read_parquet(data, raw.name)
        records = [{c: table.values[c][i] for c in table.columns} for i in range(table.n_rows)]
        places: list[int | None] = [None] * table.n_rows
        fmt = "parquet"
    else:
        text = decode_text(data, raw.name, warnings)
        records, places, fmt = _conversation_records(text, raw.name, ext, warnings)
    turns: list[list[dict[str, Any]]] = []
    seen: dict[str, int] = {}  # conversation id -> its number, in file order
    for number, (record, place) in enumerate(zip(records, places, strict=True), start=1):
        where = f"{raw.name}, conversation {number}" + (f" (line {place})" if place else "")
        conversation_id = _conversation_id(record, number)
        if conversation_id in seen:
            raise InputError(
                f"the conversation id {conversation_id!r} appears twice (conversations {seen[conversation_id]} "
                f"and {number}); expected each conversation once",
                source=raw.name, row=number, line=place, row_label="conversation",
            )
        seen[conversation_id] = number
        turns.append([
            {"role": t.role, "content": t.content, "retrieval_context": list(t.retrieval_context)}
            for t in parse_conversation(json.dumps(_turn_items(record, where)), source=where)
        ])
    frame = pd.DataFrame({
        "conversation_id": pd.Series(list(seen), dtype=object),
        "turns": pd.Series(turns, dtype=object),
    })
    return Dataset(
        frame=frame, name=raw.name, mapping={}, content_hash=hashlib.sha256(raw.data).hexdigest(),
        source_format=fmt, warnings=warnings,
    )


def _conversation_records(
    text: str, source: str, ext: str, warnings: list[str]
) -> tuple[list[dict[str, Any]], list[int | None], str]:
    """(one object per conversation, the line each starts on when known, the format)."""
    body = text.strip()
    if not body:
        raise InputError(f"the file is empty; {_FILE_EXPECTED}", source=source)
    if ext == ".csv" or ext == ".tsv":
        from tempo_eval.io.delimited import _read_delimited

        table = _read_delimited(text.encode("utf-8"), source, "\t" if ext == ".tsv" else ",", warnings)
        records = [{c: table.values[c][i] for c in table.columns} for i in range(table.n_rows)]
        return records, [table.place(i)["line"] for i in range(table.n_rows)], ext[1:]
    if body[0] not in "[{":
        return [{"turns": parse_conversation(text, source=source)}], [None], "transcript"
    lines: list[int | None] = []
    fmt = "json"
    try:
        document = json.loads(body)
    except RecursionError:
        raise InputError(f"the JSON is nested too deeply to read; {_FILE_EXPECTED}", source=source) from None
    except json.JSONDecodeError as error:
        if error.msg != "Extra data":
            raise InputError(
                f"not valid JSON ({json_error_text(error.msg, error.colno)}); {_FILE_EXPECTED}",
                source=source, line=error.lineno,
            ) from None
        expected = "one conversation object per line"
        records = read_json_lines(text, source, expected=expected, objects_only=False)
        document, lines = [record for _, record in records], [line for line, _ in records]
        fmt = "jsonl"
    if isinstance(document, dict):
        if "turns" in document and not _is_turn(document):
            document = [document]  # one DeepEval conversation
        elif "user_input" in document:
            document = [document]  # one RAGAS sample
        else:
            keys = ", ".join(map(str, list(document)[:10])) or "(none)"
            raise InputError(f"found an object with keys {keys}; {_FILE_EXPECTED}", source=source)
    if not isinstance(document, list) or not document:
        raise InputError(f"found no conversations; {_FILE_EXPECTED}", source=source)
    if all(isinstance(item, dict) and _is_turn(item) for item in document):
        return [{"turns": document}], [None], fmt  # a single conversation: a list of turns
    for number, item in enumerate(document, start=1):
        if not isinstance(item, dict):
            raise InputError(
                f"found {_kind(item)}; {_FILE_EXPECTED}", source=source, row=number,
                line=lines[number - 1] if lines else None, row_label="conversation",
            )
    return document, lines or [None] * len(document), fmt


def _is_turn(item: dict[str, Any]) -> bool:
    return "role" in item and "content" in item


def _conversation_id(record: dict[str, Any], number: int) -> str:
    for field in _ID_FIELDS:
        value = record.get(field)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
            return str(int(value)) if float(value).is_integer() else str(value)
        if isinstance(value, str) and value.strip() and value.strip() not in ("None", "null", "NaN", "nan"):
            return value.strip()
    return f"c{number}"


def _cell(value: Any, field: str, where: str) -> Any:
    """A cell that holds JSON or a Python literal (a CSV column of turns or messages)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        import ast

        try:
            return ast.literal_eval(text)  # RAGAS to_csv writes Python reprs of the messages
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
        try:
            # Arrow / Hugging Face to_csv writes numpy reprs: items without commas, array(...)
            return ast.literal_eval(_numpy_repr_as_literal(text))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError, tokenize.TokenError):
            raise InputError(
                f"could not read {quote(text)}; expected a JSON list of turns", source=where, column=field
            ) from None


_VALUE_END = {"}", "]", ")"}
_VALUE_START = {"{", "["}


def _numpy_repr_as_literal(text: str) -> str:
    """A numpy object-array repr (`[{'a': 1}\n {'a': 2}]`, with nested `array([...], dtype=object)`)
    rewritten as a Python literal: commas between adjacent items, `array(...)` unwrapped. The
    result is read with `ast.literal_eval`, never evaluated."""
    tokens = [
        t for t in tokenize.generate_tokens(io.StringIO(text).readline)
        if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
    ]
    out: list[str] = []
    parens: list[bool] = []  # True for the parenthesis of an array(...) call
    previous: Any = None
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.type == tokenize.NAME and token.string == "array" and index + 1 < len(tokens) \
                and tokens[index + 1].string == "(":
            parens.append(True)
            index += 2
            continue
        if token.string == "(":
            parens.append(False)
        if token.string == ")" and parens and parens.pop():  # the end of an array(...) call
            while out and out[-1] in (",", "dtype", "=", "object"):
                out.pop()  # the ", dtype=object" before the closing parenthesis
            index += 1
            previous = "]"
            continue
        is_value = token.type in (tokenize.STRING, tokenize.NUMBER) or token.string in ("None", "True", "False")
        after_value = previous in _VALUE_END or previous == "value"
        if after_value and (is_value or token.string in _VALUE_START):
            out.append(",")  # two values side by side: numpy's repr leaves out the comma
        out.append(token.string)
        previous = "value" if is_value else token.string
        index += 1
    return " ".join(out)


def _turn_items(record: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """The record's turns as {"role", "content", "retrieval_context"} dicts (not yet checked)."""
    turns = _cell(record.get("turns"), "turns", where)  # a CSV cell holds JSON text; empty: None
    if turns is not None:
        if turns and isinstance(turns, list) and isinstance(turns[0], Turn):
            return [{"role": t.role, "content": t.content, "retrieval_context": t.retrieval_context} for t in turns]
        if not isinstance(turns, list):
            raise InputError(f"found {_kind(turns)}; expected a list of turns", source=where, column="turns")
        return [
            {**t, "retrieval_context": _cell(t.get("retrieval_context"), "retrieval_context", where)}
            if isinstance(t, dict) else t
            for t in turns
        ]
    if record.get("user_input") is not None:
        return _ragas_turns(_cell(record["user_input"], "user_input", where), where)
    if "scenario" in record and "turns" in record:
        raise InputError(
            "the conversation has no turns, only a scenario (a DeepEval conversational golden before "
            "the conversation is simulated or recorded); expected the turns to evaluate",
            source=where, column="turns",
        )
    keys = ", ".join(map(str, list(record)[:10])) or "(none)"
    raise InputError(f"found no \"turns\" or \"user_input\" (keys: {keys}); {_FILE_EXPECTED}", source=where)


def _ragas_turns(messages: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(messages, list):
        raise InputError(
            f"found {_kind(messages)}; expected a list of RAGAS messages", source=where, column="user_input"
        )
    turns: list[dict[str, Any]] = []
    pending: list[str] = []  # tool results waiting for the next assistant message
    for number, message in enumerate(messages, start=1):
        kind = message.get("type") if isinstance(message, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if kind == "tool":
            if isinstance(content, str) and content.strip():
                pending.append(content)
            continue
        if kind not in _RAGAS_ROLES:
            raise InputError(
                f"message {number} has type {kind!r}; expected 'human', 'ai' or 'tool'",
                source=where, column="user_input",
            )
        role = _RAGAS_ROLES[kind]
        empty = not isinstance(content, str) or not content.strip()
        if role == "assistant" and empty and message.get("tool_calls"):
            continue  # the call that fetched the documents: its results come as tool messages
        turn = {"role": role, "content": content, "retrieval_context": []}
        if role == "assistant":
            turn["retrieval_context"], pending = pending, []
        turns.append(turn)
    if pending:
        raise InputError(
            f"{len(pending)} tool result(s) come after the last assistant message; expected each tool "
            "result before the assistant message that uses it",
            source=where, column="user_input",
        )
    return turns
