"""Downloads of tables (CSV, JSONL, Parquet) and figures (HTML, JSON)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st


def _jsonl(frame: pd.DataFrame) -> bytes:
    return frame.to_json(orient="records", lines=True, force_ascii=False, default_handler=str).encode("utf-8")


def _parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    jsonify_cells(frame).to_parquet(buffer, index=False)
    return buffer.getvalue()


def jsonify_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with list and dict cells as JSON text (Parquet and table display need one type per
    column; gold_ids mixes lists and graded objects)."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object and any(isinstance(v, (dict, list, tuple, set)) for v in out[column]):
            out[column] = [None if v is None else json.dumps(v, default=str, ensure_ascii=False) for v in out[column]]
    return out


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The CSV download of a table: list and dict cells as JSON, text cells that a spreadsheet
    would run as a formula (= + - @ ...) prefixed with a quote; read back exactly by
    `tempo_eval.io.export.read_csv_export`."""
    from tempo_eval.io.export import to_csv_text

    return to_csv_text(jsonify_cells(frame)).encode("utf-8")


def download_results(frame: pd.DataFrame | Callable[[], pd.DataFrame], stem: str, *, key: str) -> None:
    """CSV, JSONL and Parquet downloads of a results table; files are built only when clicked.
    `frame` may be a function that reads the table then (a page that does not hold it)."""
    read = frame if callable(frame) else lambda: frame
    # one horizontal container, not st.columns(3): 4 elements to build, send and draw instead of 7
    row = st.container(horizontal=True)
    row.download_button(
        "CSV", data=lambda: csv_bytes(read()), file_name=f"{stem}.csv",
        mime="text/csv", key=f"{key}_csv", icon=":material/download:",
    )
    row.download_button(
        "JSONL", data=lambda: _jsonl(read()), file_name=f"{stem}.jsonl", mime="application/jsonl",
        key=f"{key}_jsonl", icon=":material/download:",
    )
    row.download_button(
        "Parquet", data=lambda: _parquet(read()), file_name=f"{stem}.parquet",
        mime="application/vnd.apache.parquet", key=f"{key}_parquet", icon=":material/download:",
    )


def download_figure(fig: Any, stem: str, *, key: str) -> None:
    """The figure as standalone HTML (plotly.js embedded, works offline) and as plotly JSON."""
    row = st.container(horizontal=True)
    row.download_button(
        "Figure (HTML)", data=lambda: fig.to_html(include_plotlyjs=True, full_html=True).encode("utf-8"),
        file_name=f"{stem}.html", mime="text/html", key=f"{key}_html", icon=":material/image:",
    )
    row.download_button(
        "Figure (JSON)", data=lambda: fig.to_json().encode("utf-8"), file_name=f"{stem}.json",
        mime="application/json", key=f"{key}_json", icon=":material/data_object:",
    )
