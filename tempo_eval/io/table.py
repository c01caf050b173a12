"""The raw table every reader returns, and the conversion of its cells into canonical values.

`_Table` holds raw cell values by source column and where each row came from (for messages);
`BatchTable` is one of some rows of a file, placed in the whole file.
`tempo_eval.io.cells.convert_columns` turns a batch's mapped columns into canonical values (text,
lists, gold relevance, dates) in one call, and the reader (`tempo_eval.io.batches`) names the
row and column of a bad cell and gives the columns of the dataset frame.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tempo_eval.io.errors import InputError


@dataclass
class _Table:
    """Raw values by source column, plus where each row came from (for messages)."""

    columns: list[str]
    values: dict[str, Sequence[Any]]
    n_rows: int
    lines: Sequence[int] | None  # line in the file where each row starts, when known
    arrow: Any = None  # the pyarrow Table a Parquet file was read into: unmapped columns keep types

    def place(self, index: int) -> dict[str, int | None]:
        return {"row": index + 1, "line": self.lines[index] if self.lines is not None else None}


@dataclass
class BatchTable(_Table):
    """Rows `offset`, `offset` + 1, ... of a file; `lines` (when given) are their lines in the
    file, else `line_of(row in the file)` finds one when a message needs it."""

    offset: int = 0
    line_of: Callable[[int], int | None] | None = None

    def place(self, index: int) -> dict[str, int | None]:
        row = self.offset + index
        if self.lines is not None:
            line = self.lines[index]
        else:
            line = self.line_of(row) if self.line_of is not None else None
        return {"row": row + 1, "line": line}


def list_style_warning(first: str, count: int, source: str, column: str, place: dict[str, int | None]) -> str:
    """One warning per column for list cells read in another style: the first such cell (its
    note and place), and how many more were read the same way."""
    more = f" ({count - 1} more row(s) read the same way)" if count > 1 else ""
    return str(InputError(first + more, source=source, column=column, **place))


def duplicate_query_error(
    data: Mapping[str, Any], index: int, mapping: Mapping[str, str], runs: Sequence[Any] | None,
    first_at: str, source: str, place: Mapping[str, int | None],
) -> InputError:
    """The error for a query (by id, else by text) seen a second time at row `index`; `first_at`
    says where it was first ("row 3 (line 4)")."""
    from tempo_eval.io.errors import quote

    if "query_id" in mapping:
        what, column = f"query id {data['query_id'][index]!r}", mapping["query_id"]
    else:
        what, column = f"query {quote(data['query'][index])}", mapping.get("query")
    scope = f" in run {runs[index]!r}" if runs is not None else ""
    return InputError(
        f"{what} appears twice{scope}: first in {first_at}, again here; expected each query once"
        + (" per run" if runs is not None else " (several runs in one file need a 'run' column)"),
        source=source, column=column, **place,
    )
