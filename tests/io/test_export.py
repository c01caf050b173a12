"""Result tables written for people: formula-safe CSV (CLI and dashboard downloads), JSONL, Parquet."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.io.export import neutralize_formulas, write_frame

FORMULAS = ['=HYPERLINK("http://evil.example","x")', "+cmd|' /C calc'!A0", "-1+1", "@SUM(A1:A2)"]


def hostile_frame() -> pd.DataFrame:
    return pd.DataFrame({
        "query_id": ["q1", "q2", "q3", "q4"],
        "answer": FORMULAS,
        "score": [-0.5, 0.25, 1.0, 0.0],
        "contexts": [["=1+1"], ["a"], [], ["b"]],
    })


def test_dashboard_csv_download_prefixes_formula_cells_with_a_quote() -> None:
    from tempo_eval_app.widgets import csv_bytes

    out = pd.read_csv(io.BytesIO(csv_bytes(hostile_frame())), keep_default_na=False)
    assert out["answer"].tolist() == ["'" + f for f in FORMULAS]
    assert out["score"].tolist() == [-0.5, 0.25, 1.0, 0.0]  # numbers stay numbers
    assert out["query_id"].tolist() == ["q1", "q2", "q3", "q4"]
    assert out["contexts"].tolist()[0] == '["=1+1"]'  # list cells are JSON text, not formulas


def test_write_frame_csv_is_formula_safe_and_jsonl_keeps_the_text(tmp_path: Path) -> None:
    frame = hostile_frame()
    assert write_frame(frame, tmp_path / "out.csv") == "csv"
    assert pd.read_csv(tmp_path / "out.csv")["answer"].tolist() == ["'" + f for f in FORMULAS]
    assert write_frame(frame, tmp_path / "out.jsonl") == "jsonl"
    assert pd.read_json(tmp_path / "out.jsonl", lines=True)["answer"].tolist() == FORMULAS
    assert frame["answer"].tolist() == FORMULAS  # the input is not modified


def test_write_frame_refuses_an_unknown_extension(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\.csv, \.jsonl, \.parquet"):
        write_frame(hostile_frame(), tmp_path / "out.xlsx")


def test_neutralize_formulas_leaves_safe_text_alone() -> None:
    out = neutralize_formulas(pd.DataFrame({"t": ["safe", "a=b", "=x"]}))
    assert out["t"].tolist() == ["safe", "a=b", "'=x"]


HOSTILE_TEXTS = [
    "bare\rCR", "line\nfeed", "crlf\r\ninside", 'say "hi"', "a,b;c\td|e", "=1+1", "+1", "-x", "@A1",
    "\tTAB", "\rCR first", "'quoted", "''two", "'=already guarded", "plain", "trailing\r",
]


def _round_trip_frame() -> pd.DataFrame:
    n = len(HOSTILE_TEXTS)
    return pd.DataFrame({
        "query_id": HOSTILE_TEXTS,
        "run": list(reversed(HOSTILE_TEXTS)),
        "metric": ["m"] * n,
        "score": [0.5, -1.0, float("nan")] + [1.0] * (n - 3),
        "reason": HOSTILE_TEXTS[3:] + HOSTILE_TEXTS[:3],
    })


def test_csv_export_round_trips_cr_lf_quotes_delimiters_and_formula_prefixes(tmp_path: Path) -> None:
    from tempo_eval.io.export import read_csv_export

    frame = _round_trip_frame()
    write_frame(frame, tmp_path / "out.csv")
    back = read_csv_export(tmp_path / "out.csv", dtype={"query_id": str, "run": str, "reason": str})
    pd.testing.assert_frame_equal(back, frame)


def test_dashboard_csv_download_round_trips_a_bare_cr() -> None:
    from tempo_eval.io.export import read_csv_export
    from tempo_eval_app.widgets import csv_bytes

    frame = _round_trip_frame()
    back = read_csv_export(io.BytesIO(csv_bytes(frame)), dtype={"query_id": str, "run": str, "reason": str})
    assert len(back) == len(frame)
    pd.testing.assert_frame_equal(back, frame)


def test_formula_guard_is_reversible() -> None:
    from tempo_eval.io.export import restore_formulas

    frame = pd.DataFrame({"t": HOSTILE_TEXTS})
    guarded = neutralize_formulas(frame)
    assert guarded["t"].tolist()[5:9] == ["'=1+1", "'+1", "'-x", "'@A1"]
    pd.testing.assert_frame_equal(restore_formulas(guarded), frame)
