"""As-of metrics of run files end to end through `compare` (data/asof): the values equal the
dataset-row metrics of `evaluate` on data/asof/news_asof.jsonl, the same queries and runs."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from tests.support.cli import run_cli
from tests.support.paths import ROOT

FIXTURE = ROOT / "data" / "asof"
RUNS = [str(FIXTURE / "run_live.trec"), str(FIXTURE / "run_snapshot.trec")]
QRELS = ["--qrels", str(FIXTURE / "qrels.txt")]
DATES = ["--doc-dates", str(FIXTURE / "doc-dates.tsv"), "--query-dates", str(FIXTURE / "query-dates.tsv")]
AS_OF = {"future_leak@5": "future_leak", "stale_evidence@5": "stale_evidence",
         "median_age@5": "median_evidence_age", "recency_ndcg@5": "recency_ndcg"}


def _compare(tmp_path, capsys, metrics, *extra):
    out, per_query = tmp_path / "table.csv", tmp_path / "per_query.csv"
    code, err = run_cli(["compare", *RUNS, *QRELS, *DATES, *[a for m in metrics for a in ("--metric", m)], *extra,
                         "--format", "csv", "--out", str(out), "--per-query", str(per_query)], capsys)
    assert code == 0, err
    return pd.read_csv(out).set_index("run"), pd.read_csv(per_query, dtype={"value": float})


def test_compare_values_equal_the_dataset_row_metrics(tmp_path, capsys):
    table, lines = _compare(tmp_path, capsys, ["ndcg@10", *AS_OF], "--max-age", "30", "--half-life", "90")
    rows = [json.loads(line) for line in (FIXTURE / "news_asof.jsonl").read_text().splitlines()]
    rows_out = tmp_path / "rows.csv"
    code, err = run_cli(["evaluate", str(FIXTURE / "news_asof.jsonl"), "--metrics", ",".join(AS_OF.values()),
                         "--k", "5", "--max-age", "30", "--half-life", "90", "--out", str(rows_out),
                         "--no-progress"], capsys)
    assert code == 0, err
    frame = pd.read_csv(rows_out)
    expected = {(rows[r]["run"], rows[r]["query_id"], m): s for r, m, s in zip(frame["row"], frame["metric"], frame["score"], strict=True)}
    got = lines[lines["metric"].isin(list(AS_OF))]
    assert set(got["metric"]) == set(AS_OF)
    assert len(got) == len(expected) == 2 * 26 * 4  # every query of both runs (all are dated and judged)
    for run, query, metric, value in got.itertuples(index=False):
        assert value == pytest.approx(expected[run, query, AS_OF[metric]], nan_ok=True), (run, query, metric)
    # lower is better: the snapshot (no future documents) beats the live index on future leak
    assert table.loc["live", "future_leak@5"] > 0 == table.loc["snapshot", "future_leak@5"]
    assert table.loc["snapshot", "future_leak@5 beats"] == "a"
    assert table.loc["live", "stale_evidence@5 beats"] == "b"
    assert table.loc["snapshot", "median_age@5"] > 100 > table.loc["live", "median_age@5"]
    assert list(table.columns[1:4]) == ["ndcg@10", "ndcg@10 beats", "future_leak@5"]


def test_max_age_and_half_life_default_to_365_days(tmp_path, capsys):
    _, default = _compare(tmp_path, capsys, ["stale_evidence@5", "recency_ndcg@5"])
    _, explicit = _compare(tmp_path, capsys, ["stale_evidence@5", "recency_ndcg@5"], "--max-age", "365",
                           "--half-life", "365")
    _, short = _compare(tmp_path, capsys, ["stale_evidence@5", "recency_ndcg@5"], "--max-age", "7")
    pd.testing.assert_frame_equal(default, explicit)
    assert not default.equals(short)


def test_an_unjudged_query_gets_future_leak_but_no_recency_ndcg(tmp_path, capsys):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(line + "\n" for line in (FIXTURE / "qrels.txt").read_text().splitlines()
                             if not line.startswith("w01-fed ")))
    out, per_query = tmp_path / "t.csv", tmp_path / "pq.csv"
    code, err = run_cli(["compare", *RUNS, "--qrels", str(qrels), *DATES, "--metric", "future_leak@5",
                         "--metric", "recency_ndcg@5", "--format", "csv", "--out", str(out),
                         "--per-query", str(per_query)], capsys)
    assert code == 0, err
    lines = pd.read_csv(per_query)
    live = lines[lines["run"] == "live"]
    assert "w01-fed" in set(live[live["metric"] == "future_leak@5"]["query_id"])
    assert "w01-fed" not in set(live[live["metric"] == "recency_ndcg@5"]["query_id"])


def test_a_query_without_an_as_of_date_is_left_out_with_a_note(tmp_path, capsys):
    dates = tmp_path / "query-dates.tsv"
    dates.write_text("".join(line + "\n" for line in (FIXTURE / "query-dates.tsv").read_text().splitlines()
                             if not line.startswith("w01-fed\t")))
    per_query = tmp_path / "pq.csv"
    code, err = run_cli(["compare", *RUNS, *QRELS, "--doc-dates", str(FIXTURE / "doc-dates.tsv"), "--query-dates",
                         str(dates), "--metric", "future_leak@5", "--per-query", str(per_query)], capsys)
    assert code == 0, err
    assert "1 queries of the runs have no as-of date" in err and "w01-fed" in err
    assert "w01-fed" not in set(pd.read_csv(per_query)["query_id"])


@pytest.mark.parametrize(("args", "message"), [
    (["--metric", "future_leak@10"], "need --doc-dates FILE and --query-dates FILE"),
    (["--metric", "recency_ndcg@10", "--doc-dates", str(FIXTURE / "doc-dates.tsv")], "--query-dates FILE"),
    (["--metric", "ndcg@10", "--max-age", "30"], "--max-age and --half-life apply to the as-of metrics"),
    (["--metric", "median_age@0", *DATES], "median_age@K with a positive K"),
    (["--metric", "stale_evidence@5", *DATES, "--max-age", "-3"], "--max-age must be a positive number"),
    (["--metric", "recency_ndcg@5", *DATES, "--half-life", "0"], "--half-life must be a positive number"),
    (["--metric", "future_leak@5", *DATES, "--engine", "ray"], "leave out --engine ray"),
    (["--metric", "freshness@5", *DATES], "future_leak@k"),
])
def test_compare_checks_the_as_of_options(capsys, args, message):
    code, err = run_cli(["compare", *RUNS, *QRELS, *args], capsys)
    assert code == 2 and message in err and "Traceback" not in err


@pytest.mark.parametrize("kind", ["doc", "query"])
def test_compare_names_the_file_line_and_value_of_a_bad_date(tmp_path, capsys, kind):
    name = f"{kind}-dates.tsv"
    lines = (FIXTURE / name).read_text().splitlines()
    first = (FIXTURE / "run_live.trec").read_text().split()[2 if kind == "doc" else 0]
    index = next(i for i, line in enumerate(lines) if line.startswith(first + "\t"))
    lines[index] = f"{first}\tsoon"
    bad = tmp_path / name
    bad.write_text("\n".join(lines) + "\n")
    dates = {"doc": str(FIXTURE / "doc-dates.tsv"), "query": str(FIXTURE / "query-dates.tsv"), kind: str(bad)}
    code, err = run_cli(["compare", *RUNS, *QRELS, "--metric", "future_leak@10", "--doc-dates", dates["doc"],
                         "--query-dates", dates["query"]], capsys)
    assert code == 2 and name in err and f"line {index + 1}" in err and "'soon'" in err


def test_score_trec_files_hand_computed(tmp_path):
    from tempo_eval.compare.trec_scores import score_trec_files

    run = tmp_path / "a.trec"
    run.write_text("q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq1 Q0 d3 3 1.0 a\nq2 Q0 d2 1 1.0 a\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d4 1\n")  # q2 is unjudged; d4 (relevant, not retrieved) is undated
    docs, queries = tmp_path / "docs.tsv", tmp_path / "queries.tsv"
    docs.write_text("d1\t2023-01-03\nd2\t2023-01-11\nd3\t\n")
    queries.write_text("q1\t2023-01-10\nq2\t2023-01-12\n")
    scores = score_trec_files([run], qrels, metrics=["future_leak@3", "stale_evidence@3", "median_age@3",
                                                     "recency_ndcg@3", "ndcg@3"],
                              doc_dates=docs, query_dates=queries, max_age=5, half_life=7)
    values = scores.per_query["a"]
    assert scores.metrics == ["future_leak@3", "stale_evidence@3", "median_age@3", "recency_ndcg@3", "ndcg@3"]
    assert values["future_leak@3"] == {"q1": 0.5, "q2": 0.0}  # d2 is a day after q1's date
    assert values["stale_evidence@3"] == {"q1": 0.5, "q2": 0.0}  # d1 is 7 days old
    assert values["median_age@3"] == {"q1": 7.0, "q2": 1.0}
    # gain 2^(-7/7) = 0.5 at rank 1; ideal: d1 (0.5) and the undated d4 (1) in the best order
    assert values["recency_ndcg@3"] == {"q1": pytest.approx(0.5 / (1 + 0.5 / math.log2(3)))}
