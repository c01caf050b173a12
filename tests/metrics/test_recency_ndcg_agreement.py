"""Recency NDCG agrees between `evaluate` (dataset rows) and `compare` (run files): a row that
retrieved nothing but has relevant documents scores 0, as NDCG does and as `compare` scores a
judged query without results; `evaluate --doc-dates FILE` (the option and reader `compare` uses)
dates the relevant documents a row did not retrieve and the retrieved ones the row leaves undated,
so the same data gives the same per-query values through both commands."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.metrics.evidence_age import RecencyNDCG
from tests.support.cli import run_cli

DOCS = {"d1": "2022-12-01", "d2": "2023-02-01", "d3": "", "d4": "2021-01-01", "d5": "2022-06-15",
        "d6": "2020-03-03", "d7": "2022-12"}
QUERIES = {"q1": "2023-01-01", "q2": "2023-01-01", "q3": "2022-01-01", "q4": "2023-01-01"}
RANKING = {"q1": ["d1", "d2", "d3", "d4"], "q2": ["d6", "d1"], "q3": [], "q4": ["d7", "d3"]}
GOLD = {"q1": {"d1": 1, "d4": 2, "d5": 1}, "q2": {"d5": 2, "d6": 1}, "q3": {"d4": 1, "d6": 1},
        "q4": {"d7": 1, "d5": 3, "d2": 1}}
#: dates the dataset rows carry themselves (the rest only in the doc-dates file)
IN_ROW = {"d2", "d4", "d6"}


def _write(folder: Path) -> dict[str, Path]:
    paths = {name: folder / name for name in ("doc-dates.tsv", "query-dates.tsv", "qrels.txt", "rows.jsonl")}
    paths["doc-dates.tsv"].write_text("".join(f"{d}\t{t}\n" for d, t in DOCS.items()))
    paths["query-dates.tsv"].write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    paths["qrels.txt"].write_text("".join(f"{q} 0 {d} {g}\n" for q, grades in GOLD.items() for d, g in grades.items()))
    for name in ("a", "b"):
        paths[name] = folder / f"run_{name}.trec"
        paths[name].write_text("".join(f"{q} Q0 {d} {rank + 1} {10 - rank} {name}\n"
                                       for q, docs in RANKING.items() for rank, d in enumerate(docs)))
    paths["rows.jsonl"].write_text("".join(json.dumps({
        "query_id": q, "question": "?", "reference_date": QUERIES[q], "retrieved_ids": docs,
        "context_dates": [DOCS[d] if d in IN_ROW else None for d in docs], "gold_ids": GOLD[q],
    }) + "\n" for q, docs in RANKING.items()))
    return paths


@pytest.mark.parametrize("k", [3, 10])
def test_evaluate_and_compare_give_the_same_recency_ndcg_per_query(tmp_path, capsys, k) -> None:
    paths = _write(tmp_path)
    code, err = run_cli(["compare", str(paths["a"]), str(paths["b"]), "--qrels", str(paths["qrels.txt"]),
                         "--doc-dates", str(paths["doc-dates.tsv"]), "--query-dates", str(paths["query-dates.tsv"]),
                         "--metric", f"recency_ndcg@{k}", "--half-life", "90",
                         "--per-query", str(tmp_path / "per_query.csv")], capsys)
    assert code == 0, err
    compared = pd.read_csv(tmp_path / "per_query.csv").query("run == 'a'").set_index("query_id")["value"]
    code, err = run_cli(["evaluate", str(paths["rows.jsonl"]), "--metrics", "recency_ndcg", "--k", str(k),
                         "--half-life", "90", "--doc-dates", str(paths["doc-dates.tsv"]),
                         "--out", str(tmp_path / "evaluated.csv"), "--no-progress"], capsys)
    assert code == 0, err
    evaluated = pd.read_csv(tmp_path / "evaluated.csv").set_index("query_id")["score"]
    assert sorted(evaluated.index) == sorted(compared.index) == sorted(QUERIES)
    for query in QUERIES:
        assert evaluated[query] == pytest.approx(compared[query], abs=1e-12), query
    assert evaluated["q3"] == 0.0  # retrieved nothing: 0, not NaN no_dates
    assert 0 < evaluated["q2"] < 1  # d5, relevant and not retrieved, dated by the file only


def test_a_row_that_retrieved_nothing_scores_zero_and_one_of_undated_documents_stays_no_dates() -> None:
    metric = RecencyNDCG(k=5)
    empty = metric.measure(retrieved_ids=[], context_dates=[], reference_date="2023-01-10", gold_ids=["a"])
    assert empty.score == 0.0 and empty.reason_code is None
    undated = metric.measure(retrieved_ids=["a"], context_dates=[None], reference_date="2023-01-10", gold_ids=["a"])
    assert math.isnan(undated.score) and undated.reason_code == "no_dates"
    no_gold = metric.measure(retrieved_ids=[], context_dates=[], reference_date="2023-01-10", gold_ids=[])
    assert math.isnan(no_gold.score) and no_gold.reason_code == "no_gold"


def test_doc_dates_is_refused_without_an_as_of_metric(tmp_path, capsys) -> None:
    paths = _write(tmp_path)
    code, err = run_cli(["evaluate", str(paths["rows.jsonl"]), "--metrics", "temporal_ndcg", "--doc-dates",
                         str(paths["doc-dates.tsv"]), "--out", str(tmp_path / "o.csv"), "--no-progress"], capsys)
    assert code == 2 and "--doc-dates was given but none of the chosen metrics dates documents" in err


def test_a_bad_date_in_the_doc_dates_file_names_its_line(tmp_path, capsys) -> None:
    paths = _write(tmp_path)
    paths["doc-dates.tsv"].write_text(paths["doc-dates.tsv"].read_text().replace("d5\t2022-06-15", "d5\t2022-02-30"))
    code, err = run_cli(["evaluate", str(paths["rows.jsonl"]), "--metrics", "recency_ndcg", "--doc-dates",
                         str(paths["doc-dates.tsv"]), "--out", str(tmp_path / "o.csv"), "--no-progress"], capsys)
    assert code == 2 and "doc-dates.tsv" in err and "line 5" in err and "'2022-02-30'" in err, err


def test_rows_without_context_dates_are_dated_by_the_doc_dates_file(tmp_path, capsys) -> None:
    paths = _write(tmp_path)
    with_dates = [json.loads(line) for line in paths["rows.jsonl"].read_text().splitlines()]
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps({k: v for k, v in row.items() if k != "context_dates"}) + "\n"
                            for row in with_dates))
    scores = {}
    for data in (paths["rows.jsonl"], bare):
        out = tmp_path / f"{data.stem}.csv"
        code, err = run_cli(["evaluate", str(data), "--metrics", "recency_ndcg,future_leak", "--k", "3", "--doc-dates",
                             str(paths["doc-dates.tsv"]), "--out", str(out), "--no-progress"], capsys)
        assert code == 0, err
        scores[data.stem] = pd.read_csv(out).sort_values(["query_id", "metric"])["score"].tolist()
    assert scores["rows"] == pytest.approx(scores["bare"], nan_ok=True)
    code, err = run_cli(["evaluate", str(bare), "--metrics", "recency_ndcg", "--out", str(tmp_path / "o.csv"),
                         "--no-progress"], capsys)
    assert code == 2 and "context_dates" in err  # without the file, the dates must be in the rows
