"""As-of metrics row by row on the Results page (issue 23): each row's dated documents, each score
explained from them, answer currency's label and matched reference; the score filter in days for
median evidence age."""

from __future__ import annotations

import math
import statistics

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.test_pages import APP, TIMEOUT, assert_clean, table_with
from tests.support.paths import ROOT

FIXTURE = ROOT / "data" / "asof" / "news_asof.jsonl"


@pytest.fixture
def asof_run() -> tuple[int, int]:
    """The dated news fixture and an engine run of the five as-of metrics (k 10, max_age 30)."""
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.metrics.answer_currency import AnswerCurrency
    from tempo_eval.metrics.evidence_age import (
        FutureLeak,
        MedianEvidenceAge,
        RecencyNDCG,
        StaleEvidence,
    )
    from tempo_eval.store.runs import RunStore

    store = RunStore()
    dataset_id = store.save_dataset(load_dataset(FIXTURE))
    metrics = [FutureLeak(k=10), StaleEvidence(k=10, max_age=30), MedianEvidenceAge(k=10), RecencyNDCG(k=10),
               AnswerCurrency()]
    run = evaluate(store.get_dataset(dataset_id), metrics, store=store, run_name="as-of")
    return dataset_id, run.run_id


def results_page(dataset_id: int, run_id: int, **params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["dataset"] = str(dataset_id)
    at.query_params["runs"] = str(run_id)
    for name, value in params.items():
        at.query_params[name] = value
    at.switch_page("views/results.py").run()
    assert_clean(at)
    return at


def leaking_row(run_id: int) -> int:
    from tempo_eval.store.runs import RunStore

    frame = RunStore().results_frame(run_id)
    leaks = frame[(frame["metric"] == "future_leak") & (frame["score"] > 0)]
    assert len(leaks), "the fixture has a live row that leaks"
    return int(leaks["row"].iloc[0])


def test_a_rows_dated_documents_explain_each_as_of_score(asof_run) -> None:
    from tempo_eval.store.runs import RunStore

    dataset_id, run_id = asof_run
    row = leaking_row(run_id)
    at = results_page(dataset_id, run_id, row=str(row))
    table = table_with(at, "rank", "doc", "published", "age (days)", "counted as")
    store = RunStore()
    score = {m: store.get_result(run_id, row, m).score
             for m in ("future_leak", "stale_evidence", "median_evidence_age", "recency_ndcg")}
    kinds = table["counted as"]
    dated = kinds.isin(["future", "stale", "dated"]).sum()
    assert len(table) == 10 and (kinds == "future").sum() > 0
    assert (kinds == "future").sum() / dated == pytest.approx(score["future_leak"])
    assert (kinds == "stale").sum() / dated == pytest.approx(score["stale_evidence"])
    past = [int(a.replace(",", "")) for a, k in zip(table["age (days)"], kinds, strict=True) if k in ("stale", "dated")]
    assert statistics.median(past) == pytest.approx(score["median_evidence_age"])
    assert all(int(a.replace(",", "")) < 0 for a, k in zip(table["age (days)"], kinds, strict=True) if k == "future")
    assert all(int(a.replace(",", "")) > 30 for a, k in zip(table["age (days)"], kinds, strict=True) if k == "stale")
    # an undated document's age reads "—", not "None"
    assert all(a == "—" for a, k in zip(table["age (days)"], kinds, strict=True) if k == "undated")
    details = store.get_result(run_id, row, "recency_ndcg").details
    dcg = sum(g / math.log2(r + 1) for r, g in zip(table["rank"], table["gain"], strict=True))
    assert dcg / details["idcg"] == pytest.approx(score["recency_ndcg"])
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert f"future of {dated} dated" in captions and "older than 30 days" in captions
    # the as-of documents show once, not once per metric
    assert not any(c.value.startswith("**Ranked documents**") for c in at.markdown)


def test_answer_currency_shows_its_label_and_the_reference_that_matched(asof_run) -> None:
    from tempo_eval.store.runs import RunStore

    dataset_id, run_id = asof_run
    frame = RunStore().results_frame(run_id)
    outdated = frame[(frame["metric"] == "answer_currency") & frame["reason"].str.startswith("outdated")]
    row = int(outdated["row"].iloc[0])
    matched = RunStore().get_result(run_id, row, "answer_currency").details["matched"]
    at = results_page(dataset_id, run_id, row=str(row))
    references = table_with(at, "reference", "kind", "matched")
    line = references[references["matched"] != ""]
    assert list(line["reference"]) == [matched] and list(line["kind"]) == ["outdated"]
    heading = " ".join(m.value for m in at.markdown if "Answer currency" in m.value).replace("\\", "")
    assert "outdated" in heading and matched in heading and "word match" in heading


def test_score_scale_is_0_to_1_for_shares_and_the_real_range_in_days_for_median_age() -> None:
    from tempo_eval_app.score_scale import UNIT_INTERVAL, score_scale

    assert score_scale("future_leak", [0.0, 0.25, float("nan")]) == UNIT_INTERVAL
    days = score_scale("median_evidence_age", [3.5, 412.0, float("nan")])
    assert (days.low, days.high, days.step, days.unit) == (3.0, 412.0, 1.0, "days")
    assert score_scale("median_evidence_age", [0.5]).unit == "days"  # in days, even below 1
    assert score_scale("median_evidence_age", [7.0]).high == 8.0  # a slider needs low < high
    foreign = score_scale("ragas:answer_length", [12.0, 40.0])  # any score outside 0..1: its own range
    assert (foreign.low, foreign.high, foreign.unit) == (12.0, 40.0, None)


def test_the_results_filter_takes_median_evidence_age_in_days(asof_run) -> None:
    dataset_id, run_id = asof_run
    at = results_page(dataset_id, run_id)
    at.selectbox(key="results_metric").set_value("median_evidence_age").run()
    assert_clean(at)
    grid = table_with(at, "query_id", "median_evidence_age")
    ages = grid["median_evidence_age"].dropna()
    slider = at.slider(key="results_range_median_evidence_age")
    assert (slider.min, slider.max) == (math.floor(ages.min()), math.ceil(ages.max())) and slider.max > 100
    assert "days" in slider.label
    slider.set_value((100.0, float(slider.max))).run()
    assert_clean(at)
    old = table_with(at, "query_id", "median_evidence_age")
    assert len(old) == (ages >= 100).sum() and 0 < len(old) < len(grid)
    assert at.query_params["range"] in (f"100.0,{float(slider.max)}", [f"100.0,{float(slider.max)}"])
    # the link reopens the same view
    again = results_page(dataset_id, run_id, metric="median_evidence_age", range=f"100.0,{float(slider.max)}")
    assert len(table_with(again, "query_id", "median_evidence_age")) == len(old)
    # "any metric" filters on 0..1 over the metrics scored 0..1 only: a low range keeps no line for
    # its median age alone
    at.selectbox(key="results_metric").set_value("(any metric)").run()
    at.slider(key="results_range").set_value((0.95, 1.0)).run()
    assert_clean(at)
    shown = table_with(at, "query_id", "future_leak")
    shares = shown[["future_leak", "stale_evidence", "recency_ndcg", "answer_currency"]]
    assert len(shown) and (shares.ge(0.95) & shares.le(1.0)).any(axis=1).all()
