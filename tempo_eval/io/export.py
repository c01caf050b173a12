"""Writing result tables for people: CSV safe to open in a spreadsheet, JSONL, Parquet.

    write_frame(frame, "results.csv")             # format chosen by the extension
    to_csv_text(frame)                            # what every CSV export goes through
    read_csv_export("results.csv")                # the frame back, exactly (see below)

Used by the command line and by the dashboard's downloads, so both write the same files.

CSV exports round-trip: `read_csv_export` gives back the frame that was written, whatever CR,
LF, quotes, delimiters or formula prefixes the text holds. Two rules make that true:

- records end with CRLF, so the csv writer quotes every cell holding a CR or an LF (with the
  default LF terminator a bare CR went out unquoted and split the record when read back);
- the formula guard is reversible: a text cell starting with = + - @ tab, CR *or a single quote*
  gets one more leading single quote, and `read_csv_export` removes exactly one from every text
  cell that starts with one. A spreadsheet shows the guarded cell with its leading quote.

Missing values and empty text are both written as an empty cell and read back as missing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from tempo_eval.io.errors import output_error

#: the file formats `write_frame` writes, by extension
OUTPUT_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".parquet": "parquet"}
#: first characters that make a spreadsheet read a cell as a formula (OWASP CSV injection)
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
#: the guard itself: a cell starting with it is guarded too, so the guard can be undone exactly
_GUARD = "'"
#: CRLF: the csv writer then quotes any cell holding CR or LF (it quotes the terminator's characters)
CSV_LINE_TERMINATOR = "\r\n"


def _text_cells_changed(frame: pd.DataFrame, starts: tuple[str, ...], change: Any) -> pd.DataFrame:
    """A copy of `frame`, `change(text)` for every text cell that starts with one of `starts`."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = [
                change(value) if isinstance(value, str) and value.startswith(starts) else value
                for value in out[column]
            ]
    return out


