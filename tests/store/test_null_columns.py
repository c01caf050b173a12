"""Store reads with nullable columns mixed NULL and non-NULL: pandas turns NULL into NaN, which must
never reach json.loads (issue 19.1: one judge run beside a non-judge run locked users out)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tempo_eval.io.dataset import Dataset
from tempo_eval.store.db import json_or
from tempo_eval.store.labels import LabelStore
from tempo_eval.store.runs import RunStore

#: every test here runs on the workspace's SQLite file and on a PostgreSQL database (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("workspace_db")


def _dataset() -> Dataset:
    frame = pd.DataFrame({"query_id": ["q1"], "answer": ["In 2001."], "contexts": [["It was 2001."]]})
    return Dataset(frame=frame, name="d.csv", mapping={}, content_hash="h-null", source_format="csv", warnings=[])


def test_a_workspace_with_a_judge_run_and_a_non_judge_run_lists_both() -> None:
    store = RunStore()
    dataset = store.save_dataset(_dataset())
    judged, _ = store.create_or_resume_run(dataset, {"metrics": ["temporal_faithfulness"], "judge": "x"})
    plain, _ = store.create_or_resume_run(dataset, {"metrics": ["temporal_faithfulness"]})
    store.add_run_usage(judged, {"prompt_tokens": 10, "completion_tokens": 2})
    store.set_run_tags(judged, ["judge"])

    runs = store.list_runs().set_index("id")
    assert runs.loc[judged, "usage"]["prompt_tokens"] == 10
    assert runs.loc[plain, "usage"] is None
    assert runs.loc[judged, "tags"] == ["judge"] and runs.loc[plain, "tags"] == []
    assert store.run_info(plain)["usage"] is None
    store.delete_run(judged)
    assert list(store.list_runs()["id"]) == [plain]


def test_labels_export_when_only_some_labels_have_premises() -> None:
    labels = LabelStore()
    labels.set_label("Paris is in France.", ["Paris is the capital of France."], "SUPPORTED")
    with labels._conn:  # a label stored before premises were kept: premises is NULL
        labels._conn.execute(
            "INSERT INTO claim_labels (claim, premises_hash, reviewer, label, note, premises, labelled_at)"
            " VALUES (?, ?, '', ?, ?, NULL, '2024-01-01 00:00:00')",
            ("Old claim.", "0" * 64, "NEUTRAL", ""),
        )
    records = [json.loads(line) for line in labels.export("jsonl").decode().splitlines()]
    by_claim = {r["claim"]: r for r in records}
    assert by_claim["Old claim."]["premises"] is None
    assert by_claim["Paris is in France."]["premises"] == ["Paris is the capital of France."]
    assert labels.export("csv").count(b"\n") == 3


def test_json_or_reads_every_null_marker_as_missing() -> None:
    for missing in (None, float("nan"), pd.NA, ""):
        assert json_or(missing, []) == []
    assert json_or('{"a": 1}', None) == {"a": 1}
