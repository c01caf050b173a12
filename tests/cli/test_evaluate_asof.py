"""As-of metrics end to end through `evaluate`, on the dated news fixture (data/asof/)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tempo_eval.core.pubdates import parse_date
from tests.support.cli import run_cli, run_cli_streams
from tests.support.paths import ROOT

FIXTURE = ROOT / "data" / "asof"
METRICS = "future_leak,stale_evidence,median_evidence_age,recency_ndcg,answer_currency"


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return [json.loads(line) for line in (FIXTURE / "news_asof.jsonl").read_text().splitlines()]


def test_evaluate_scores_the_news_fixture_by_name(tmp_path, capsys, rows):
    out = tmp_path / "out.csv"
    code, stdout, err = run_cli_streams(["evaluate", str(FIXTURE / "news_asof.jsonl"), "--metrics", METRICS, "--k", "5",
                                         "--max-age", "30", "--half-life", "90", "--out", str(out), "--no-progress"],
                                        capsys)
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
    line = next(line for line in stdout.splitlines() if line.startswith("answer_currency labels"))  # the summary: stdout
    n_outdated = int((labels == "outdated").sum())
    assert f"outdated {n_outdated}," in line and "outdated-answer rate" in line


def test_a_row_without_a_question_date_is_nan_no_as_of(tmp_path, capsys, rows):
    data = tmp_path / "rows.jsonl"
    row = dict(rows[0])
    del row["question_date"]
    data.write_text(json.dumps(row) + "\n")
    out = tmp_path / "out.csv"
    code, stdout, err = run_cli_streams(["evaluate", str(data), "--metrics", "future_leak,recency_ndcg", "--out", str(out),
                         "--no-progress"], capsys)
    frame = pd.read_csv(out)
    assert frame["score"].isna().all() and set(frame["reason_code"]) == {"no_as_of"}
    assert "no_as_of: 1" in stdout and code == 0  # not measurable is no failure


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


def _read_trec_columns():
    """The fixture's two runs as the streaming reader holds them (rows grouped by query code, best
    first) and its qrels as columns; parsed here by hand."""
    import numpy as np
    import pyarrow as pa

    query_ids: list[str] = []
    code_of: dict[str, int] = {}

    def code(qid: str) -> int:
        if qid not in code_of:
            code_of[qid] = len(query_ids)
            query_ids.append(qid)
        return code_of[qid]

    runs = {}
    for name in ("live", "snapshot"):
        lines = [line.split() for line in (FIXTURE / f"run_{name}.trec").read_text().splitlines()]
        rows = sorted(((code(q), -float(score), doc) for q, _, doc, _, score, _ in lines))
        runs[name] = (np.array([r[0] for r in rows]), pa.array([r[2] for r in rows]))
    qrels = [line.split() for line in (FIXTURE / "qrels.txt").read_text().splitlines()]
    columns = (np.array([code(q) for q, *_ in qrels]), pa.array([d for _, _, d, _ in qrels]),
               np.array([float(g) for *_, g in qrels]))
    return runs, query_ids, columns


def test_run_files_give_the_dataset_rows_values(rows):
    from tempo_eval.metrics.asof_columns import asof_per_query, parse_run_metric
    from tempo_eval.metrics.evidence_age import FutureLeak, MedianEvidenceAge, StaleEvidence

    runs, query_ids, qrels = _read_trec_columns()
    names = ["future_leak@5", "stale_evidence@5", "median_age@5", "recency_ndcg@5"]
    per_query = asof_per_query(runs, query_ids, qrels, {m: parse_run_metric(m) for m in names},
                               doc_dates=FIXTURE / "doc-dates.tsv", query_dates=FIXTURE / "query-dates.tsv",
                               max_age=30, half_life=90)
    checks = {"future_leak@5": FutureLeak(k=5), "stale_evidence@5": StaleEvidence(k=5, max_age=30),
              "median_age@5": MedianEvidenceAge(k=5)}
    for row in rows:
        inputs = {"retrieved_ids": row["retrieved_ids"], "context_dates": row["published"],
                  "reference_date": row["question_date"]}
        for metric, check in checks.items():
            assert per_query[row["run"]][metric][row["query_id"]] == pytest.approx(check.compute(**inputs)), metric
    ndcg = per_query["live"]["recency_ndcg@5"]
    assert len(ndcg) == 26 and all(0 < value <= 1 for value in ndcg.values())
    assert sum(per_query["live"]["recency_ndcg@5"].values()) > sum(per_query["snapshot"]["recency_ndcg@5"].values())


def test_run_metric_names():
    from tempo_eval.metrics.asof_columns import parse_run_metric

    assert parse_run_metric("Future_Leak@10") == ("future_leak", 10)
    assert parse_run_metric("ndcg@10") is None
    with pytest.raises(ValueError, match="median_age@K with a positive K"):
        parse_run_metric("median_age@0")
