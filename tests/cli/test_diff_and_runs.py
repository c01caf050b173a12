"""`tempo-eval diff` and `tempo-eval runs` on two stored runs of the sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tempo_eval.io.export import read_csv_export
from tempo_eval.store.runs import RunStore
from tests.support.cli import run_cli_streams as run_cli
from tests.support.paths import ROOT
from tests.support.sample_runs import make_sample_runs


@pytest.fixture
def runs(tmp_path: Path) -> tuple[int, int]:
    return make_sample_runs(RunStore(), tmp_path)


def test_diff_exits_1_when_asked_to_fail_on_one_regression(runs, capsys) -> None:
    baseline, candidate = runs
    code, _, err = run_cli(["diff", str(baseline), str(candidate), "--fail-on-regression", "1"], capsys)
    assert code == 1
    assert "fail: temporal_faithfulness: 2 rows regressed (at least 1)" in err
    code, out, _ = run_cli(["diff", str(baseline), str(candidate), "--fail-on-regression", "3"], capsys)
    assert code == 0
    code, out, _ = run_cli(["diff", str(baseline), str(candidate), "--metric", "temporal_ndcg",
                       "--fail-on-regression", "1"], capsys)
    assert code == 0  # NDCG does not depend on the answers


def test_a_run_diffed_with_itself_exits_0_with_every_row_unchanged(runs, capsys) -> None:
    baseline, _ = runs
    code, out, _ = run_cli(["diff", str(baseline), "sample baseline", "--fail-on-regression", "1", "--format", "json"],
                      capsys)
    assert code == 0
    out = json.loads(out)
    faith = out["metrics"]["temporal_faithfulness"]
    assert (faith["regressed"], faith["improved"], faith["unchanged"]) == (0, 0, 30)


def test_diff_names_an_unknown_run_in_one_line_and_exits_2(runs, capsys) -> None:
    code, _, err = run_cli(["diff", str(runs[0]), "no such run"], capsys)
    assert code == 2
    assert err.strip().count("\n") == 0 and "'no such run'" in err
    code, _, err = run_cli(["diff", str(runs[0]), str(runs[1]), "--fail-on-regression", "0"], capsys)
    assert code == 2 and "--fail-on-regression" in err


def test_diff_json_is_the_documented_object_and_html_is_written(runs, capsys, tmp_path: Path) -> None:
    baseline, candidate = runs
    page = tmp_path / "diff.html"
    code, out, _ = run_cli(["diff", str(baseline), str(candidate), "--format", "json", "--html", str(page)], capsys)
    assert code == 0
    out = json.loads(out)
    assert list(out) == ["baseline", "candidate", "matched", "unmatched_baseline", "unmatched_candidate",
                         "metrics", "rows"]
    assert out["baseline"]["id"] == baseline and out["candidate"]["name"] == "years changed"
    assert out["matched"] == 30 and out["unmatched_baseline"] == [] == out["unmatched_candidate"]
    assert out["rows"][0] == {"query_id": "q1", "metric": "temporal_faithfulness", "baseline": 1.0,
                              "candidate": 0.0, "delta": -1.0}
    deltas = [r["delta"] for r in out["rows"]]
    measured = [d for d in deltas if d is not None]
    assert measured == sorted(measured) and deltas[: len(measured)] == measured  # NaN deltas last
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_diff_markdown_is_a_table_to_paste(runs, capsys) -> None:
    code, text, _ = run_cli(["diff", str(runs[0]), str(runs[1]), "--format", "markdown"], capsys)
    assert code == 0 and "| Metric | Baseline |" in text and "**Worst regressions**" in text


def test_runs_lists_the_stored_runs_with_their_means(runs, capsys) -> None:
    code, out, _ = run_cli(["runs", "--format", "json"], capsys)
    records = json.loads(out)
    assert code == 0 and [r["id"] for r in records] == [runs[1], runs[0]]
    first = records[1]
    assert {"id", "name", "dataset", "metrics", "verifier", "status", "rows", "created", "means"} <= set(first)
    assert first["rows"] == 30 and first["means"]["temporal_faithfulness"]["mean"] == pytest.approx(0.8)
    code, out, _ = run_cli(["runs"], capsys)
    assert code == 0 and "sample baseline" in out


def test_runs_show_export_and_delete(runs, capsys, tmp_path: Path) -> None:
    baseline, candidate = runs
    code, text, _ = run_cli(["runs", "show", "years changed"], capsys)
    assert code == 0 and "temporal_faithfulness: mean 0.810" in text and "no_temporal_claims: 1" in text
    path = tmp_path / "results.csv"
    code, _, _ = run_cli(["runs", "export", str(baseline), "--out", str(path)], capsys)
    assert code == 0 and len(read_csv_export(path)) == 60
    code, _, err = run_cli(["runs", "delete", str(candidate)], capsys)
    assert code == 2 and "--yes" in err
    code, out, _ = run_cli(["runs", "delete", str(candidate), "--yes"], capsys)
    assert code == 0 and list(RunStore().list_runs()["id"]) == [baseline]
    code, _, err = run_cli(["runs", "show", str(candidate)], capsys)
    assert code == 2 and f"'{candidate}'" in err


def test_compare_exports_one_standalone_html_file(capsys, tmp_path: Path) -> None:
    import re

    sample = ROOT / "data" / "sample"
    out = tmp_path / "compare.html"
    code, _, err = run_cli(["compare", str(sample / "run_bm25.trec"), str(sample / "run_dense.trec"),
                            "--qrels", str(sample / "qrels.txt"), "--format", "html", "--out", str(out)], capsys)
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "Mean per run" in page and "adjusted p-value" in page
    assert not re.search(r"<script[^>]*\bsrc=", page)  # plotly.js inline: opens offline


def test_diff_counts_equal_a_count_by_hand_of_the_runs_exported_by_the_cli(runs, capsys, tmp_path: Path) -> None:
    from tests.compare.test_run_diff import _hand_count

    exported = {}
    for run_id in runs:
        path = tmp_path / f"run{run_id}.csv"
        code, _, err = run_cli(["runs", "export", str(run_id), "--out", str(path)], capsys)
        assert code == 0, err
        exported[run_id] = read_csv_export(path)
    code, out, _ = run_cli(["diff", str(runs[0]), str(runs[1]), "--format", "json", "--tolerance", "0.01"], capsys)
    figures = json.loads(out)["metrics"]
    for metric, counts in figures.items():
        assert _hand_count(exported[runs[0]], exported[runs[1]], metric, 0.01) == {
            key: counts[key] for key in ("improved", "regressed", "unchanged", "became_measurable",
                                         "became_not_measurable")}, metric
    assert figures["temporal_faithfulness"]["regressed"] == 2
