"""The batch runner: failure isolation, progress, cancellation, resume (also after SIGKILL), aggregates."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import tempo_eval.compare.statistics as compare_module
from tempo_eval.compare.statistics import bootstrap_ci
from tempo_eval.engine.runner import aevaluate, evaluate, metric_config, run_config
from tempo_eval.metrics.base import Metric, MetricResult, not_measurable
from tempo_eval.store.db import default_db_path
from tempo_eval.store.runs import RunStore
from tests.support.paths import ROOT


class AnswerLength(Metric):
    """len(answer) / scale; raises for the answer "boom"; counts its calls per answer."""

    name = "answer_length"
    input_names = ("answer", "reference_date")

    def __init__(self, scale: int = 10) -> None:
        self.scale = scale
        self._calls: list[str] = []  # private: not a setting, not part of the run's identity

    async def _ameasure(self, answer: str, reference_date: str | None = None) -> MetricResult:
        self._calls.append(answer)
        if answer == "boom":
            raise ValueError("boom is not an answer")
        if answer == "":
            return not_measurable(self.name, "empty_answer", "The answer is empty.")
        return MetricResult(self.name, min(1.0, len(answer) / self.scale), details={"reference_date": reference_date})


class InFlight(Metric):
    """Records how many rows are being measured at once."""

    name = "in_flight"
    input_names = ("answer",)

    def __init__(self) -> None:
        self._now = 0
        self._max = 0

    async def _ameasure(self, answer: str) -> MetricResult:
        self._now += 1
        self._max = max(self._max, self._now)
        await asyncio.sleep(0.01)
        self._now -= 1
        return MetricResult(self.name, 1.0)


def _codes(frame: pd.DataFrame) -> list[str]:
    """The reason codes of a results frame, "" where there is none."""
    return frame["reason_code"].fillna("").tolist()


def _frame(answers: list[str], **extra: list) -> pd.DataFrame:
    return pd.DataFrame({"query_id": [f"q{i + 1}" for i in range(len(answers))], "answer": answers, **extra})


def test_every_row_and_metric_is_scored_and_stored() -> None:
    result = evaluate(_frame(["abc", "abcdefghijkl"]), [AnswerLength()])
    assert result.status == "finished" and result.computed == 2 and result.reused == 0
    assert result.frame["score"].tolist() == [0.3, 1.0]
    assert result.frame["query_id"].tolist() == ["q1", "q2"]
    assert RunStore().run_info(result.run_id)["status"] == "finished"


def test_a_failing_row_becomes_nan_with_its_reason_and_the_run_goes_on(caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="tempo_eval.engine.runner"):
        result = evaluate(_frame(["abc", "boom", "abcd"]), [AnswerLength()])
    frame = result.frame
    assert result.status == "finished"
    assert frame["score"].tolist()[0::2] == [0.3, 0.4]
    assert math.isnan(frame.loc[1, "score"])
    assert frame.loc[1, "reason_code"] == "row_error"
    assert "ValueError: boom is not an answer" in frame.loc[1, "reason"]
    assert "boom is not an answer" in caplog.text


def test_a_failing_conversation_is_logged_with_its_conversation_id(caplog) -> None:
    from tempo_eval.metrics.turn_faithfulness import TurnFaithfulness

    class Broken(TurnFaithfulness):
        async def _ameasure(self, **inputs: object) -> MetricResult:  # type: ignore[override]
            raise RuntimeError("the judge is down")

    turns = [{"role": "user", "content": "When?"}, {"role": "assistant", "content": "In 1990."}]
    frame = pd.DataFrame({"conversation_id": ["museum"], "turns": pd.Series([turns], dtype=object)})
    with caplog.at_level(logging.WARNING, logger="tempo_eval.engine.runner"):
        result = evaluate(frame, [Broken()])
    assert result.frame["reason_code"].tolist() == ["row_error"]
    assert "row 0 (conversation museum), metric turn_faithfulness failed" in caplog.text


def test_a_row_with_an_empty_required_cell_is_nan_missing_input_naming_the_column() -> None:
    metric = AnswerLength()
    result = evaluate(_frame(["abc", None, float("nan")]), [metric])
    assert result.status == "finished"
    assert _codes(result.frame) == ["", "missing_input", "missing_input"]
    assert "'answer'" in result.frame.loc[1, "reason"] and "answer_length" in result.frame.loc[1, "reason"]
    assert result.result(1, "answer_length").details == {"column": "answer"}
    assert metric._calls == ["abc"]  # the metric never saw the incomplete rows


def test_missing_input_is_not_retried_on_resume() -> None:
    frame = _frame(["abc", None])
    evaluate(frame, [AnswerLength()])
    again = evaluate(frame, [AnswerLength()])
    assert (again.computed, again.reused) == (0, 2)


# ---- resuming a run with failed results -----------------------------------------------------

class Flaky(Metric):
    """Fails on the answers in `failing` (an exception for "raise", judge_error for "judge"),
    until they are removed from it; an answer without a year is a genuine NaN."""

    name = "flaky"
    input_names = ("answer",)

    def __init__(self) -> None:
        self._failing = {"raise", "judge"}
        self._calls: list[str] = []

    async def _ameasure(self, answer: str) -> MetricResult:
        self._calls.append(answer)
        if answer in self._failing:
            if answer == "raise":
                raise ConnectionError("the verifier was unreachable")
            return not_measurable(self.name, "judge_error", "The judge timed out.")
        if answer == "none":
            return not_measurable(self.name, "no_temporal_claims", "No year.")
        return MetricResult(self.name, 0.5)


def test_resuming_computes_failed_results_again_and_keeps_the_rest() -> None:
    metric = Flaky()
    frame = _frame(["ok", "raise", "judge", "none"])
    first = evaluate(frame, [metric])
    assert _codes(first.frame) == ["", "row_error", "judge_error", "no_temporal_claims"]

    metric._failing.clear()  # the service is back
    metric._calls.clear()
    second = evaluate(frame, [metric])
    assert second.run_id == first.run_id
    assert sorted(metric._calls) == ["judge", "raise"]  # only the failures, and each once
    assert (second.computed, second.reused) == (2, 2)
    assert second.frame["score"].tolist()[:3] == [0.5, 0.5, 0.5]  # overwritten in place
    assert _codes(second.frame) == ["", "", "", "no_temporal_claims"]
    assert len(second.frame) == 4

    metric._calls.clear()
    assert evaluate(frame, [metric]).computed == 0 and metric._calls == []


def test_retry_failed_false_keeps_stored_failures() -> None:
    metric = Flaky()
    frame = _frame(["ok", "raise", "judge"])
    evaluate(frame, [metric])
    metric._failing.clear()
    metric._calls.clear()
    again = evaluate(frame, [metric], retry_failed=False)
    assert metric._calls == [] and (again.computed, again.reused) == (0, 3)
    assert _codes(again.frame) == ["", "row_error", "judge_error"]


def test_only_the_failed_metric_of_a_row_is_computed_again() -> None:
    flaky, length = Flaky(), AnswerLength()
    frame = _frame(["raise", "abc"])
    evaluate(frame, [flaky, length])
    flaky._failing.clear()
    length._calls.clear()
    again = evaluate(frame, [flaky, length])
    assert length._calls == [] and (again.computed, again.reused) == (1, 3)
    assert again.result(0, "answer_length").score == pytest.approx(0.5)
    assert again.result(0, "flaky").score == 0.5


# ---- what is checked before a run starts ----------------------------------------------------

def test_a_metric_needing_a_column_the_dataset_lacks_is_refused_before_anything_is_stored() -> None:
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    frame = _frame(["In 2001."])  # no contexts column
    with pytest.raises(ValueError, match="temporal_faithfulness needs the column") as caught:
        evaluate(frame, [AnswerLength(), TemporalFaithfulness()])
    message = str(caught.value)
    assert "contexts" in message and "query_id, answer" in message  # missing and found columns
    assert RunStore().list_runs().empty and RunStore().list_datasets().empty


@pytest.mark.parametrize(
    ("metric_path", "columns", "missing"),
    [
        ("tempo_eval.metrics.factual_correctness.FactualCorrectness", ["answer", "contexts"], "reference"),
        ("tempo_eval.metrics.temporal_ndcg.TemporalNDCG", ["answer", "query"], "contexts"),
        ("tempo_eval.metrics.temporal_ndcg.TemporalNDCG", ["answer", "retrieved_ids"], "gold_ids"),
    ],
)
def test_each_metric_names_the_columns_it_needs(metric_path: str, columns: list[str], missing: str) -> None:
    import importlib

    module, _, name = metric_path.rpartition(".")
    metric = getattr(importlib.import_module(module), name)()
    frame = pd.DataFrame({column: [["x"] if column in ("contexts", "retrieved_ids") else "x"] for column in columns})
    with pytest.raises(ValueError, match=f"{metric.name} needs the column\\(s\\) {missing} "):
        evaluate(frame, [metric])


def test_turn_faithfulness_on_a_dataset_without_turns_says_where_conversations_come_from() -> None:
    from tempo_eval.metrics.turn_faithfulness import TurnFaithfulness

    with pytest.raises(ValueError, match="runs on conversations") as caught:
        evaluate(_frame(["a"]), [TurnFaithfulness()])
    assert "Conversation page" in str(caught.value) and "load_conversations" in str(caught.value)


def test_turn_faithfulness_runs_on_a_conversation_dataset_and_stores_windows_and_claims() -> None:
    from tempo_eval.metrics.turn_faithfulness import TurnFaithfulness

    turns = [
        {"role": "user", "content": "When did the Berlin Wall fall?", "retrieval_context": []},
        {"role": "assistant", "content": "The Berlin Wall fell in 1989.",
         "retrieval_context": ["The Berlin Wall fell on 9 November 1989."]},
        {"role": "user", "content": "And reunification?", "retrieval_context": []},
        {"role": "assistant", "content": "Germany was reunified in 1990.",
         "retrieval_context": ["Germany was reunified on 3 October 1990."]},
    ]
    frame = pd.DataFrame({"conversation_id": ["c1", "c2"], "turns": [turns, json.dumps(turns)]})
    store = RunStore()
    result = evaluate(frame, [TurnFaithfulness()], store=store)
    assert result.status == "finished"
    stored = result.frame
    assert stored["query_id"].tolist() == ["c1", "c2"] and stored["score"].notna().all()
    details = store.get_result(result.run_id, 0, "turn_faithfulness").details
    assert [w["index"] for w in details["windows"]] == [1, 2]  # numbered from 1, as on screen
    claims = store.claims_frame(result.run_id)
    assert len(claims) > 0 and set(claims["metric"]) == {"turn_faithfulness"}
    assert {c["window"] for c in details["claims"]} <= {1, 2}


def test_an_unmapped_column_named_like_an_input_is_not_read() -> None:
    class Cutoff(Metric):
        name = "cutoff"
        input_names = ("answer", "k")

        async def _ameasure(self, answer: str, k: int = 10) -> MetricResult:
            return MetricResult(self.name, k / 10)

    result = evaluate(_frame(["a"], k=[3]), [Cutoff()])
    assert result.frame["score"].tolist() == [1.0]


def test_a_bad_reference_date_is_refused_before_the_run() -> None:
    with pytest.raises(ValueError, match="reference_date must be an ISO date"):
        evaluate(_frame(["a"]), [AnswerLength()], reference_date="30/06/2024")
    assert RunStore().list_runs().empty


def test_spellings_of_one_reference_date_are_the_same_run() -> None:
    import datetime as dt

    frame = _frame(["a", "b"])
    first = evaluate(frame, [AnswerLength()], reference_date="2024-06-30")
    for same in ("2024-06-30T00:00", " 2024-06-30 ", dt.date(2024, 6, 30), dt.datetime(2024, 6, 30, 12)):
        again = evaluate(frame, [AnswerLength()], reference_date=same)
        assert again.run_id == first.run_id and again.computed == 0
    assert RunStore().run_info(first.run_id)["config"]["reference_date"] == "2024-06-30"
    assert first.result(0, "answer_length").details["reference_date"] == "2024-06-30"


# ---- a run that fails -----------------------------------------------------------------------

class _BreakingStore(RunStore):
    """A real store whose record_rows raises for one row, logging every write and status."""

    def __init__(self, broken_row: int) -> None:
        super().__init__()
        self.broken_row = broken_row
        self.events: list[tuple[str, object]] = []

    def record_rows(self, run_id, rows) -> None:
        rows = list(rows)
        if any(row == self.broken_row for row, *_ in rows):
            raise sqlite3.OperationalError("disk I/O error")
        super().record_rows(run_id, rows)
        self.events += [("row", row) for row, *_ in rows]

    def set_status(self, run_id, status, error=None) -> None:
        super().set_status(run_id, status, error)
        self.events.append(("status", status))


class Sleepy(Metric):
    name = "sleepy"
    input_names = ("answer",)

    async def _ameasure(self, answer: str) -> MetricResult:
        await asyncio.sleep(0.005 * int(answer))
        return MetricResult(self.name, 1.0)


def test_a_failed_run_writes_no_row_after_it_is_marked_failed() -> None:
    store = _BreakingStore(broken_row=2)
    frame = _frame([str(i % 4) for i in range(30)])

    async def scenario() -> int:
        # Inside a running loop (as the dashboard is), nothing cancels the other workers for us.
        with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
            await aevaluate(frame, [Sleepy()], store=store, max_concurrency=4)
        written = len(store.events)
        await asyncio.sleep(0.3)  # the other workers' rows would have finished by now
        assert len(store.events) == written
        return written

    asyncio.run(scenario())
    assert store.events[-1] == ("status", "failed")
    assert [kind for kind, _ in store.events].count("status") == 1  # only the final "failed"
    run_id = int(store.list_runs()["id"].iloc[0])
    assert store.run_info(run_id)["status"] == "failed"
    assert "disk I/O error" in store.run_info(run_id)["error"]
    assert len(store.results_frame(run_id)) == len([e for e in store.events if e[0] == "row"]) < 30


def test_progress_reports_rows_done_out_of_the_total() -> None:
    calls: list[tuple[int, int]] = []
    evaluate(_frame(["a", "b", "c"]), [AnswerLength()], progress=lambda d, t: calls.append((d, t)))
    assert calls == [(0, 3), (1, 3), (2, 3), (3, 3)]


def test_rows_run_concurrently_up_to_the_bound() -> None:
    metric = InFlight()
    evaluate(_frame([f"a{i}" for i in range(10)]), [metric], max_concurrency=3)
    assert metric._max == 3


def test_evaluating_the_same_configuration_again_computes_nothing() -> None:
    metric = AnswerLength()
    frame = _frame(["a", "bb", "ccc"])
    first = evaluate(frame, [metric])
    second = evaluate(frame, [metric])
    assert second.run_id == first.run_id
    assert (second.computed, second.reused) == (0, 3)
    assert metric._calls == ["a", "bb", "ccc"]
    assert second.frame.equals(first.frame)


def test_re_uploading_the_same_file_under_another_name_reuses_its_results() -> None:
    from tempo_eval.io.dataset import load_dataset

    content = b"query_id,answer\nq1,abc\nq2,abcdef\n"
    first = evaluate(load_dataset(content, name="monday.csv"), [AnswerLength()])
    again = evaluate(load_dataset(content, name="tuesday.csv"), [AnswerLength()])
    assert (again.run_id, again.dataset_id) == (first.run_id, first.dataset_id)
    assert (again.computed, again.reused) == (0, 2)


def test_different_settings_are_a_different_run() -> None:
    frame = _frame(["a", "bb"])
    first = evaluate(frame, [AnswerLength(scale=10)])
    second = evaluate(frame, [AnswerLength(scale=2)])
    assert second.run_id != first.run_id and second.computed == 2
    assert second.frame["score"].tolist() == [0.5, 1.0]


def test_resume_false_starts_a_new_run() -> None:
    frame = _frame(["a"])
    first = evaluate(frame, [AnswerLength()])
    again = evaluate(frame, [AnswerLength()], resume=False)
    assert again.run_id != first.run_id and again.computed == 1


def test_cancelling_keeps_finished_rows_and_a_later_call_resumes_the_rest() -> None:
    cancel = threading.Event()
    metric = AnswerLength()
    frame = _frame([f"row{i}" for i in range(8)])

    def progress(done: int, total: int) -> None:
        if done == 3:
            cancel.set()

    first = evaluate(frame, [metric], cancel=cancel, progress=progress, max_concurrency=1)
    assert first.status == "cancelled"
    assert len(first.frame) == 3
    assert RunStore().run_info(first.run_id)["status"] == "cancelled"

    metric._calls.clear()
    second = evaluate(frame, [metric])
    assert second.run_id == first.run_id and second.status == "finished"
    assert (second.computed, second.reused) == (5, 3)
    assert sorted(metric._calls) == [f"row{i}" for i in range(3, 8)]
    assert len(second.frame) == 8


def test_reference_date_fills_rows_without_one_and_identifies_the_run() -> None:
    frame = _frame(["a", "b"], reference_date=["2020-01-01", None])
    result = evaluate(frame, [AnswerLength()], reference_date="2024-06-30")
    dates = [result.result(i, "answer_length").details["reference_date"] for i in range(2)]
    assert dates == ["2020-01-01", "2024-06-30"]
    other = evaluate(frame, [AnswerLength()], reference_date="2023-01-01")
    assert other.run_id != result.run_id


def test_the_datasets_run_column_and_generated_query_ids_reach_the_results() -> None:
    frame = pd.DataFrame({"answer": ["a", "b"], "run": ["bm25", "dense"]})
    result = evaluate(frame, [AnswerLength()], run_name="named")
    assert result.frame["query_id"].tolist() == ["q1", "q2"]
    assert result.frame["run"].tolist() == ["bm25", "dense"]
    assert RunStore().run_info(result.run_id)["name"] == "named"


def test_aggregate_reports_mean_ci_and_measurable_counts() -> None:
    result = evaluate(_frame(["ab", "abcd", "", "boom", "abcdef"]), [AnswerLength()])
    row = result.aggregate().loc["answer_length"]
    assert row["mean"] == pytest.approx(0.4)
    assert (row["n_measurable"], row["n_total"], row["n_nan"]) == (3, 5, 2)
    assert row["nan_reasons"] == {"empty_answer": 1, "row_error": 1}
    assert (row["ci_low"], row["ci_high"]) == bootstrap_ci([0.2, 0.4, 0.6])
    assert row["ci_low"] <= row["mean"] <= row["ci_high"]


def test_a_metric_with_no_measurable_row_aggregates_to_nan() -> None:
    row = evaluate(_frame(["", ""]), [AnswerLength()]).aggregate().loc["answer_length"]
    assert math.isnan(row["mean"]) and math.isnan(row["ci_low"]) and row["n_measurable"] == 0


def test_bootstrap_ci_does_not_depend_on_how_resamples_are_chunked(monkeypatch) -> None:
    values = np.random.default_rng(0).random(50)
    whole = bootstrap_ci(values, n_resamples=300, seed=7)
    monkeypatch.setattr(compare_module, "BOOTSTRAP_CHUNK_ENTRIES", 7 * 50)  # 7 resamples per chunk
    assert bootstrap_ci(values, n_resamples=300, seed=7) == whole
    rng = np.random.default_rng(7)
    means = values[rng.integers(0, 50, size=(300, 50))].mean(axis=1)
    assert whole == tuple(np.quantile(means, [0.025, 0.975]).tolist())


def test_bootstrap_ci_agrees_with_scipy_percentile_bootstrap() -> None:
    values = np.random.default_rng(1).random(60)
    ours = bootstrap_ci(values, n_resamples=5000, seed=3)
    theirs = stats.bootstrap((values,), np.mean, n_resamples=5000, method="percentile",
                             rng=np.random.default_rng(3)).confidence_interval
    assert ours == pytest.approx((theirs.low, theirs.high), abs=0.01)


def test_bootstrap_ci_of_few_distinct_levels_agrees_with_scipy() -> None:
    values = np.random.default_rng(4).choice([0.0, 0.5, 1.0], size=400, p=[0.2, 0.3, 0.5])
    ours = bootstrap_ci(values, n_resamples=5000, seed=3)  # drawn as multinomial level counts
    theirs = stats.bootstrap((values,), np.mean, n_resamples=5000, method="percentile",
                             rng=np.random.default_rng(3)).confidence_interval
    assert ours == pytest.approx((theirs.low, theirs.high), abs=0.01)
    assert ours == bootstrap_ci(values, n_resamples=5000, seed=3)
    assert ours != bootstrap_ci(values, n_resamples=5000, seed=4)


def test_bootstrap_ci_edge_cases() -> None:
    assert all(math.isnan(v) for v in bootstrap_ci([]))
    assert bootstrap_ci([0.3]) == (0.3, 0.3)
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_ci([0.1, float("nan")])


def test_bad_arguments_are_refused_with_clear_errors() -> None:
    frame = _frame(["a"])
    with pytest.raises(ValueError, match="at least one metric"):
        evaluate(frame, [])
    with pytest.raises(ValueError, match="appears twice"):
        evaluate(frame, [AnswerLength(), AnswerLength(scale=3)])
    with pytest.raises(TypeError, match="Metric instances"):
        evaluate(frame, ["answer_length"])
    with pytest.raises(ValueError, match="max_concurrency"):
        evaluate(frame, [AnswerLength()], max_concurrency=0)
    with pytest.raises(TypeError, match="Dataset or a pandas DataFrame"):
        evaluate([{"answer": "a"}], [AnswerLength()])


class _Verifier:
    name = "nli"
    model_id = "local:tiny"

    def __init__(self) -> None:
        self.timeout = 30
        self.api_key = "sk-verifier-secret-0001"


class WithSecrets(Metric):
    name = "with_secrets"
    input_names = ("answer",)

    def __init__(self) -> None:
        self.api_key = "sk-metric-secret-0002"
        self.verifier = _Verifier()
        self.headers = {"Authorization": "Bearer sk-header-secret-0003", "x-trace": "on"}
        self.k = 5

    async def _ameasure(self, answer: str) -> MetricResult:
        return MetricResult(self.name, 1.0)


def test_a_metrics_stored_identity_holds_settings_and_verifier_identity_but_no_secret() -> None:
    config = metric_config(WithSecrets())
    assert config == {
        "name": "with_secrets",
        "class": f"{__name__}.WithSecrets",
        "settings": {
            "headers": {"x-trace": "on"},
            "k": 5,
            "verifier": {"class": f"{__name__}._Verifier", "name": "nli", "model_id": "local:tiny"},
        },
    }
    result = evaluate(_frame(["a"]), [WithSecrets()])
    RunStore().connection.execute("PRAGMA wal_checkpoint(FULL)")
    data = default_db_path().read_bytes()
    assert b"sk-" not in data
    assert RunStore().run_info(result.run_id)["config"] == run_config([WithSecrets()])


def test_a_verifiers_settings_string_is_part_of_the_run_identity() -> None:
    strict, loose = _Verifier(), _Verifier()
    strict.settings, loose.settings = "threshold=0.9", "threshold=0.5"
    metric = WithSecrets()
    metric.verifier = strict
    first = metric_config(metric)
    metric.verifier = loose
    assert metric_config(metric) != first
    assert first["settings"]["verifier"]["settings"] == "threshold=0.9"


# ---- with the real metrics ------------------------------------------------------------------

def test_real_metrics_give_the_same_scores_through_the_runner_as_called_directly() -> None:
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG

    frame = pd.DataFrame({
        "query_id": ["a", "b", "c"],
        "answer": ["Built in 2001, opened in 2005.", "No dates at all.", "It closed in 1999."],
        "contexts": [["Construction ended in 2001."], ["Nothing."], ["It closed in 1999."]],
        "retrieved_ids": [["d1", "d2"], ["d3"], ["d4", "d5"]],
        "gold_ids": [["d2"], ["d9"], {"d4": 1, "d5": 3}],
    })
    metrics = [TemporalFaithfulness(), TemporalNDCG(k=5)]
    result = evaluate(frame, metrics)
    for row in range(3):
        record = frame.iloc[row].to_dict()
        for metric in metrics:
            expected = metric.measure(**metric.inputs_from_row(record))
            stored = result.result(row, metric.name)
            assert stored.score == pytest.approx(expected.score, nan_ok=True)
            assert stored.reason_code == expected.reason_code
    assert result.frame.groupby("metric")["score"].count().to_dict() == {"temporal_faithfulness": 2, "temporal_ndcg": 3}


class _AgreeingVerifier:
    """A test double: SUPPORTED when the claim's text occurs in a premise, else CONTRADICTED."""

    name = "double"
    model_id = "tests:substring"

    async def averify(self, claims, premises):
        from tempo_eval.verify.base import ClaimVerdict, Verdict

        return [
            ClaimVerdict(c, Verdict.SUPPORTED if any(c.rstrip(".") in p for p in premises) else Verdict.CONTRADICTED,
                         evidence=premises[0], probabilities={"entailment": 0.9, "neutral": 0.05, "contradiction": 0.05},
                         reason="substring")
            for c in claims
        ]


