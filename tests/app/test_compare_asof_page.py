"""As-of metrics of run files on the Compare page (issue 23) and their scoring in a worker
process through the workspace's job queue (issue 29.1), on the dated news fixture data/asof:
26 weekly questions, a live index and an old snapshot."""

from __future__ import annotations

import base64
import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tempo_eval.store.jobs import JobQueue
from tests.app.test_pages import worker_in_this_process  # noqa: F401 - the page's jobs run in this process
from tests.support.cli import run_cli
from tests.support.paths import ROOT

FIXTURE = ROOT / "data" / "asof"
FILES = "TREC run files (paths on this machine, a folder of runs, or uploads)"
RUNS = [FIXTURE / "run_live.trec", FIXTURE / "run_snapshot.trec"]
AS_OF = ["future_leak@10", "stale_evidence@10", "median_age@10", "recency_ndcg@10"]
TIMEOUT = 120


def _page(**state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "views" / "compare.py"), default_timeout=TIMEOUT)
    at.session_state["compare_source"] = FILES
    at.session_state["compare_test"] = "student"
    for key, value in state.items():
        at.session_state[key] = value
    return at


def _dated_page(**state) -> AppTest:
    at = _page(**{"compare_run_paths": "\n".join(map(str, RUNS)), "compare_qrels_path": str(FIXTURE / "qrels.txt"),
                  "compare_doc_dates_path": str(FIXTURE / "doc-dates.tsv"),
                  "compare_query_dates_path": str(FIXTURE / "query-dates.tsv"), **state})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _table(at: AppTest) -> pd.DataFrame:
    return next(t.value for t in at.dataframe if "label" in t.value.columns).set_index("run")


def _values(encoded) -> np.ndarray:
    """A plotly array as the figure's JSON holds it (plain, or base64 with its dtype)."""
    if isinstance(encoded, dict):
        return np.frombuffer(base64.b64decode(encoded["bdata"]), dtype=encoded["dtype"])
    return np.asarray(encoded, dtype=float)


def _letters(column: pd.Series) -> list[str]:
    return ["" if pd.isna(v) else str(v) for v in column]


def _cli_table(capsys, *extra: str) -> pd.DataFrame:
    out = Path(__import__("os").environ["TEMPO_EVAL_HOME"]) / "cli.csv"
    code, err = run_cli(["compare", *map(str, RUNS), "--qrels", str(FIXTURE / "qrels.txt"), "--doc-dates",
                         str(FIXTURE / "doc-dates.tsv"), "--query-dates", str(FIXTURE / "query-dates.tsv"),
                         "--metric", "ndcg@10", *[a for m in AS_OF for a in ("--metric", m)], "--test", "student",
                         "--format", "csv", "--out", str(out), *extra], capsys)
    assert code == 0, err
    return pd.read_csv(out).set_index("run")


def test_the_run_table_has_the_as_of_columns_with_cis_and_tests_as_the_command_line(capsys) -> None:
    at = _dated_page()
    table = _table(at)
    expected = _cli_table(capsys)
    for metric in ["ndcg@10", *AS_OF]:
        assert table[metric].tolist() == pytest.approx(expected[metric].tolist(), abs=1e-12), metric
        assert _letters(table[f"{metric} beats"]) == _letters(expected[f"{metric} beats"])
        assert f"{metric} 95% CI" in table.columns
    # lower is better for leak: the snapshot (nothing from the future) beats the live index
    assert table.loc["live", "future_leak@10"] > 0 == table.loc["snapshot", "future_leak@10"]
    assert table.loc["snapshot", "future_leak@10 beats"] == "a"
    assert table.loc["live", "median_age@10 beats"] == "" == table.loc["snapshot", "median_age@10 beats"]
    low, high = (float(x) for x in table.loc["live", "median_age@10 95% CI"].split(" – "))
    assert low <= table.loc["live", "median_age@10"] <= high
    caption = " ".join(c.value for c in at.caption).replace("\\", "").replace("\u2060", "")
    assert "Lower is better for future_leak@10, stale_evidence@10" in caption
    assert "median_age@10: no better direction" in caption


