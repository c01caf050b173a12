"""ClaimVerdict.confidence: set by each verifier, stored in the claims table, read back as a column."""

from __future__ import annotations

import math
import sqlite3

import pandas as pd
import pytest

from tempo_eval.io.dataset import Dataset
from tempo_eval.metrics.base import MetricResult
from tempo_eval.store.db import MIGRATIONS, SCHEMA_VERSION
from tempo_eval.store.runs import RunStore
from tempo_eval.verify.base import ClaimVerdict, Verdict
from tempo_eval.verify.llm import ClaimJudgement, _verdict
from tempo_eval.verify.nli import aggregate

#: every test here runs on the workspace's SQLite file and on a PostgreSQL database (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("workspace_db")


def _dataset() -> Dataset:
    frame = pd.DataFrame({"query_id": ["q1"], "answer": ["Built in 2001."]})
    return Dataset(frame=frame, name="d.csv", mapping={}, content_hash="h", source_format="csv", warnings=[])


def test_confidence_must_lie_in_the_unit_interval() -> None:
    assert ClaimVerdict("c", Verdict.SUPPORTED, confidence=1).confidence == 1.0
    with pytest.raises(ValueError, match="confidence"):
        ClaimVerdict("c", Verdict.SUPPORTED, confidence=1.2)


def test_old_records_without_confidence_still_load() -> None:
    old = {"claim": "c", "verdict": "NEUTRAL", "evidence": None, "probabilities": None, "reason": "r", "error": None}
    assert ClaimVerdict.from_record(old).confidence is None
    verdict = ClaimVerdict("c", Verdict.NEUTRAL, confidence=0.25)
    assert ClaimVerdict.from_record(verdict.to_record()) == verdict


def test_nli_confidence_is_the_probability_of_the_chosen_label() -> None:
    supported = aggregate("c", ["e1", "e2"], [[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    assert supported.verdict is Verdict.SUPPORTED and supported.confidence == pytest.approx(0.7)
    contradicted = aggregate("c", ["e1"], [[0.1, 0.3, 0.6]])
    assert contradicted.verdict is Verdict.CONTRADICTED and contradicted.confidence == pytest.approx(0.6)
    neutral = aggregate("c", ["e1"], [[0.2, 0.5, 0.3]])
    assert neutral.verdict is Verdict.NEUTRAL and neutral.confidence == pytest.approx(0.5)


def test_judge_confidence_only_when_the_judge_gives_one() -> None:
    assert _verdict("c", ClaimJudgement(verdict="SUPPORTED")).confidence is None
    assert _verdict("c", ClaimJudgement(verdict="SUPPORTED", confidence=0.9)).confidence == 0.9
    with pytest.raises(ValueError):
        ClaimJudgement(verdict="SUPPORTED", confidence=3)


def test_confidence_and_error_are_stored_and_read_as_columns() -> None:
    store = RunStore()
    run_id, _ = store.create_or_resume_run(store.save_dataset(_dataset()), {"m": 1})
    claims = [
        ClaimVerdict("Built in 2001.", Verdict.SUPPORTED, evidence="e", confidence=0.83),
        ClaimVerdict("Opened in 1999.", Verdict.ERROR, error="judge timed out"),
    ]
    store.record_row(run_id, 0, "q1", [MetricResult("faith", math.nan, details={"claims": claims})])
    frame = store.claims_frame(run_id)
    assert frame["confidence"].iloc[0] == pytest.approx(0.83) and math.isnan(frame["confidence"].iloc[1])
    assert pd.isna(frame["error"].iloc[0]) and frame["error"].iloc[1] == "judge timed out"
    records = store.get_result(run_id, 0, "faith").details["claims"]
    assert [ClaimVerdict.from_record(r).confidence for r in records] == [pytest.approx(0.83), None]


def test_a_workspace_from_before_confidence_opens_with_null_confidence(tmp_path) -> None:
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.executescript(f"BEGIN; {MIGRATIONS[0]}; {MIGRATIONS[1]}; PRAGMA user_version = 2; COMMIT;")
    old.execute("INSERT INTO datasets (id, name, content_hash, mapping, n_rows, rows) VALUES (1, 'd', 'h', '{}', 1, '{}')")
    old.execute("INSERT INTO runs (id, dataset_id, name, config, config_hash, status) VALUES (1, 1, 'r', '{}', 'x', 'finished')")
    old.execute("INSERT INTO results (run_id, row_idx, query_id, metric, score) VALUES (1, 0, 'q1', 'faith', 1.0)")
    old.execute("INSERT INTO claims (run_id, row_idx, metric, idx, claim, verdict) VALUES (1, 0, 'faith', 0, 'c', 'SUPPORTED')")
    old.commit()
    old.close()
    store = RunStore(path)
    assert store.connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    frame = store.claims_frame(1)
    assert frame["claim"].tolist() == ["c"] and math.isnan(frame["confidence"].iloc[0])