def test_claim_verdicts_of_a_verifier_mode_metric_are_stored_with_their_evidence() -> None:
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    frame = _frame(["It opened in 2001. It closed in 2010."], contexts=[["It opened in 2001 and thrived."]])
    result = evaluate(frame, [TemporalFaithfulness(mode="nli", verifier=_AgreeingVerifier())])
    claims = result.claims
    assert claims["claim"].tolist() == ["It opened in 2001.", "It closed in 2010."]
    assert claims["verdict"].tolist() == ["SUPPORTED", "CONTRADICTED"]
    assert claims["evidence"].tolist() == ["It opened in 2001 and thrived."] * 2
    assert claims.loc[0, "probabilities"]["entailment"] == 0.9
    assert result.frame.loc[0, "score"] == 0.5
    stored = result.result(0, "temporal_faithfulness")
    assert [c["verdict"] for c in stored.details["claims"]] == ["SUPPORTED", "CONTRADICTED"]
    config = RunStore().run_info(result.run_id)["config"]["metrics"][0]["settings"]["verifier"]
    assert config == {"class": f"{__name__}._AgreeingVerifier", "name": "double", "model_id": "tests:substring"}


# ---- resume after a hard kill ---------------------------------------------------------------

_KILLABLE = textwrap.dedent(
    """
    import asyncio, sys
    import pandas as pd
    from tempo_eval.metrics.base import Metric, MetricResult
    from tempo_eval.engine.runner import evaluate

    CALLS = sys.argv[1]

    class Slow(Metric):
        name = "slow"
        input_names = ("answer",)

        async def _ameasure(self, answer):
            with open(CALLS, "a") as f:
                f.write(answer + "\\n")
            await asyncio.sleep(0.04)
            return MetricResult(self.name, int(answer[1:]) / 100)

    frame = pd.DataFrame({"query_id": [f"q{i}" for i in range(40)], "answer": [f"a{i}" for i in range(40)]})
    result = evaluate(frame, [Slow()], max_concurrency=2)
    print(result.run_id, result.computed, result.reused)
    """
)