def test_leak_stale_and_age_cover_unjudged_queries_recency_ndcg_the_judged_ones() -> None:
    import os

    qrels = Path(os.environ["TEMPO_EVAL_HOME"]) / "qrels.txt"
    qrels.write_text("".join(line + "\n" for line in (FIXTURE / "qrels.txt").read_text().splitlines()
                             if not line.startswith("w01-fed ")))
    at = _dated_page(compare_qrels_path=str(qrels))
    caption = " ".join(c.value for c in at.caption).replace("\\", "").replace("\u2060", "")
    for metric in ("future_leak@10", "stale_evidence@10", "median_age@10"):
        assert f"{metric}: 26 queries" in caption
    assert "recency_ndcg@10: 25 queries" in caption and "ndcg@10: 25 queries" in caption


def test_the_age_chart_overlays_one_trace_per_run() -> None:
    at = _dated_page()
    chart = next(c for c in at.get("plotly_chart") if "Age of the top 10" in c.proto.spec)
    figure = json.loads(chart.proto.spec)
    assert [trace["name"] for trace in figure["data"]] == ["live", "snapshot"]
    assert figure["layout"]["barmode"] == "overlay"
    live, snapshot = (_values(trace["x"]) for trace in figure["data"])
    assert live.min() < 0 <= snapshot.min()  # only the live index shows the future
    assert len(live) == len(snapshot) == 234  # the dated top-10 documents of the 26 queries


def test_a_leaking_query_opens_to_its_dated_documents() -> None:
    at = _dated_page()
    leaks = next(t.value for t in at.dataframe if "future documents" in t.value.columns)
    assert (leaks["future_leak@10"] > 0).all() and len(leaks) == 11
    said = [m.value.replace("\\", "") for m in at.markdown]
    assert "live: 11 of 26 queries have a document from after their as-of date in the top 10" in said
    assert "snapshot: 0 of 26 queries have a document from after their as-of date in the top 10" in said
    at.selectbox(key="compare_leak_query_0").set_value(leaks["query_id"].iloc[0]).run()
    assert not at.exception
    documents = next(t.value for t in at.dataframe if "flag" in t.value.columns and "date" in t.value.columns
                     and list(t.value.columns[:2]) == ["rank", "doc_id"] and "age" in t.value.columns)
    assert documents["rank"].tolist() == list(range(1, 11))
    future = documents[documents["flag"] == "future"]
    assert len(future) == 1 and (future["age"] < 0).all()
    assert set(documents["flag"]) <= {"future", "stale", "undated", ""}
    assert documents.loc[documents["flag"] == "undated", "date"].isna().all()


def test_uploaded_date_files_give_the_same_values_and_are_saved_in_the_workspace(capsys) -> None:
    import os

    at = _page(compare_run_paths="\n".join(map(str, RUNS)), compare_qrels_path=str(FIXTURE / "qrels.txt"))
    at.run()
    at.file_uploader(key="compare_doc_dates_upload").set_value(
        ("doc-dates.tsv", (FIXTURE / "doc-dates.tsv").read_bytes(), "text/tab-separated-values"))
    at.file_uploader(key="compare_query_dates_upload").set_value(
        ("query-dates.tsv", (FIXTURE / "query-dates.tsv").read_bytes(), "text/tab-separated-values"))
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = _table(at)
    expected = _cli_table(capsys)
    assert table["future_leak@10"].tolist() == pytest.approx(expected["future_leak@10"].tolist())
    uploads = Path(os.environ["TEMPO_EVAL_HOME"]) / "uploads"
    assert sorted(p.name.split("_", 1)[1] for p in uploads.iterdir()) == ["doc-dates.tsv", "query-dates.tsv"]


