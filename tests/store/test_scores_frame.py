"""`scores_frame` read a part at a time gives what the whole results frame says."""

from __future__ import annotations

import math

import pytest

import tempo_eval.store.results as results_module
from tempo_eval.common.schema import MetricResult, not_measurable
from tempo_eval.store.runs import RunStore

#: every test here runs on the workspace's SQLite file and on a PostgreSQL database (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("workspace_db")


def test_scores_frame_in_parts_matches_the_results(tmp_path, monkeypatch):
    monkeypatch.setattr(results_module, "_SCORES_PART", 3)  # many parts, one ending mid-row
    store = RunStore(tmp_path / "ws.sqlite")
    dataset_id, _ = store.begin_dataset(name="d", content_hash="h", mapping={}, source_format="csv")
    run_id, _ = store.create_or_resume_run(dataset_id, {"m": 1}, name="r")
    rows = []
    for i in range(7):
        faith = (not_measurable("b_metric", "no_temporal_claims", f"none in row {i}") if i % 3 == 0
                 else MetricResult("b_metric", i / 10, f"row {i}", None, {}))
        rows.append((i, f"q{i}", [MetricResult("a_metric", 1 - i / 10, f"a row {i}", None, {}), faith], None))
    store.record_rows(run_id, rows)

    slim = store.scores_frame(run_id)
    full = store.results_frame(run_id)
    assert list(slim["metric"]) == list(full["metric"])
    assert [None if math.isnan(s) else s for s in slim["score"]] == [None if math.isnan(s) else s for s in full["score"]]
    codes = [c if isinstance(c, str) else None for c in slim["reason_code"]]
    assert codes == [c if math.isnan(s) else None for c, s in zip(full["reason_code"], full["score"], strict=True)]
    assert codes.count("no_temporal_claims") == 3
    firsts = [r if i < 2 else None for i, r in enumerate(full["reason"])]  # each metric's first result only
    assert [None if not isinstance(r, str) else r for r in slim["reason"]] == firsts
