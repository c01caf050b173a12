"""Writing result tables for people: CSV safe to open in a spreadsheet, JSONL, Parquet.

    write_frame(frame, "results.csv")             # format chosen by the extension
    neutralize_formulas(frame).to_csv(buffer)     # what every CSV export goes through

Used by the command line and by the dashboard's downloads, so both write the same files.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

#: the file formats `write_frame` writes, by extension
OUTPUT_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".parquet": "parquet"}
#: first characters that make a spreadsheet read a cell as a formula (OWASP CSV injection)
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def neutralize_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of `frame` where every text cell starting with = + - @ tab or CR is prefixed with a
    single quote, so a spreadsheet shows it as text instead of running it as a formula.
    Numbers are left alone (a negative score stays a number); the input is not modified."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = [
                "'" + value if isinstance(value, str) and value.startswith(FORMULA_PREFIXES) else value
                for value in out[column]
            ]
    return out


def write_frame(frame: pd.DataFrame, path: str | os.PathLike[str]) -> str:
    """Write `frame` as CSV (formula-safe), JSONL or Parquet, chosen by the extension; returns the
    format ("csv", "jsonl" or "parquet"). Raises ValueError for another extension."""
    target = Path(path)
    kind = OUTPUT_FORMATS.get(target.suffix.lower())
    if kind is None:
        raise ValueError(f"{str(path)!r}: the extension must be one of {', '.join(OUTPUT_FORMATS)}")
    target.parent.mkdir(parents=True, exist_ok=True)
    if kind == "csv":
        neutralize_formulas(frame).to_csv(target, index=False)
    elif kind == "jsonl":
        frame.to_json(target, orient="records", lines=True, force_ascii=False)
    else:
        frame.to_parquet(target, index=False)
    return kind
