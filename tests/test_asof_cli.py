"""As-of metrics end to end through `evaluate`, on the dated news fixture (data/asof/)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.core.pubdates import parse_date
from tests.support.cli import run_cli

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "asof"
METRICS = "future_leak,stale_evidence,median_evidence_age,recency_ndcg,answer_currency"


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return [json.loads(line) for line in (FIXTURE / "news_asof.jsonl").read_text().splitlines()]


def test_evaluate_scores_the_news_fixture_by_name(tmp_path, capsys, rows):
    out = tmp_path / "out.csv"
    code, err = run_cli(["evaluate", str(FIXTURE / "news_asof.jsonl"), "--metrics", METRICS, "--k", "5",
                         "--max-age", "30", "--half-life", "90", "--out", str(out), "--no-progress"], capsys)
    assert code == 0, err
    frame = pd.read_csv(out)
    assert set(frame["metric"]) == set(METRICS.split(","))
    means = frame.groupby(["metric", "run"])["score"].mean()
    # the retriever over the 2022-09-30 snapshot shows no future, but stale evidence and outdated answers
    assert means["future_leak", "snapshot"] == 0.0 and means["future_leak", "live"] > 0
    assert means["stale_evidence", "snapshot"] > means["stale_evidence", "live"]
    assert means["median_evidence_age", "snapshot"] > 100 > means["median_evidence_age", "live"]
    assert means["recency_ndcg", "live"] > means["recency_ndcg", "snapshot"]
    assert means["answer_currency", "live"] > means["answer_currency", "snapshot"]
    # every future-leak value is the share of dated top-5 documents published after the question date
    leak = frame[frame["metric"] == "future_leak"].set_index("row")["score"]
    for index, row in enumerate(rows):
        days = [parse_date(d) for d in row["published"][:5]]
        as_of = parse_date(row["question_date"]).first
        dated = [d.first for d in days if d is not None]
        assert leak[index] == pytest.approx(sum(d > as_of for d in dated) / len(dated))
    # the label leads each answer-currency reason; the summary gives the counts and the rate
    labels = frame[frame["metric"] == "answer_currency"]["reason"].str.split(":").str[0]
    assert set(labels) <= {"current", "outdated", "other"} and (labels == "outdated").any()
    line = next(line for line in err.splitlines() if line.startswith("answer_currency labels"))
    n_outdated = int((labels == "outdated").sum())
    assert f"outdated {n_outdated}," in line and "outdated-answer rate" in line


def test_a_row_without_a_question_date_is_nan_no_as_of(tmp_path, capsys, rows):
    data = tmp_path / "rows.jsonl"
    row = dict(rows[0])
    del row["question_date"]
    data.write_text(json.dumps(row) + "\n")
    out = tmp_path / "out.csv"
    code, err = run_cli(["evaluate", str(data), "--metrics", "future_leak,recency_ndcg", "--out", str(out),
                         "--no-progress"], capsys)
    frame = pd.read_csv(out)
    assert frame["score"].isna().all() and set(frame["reason_code"]) == {"no_as_of"}
    assert "no_as_of: 1" in err and code == 0  # not measurable is no failure


def test_an_unreadable_publication_date_names_the_row_column_and_value(tmp_path, capsys, rows):
    data = tmp_path / "rows.jsonl"
    bad = dict(rows[1], published=["2023-01-06", "last week"] + rows[1]["published"][2:])
    data.write_text(json.dumps(rows[0]) + "\n" + json.dumps(bad) + "\n")
    code, err = run_cli(["evaluate", str(data), "--metrics", "future_leak", "--out", str(tmp_path / "o.csv"),
                         "--no-progress"], capsys)
    assert code == 2
    assert "'published'" in err and "line 2" in err and "'last week'" in err and "not a date" in err


@pytest.mark.parametrize(("options", "message"), [
    (["--metrics", "future_leak", "--max-age", "30"], "--max-age was given but none of the chosen metrics"),
    (["--metrics", "future_leak", "--half-life", "30"], "--half-life was given but none of the chosen metrics"),
    (["--metrics", "recency_ndcg", "--half-life", "0"], "half_life must be a number of days > 0"),
    (["--metrics", "stale_evidence", "--max-age", "-1"], "max_age must be a number of days >= 0"),
])
def test_as_of_options_are_checked(tmp_path, capsys, options, message):
    code, err = run_cli(["evaluate", str(FIXTURE / "news_asof.jsonl"), *options, "--out",
                         str(tmp_path / "o.csv"), "--no-progress"], capsys)
    assert code == 2 and message in err


def test_the_fixture_is_what_its_builder_writes(tmp_path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_asof", FIXTURE.parent / "build_asof.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "OUT", tmp_path)
    module.main()
    for name in ("news_asof.jsonl", "run_live.trec", "run_snapshot.trec", "qrels.txt", "doc-dates.tsv",
                 "query-dates.tsv"):
        assert (tmp_path / name).read_text() == (FIXTURE / name).read_text(), name
