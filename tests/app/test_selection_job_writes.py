"""While a job writes a run, the pages' reads of everything else stay cached, and what changes shows.

The run lists (sidebar, Runs, the trends) are read from the runs table on every rerun; each run's
result counts are kept by `tempo_eval_app.run_counts`: counted once per change of the run's row,
and at most once a second while it runs (issue 29: keyed on any commit to the workspace, every
rerun counted every listed run again while a job wrote). Here the writer is another process, as a
job's worker, a second app process or the command line are: a run it creates, grows, finishes,
renames or deletes must show at the app's next read, and a job on another dataset must cost the
app no count at all.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tempo_eval.io.dataset import Dataset
from tempo_eval.metrics.base import MetricResult
from tempo_eval.store.runs import RunStore
from tempo_eval_app import run_counts, selection, store_reads
from tempo_eval_app.selection import DATASET_KEY, RUNS_KEY
from tests.support.paths import ROOT

APP = str(ROOT / "app.py")

#: another process's writes: create DATASET NAME | rows RUN FIRST N | finish RUN | rename RUN NAME | delete RUN
WRITER = textwrap.dedent("""
    import sys
    from tempo_eval.metrics.base import MetricResult
    from tempo_eval.store.runs import RunStore

    store = RunStore(sys.argv[1])
    action, args = sys.argv[2], sys.argv[3:]
    if action == "create":
        run_id, _ = store.create_or_resume_run(int(args[0]), {"metric": args[1]}, default_name=args[1])
        print(run_id)
    elif action == "rows":
        run_id, first, n = (int(a) for a in args)
        for row in range(first, first + n):  # a commit per row, as a job's batches
            store.record_row(run_id, row, f"q{row}", [MetricResult("m", 0.5, "ok")])
    elif action == "finish":
        store.set_status(int(args[0]), "finished")
    elif action == "rename":
        store.rename_run(int(args[0]), args[1])
    elif action == "delete":
        store.delete_run(int(args[0]))
""")


def _elsewhere(*args: object) -> str:
    done = subprocess.run([sys.executable, "-c", WRITER, store_reads.db_path(), *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _dataset(name: str, rows: int = 40) -> int:
    frame = pd.DataFrame({"query_id": [f"q{i}" for i in range(rows)], "answer": ["In 2001."] * rows})
    return store_reads.save_dataset(Dataset(frame=frame, name=name, mapping={}, content_hash=f"hash {name}",
                                            source_format="csv", warnings=[]))


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The runs whose results this process counts, in order."""
    calls: list[int] = []
    real = RunStore.result_counts

    def counting(self: RunStore, run_id: int) -> tuple[int, int]:
        calls.append(int(run_id))
        return real(self, run_id)

    monkeypatch.setattr(RunStore, "result_counts", counting)
    return calls


def _shown(dataset_id: int) -> dict[int, tuple[str, str, int]]:
    runs = store_reads.runs_table(dataset_id)
    return {int(r.id): (r.name, r.status, int(r.n_results)) for r in runs.itertuples()}


def test_a_job_writing_another_datasets_run_costs_the_listed_runs_no_count(counted: list[int]) -> None:
    watched, written = _dataset("watched"), _dataset("written")
    app = store_reads.store()
    finished, _ = app.create_or_resume_run(watched, {"metric": "app"}, name="finished here")
    app.record_row(finished, 0, "q0", [MetricResult("m", 1.0, "ok")])
    app.set_status(finished, "finished")
    db = store_reads.db_path()
    before = (selection._run_choices(db, watched), store_reads.run_listing(watched))
    assert counted == [finished]

    job_run = int(_elsewhere("create", written, "the job"))
    _elsewhere("rows", job_run, 0, 5)
    counted.clear()
    assert (selection._run_choices(db, watched), store_reads.run_listing(watched)) == before
    assert _shown(watched) == {finished: ("finished here", "finished", 1)}
    assert counted == []  # nothing of the watched dataset was counted again
    assert _shown(written) == {job_run: ("the job", "running", 5)}  # first seen: counted at once
    assert counted == [job_run]


