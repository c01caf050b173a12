"""Two stored runs of the bundled `answers_over_time.csv` (focus-time faithfulness, no model):
the bundled answers, evaluated; and a second run of the same dataset whose answers asked from
2023 on are right one time in two more (written to the store directly), with three rows not
measured (`no_temporal_claims`)."""

from __future__ import annotations

from pathlib import Path

from tempo_eval.common.schema import MetricResult
from tempo_eval.engine.runner import evaluate
from tempo_eval.io.dataset import load_dataset
from tempo_eval.metrics import TemporalFaithfulness
from tempo_eval.store.runs import RunStore

TIME_SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "answers_over_time.csv"
METRIC = "temporal_faithfulness"
FIRST, SECOND = "answers over time", "fresher retrieval"


def make_time_runs(store: RunStore) -> tuple[int, int]:
    """The two runs' ids: (the evaluated bundled answers, the second run)."""
    dataset = load_dataset(str(TIME_SAMPLE))
    result = evaluate(dataset, [TemporalFaithfulness()], store=store, run_name=FIRST)
    first = int(result.run_id)
    dataset_id = int(store.run_info(first)["dataset_id"])
    second, _ = store.create_or_resume_run(dataset_id, {"metrics": [METRIC], "variant": "fresher"}, name=SECOND,
                                           resume=False)
    rows, scores, _ = store.metric_scores(first, METRIC)  # in index order
    dates = store.dataset_column(dataset_id, "reference_date")
    ids = store.dataset_column(dataset_id, "query_id")
    written = []
    for row, score in zip(rows.tolist(), scores.tolist(), strict=True):
        if row in (5, 120, 200):
            found = MetricResult(METRIC, float("nan"), "The answer mentions no year or period.", "no_temporal_claims")
        else:
            fixed = 1.0 if dates[row] >= "2023" and row % 2 == 0 else score
            found = MetricResult(METRIC, fixed, "")
        written.append((row, ids[row], [found], None))
    store.record_rows(second, written)
    store.set_status(second, "finished")
    return first, second
