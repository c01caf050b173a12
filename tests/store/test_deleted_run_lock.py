"""An evaluation that finds its run and then takes the run's lock, while someone else deletes the
run in between (a worker claiming while the app deletes, or an evaluation waiting behind another
one): it says the run was deleted, on both databases, instead of a foreign-key error that tells
the user to restore the workspace from a backup."""

from __future__ import annotations

import pytest

from tempo_eval.store.runs import RunDeleted, RunStore
from tests.store.test_run_store import _frame, _frame_dataset


def test_taking_the_lock_of_a_run_deleted_meanwhile_says_so(workspace_db: str) -> None:
    evaluation, app = RunStore(workspace_db), RunStore(workspace_db)
    dataset = evaluation.save_dataset(_frame_dataset(_frame()))
    run, _ = evaluation.create_or_resume_run(dataset, {"m": 1})
    app.delete_run(run)
    with pytest.raises(RunDeleted, match=rf"run {run} was deleted before this evaluation could write to it"):
        evaluation.acquire_run(run)
    assert app.list_runs().empty  # nothing was made for the deleted run
    assert evaluation.connection.execute("SELECT COUNT(*) FROM run_locks").fetchone()[0] == 0
    other, _ = evaluation.create_or_resume_run(dataset, {"m": 1})  # starting again makes a new run
    assert other != run and evaluation.acquire_run(other) is None
    evaluation.close()
    app.close()
