"""Impossible calendar dates in a doc-dates or query-dates file (2023-02-30, 2023-02-29 in a
common year, year 0) are refused with the file and the line, on every surface: the fast ISO path
of `parse_day_column` sends them to `parse_date`, the one reader `evaluate` uses too, instead of
rolling them over to March or reading year 0."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from tempo_eval.core.pubdates import DateError, parse_date, parse_day_column
from tests.app.test_pages import worker_in_this_process  # noqa: F401 - the page's jobs run in this process
from tests.support.cli import run_cli
from tests.support.paths import ROOT

FIXTURE = ROOT / "data" / "asof"
RUNS = [str(FIXTURE / "run_live.trec"), str(FIXTURE / "run_snapshot.trec")]
IMPOSSIBLE = ["2023-02-30", "2023-02-29", "0000-01-01", "2023-04-31", "2023-02-31", "2024-02-30", "0000-02-29"]


@pytest.mark.parametrize("text", IMPOSSIBLE)
def test_the_column_reader_refuses_what_the_one_date_reader_refuses(text: str) -> None:
    with pytest.raises(DateError):
        parse_date(text)
    with pytest.raises(DateError, match=rf"dates\.tsv, line 7, column 'date': cannot read '{text}'"):
        parse_day_column(["2023-01-01", text], source="dates.tsv", column="date", lines=np.array([6, 7]))


def test_real_days_at_both_ends_of_the_calendar_stay_on_the_fast_path() -> None:
    days = parse_day_column(["2024-02-29", "0001-01-01", "9999-12-31", "2000-02-29", "", None])
    expected = [parse_date(t).day for t in ("2024-02-29", "0001-01-01", "9999-12-31", "2000-02-29")]
    assert days[:4].tolist() == expected and np.isnan(days[4:]).all()


def _broken(folder: Path, kind: str, text: str) -> tuple[Path, int]:
    """The fixture's `kind`-dates file with the date of the run's first id replaced by `text`."""
    lines = (FIXTURE / f"{kind}-dates.tsv").read_text().splitlines()
    first = (FIXTURE / "run_live.trec").read_text().split()[2 if kind == "doc" else 0]
    index = next(i for i, line in enumerate(lines) if line.startswith(first + "\t"))
    lines[index] = f"{first}\t{text}"
    path = folder / f"{kind}-dates.tsv"
    path.write_text("\n".join(lines) + "\n")
    return path, index + 1


@pytest.mark.parametrize("kind", ["doc", "query"])
@pytest.mark.parametrize("text", IMPOSSIBLE[:3])
def test_compare_refuses_an_impossible_date_naming_the_file_and_line(tmp_path, capsys, kind, text) -> None:
    bad, line = _broken(tmp_path, kind, text)
    dates = {"doc": str(FIXTURE / "doc-dates.tsv"), "query": str(FIXTURE / "query-dates.tsv"), kind: str(bad)}
    code, err = run_cli(["compare", *RUNS, "--qrels", str(FIXTURE / "qrels.txt"), "--metric", "recency_ndcg@10",
                         "--doc-dates", dates["doc"], "--query-dates", dates["query"]], capsys)
    assert code == 2, err
    assert f"{bad}, line {line}" in err and repr(text) in err and "Traceback" not in err


@pytest.mark.parametrize("kind", ["doc", "query"])
def test_the_compare_page_refuses_an_impossible_date_naming_the_file_and_line(kind: str) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.app.test_compare_date_files import FILES, ROOT, _said
    from tests.app.test_compare_date_files import RUNS as PAGE_RUNS

    bad, line = _broken(Path(os.environ["TEMPO_EVAL_HOME"]), kind, "2023-02-30")
    dates = {"doc": FIXTURE / "doc-dates.tsv", "query": FIXTURE / "query-dates.tsv", kind: bad}
    at = AppTest.from_file(str(ROOT / "views" / "compare.py"), default_timeout=120)
    at.session_state["compare_source"] = FILES
    at.session_state["compare_run_paths"] = PAGE_RUNS
    at.session_state["compare_qrels_path"] = str(FIXTURE / "qrels.txt")
    at.session_state["compare_doc_dates_path"] = str(dates["doc"])
    at.session_state["compare_query_dates_path"] = str(dates["query"])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    said = _said(at)
    assert said.startswith("A date file could not be read: ")
    assert f"{kind}-dates.tsv, line {line}" in said and "'2023-02-30'" in said
    assert not any("recency_ndcg" in str(t.value.columns) for t in at.dataframe)
