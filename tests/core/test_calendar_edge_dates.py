"""Dates at the edge of the calendar on the evaluate path: `9999-12` (a month whose next month is
year 10000) is read as 9999-12-01..9999-12-31; `0001-01-01T00:00:00+01:00` (0000-12-31 in UTC) and
`9999-12-31T23:00:00-05:00` (year 10000 in UTC) are refused with the file, the row and the column,
as a context date and as the row's reference_date, in CSV and JSON Lines, from the command line
and from the Python API; never an OverflowError or a bare "year 10000 is out of range"."""

from __future__ import annotations

import csv
import json
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.core.pubdates import DateError, DateOutOfRange, parse_date
from tests.support.cli import run_cli

UNDERFLOW = "0001-01-01T00:00:00+01:00"
OVERFLOW = "9999-12-31T23:00:00-05:00"


def _rows(column: str, value: str) -> list[dict]:
    rows = [{"query_id": f"q{n}", "question": "When?", "retrieved_ids": ["d1", "d2"], "gold_ids": ["d1"],
             "reference_date": "2023-01-01", "context_dates": ["2022-01-01", "2022-06-01"]} for n in (1, 2)]
    if column == "reference_date":
        rows[1]["reference_date"] = value
    else:
        rows[1]["context_dates"] = ["2022-01-01", value]
    return rows


def _write(folder: Path, fmt: str, rows: list[dict]) -> Path:
    path = folder / f"rows.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    else:
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(rows[0])
            for row in rows:
                writer.writerow([json.dumps(v) if isinstance(v, list) else v for v in row.values()])
    return path


def test_the_reader_takes_the_last_month_and_refuses_what_leaves_the_calendar_in_utc() -> None:
    december = parse_date("9999-12")
    assert (december.first, december.last, december.label) == (date(9999, 12, 1), date(9999, 12, 31), "9999-12")
    assert parse_date("0001-01").last == date(1, 1, 31) and parse_date("0001-01-01T00:00:00").first == date(1, 1, 1)
    assert parse_date("9999-12-31T23:00:00+00:00").first == date(9999, 12, 31)
    for value in (UNDERFLOW, OVERFLOW, datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1)))):
        with pytest.raises(DateOutOfRange, match=r"f\.csv, row 2, column 'reference_date': .*0001-01-01 to 9999-12-31"):
            parse_date(value, source="f.csv", row=2, column="reference_date")
    assert issubclass(DateOutOfRange, DateError) and parse_date(datetime(9999, 12, 31, tzinfo=UTC)).day > 0


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("column", ["context_dates", "reference_date"])
@pytest.mark.parametrize("value", [UNDERFLOW, OVERFLOW])
def test_evaluate_refuses_a_date_that_leaves_the_calendar_naming_file_row_and_column(
        tmp_path, capsys, fmt, column, value) -> None:
    data = _write(tmp_path, fmt, _rows(column, value))
    code, err = run_cli(["evaluate", str(data), "--metrics", "future_leak,recency_ndcg", "--out",
                         str(tmp_path / "out.csv"), "--no-progress"], capsys)
    assert code == 2, err
    assert f"rows.{fmt}, row 2" in err and f"column '{column}'" in err and repr(value) in err
    assert "0001-01-01 to 9999-12-31" in err and "Traceback" not in err and "OverflowError" not in err

    from tempo_eval.io import load_dataset
    from tempo_eval.io.errors import InputError

    with pytest.raises(InputError, match=rf"rows\.{fmt}, row 2.*column '{column}'.*0001-01-01 to 9999-12-31"):
        load_dataset(data)


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("column", ["context_dates", "reference_date"])
def test_evaluate_reads_the_last_month_of_the_calendar(tmp_path, capsys, fmt, column) -> None:
    data = _write(tmp_path, fmt, _rows(column, "9999-12"))
    out = tmp_path / "out.csv"
    code, err = run_cli(["evaluate", str(data), "--metrics", "future_leak", "--out", str(out), "--no-progress"], capsys)
    assert code == 0, err
    scores = pd.read_csv(out)["score"].tolist()
    # as a context date, 9999-12 is from the future of 2023-01-01; as the as-of date nothing is
    assert scores == ([0.0, 0.5] if column == "context_dates" else [0.0, 0.0])


def test_the_python_api_refuses_with_the_column() -> None:
    from tempo_eval.metrics.evidence_age import FutureLeak

    with pytest.raises(DateOutOfRange, match="column 'reference_date'"):
        FutureLeak(k=2).compute(retrieved_ids=["d1"], context_dates=["2022-01-01"], reference_date=UNDERFLOW)
    with pytest.raises(DateOutOfRange, match="column 'context_dates'"):
        FutureLeak(k=2).compute(retrieved_ids=["d1"], context_dates=[OVERFLOW], reference_date="2023-01-01")


def test_recency_ndcg_at_the_end_of_the_calendar_says_the_gains_decayed_to_nothing() -> None:
    from tempo_eval.metrics.evidence_age import RecencyNDCG

    result = RecencyNDCG(k=2).measure(retrieved_ids=["d1"], context_dates=["2022-01-01"], reference_date="9999-12",
                                      gold_ids=["d1"])
    assert result.reason_code == "no_gold" and "so old on it" in result.reason and "9999-12" in result.reason
