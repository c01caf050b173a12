"""`tempo-eval slices` and `tempo_eval.slices`: the same numbers, the CSV header and JSON shape of
the issue, the not-measured rows with their reasons, paired differences and the change point of
the bundled run whose answers degrade from 2023."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

import tempo_eval
from tempo_eval.store.runs import RunStore
from tests.support.cli import run_cli_streams
from tests.support.time_runs import METRIC, make_time_runs


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    folder = tmp_path_factory.mktemp("slices_ws")
    store = RunStore(folder / "tempo_eval.sqlite")
    first, second = make_time_runs(store)
    store.close()
    return folder, first, second


def _cli(args: list[str], workspace: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return run_cli_streams(["slices", *args, "--workspace", str(workspace)], capsys)


def test_slices_is_exported_from_the_package() -> None:
    assert "slices" in tempo_eval.__all__ and callable(tempo_eval.slices)


def test_json_has_the_issue_shape_and_equals_the_python_report(workspace, capsys) -> None:
    folder, first, second = workspace
    code, out, err = _cli([str(first), str(second), "--metric", METRIC, "--by", "as_of", "--bin", "year",
                           "--changepoint", "--format", "json"], folder, capsys)
    assert code == 0, err
    data = json.loads(out)
    assert set(data) == {"metric", "by", "bin", "runs", "differences"}
    assert (data["metric"], data["by"], data["bin"]) == (METRIC, "as_of", "year")
    run = data["runs"][0]
    assert set(run) == {"run", "name", "bins", "changepoint"} and run["run"] == first
    assert set(run["bins"][0]) == {"start", "n", "mean", "low", "high", "not_measured"}
    assert [b["start"] for b in run["bins"]] == ["2020-01-01", "2021-01-01", "2022-01-01", "2023-01-01", "2024-01-01"]
    change = run["changepoint"]
    assert set(change) == {"start", "before", "after", "drop", "p_value"}
    assert change["start"] == "2023-01-01" and change["p_value"] < 0.01
    assert change["drop"]["low"] > 0.2  # answers degrade: the level drops
    assert set(data["differences"][0]) == {"a", "b", "bins"}
    assert set(data["differences"][0]["bins"][0]) == {"start", "n", "diff", "low", "high"}
    python = tempo_eval.slices([first, second], METRIC, by="as_of", bin="year", changepoint=True,
                               workspace=str(folder))
    assert python.to_dict() == data


def test_csv_has_the_issue_header_and_the_python_numbers(workspace, capsys) -> None:
    folder, first, second = workspace
    code, out, err = _cli([str(first), "fresher retrieval", "--metric", METRIC, "--bin", "quarter", "--format", "csv"],
                          folder, capsys)
    assert code == 0, err
    lines = list(csv.DictReader(io.StringIO(out)))
    assert out.splitlines()[0] == "run,bin_start,n,mean,low,high,not_measured"
    frame = tempo_eval.slices([first, second], METRIC, bin="quarter", workspace=str(folder)).frame()
    assert len(lines) == len(frame)
    for line, (_, expected) in zip(lines, frame.iterrows(), strict=True):
        assert int(line["run"]) == expected["run"] and line["bin_start"] == expected["bin_start"]
        assert int(line["n"]) == expected["n"] and int(line["not_measured"]) == expected["not_measured"]
        for column in ("mean", "low", "high"):
            assert float(line[column]) == pytest.approx(expected[column], abs=0, rel=1e-15)


def test_rows_not_measured_are_counted_with_their_reasons(workspace) -> None:
    folder, first, second = workspace
    report = tempo_eval.slices([second], METRIC, bin="year", workspace=str(folder))
    assert sum(b.not_measured for b in report.runs[0].bins) == 3
    reasons = report.reasons_frame()
    assert set(reasons["reason"]) == {"no_temporal_claims"} and reasons["rows"].sum() == 3
    text = report.to_text()
    assert "no_temporal_claims: 1" in text


def test_differences_pair_the_rows_measured_in_both(workspace) -> None:
    folder, first, second = workspace
    report = tempo_eval.slices([first, second], METRIC, bin="year", workspace=str(folder))
    by_start = {b["start"]: b for b in report.differences[0].bins}
    assert by_start["2021-01-01"]["diff"] == 0 and by_start["2023-01-01"]["diff"] > 0
    measured = {b.start: b.n for b in report.runs[1].bins}
    assert all(by_start[s]["n"] == measured[s] for s in measured)  # the second run's NaN rows drop out
    assert by_start["2023-01-01"]["low"] <= by_start["2023-01-01"]["diff"] <= by_start["2023-01-01"]["high"]


def test_zero_one_scores_get_wilson_intervals(workspace) -> None:
    from tempo_eval.slices.stats import wilson_interval

    folder, first, _ = workspace
    run = tempo_eval.slices([first], METRIC, bin="year", workspace=str(folder)).runs[0]
    assert run.binary
    b = run.bins[0]
    low, high = wilson_interval(round(b.mean * b.n), b.n)
    assert (b.low, b.high) == (pytest.approx(float(low)), pytest.approx(float(high)))


@pytest.mark.parametrize("by", ["focus_year", "evidence_year"])
def test_focus_and_evidence_years_place_every_row(workspace, by) -> None:
    folder, first, _ = workspace
    run = tempo_eval.slices([first], METRIC, by=by, bin="year", workspace=str(folder)).runs[0]
    assert sum(b.n for b in run.bins) == 240 and not run.unplaced
    assert all(b.start.endswith("-01-01") for b in run.bins)


@pytest.mark.parametrize(("args", "expected"), [
    (["999", "--metric", METRIC], "no run with id or name '999'"),
    (["1", "--metric", "nope"], "run #1 has no results for metric 'nope'"),
    (["1", "--metric", METRIC, "--by", "focus_year", "--bin", "month"], "use --bin year"),
    (["1", "--metric", METRIC, "--penalty", "3"], "--penalty needs --changepoint"),
])
def test_bad_arguments_get_one_line(workspace, capsys, args, expected) -> None:
    folder, _, _ = workspace
    code, out, err = _cli(args, folder, capsys)
    assert code == 2 and expected in err and "Traceback" not in err


def test_text_names_the_change_point_or_says_none_was_found(workspace, capsys) -> None:
    folder, first, _ = workspace
    code, out, _ = _cli([str(first), "--metric", METRIC, "--by", "as_of", "--bin", "month", "--changepoint"],
                        folder, capsys)
    assert code == 0 and "change point at 2023-01-01" in out
    report = tempo_eval.slices([first], METRIC, bin="year", changepoint=True, workspace=str(folder))
    report.runs[0].changepoints = []  # as on a flat curve
    assert "no change point found" in report.to_text()
    assert report.to_dict()["runs"][0]["changepoint"] is None


def test_unreadable_and_missing_as_of_dates_are_unplaced_with_their_reason() -> None:
    from tempo_eval.slices.keys import as_of_bins

    bins = as_of_bins(["2024-03-05", "5 March 2024", None, "not a date", "2023"], "month")
    assert bins.rows.tolist() == [4, 0, 1] and bins.unplaced == {
        "as-of date that cannot be read": 1, "no as-of date (reference_date)": 1}
    fast = as_of_bins(["2024-03-05", "", "2024-04-01"], "quarter")
    assert fast.rows.tolist() == [0, 2] and fast.unplaced == {"no as-of date (reference_date)": 1}


def test_the_html_report_is_standalone_and_escapes_run_names(workspace) -> None:
    from tempo_eval.compare.report_html import slices_html

    folder, first, second = workspace
    report = tempo_eval.slices([first, second], METRIC, bin="year", changepoint=True, workspace=str(folder))
    report.runs[0].name = "<script>alert(1)</script>"
    page = slices_html(report)
    assert page.startswith("<!DOCTYPE html>") and "<script>alert(1)</script>" not in page
    assert "Change points" in page and "2023-01-01" in page and "no_temporal_claims" in page
