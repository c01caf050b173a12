"""Who did what: the store records the user it is handed on datasets, runs, jobs and labels, reads
it back, keeps NULL ("unknown") for rows made before users were recorded, and upgrades a
workspace made by the previous schema in place; a worker records the job's user on its run."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.cli import job as job_cli
from tempo_eval.common.identity import UNKNOWN_USER, shown_user, user_name
from tempo_eval.io.dataset import Dataset
from tempo_eval.jobs.uploads import HANDLERS
from tempo_eval.store import db
from tempo_eval.store.datasets import frame_content_hash
from tempo_eval.store.jobs import JobQueue
from tempo_eval.store.labels import LabelStore, premises_hash
from tempo_eval.store.runs import RunStore


def _dataset(name: str = "qa", n: int = 3) -> Dataset:
    frame = pd.DataFrame({"query_id": [f"{name}{i}" for i in range(n)], "query": [f"When was {i}?" for i in range(n)],
                          "answer": [f"In {1990 + i}." for i in range(n)],
                          "contexts": [[f"It was {1990 + i}."] for i in range(n)]})
    return Dataset(frame, name, {}, frame_content_hash(frame), "jsonl")


def test_datasets_runs_and_jobs_record_the_user_they_are_handed() -> None:
    store = RunStore()
    dataset_id = store.save_dataset(_dataset(), user="ann@example.org")
    assert store.dataset_info(dataset_id)["created_by"] == "ann@example.org"
    # the same dataset stored again by someone else keeps its first user
    assert store.save_dataset(_dataset(), user="bob") == dataset_id
    assert store.list_datasets().set_index("id").loc[dataset_id, "created_by"] == "ann@example.org"
    run_id, _ = store.create_or_resume_run(dataset_id, {"m": 1}, user="  bob  ")
    assert store.run_info(run_id)["created_by"] == "bob"
    # resuming by another user keeps the run's maker
    assert store.create_or_resume_run(dataset_id, {"m": 1}, user="carol") == (run_id, True)
    assert store.run_info(run_id)["created_by"] == "bob"
    imported, _ = store.import_run(dataset_id, {"m": 2}, origin="ray-output:x", user="dan")
    streamed, _ = store.begin_dataset(name="s", content_hash="h" * 64, mapping=None, source_format="csv", user="eve")
    anonymous, _ = store.create_or_resume_run(dataset_id, {"m": 3})
    runs = store.list_runs().set_index("id")
    assert runs.loc[run_id, "created_by"] == "bob" and runs.loc[imported, "created_by"] == "dan"
    assert runs.loc[anonymous, "created_by"] is None  # nobody named: unknown, never guessed
    assert store.dataset_info(streamed)["created_by"] == "eve"
    store.close()
    queue = JobQueue()
    job_id = queue.submit("evaluate", {}, user="fay")
    assert queue.get(job_id)["created_by"] == "fay"
    assert queue.get(queue.submit("evaluate", {"x": 1}))["created_by"] is None
    queue.close()


def test_names_are_recorded_on_one_line_and_blank_is_unknown() -> None:
    assert user_name(" a\nb ") == "a b"
    assert user_name("  ") is None and user_name(None) is None
    assert shown_user(None) == shown_user("") == shown_user(float("nan")) == UNKNOWN_USER
    assert shown_user("ann") == "ann"


def test_each_reviewer_keeps_their_own_label() -> None:
    labels = LabelStore()
    premises = ["Paris is the capital of France."]
    key = ("Paris is in France.", premises_hash(premises))
    labels.set_label(key[0], premises, "SUPPORTED", user="ann")
    labels.set_label(key[0], premises, "NEUTRAL", user="bob")
    labels.set_label(key[0], premises, "CONTRADICTED", user="ann")  # ann changes her mind: replaced
    assert labels.lookup([key], user="ann") == {key: "CONTRADICTED"}
    assert labels.lookup([key], user="bob") == {key: "NEUTRAL"}
    assert labels.lookup([key], user="carol") == {}
    reviews = labels.reviews([key])
    assert sorted(zip(reviews["reviewer"], reviews["label"], strict=True)) == [("ann", "CONTRADICTED"), ("bob", "NEUTRAL")]
    labels.remove(*key, user="bob")
    assert list(labels.reviews([key])["reviewer"]) == ["ann"]
    labels.close()


def test_labels_export_with_their_reviewer_and_import_back_unchanged() -> None:
    labels = LabelStore()
    premises = ["The bridge opened in 1990."]
    labels.set_label("It opened in 1990.", premises, "SUPPORTED", user="ann")
    labels.set_label("It opened in 1990.", premises, "NEUTRAL", user="bob")
    exported = labels.export("csv")
    assert b"reviewer" in exported.splitlines()[0]
    other = LabelStore(Path(db.workspace_dir()) / "other.sqlite")
    assert other.import_labels(exported, "labels.csv", user="carol") == 2
    assert sorted(other.frame()["reviewer"]) == ["ann", "bob"]  # the file's reviewers, not the importer
    # a file without a reviewer column is the importing user's
    plain = b"claim,premises_hash,label\nIt opened in 1990.," + premises_hash(premises).encode() + b",CONTRADICTED\n"
    assert other.import_labels(plain, "mine.csv", user="carol") == 1
    assert other.lookup([("It opened in 1990.", premises_hash(premises))], user="carol")
    other.close()
    labels.close()


def _old_workspace(path: Path) -> None:
    """A workspace made by the code before users were recorded (every step of the SQLite file's own
    list, none of the later schema steps), with a dataset, a run, a job and a label in it."""
    conn = sqlite3.connect(path)
    for version in range(db.SCHEMA_VERSION):
        for statement in db._statements(db.MIGRATIONS[version]):
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {db.SCHEMA_VERSION}")
    conn.execute("INSERT INTO datasets (id, name, content_hash, mapping, n_rows, rows) VALUES (1, 'old', 'h', '{}', 0, '{}')")
    conn.execute("INSERT INTO runs (id, dataset_id, name, config, config_hash, status) VALUES (7, 1, 'old run', '{}', 'c', 'finished')")
    conn.execute("INSERT INTO jobs (kind, status, created_at) VALUES ('evaluate', 'finished', 0)")
    conn.execute("INSERT INTO claim_labels (claim, premises_hash, label, note, premises, labelled_at)"
                 " VALUES ('Old claim.', ?, 'NEUTRAL', 'kept', '[\"p\"]', '2024-05-01 10:00:00')", (premises_hash(["p"]),))
    conn.commit()
    conn.close()


def test_a_workspace_made_before_users_upgrades_in_place_and_keeps_everything() -> None:
    path = Path(db.workspace_dir()) / db.DB_FILENAME
    _old_workspace(path)
    store = RunStore(path)
    assert store.run_info(7)["name"] == "old run" and store.run_info(7)["created_by"] is None
    assert store.list_runs().set_index("id").loc[7, "created_by"] is None
    assert store.dataset_info(1)["created_by"] is None
    new_run, _ = store.create_or_resume_run(1, {"new": True}, user="ann")
    assert new_run == 8 and store.run_info(new_run)["created_by"] == "ann"
    store.close()
    queue = JobQueue(path)
    assert queue.jobs()[0]["created_by"] is None
    queue.close()
    labels = LabelStore(path)
    old = labels.frame()
    assert list(old["reviewer"]) == [""] and list(old["label"]) == ["NEUTRAL"] and list(old["note"]) == ["kept"]
    assert list(old["labelled_at"]) == ["2024-05-01 10:00:00"]
    key = ("Old claim.", premises_hash(["p"]))
    assert labels.lookup([key]) == {key: "NEUTRAL"}  # the unknown reviewer's label
    labels.set_label("Old claim.", ["p"], "SUPPORTED", user="ann")  # a new reviewer's label sits beside it
    assert sorted(labels.reviews([key])["reviewer"]) == ["", "ann"]
    labels.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == db.SCHEMA_VERSION


@pytest.mark.parametrize("user", ["queuer@example.org", None])
def test_the_worker_records_the_job_user_on_the_run_it_makes(user: str | None) -> None:
    from tests.jobs.test_queue import SETTINGS
    from tests.jobs.test_queue import _dataset as stored_dataset

    dataset_id = stored_dataset(4)
    queue = JobQueue()
    job_id = queue.submit("evaluate", {**SETTINGS, "dataset_id": dataset_id}, dataset_id=dataset_id, user=user)
    assert job_cli.run_worker(queue, limit=1) == 0
    found = queue.get(job_id)
    assert found["status"] == "finished", found["error"]
    store = RunStore()
    assert store.run_info(found["run_id"])["created_by"] == user
    store.close()
    queue.close()


def test_an_upload_job_records_its_user_on_the_dataset() -> None:
    path = Path(db.workspace_dir()) / "uploads" / "qa.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    _dataset("up").frame.to_json(path, orient="records", lines=True)
    ended = HANDLERS["dataset_upload"]({"path": str(path), "name": "qa.jsonl", "store": True}, user="uploader")
    assert ended["status"] == "finished", ended
    store = RunStore()
    assert store.dataset_info(int(ended["dataset_id"]))["created_by"] == "uploader"
    store.close()


def test_a_ray_run_in_the_workspace_records_its_user() -> None:
    from tempo_eval.engine.distributed.workspace import WorkspaceRun

    manifest = {"dataset_name": "d", "content_hash": "h" * 64, "mapping": {}, "source_format": "csv",
                "config": {"metrics": []}, "output_id": "o1"}
    store = RunStore()
    workspace = WorkspaceRun.open(store, manifest, name=None, default_name="ray", user="ray-user")
    assert store.run_info(workspace.run_id)["created_by"] == "ray-user"
    assert store.dataset_info(workspace.dataset_id)["created_by"] == "ray-user"
    store.close()