def test_the_scoring_runs_as_a_workspace_job_and_a_new_session_finds_it_again() -> None:
    at = _dated_page()
    queue = JobQueue()
    jobs = queue.jobs(kind="compare_runs")
    assert len(jobs) == 1 and jobs[0]["status"] == "finished" and jobs[0]["result"]["key"]
    assert at.query_params["cmp"] == str(jobs[0]["id"])  # the address names the comparison
    # a reload: a new session with the address only
    again = AppTest.from_file(str(ROOT / "views" / "compare.py"), default_timeout=TIMEOUT)
    again.query_params["cmp"] = str(jobs[0]["id"])
    again.run()
    assert not again.exception and not again.error
    assert again.session_state["compare_source"] == FILES
    assert _table(again)["future_leak@10"].tolist() == _table(at)["future_leak@10"].tolist()
    assert len(queue.jobs(kind="compare_runs")) == 1  # found, not scored again
    # another session without the address: the inputs are filled from the newest comparison
    other = _page()
    other.run()
    assert other.session_state["compare_doc_dates_path"] == str(FIXTURE / "doc-dates.tsv")
    assert len(queue.jobs(kind="compare_runs")) == 1


def test_a_comparison_whose_folder_was_removed_is_scored_again() -> None:
    import os
    import shutil

    first = _table(_dated_page())
    cache = Path(os.environ["TEMPO_EVAL_HOME"]) / "cache" / "compare"
    for folder in cache.iterdir():
        shutil.rmtree(folder)
    again = _dated_page()
    assert len(JobQueue().jobs(kind="compare_runs")) == 2
    pd.testing.assert_frame_equal(_table(again), first)


def test_downloads_hold_the_as_of_columns() -> None:
    at = _dated_page()
    buttons = {b.proto.label: b for b in at.get("download_button")}
    assert {"Comparison (HTML)", "Table (CSV)"} <= set(buttons)
    from tempo_eval_app import compare_files

    job = JobQueue().jobs(kind="compare_runs")[0]
    found = compare_files.stored(job)
    report = found.report(10, test="student", alpha=0.05)
    from tempo_eval.compare.report_html import comparison_html
    from tempo_eval.compare.statistics import cis_columns

    cis = found.cis(10)
    html = comparison_html(report, board=cis_columns(report.to_dataframe(), cis, report.metrics))
    assert all(m in html for m in AS_OF) and "future_leak@10 CI low" in html
    frame = pd.read_csv(io.StringIO(cis_columns(report.to_dataframe(), cis, report.metrics).to_csv(index=False)))
    assert {"future_leak@10", "future_leak@10 CI low", "recency_ndcg@10 CI high"} <= set(frame.columns)


def test_without_date_files_the_page_says_what_would_add_the_as_of_metrics() -> None:
    at = _page(compare_run_paths="\n".join(map(str, RUNS)), compare_qrels_path=str(FIXTURE / "qrels.txt"))
    at.run()
    assert not at.exception and not at.error
    assert "future_leak@10" not in _table(at).columns
    assert any("Add a doc-dates and a query-dates file" in c.value for c in at.caption)


def test_one_date_file_alone_is_said_and_ndcg_still_compared() -> None:
    at = _page(compare_run_paths="\n".join(map(str, RUNS)), compare_qrels_path=str(FIXTURE / "qrels.txt"),
               compare_doc_dates_path=str(FIXTURE / "doc-dates.tsv"))
    at.run()
    assert not at.exception and not at.error
    assert any("need both date files" in w.value for w in at.warning)
    assert "ndcg@10" in _table(at).columns


def test_mean_cis_are_over_the_queries_every_run_scored() -> None:
    from tempo_eval.compare.statistics import mean_cis

    cis = mean_cis({"a": {"m": {"q1": 1.0, "q2": math.nan, "q3": 0.5}}, "b": {"m": {"q1": 0.0, "q2": 1.0}}}, ["m"])
    assert cis["a"]["m"] == (1.0, 1.0) and cis["b"]["m"] == (0.0, 0.0)  # q1 alone is in both