def test_a_run_killed_midway_resumes_without_recomputing_stored_rows(tmp_path) -> None:
    script = tmp_path / "killable.py"
    script.write_text(_KILLABLE)
    calls = tmp_path / "calls.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, str(script), str(calls)]

    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while (not calls.exists() or len(calls.read_text().splitlines()) < 10) and time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read().decode()
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()

    store = RunStore()
    (run_id,) = store.list_runs()["id"].tolist()
    assert store.run_info(run_id)["status"] == "running"  # killed: nobody could mark it
    stored_before = {int(r) for r, _ in store.completed(run_id)}
    assert 0 < len(stored_before) < 40

    finished = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    resumed_run, computed, reused = map(int, finished.stdout.split())
    assert resumed_run == run_id
    assert reused == len(stored_before) and computed == 40 - len(stored_before)

    counts: dict[str, int] = {}
    for answer in calls.read_text().splitlines():
        counts[answer] = counts.get(answer, 0) + 1
    assert all(counts[f"a{i}"] == 1 for i in stored_before)  # stored rows were never recomputed
    assert set(counts) == {f"a{i}" for i in range(40)}
    frame = store.results_frame(run_id)
    assert frame["score"].tolist() == [i / 100 for i in range(40)]
    assert store.run_info(run_id)["status"] == "finished"
