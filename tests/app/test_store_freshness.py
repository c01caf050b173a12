"""The dashboard's reads of the workspace see what a worker process commits.

The app keeps one connection per process (`store_reads.store()`) and reads the sidebar's run
list from the runs table on every rerun, with each run's result counts kept until its row changes
(`tempo_eval_app.run_counts`). A worker (`python -m tempo_eval job run`) is another process:
once it has committed a run, the app's next read must list it, with its results and its status,
however many reads the app made before (an open read transaction would pin an old snapshot).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.io.dataset import Dataset
from tempo_eval.metrics.base import MetricResult
from tests.support.paths import ROOT

#: what a worker does to the workspace: a run of another configuration, its rows, its end
WORKER = textwrap.dedent("""
    import sys
    from tempo_eval.metrics.base import MetricResult
    from tempo_eval.store.runs import RunStore

    store = RunStore(sys.argv[1])
    run_id, _ = store.create_or_resume_run(int(sys.argv[2]), {"metric": "worker"}, name="from the worker")
    for row in range(2):
        store.record_row(run_id, row, f"q{row + 1}", [MetricResult("m", 0.5, "ok")])
    if sys.argv[3] == "finish":
        store.set_status(run_id, "finished")
    print(run_id)
""")


def _worker(db: str, dataset_id: int, end: str) -> int:
    done = subprocess.run([sys.executable, "-c", WORKER, db, str(dataset_id), end], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


def _runs_in_the_sidebar(selection, db: str, dataset_id: int) -> list[int]:
    ids, _labels, _default = selection._run_choices(db, dataset_id)
    return ids


def test_the_app_lists_a_run_that_a_worker_process_committed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPO_EVAL_HOME", str(tmp_path))
    from tempo_eval_app import selection, store_reads

    db = store_reads.db_path()
    frame = pd.DataFrame({"query_id": ["q1", "q2"], "answer": ["In 2001.", "Bob"]})
    dataset_id = store_reads.save_dataset(Dataset(frame=frame, name="d.csv", mapping={}, content_hash="h",
                                                  source_format="csv", warnings=[]))
    app = store_reads.store()
    first, _ = app.create_or_resume_run(dataset_id, {"metric": "app"}, name="first")
    app.record_row(first, 0, "q1", [MetricResult("m", 1.0, "ok")])
    app.set_status(first, "finished")
    # the reads a page makes before the worker commits
    assert _runs_in_the_sidebar(selection, db, dataset_id) == [first]
    assert store_reads.runs_table(dataset_id)["id"].tolist() == [first]
    assert len(store_reads.results_frame(first)) == 1
    store_reads.dataset_frame(dataset_id)

    second = _worker(db, dataset_id, "running")
    assert _runs_in_the_sidebar(selection, db, dataset_id) == [second, first]
    runs = store_reads.runs_table(dataset_id).set_index("id")
    assert (runs.loc[second, "status"], runs.loc[second, "n_results"]) == ("running", 2)

    assert _worker(db, dataset_id, "finish") == second  # the same configuration: the run resumed and ended
    assert store_reads.runs_table(dataset_id).set_index("id").loc[second, "status"] == "finished"
    assert store_reads.runs_table(dataset_id).set_index("id").loc[second, "status"] == "finished"
    _ids, labels, default = selection._run_choices(db, dataset_id)
    assert "(finished, 2 results)" in labels[second] and default == [second]
    assert len(store_reads.results_frame(second)) == 2
    assert not app.connection.in_transaction
