"""Details and dataset rows are stored compressed and read back exactly, and results older versions
wrote as text still read (issue 11)."""

from __future__ import annotations

import json
from pathlib import Path

from tempo_eval.engine.runner import evaluate
from tempo_eval.io.dataset import load_dataset
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
from tempo_eval.store.db import DB_FILENAME
from tempo_eval.store.runs import RunStore

ROWS = [{"query_id": f"q{i}", "query": "x", "retrieved_ids": ["d1", "d2"], "gold_ids": ["d2"]} for i in range(400)]


def _dataset():
    return load_dataset("\n".join(json.dumps(r) for r in ROWS).encode(), name="d.jsonl")


# ---- store size: compressed details and rows, lossless ---------------------------------------

def test_details_and_dataset_rows_are_stored_compressed_and_read_back_exactly(tmp_path: Path) -> None:
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    rows = [{"query_id": f"q{i}", "query": "When between 1900 and 1950?", "answer": f"Built in {1900 + i}, "
             f"renovated in {1930 + i}.", "contexts": [f"Work ended in {1900 + i}.", "During World War II."],
             "retrieved_ids": ["d1"], "gold_ids": ["d1"]} for i in range(50)]
    dataset = load_dataset("\n".join(json.dumps(r) for r in rows).encode(), name="d.jsonl")
    store = RunStore(tmp_path / DB_FILENAME)
    result = evaluate(dataset, [TemporalFaithfulness(), TemporalNDCG()], store=store)
    kinds = [t for (t,) in store.connection.execute("SELECT typeof(details) FROM results")]
    assert kinds == ["blob"] * 100  # every detail here is long enough to be compressed
    (stored_rows,) = store.connection.execute("SELECT typeof(rows) FROM datasets").fetchone()
    assert stored_rows == "blob"
    fresh = [TemporalFaithfulness().measure(answer=r["answer"], contexts=r["contexts"]) for r in rows[:5]]
    for i, expected in enumerate(fresh):
        assert result.result(i, "temporal_faithfulness").details == json.loads(json.dumps(expected.details))
    pd_frame = store.dataset_frame(result.dataset_id)
    assert pd_frame["contexts"].tolist() == dataset.frame["contexts"].tolist()
    again = evaluate(dataset, [TemporalFaithfulness(), TemporalNDCG()], store=store)
    assert again.computed == 0 and again.reused == 100


def test_results_written_as_text_by_older_versions_still_read(tmp_path: Path) -> None:
    from tempo_eval.metrics.base import MetricResult

    store = RunStore(tmp_path / DB_FILENAME)
    dataset_id = store.save_dataset(_dataset())
    run_id, _ = store.create_or_resume_run(dataset_id, {"metrics": ["m"]})
    store.record_row(run_id, 0, "q0", [MetricResult("m", 0.5, "why", None, {"a": list(range(100))})])
    details = json.dumps({"old": "text", "years": list(range(1900, 1990))})
    store.connection.execute("UPDATE results SET details = ? WHERE run_id = ?", (details, run_id))
    store.connection.execute("UPDATE datasets SET rows = ? WHERE id = ?",
                             (json.dumps({"columns": ["query_id"], "rows": [["q0"]]}), dataset_id))
    store.connection.commit()
    assert store.get_result(run_id, 0, "m").details == json.loads(details)
    assert store.dataset_frame(dataset_id)["query_id"].tolist() == ["q0"]

