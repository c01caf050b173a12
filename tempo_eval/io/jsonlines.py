"""The one JSON Lines reader: datasets, conversations, labels, foreign results and corpora.

Records are separated by "\\n" only (a "\\r" before it is JSON whitespace). `str.splitlines()`
also splits at U+2028, U+2029, form feeds and other separators that JSON allows raw inside a
string, so a claim holding U+2028, exported by us with `ensure_ascii=False`, would not read back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tempo_eval.io.errors import InputError, json_error_text


def json_lines(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) for every line of `text` that is not blank."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line and not line.isspace():
            yield number, line


def read_json_lines(text: str, source: str, *, expected: str = "one JSON object per line",
                    objects_only: bool = True) -> list[tuple[int, Any]]:
    """(line number, value) of every record; InputError naming the line for a line that is not
    JSON (or, with `objects_only`, not a JSON object). `expected` says what the file should hold."""
    decode = json.JSONDecoder().decode
    records = []
    for number, line in json_lines(text):
        try:
            value = decode(line)
        except RecursionError:
            raise InputError(f"the JSON is nested too deeply to read; expected {expected}",
                             source=source, line=number) from None
        except json.JSONDecodeError as error:
            raise InputError(f"not valid JSON ({json_error_text(error.msg, error.colno)}); expected {expected}",
                             source=source, line=number) from None
        if objects_only and type(value) is not dict:
            raise InputError(f"found {_kind(value)}; expected {expected}", source=source, line=number)
        records.append((number, value))
    return records


def _kind(value: Any) -> str:
    """What a JSON value is, in JSON's words."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return "a number"
    return {"list": "an array", "str": "a string", "dict": "an object"}.get(type(value).__name__, "a value")
