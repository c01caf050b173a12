"""`tempo-eval workspace copy --to URL`: every table copied (SQLite -> PostgreSQL and back), counts
and checksums equal on both sides, ids kept, a target holding data refused."""

from __future__ import annotations

import pandas as pd
import pytest

from tempo_eval.cli import main
from tempo_eval.common.schema import MetricResult
from tempo_eval.store.copy import row_digest
from tempo_eval.store.db import default_db_path
from tempo_eval.store.jobs import JobQueue
from tempo_eval.store.labels import LabelStore
from tempo_eval.store.runs import RunStore
from tempo_eval.store.verdict_cache import VerdictCache
from tests.store.test_run_store import _frame, _frame_dataset

TABLES = ("verdict_cache", "datasets", "runs", "results", "claims", "claim_labels", "run_locks", "jobs",
          "dataset_chunks", "dataset_qrels", "id_marks")


def _fill(location: str) -> tuple[int, int]:
    """A workspace with rows in every table; returns (dataset, run) ids."""
    store = RunStore(location)
    dataset = store.save_dataset(_frame_dataset(_frame()))
    store.save_dataset_qrels(dataset, b"q1 0 d1 1\n")
    streamed, _ = store.begin_dataset(name="streamed", content_hash="h2", mapping=None, source_format="csv")
    store.add_dataset_rows(streamed, 0, pd.DataFrame({"query": ["a"], "answer": ["b"]}))
    first, _ = store.create_or_resume_run(dataset, {"m": 1})
    store.delete_run(first)  # a deleted run: its id is never given again, in the copy too
    run, _ = store.create_or_resume_run(dataset, {"m": 2}, name="kept")
    store.acquire_run(run)
    long_details = {"claims": [{"claim": "c", "verdict": "SUPPORTED", "confidence": 0.75}], "notes": "x" * 400}
    store.record_row(run, 0, "q1", [MetricResult("faith", 0.125, reason="because", details=long_details),
                                    MetricResult("other", float("nan"), reason_code="judge_error")])
    store.set_status(run, "finished")
    store.close()
    LabelStore(location).set_label("c", ["premise"], "SUPPORTED", note="checked")
    VerdictCache(location).put_many({"k": {"verdict": "SUPPORTED"}})
    queue = JobQueue(location)
    queue.submit("nli_check", {}, label="a check")
    queue.close()
    return dataset, run


def _copy(capsys, *arguments: str) -> tuple[int, str, str]:
    code = main(["workspace", "copy", *arguments])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_sqlite_workspace_copied_into_postgresql_keeps_every_row_and_id(postgres_cluster, capsys) -> None:
    dataset, run = _fill(str(default_db_path()))
    target = postgres_cluster.new_database(migrated=False)  # the copy makes the schema
    code, out, err = _copy(capsys, "--to", target)
    assert code == 0, err
    lines = {line.split()[0]: line.split() for line in out.splitlines()[1:]}
    for table in TABLES:
        assert lines[table][-1] == "yes" and int(lines[table][1]) > 0, out
        assert lines[table][1] == lines[table][2] and lines[table][3] == lines[table][4]
    assert "every count and checksum is equal" in err
    source, copy = RunStore(), RunStore(target)
    assert copy.list_runs()[["id", "name", "status", "n_results", "n_failed"]].equals(
        source.list_runs()[["id", "name", "status", "n_results", "n_failed"]])
    assert copy.results_frame(run).equals(source.results_frame(run))
    assert copy.get_result(run, 0, "faith") == source.get_result(run, 0, "faith")
    assert copy.dataset_frame(dataset).equals(source.dataset_frame(dataset))
    assert copy.dataset_qrels(dataset) == b"q1 0 d1 1\n"
    new_run, _ = copy.create_or_resume_run(dataset, {"m": 3})
    assert new_run == run + 1  # past every id the source gave, the deleted run's included
    queue = JobQueue(target)
    assert queue.submit("nli_check", {}) == 2  # the id sequence moved past the copied jobs
    queue.close()
    assert LabelStore(target).frame()["note"].tolist() == ["checked"]


def test_a_postgresql_workspace_copies_back_into_a_new_sqlite_file(postgres_cluster, tmp_path, capsys) -> None:
    source = postgres_cluster.new_database()
    _, run = _fill(source)
    target = tmp_path / "back.sqlite"
    code, out, err = _copy(capsys, "--from", source, "--to", str(target))
    assert code == 0, err
    assert "NO" not in out.split()
    assert RunStore(str(target)).results_frame(run).equals(RunStore(source).results_frame(run))


def test_a_target_that_holds_data_is_refused_and_left_as_it_was(postgres_cluster, capsys) -> None:
    _fill(str(default_db_path()))
    target = postgres_cluster.new_database()
    assert _copy(capsys, "--to", target)[0] == 0
    code, out, err = _copy(capsys, "--to", target)
    assert code == 2
    assert "already holds data" in err and "new, empty database" in err
    assert len(RunStore(target).list_runs()) == 1


def test_copying_a_workspace_into_itself_is_refused(capsys) -> None:
    code, _, err = _copy(capsys, "--to", str(default_db_path()))
    assert code == 2 and "the workspace being copied" in err


def test_a_row_checksum_sees_every_value_and_text_equals_its_utf8_bytes() -> None:
    assert row_digest(("{}", 1, 0.5, None)) == row_digest((b"{}", 1, 0.5, None))
    assert row_digest((1, None)) != row_digest((None, 1))
    assert row_digest((0.1,)) != row_digest((0.1000000000000001,))
    assert row_digest(("a", "bc")) != row_digest(("ab", "c"))


@pytest.mark.parametrize("bad", ["mysql://x/y", "sqlite:///x"])
def test_a_target_url_of_another_database_is_refused(bad: str, capsys) -> None:
    code, _, err = _copy(capsys, "--to", bad)
    assert code == 2 and "postgresql://" in err
