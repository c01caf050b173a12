"""`InputError`: every problem with a user's input, with the place it was found.

The message always starts with the place ("data.csv, row 7 (line 8), column 'contexts'") and then
says what was found and what was expected, so a person can fix the file without a traceback. The
place is also kept as attributes for the dashboard to highlight.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any

#: how much of an offending value a message quotes
_QUOTE_CHARS = 60


class InputError(ValueError):
    """A problem with an input file or text, located as precisely as we can.

    `problem` is the message without the place; `str(error)` is place + ": " + problem.
    `source` is the file name (or "conversation"), `line` the 1-based line in the file, `row` the
    1-based data row (header not counted) or turn number, `column` the column or field name.
    Any of them is None when it does not apply or is unknown. `row_label` / `column_label` name
    the units in the message ("turn 3", "field 'role'" for conversations).
    """

    def __init__(
        self,
        problem: str,
        *,
        source: str | None = None,
        line: int | None = None,
        row: int | None = None,
        column: str | None = None,
        row_label: str = "row",
        column_label: str = "column",
    ) -> None:
        self.problem, self.source, self.line, self.row = problem, source, line, row
        self.column, self.row_label, self.column_label = column, row_label, column_label
        place = self.place
        super().__init__(f"{place}: {problem}" if place else problem)

    @property
    def place(self) -> str:
        """"data.csv, row 7 (line 8), column 'contexts'" or the parts of it that are known."""
        parts = [self.source] if self.source else []
        if self.row is not None:
            line = f" (line {self.line})" if self.line is not None else ""
            parts.append(f"{self.row_label} {self.row}{line}")
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if self.column is not None:
            parts.append(f"{self.column_label} {self.column!r}")
        return ", ".join(parts)

    def __reduce__(self) -> tuple[Any, ...]:
        # keep the place attributes when the error crosses a process boundary (pickling)
        place = {name: getattr(self, name) for name in _PLACE}
        return functools.partial(InputError, **place), (self.problem,)


_PLACE = ("source", "line", "row", "column", "row_label", "column_label")


def json_error_text(message: str, position: int) -> str:
    """"Expecting value at character 5" from a JSONDecodeError's `msg` and a 1-based position.

    Some of Python's messages end in "at" already ("Unterminated string starting at"): it is
    dropped so the text never reads "at at character"."""
    message = message.strip()
    if message.endswith(" at"):
        message = message[: -len(" at")]
    return f"{message} at character {position}"


def parse_json_document(text: str, source: str, expected: str) -> Any:
    """`json.loads(text)`, or an InputError naming `source` (and the line) and saying `expected`:
    "nested too deeply" for a RecursionError, the decoder's message and position otherwise."""
    import json

    try:
        return json.loads(text)
    except RecursionError:
        raise InputError(f"the JSON is nested too deeply to read; {expected}", source=source) from None
    except json.JSONDecodeError as error:
        raise InputError(
            f"not valid JSON ({json_error_text(error.msg, error.colno)}); {expected}",
            source=source, line=error.lineno,
        ) from None


def list_columns(columns: Sequence[str], limit: int = 20) -> str:
    """The first `limit` column names for a message, and how many there are in all."""
    shown = ", ".join(map(str, columns[:limit])) if len(columns) else "(none)"
    return shown + (f", ... ({len(columns)} in all)" if len(columns) > limit else "")


def quote(value: Any, limit: int = _QUOTE_CHARS) -> str:
    """A short, quoted rendering of an offending value for a message."""
    text = value if isinstance(value, str) else repr(value)
    shown = repr(text[:limit]) if isinstance(value, str) else text[:limit]
    return shown if len(text) <= limit else f"{shown}... ({len(text):,} characters)"


class OutputError(OSError):
    """A result file that could not be written; the message names the file and says why."""


def output_error(path: Any, error: OSError) -> OutputError:
    """'could not write FILE: no space left on device' from the OSError of a failed write
    (pyarrow's message holds the same reason, wrapped in its own words: the errno decides)."""
    reason = os.strerror(error.errno) if error.errno else (error.strerror or str(error))
    return OutputError(f"could not write {str(path)!r}: {reason[:1].lower() + reason[1:]}")