def test_a_running_run_is_counted_again_at_most_once_per_interval_and_exactly_once_it_ends(
        counted: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    dataset_id = _dataset("d")
    run_id = int(_elsewhere("create", dataset_id, "job"))
    _elsewhere("rows", run_id, 0, 3)
    assert _shown(dataset_id)[run_id] == ("job", "running", 3)

    monkeypatch.setattr(run_counts, "REFRESH_S", 3600.0)  # not due: the counts read before
    _elsewhere("rows", run_id, 3, 4)
    assert _shown(dataset_id)[run_id] == ("job", "running", 3)
    assert store_reads.n_results(run_id) == 3
    monkeypatch.setattr(run_counts, "REFRESH_S", 0.0)  # due: counted again
    assert _shown(dataset_id)[run_id] == ("job", "running", 7)
    assert store_reads.n_results(run_id) == 7
    assert len(store_reads.results_frame(run_id)) == 7

    monkeypatch.setattr(run_counts, "REFRESH_S", 3600.0)
    _elsewhere("rows", run_id, 7, 2)
    _elsewhere("finish", run_id)  # the job's end shows at once, with its exact counts
    assert _shown(dataset_id)[run_id] == ("job", "finished", 9)
    assert len(store_reads.results_frame(run_id)) == 9
    calls = len(counted)
    assert _shown(dataset_id)[run_id] == ("job", "finished", 9)
    assert len(counted) == calls  # a finished run is not counted again


def test_a_run_renamed_resumed_or_deleted_by_another_process_shows_at_the_next_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_counts, "REFRESH_S", 3600.0)
    dataset_id = _dataset("d")
    run_id = int(_elsewhere("create", dataset_id, "first name"))
    _elsewhere("rows", run_id, 0, 2)
    _elsewhere("finish", run_id)
    assert _shown(dataset_id) == {run_id: ("first name", "finished", 2)}
    _elsewhere("rename", run_id, "second name")
    assert _shown(dataset_id) == {run_id: ("second name", "finished", 2)}
    assert store_reads.run_label(run_id) == f"#{run_id} · second name"  # the label: id first, then the name

    # the same configuration again (the command line, a job): the run resumes, then ends again
    assert int(_elsewhere("create", dataset_id, "first name")) == run_id
    assert _shown(dataset_id)[run_id] == ("second name", "running", 2)
    _elsewhere("rows", run_id, 2, 4)
    _elsewhere("finish", run_id)
    assert _shown(dataset_id)[run_id] == ("second name", "finished", 6)

    _elsewhere("delete", run_id)
    assert run_id not in _shown(dataset_id)
    assert store_reads.n_results(run_id) == 0


def test_the_sidebar_shows_a_run_that_another_process_finishes_at_the_next_rerun(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_counts, "REFRESH_S", 3600.0)  # only the run's end may refresh its counts
    at = AppTest.from_file(APP, default_timeout=180).run()  # stores and opens the sample
    sample = int(at.session_state[DATASET_KEY])
    run_id = int(_elsewhere("create", sample, "from a job"))
    _elsewhere("rows", run_id, 0, 2)
    at.run()
    assert at.sidebar.multiselect(key=RUNS_KEY).options == [f"#{run_id} · from a job (running, 2 results)"]

    _elsewhere("rows", run_id, 2, 28)
    _elsewhere("finish", run_id)
    at.run()
    assert not at.exception
    assert at.sidebar.multiselect(key=RUNS_KEY).options == [f"#{run_id} · from a job (finished, 30 results)"]

    _elsewhere("delete", run_id)
    at.run()
    assert not at.exception
    assert at.sidebar.multiselect(key=RUNS_KEY).options == []
