"""Run ids are never reused after a delete (issue 38.7): the store keeps the highest id it ever
gave (`id_marks`, a migration that upgrades an existing workspace in place), and what remembers a
run (the Run diff page's cache and saved ?base=&cand= links, the Runs page's pinned baseline, a
CI's `diff 12 15`) says the run is gone rather than showing another."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tempo_eval.engine.runner import evaluate
from tempo_eval.io.dataset import load_dataset
from tempo_eval.store.db import MIGRATIONS, SCHEMA_VERSION
from tempo_eval.store.runs import RunStore
from tests.support.cli import run_cli_streams as run_cli
from tests.support.paths import ROOT
from tests.support.sample_runs import SAMPLE, make_sample_runs, metrics

#: every test here runs on the workspace's SQLite file and on a PostgreSQL database (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("workspace_db")

APP = str(ROOT / "app.py")


def _config_run(store: RunStore, dataset_id: int, i: int) -> int:
    return store.create_or_resume_run(dataset_id, {"m": i}, name=f"run {i}")[0]


def test_a_deleted_runs_id_is_not_given_again() -> None:
    store = RunStore()
    dataset_id = store.save_dataset(load_dataset(str(SAMPLE)))
    ids = [_config_run(store, dataset_id, i) for i in range(3)]
    assert ids == [1, 2, 3]
    store.delete_run(3)
    assert _config_run(store, dataset_id, 9) == 4
    store.delete_run(4)
    store.delete_run(2)
    assert evaluate(load_dataset(str(SAMPLE)), metrics(), store=store, run_name="after").run_id == 5
    # a new connection (another process) knows the mark too
    assert _config_run(RunStore(), dataset_id, 10) == 6


def test_an_existing_workspace_is_upgraded_in_place_and_keeps_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.execute("PRAGMA foreign_keys=ON")
    # a workspace of the version before the id marks (later migrations come after it)
    before = next(i for i, script in enumerate(MIGRATIONS) if "id_marks" in script)
    old.executescript("BEGIN; " + "; ".join(MIGRATIONS[:before]) + f"; PRAGMA user_version = {before}; COMMIT;")
    old.execute("INSERT INTO datasets (id, name, content_hash, mapping, n_rows, rows) VALUES (1, 'd', 'h', '{}', 1, '{}')")
    for run_id in (1, 2, 3):
        old.execute("INSERT INTO runs (id, dataset_id, name, config, config_hash, status) "
                    "VALUES (?, 1, ?, '{}', ?, 'finished')", (run_id, f"r{run_id}", f"h{run_id}"))
        old.execute("INSERT INTO results (run_id, row_idx, query_id, metric, score) VALUES (?, 0, 'q', 'm', 0.5)",
                    (run_id,))
    old.execute("DELETE FROM runs WHERE id = 3")  # the old store gave 3 again next
    # a job remembered a run 7 deleted long ago
    old.execute("INSERT INTO jobs (kind, status, created_at, run_id) VALUES ('evaluate', 'finished', 0, 7)")
    old.commit()
    old.close()

    store = RunStore(path)
    assert store.connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert list(store.list_runs().sort_values("id")["name"]) == ["r1", "r2"]
    assert store.connection.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 2
    assert store.create_or_resume_run(1, {"new": 1})[0] == 8


def test_a_ci_diff_of_a_deleted_run_names_it_gone(tmp_path: Path, capsys) -> None:
    baseline, candidate = make_sample_runs(RunStore(), tmp_path)
    code, _, _ = run_cli(["runs", "delete", str(candidate), "--yes"], capsys)
    assert code == 0
    evaluate(load_dataset(str(SAMPLE)), metrics()[:1], store=RunStore(), run_name="newer")
    code, out, err = run_cli(["diff", str(baseline), str(candidate)], capsys)
    assert code == 2 and not out and f"'{candidate}'" in err


def test_a_saved_link_to_a_deleted_run_says_it_is_gone(tmp_path: Path) -> None:
    store = RunStore()
    baseline, candidate = make_sample_runs(store, tmp_path)
    store.delete_run(candidate)
    other = evaluate(load_dataset(str(SAMPLE)), metrics()[:1], store=store, run_name="newer").run_id
    assert other != candidate
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["base"], at.query_params["cand"] = str(baseline), str(candidate)
    at.run()
    at.switch_page("views/run_diff.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(f"#{candidate}" in w.value and "no longer exist" in w.value for w in at.warning)
    assert not any("rows measured" in d.value.columns for d in at.dataframe)  # no diff of other runs
    # the user picks: the page compares what was picked
    at.selectbox(key="diff_cand").set_value(other).run()
    assert not at.warning and any("rows measured" in d.value.columns for d in at.dataframe)


def test_a_pinned_baseline_that_was_deleted_is_said_gone(tmp_path: Path) -> None:
    store = RunStore()
    baseline, candidate = make_sample_runs(store, tmp_path)
    at = AppTest.from_file(APP, default_timeout=180).run()
    at.switch_page("views/runs.py").run()
    at.toggle(key="runs_all").set_value(True).run()
    at.selectbox(key="runs_baseline").set_value(candidate).run()
    store.delete_run(candidate)
    evaluate(load_dataset(str(SAMPLE)), metrics()[:1], store=store, run_name="newer")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="runs_baseline").value is None
    assert any(f"run #{candidate} no longer exists" in c.value for c in at.caption)
