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


def _is_text_column(series: pd.Series) -> bool:
    return series.dtype == object or pd.api.types.is_string_dtype(series)


def neutralize_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of `frame` where every text cell starting with = + - @ tab, CR or ' is prefixed
    with a single quote, so a spreadsheet shows it as text instead of running it as a formula
    (`restore_formulas` undoes it). Numbers are left alone (a negative score stays a number);
    the input is not modified."""
    out = frame.copy()
    guarded = (*FORMULA_PREFIXES, _GUARD)
    for column in out.columns:
        if _is_text_column(out[column]):
            out[column] = [
                _GUARD + value if isinstance(value, str) and value.startswith(guarded) else value
                for value in out[column]
            ]
    return out


def restore_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """The inverse of `neutralize_formulas`: one leading single quote removed from text cells."""
    out = frame.copy()
    for column in out.columns:
        if _is_text_column(out[column]):
            out[column] = [
                value[1:] if isinstance(value, str) and value.startswith(_GUARD) else value
                for value in out[column]
            ]
    return out


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
    target, kind = _output_target(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if kind == "parquet":
            _write_parquet_parts(frames, target)
            return kind
        with target.open("w", encoding="utf-8", newline="") as out:
            first = True
            for frame in frames:
                if kind == "csv":
                    text = neutralize_formulas(frame).to_csv(index=False, header=first,
                                                            lineterminator=CSV_LINE_TERMINATOR)
                else:
                    text = frame.to_json(orient="records", lines=True, force_ascii=False)
                    text = text if text.endswith("\n") or not text else text + "\n"
                out.write(text)
                first = False
    except OSError as error:
        raise output_error(path, error) from None
    return kind


def _write_parquet_parts(frames: Iterable[pd.DataFrame], target: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = None
    schema = None
    try:
        for frame in frames:
            if schema is None:
                numeric = pd.api.types.is_numeric_dtype
                fields = [pa.field(c, pa.from_numpy_dtype(frame[c].dtype) if numeric(frame[c].dtype) else pa.string())
                          for c in frame.columns]
                schema = pa.schema(fields)
                writer = pq.ParquetWriter(target, schema)
            writer.write_table(pa.Table.from_pandas(frame, schema=schema, preserve_index=False))  # type: ignore[union-attr]
    finally:
        if writer is not None:
            writer.close()


def write_text_output(text: str, path: str | os.PathLike[str]) -> None:
    """Write `text` to `path` as UTF-8; a failed write (a full disk, no permission) raises
    OutputError naming the file and the reason."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as error:
        raise output_error(path, error) from None