def neutralize_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of `frame` where every text cell starting with = + - @ tab, CR or ' is prefixed
    with a single quote, so a spreadsheet shows it as text instead of running it as a formula
    (`restore_formulas` undoes it). Numbers are left alone (a negative score stays a number);
    the input is not modified."""
    return _text_cells_changed(frame, (*FORMULA_PREFIXES, _GUARD), lambda text: _GUARD + text)


def restore_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """The inverse of `neutralize_formulas`: one leading single quote removed from text cells."""
    return _text_cells_changed(frame, (_GUARD,), lambda text: text[1:])


def to_csv_text(frame: pd.DataFrame) -> str:
    """`frame` as formula-safe CSV text that `read_csv_export` reads back unchanged."""
    return neutralize_formulas(frame).to_csv(index=False, lineterminator=CSV_LINE_TERMINATOR)


def read_csv_export(path_or_buffer: Any, **read_csv_options: Any) -> pd.DataFrame:
    """Read a CSV written by `to_csv_text` / `write_frame`: empty cells are missing, nothing else
    is; the formula guard is removed. Extra options go to `pandas.read_csv` (e.g. dtype=str)."""
    options = {"keep_default_na": False, "na_values": [""], **read_csv_options}
    return restore_formulas(pd.read_csv(path_or_buffer, **options))


def _output_target(path: str | os.PathLike[str]) -> tuple[Path, str]:
    """The output file and its format, chosen by the extension; ValueError for another one."""
    target = Path(path)
    kind = OUTPUT_FORMATS.get(target.suffix.lower())
    if kind is None:
        raise ValueError(f"{str(path)!r}: the extension must be one of {', '.join(OUTPUT_FORMATS)}")
    return target, kind


def write_frame(frame: pd.DataFrame, path: str | os.PathLike[str]) -> str:
    """Write `frame` as CSV (formula-safe), JSONL or Parquet, chosen by the extension; returns the
    format ("csv", "jsonl" or "parquet"). Raises ValueError for another extension, and OutputError
    (an OSError) naming the file and the reason when it cannot be written (a full disk)."""
    target, kind = _output_target(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if kind == "csv":
            target.write_bytes(to_csv_text(frame).encode("utf-8"))
        elif kind == "jsonl":
            frame.to_json(target, orient="records", lines=True, force_ascii=False)
        else:
            frame.to_parquet(target, index=False)
    except OSError as error:
        raise output_error(path, error) from None
    return kind


def write_frames(frames: Iterable[pd.DataFrame], path: str | os.PathLike[str]) -> str:
    """`write_frame` for a frame given in parts (the results of a large run, a part at a time):
    the file is the one `write_frame` writes for the parts put together. The parts have the same
    columns; text columns are written as text whatever a part holds (a part whose `run` column is
    empty in every row included)."""
    with PartsWriter(path) as writer:
        for frame in frames:
            writer.write(frame)
    return writer.kind


class PartsWriter:
    """`write_frames` a part at a time, the parts handed over as they come (the command line writes
    each batch of a run as it is stored):

        with PartsWriter("results.parquet") as writer:
            writer.write(part)

    The file is complete when the block ends without an error. Parquet parts are gathered into
    row groups of at least `ROW_GROUP_ROWS` rows (a part per row group made files of thousands of
    tiny groups). Raises ValueError for an unknown extension, OutputError when writing fails."""

    #: the fewest rows of a Parquet row group (but the last)
    ROW_GROUP_ROWS = 100_000

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path
        self.target, self.kind = _output_target(path)
        self._out: Any = None  # the text file, or the ParquetWriter
        self._schema: Any = None
        self._tables: list[Any] = []
        self._held = 0
        self._first = True

    def __enter__(self) -> PartsWriter:
        try:
            self.target.parent.mkdir(parents=True, exist_ok=True)
            if self.kind != "parquet":
                self._out = self.target.open("w", encoding="utf-8", newline="")
        except OSError as error:
            raise output_error(self.path, error) from None
        return self

    def write(self, frame: pd.DataFrame) -> None:
        try:
            if self.kind == "parquet":
                self._add_table(frame)
            elif self.kind == "csv":
                self._out.write(neutralize_formulas(frame).to_csv(index=False, header=self._first,
                                                                  lineterminator=CSV_LINE_TERMINATOR))
            else:
                text = frame.to_json(orient="records", lines=True, force_ascii=False)
                self._out.write(text if text.endswith("\n") or not text else text + "\n")
        except OSError as error:
            raise output_error(self.path, error) from None
        self._first = False

    def write_columns(self, columns: dict[str, list[Any]]) -> None:
        """`write` for a part of a run's results given as lists (`RESULT_COLUMNS`: row, query_id,
        run, metric, score (None: NaN), reason_code, reason): Parquet takes them as Arrow arrays,
        the same arrays `write` makes of their frame (NaN scores are null there too); other
        formats write their frame."""
        if self.kind != "parquet":
            from tempo_eval.common.schema import frame_of_result_rows

            self.write(frame_of_result_rows(list(zip(*columns.values(), strict=True))))
            return
        import pyarrow as pa

        numeric = {"row": pa.int64(), "score": pa.float64()}  # the types `write` gives their frame's columns
        table = pa.table({name: pa.array(values, type=numeric.get(name, pa.string()))
                          for name, values in columns.items()})
        try:
            self._add_arrow(table)
        except OSError as error:
            raise output_error(self.path, error) from None
        self._first = False

    def __exit__(self, *exc: Any) -> None:
        self.close(complete=exc[0] is None)

    def close(self, *, complete: bool = True) -> None:
        """End the file; `complete` False (the writing failed, the file is dropped): the parts
        held back are not written."""
        out, self._out = self._out, None
        try:
            if complete and self._tables:
                self._out = out
                self._flush_tables()
                out, self._out = self._out, None
        except OSError as error:
            if out is not None:
                with contextlib.suppress(OSError):
                    out.close()
            raise output_error(self.path, error) from None
        if out is not None:
            try:  # closing a text file writes what it buffered: a full disk is found here
                out.close()
            except OSError as error:
                if complete:
                    raise output_error(self.path, error) from None

    def _add_table(self, frame: pd.DataFrame) -> None:
        import pyarrow as pa

        if self._schema is None:
            numeric = pd.api.types.is_numeric_dtype
            self._schema = pa.schema([
                pa.field(c, pa.from_numpy_dtype(frame[c].dtype) if numeric(frame[c].dtype) else pa.string())
                for c in frame.columns])
        self._add_arrow(pa.Table.from_pandas(frame, schema=self._schema, preserve_index=False))

    def _add_arrow(self, table: Any) -> None:
        if self._schema is None:
            self._schema = table.schema
        self._tables.append(table)
        self._held += table.num_rows
        if self._held >= self.ROW_GROUP_ROWS:
            self._flush_tables()

    def _flush_tables(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self._out is None:
            self._out = pq.ParquetWriter(self.target, self._schema)
        self._out.write_table(pa.concat_tables(self._tables), row_group_size=max(self._held, 1))
        self._tables, self._held = [], 0


def write_text_output(text: str, path: str | os.PathLike[str]) -> None:
    """Write `text` to `path` as UTF-8; a failed write (a full disk, no permission) raises
    OutputError naming the file and the reason."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as error:
        raise output_error(path, error) from None
