"""The run store: datasets by content hash, runs by configuration, results and claims, secrets."""

from __future__ import annotations

import math
import multiprocessing
import sqlite3
import traceback
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.common.secrets import is_secret_name, strip_secrets
from tempo_eval.io.dataset import Dataset, load_dataset
from tempo_eval.metrics.base import MetricResult, not_measurable
from tempo_eval.store.db import DB_FILENAME, MIGRATIONS, SCHEMA_VERSION, connect, default_db_path
from tempo_eval.store.runs import RunStore, config_hash, is_retryable
from tempo_eval.store.verdict_cache import VerdictCache
from tempo_eval.verify.base import ClaimVerdict, Verdict

#: every test here runs on the workspace's SQLite file and on a PostgreSQL database (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("workspace_db")

CSV = b"query_id,query,answer,contexts\nq1,When?,In 2001.,\"[\"\"It was 2001.\"\"]\"\nq2,Who?,Bob,\n"


def _frame_dataset(frame: pd.DataFrame, content_hash: str = "h1", mapping: dict | None = None) -> Dataset:
    return Dataset(frame=frame, name="data.csv", mapping=mapping or {}, content_hash=content_hash,
                   source_format="csv", warnings=["a note"])


def _frame() -> pd.DataFrame:
    return pd.DataFrame({
        "query_id": ["q1", "q2"],
        "contexts": [["It was 2001.", "Later, 2005."], None],
        "gold_ids": [{"d1": 2, "d2": 0}, ["d3"]],
        "answer": ["In 2001.", "Bob"],
    })


@pytest.mark.sqlite_only
def test_a_new_workspace_is_created_at_the_current_schema_version() -> None:
    conn = connect()
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == len(MIGRATIONS)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"verdict_cache", "datasets", "runs", "results", "claims"} <= tables
    assert default_db_path().name == DB_FILENAME


@pytest.mark.sqlite_only
def test_run_lists_and_summaries_count_from_the_scores_index_not_the_details() -> None:
    """Counting a run's results must not read every result's details (the table holds them):
    the run list, its failed count and the per-system summary are answered by `results_scores`."""
    conn = connect()
    queries = [
        "SELECT COUNT(*) FROM results WHERE run_id = 1",
        "SELECT COUNT(*) FROM results WHERE run_id = 1 AND score IS NULL"
        " AND (reason_code = 'error' OR reason_code LIKE '%\\_error' ESCAPE '\\')",
        "SELECT system, metric, COUNT(*), COUNT(score), AVG(score) FROM results WHERE run_id = 1"
        " GROUP BY system, metric ORDER BY system, metric",
    ]
    for query in queries:
        plan = " ".join(str(row[-1]) for row in conn.execute("EXPLAIN QUERY PLAN " + query))
        assert "COVERING INDEX results_scores" in plan, (query, plan)


def test_a_version_1_workspace_is_upgraded_in_place_keeping_cached_verdicts(tmp_path) -> None:
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.executescript(f"BEGIN; {MIGRATIONS[0]}; PRAGMA user_version = 1; COMMIT;")
    old.execute("INSERT INTO verdict_cache (key, record) VALUES ('k', '{}')")
    old.commit()
    old.close()

    store = RunStore(path)
    assert store.connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert len(VerdictCache(connection=store.connection)) == 1
    assert store.list_runs().empty


def test_saving_identical_content_twice_returns_the_same_dataset() -> None:
    store = RunStore()
    first = store.save_dataset(load_dataset(CSV, name="a.csv"))
    again = store.save_dataset(load_dataset(CSV, name="renamed.csv"))
    assert first == again
    assert len(store.list_datasets()) == 1
    assert store.dataset_info(first)["name"] == "a.csv"


def test_the_same_bytes_read_with_another_mapping_are_another_dataset() -> None:
    store = RunStore()
    a = store.save_dataset(_frame_dataset(_frame(), mapping={"answer": "answer"}))
    b = store.save_dataset(_frame_dataset(_frame(), mapping={"answer": "response"}))
    assert a != b


def test_a_stored_dataset_round_trips_lists_dicts_and_missing_cells() -> None:
    store = RunStore()
    dataset_id = store.save_dataset(_frame_dataset(_frame()))
    loaded = store.get_dataset(dataset_id)
    assert isinstance(loaded, Dataset)
    assert loaded.frame["contexts"].tolist() == [["It was 2001.", "Later, 2005."], None]
    assert loaded.frame["gold_ids"].tolist() == [{"d1": 2, "d2": 0}, ["d3"]]
    assert loaded.content_hash == "h1" and loaded.warnings == ["a note"]


def test_the_same_dataset_and_configuration_resume_the_same_run() -> None:
    store = RunStore()
    dataset_id = store.save_dataset(_frame_dataset(_frame()))
    config = {"metrics": [{"name": "m", "settings": {"k": 10}}]}
    run_id, resumed = store.create_or_resume_run(dataset_id, config)
    assert not resumed
    store.set_status(run_id, "finished")
    again, resumed = store.create_or_resume_run(dataset_id, dict(config))
    assert (again, resumed) == (run_id, True)
    assert store.run_info(run_id)["status"] == "running"
    other, resumed = store.create_or_resume_run(dataset_id, {"metrics": [{"name": "m", "settings": {"k": 5}}]})
    assert other != run_id and not resumed
    fresh, resumed = store.create_or_resume_run(dataset_id, config, resume=False)
    assert fresh not in (run_id, other) and not resumed


@pytest.mark.parametrize(
    "name", ["api_key", "apiKey", "OPENAI_API_KEY", "access_token", "client_secret", "password", "key"]
)
def test_secret_names_are_recognised(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["k", "max_tokens", "model", "monkey", "keyword_weight", "tokenizer"])
def test_ordinary_setting_names_are_not_secret(name: str) -> None:
    assert not is_secret_name(name)


@pytest.mark.sqlite_only
def test_secrets_in_a_run_configuration_never_reach_the_database_file() -> None:
    store = RunStore()
    dataset_id = store.save_dataset(_frame_dataset(_frame()))
    secret = "sk-live-0123456789abcdef"
    config = {
        "metrics": [{"name": "m", "settings": {"api_key": secret, "judge": {"accessToken": secret, "model": "x"}}}],
        "openai_api_key": secret,
        "max_tokens": 5,
    }
    run_id, _ = store.create_or_resume_run(dataset_id, config)
    stored = store.run_info(run_id)["config"]
    assert stored == {"metrics": [{"name": "m", "settings": {"judge": {"model": "x"}}}], "max_tokens": 5}
    assert config_hash(config) == config_hash(strip_secrets(config))
    store.connection.execute("PRAGMA wal_checkpoint(FULL)")
    assert secret.encode() not in default_db_path().read_bytes()


def test_an_api_key_quoted_in_an_error_message_is_masked_before_it_is_stored(monkeypatch) -> None:
    secret = "sk-test-abcdefgh12345678"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    store = RunStore()
    run_id, _ = store.create_or_resume_run(store.save_dataset(_frame_dataset(_frame())), {"m": 1})
    failed = not_measurable("m", "row_error", f"401 for key {secret}", request=f"Bearer {secret}")
    store.record_row(run_id, 0, "q1", [failed])
    store.set_status(run_id, "failed", f"AuthenticationError: {secret}")
    stored = store.get_result(run_id, 0, "m")
    assert secret not in stored.reason and "***" in stored.reason
    assert secret not in str(stored.details)
    assert secret not in (store.run_info(run_id)["error"] or "")


def test_results_and_claims_round_trip_with_nan_as_not_measurable() -> None:
    store = RunStore()
    run_id, _ = store.create_or_resume_run(store.save_dataset(_frame_dataset(_frame())), {"m": 1})
    claims = [
        ClaimVerdict("Built in 2001.", Verdict.SUPPORTED, "It was 2001.",
                     {"entailment": 0.9, "neutral": 0.05, "contradiction": 0.05}, "entailed"),
        {"claim": "Opened in 1999.", "verdict": "CONTRADICTED", "evidence": None, "probabilities": None,
         "reason": "year differs", "error": None},
    ]
    scored = MetricResult("faith", 0.5, "1 of 2", None, {"claims": claims, "years": {2001}}, True)
    store.record_row(run_id, 0, "q1", [scored, not_measurable("ndcg", "empty_query_time", "no years")],
                     system="bm25")
    store.record_row(run_id, 1, "q2", [MetricResult("faith", 1.0), MetricResult("ndcg", 0.25)])

    assert store.completed(run_id) == {(0, "faith"), (0, "ndcg"), (1, "faith"), (1, "ndcg")}
    frame = store.results_frame(run_id)
    assert frame.columns.tolist() == ["row", "query_id", "run", "metric", "score", "reason_code", "reason"]
    assert frame["run"].tolist()[:2] == ["bm25", "bm25"] and frame["run"][2:].isna().all()
    assert math.isnan(frame.loc[1, "score"]) and frame.loc[1, "reason_code"] == "empty_query_time"
    assert frame["score"].tolist()[::2] == [0.5, 1.0]

    claims_frame = store.claims_frame(run_id)
    assert claims_frame["verdict"].tolist() == ["SUPPORTED", "CONTRADICTED"]
    assert claims_frame.loc[0, "probabilities"]["entailment"] == 0.9
    assert claims_frame["query_id"].tolist() == ["q1", "q1"]

    result = store.get_result(run_id, 0, "faith")
    assert result.details["years"] == [2001]
    assert [c["claim"] for c in result.details["claims"]] == ["Built in 2001.", "Opened in 1999."]
    assert result.success is True


def test_recording_a_row_again_replaces_its_results_and_claims() -> None:
    store = RunStore()
    run_id, _ = store.create_or_resume_run(store.save_dataset(_frame_dataset(_frame())), {"m": 1})
    two_claims = [{"claim": "a", "verdict": "SUPPORTED"}, {"claim": "b", "verdict": "NEUTRAL"}]
    store.record_row(run_id, 0, "q1", [MetricResult("faith", 0.5, details={"claims": two_claims})])
    store.record_row(run_id, 0, "q1", [MetricResult("faith", 1.0, details={"claims": two_claims[:1]})])
    assert store.results_frame(run_id)["score"].tolist() == [1.0]
    assert store.claims_frame(run_id)["claim"].tolist() == ["a"]


def test_run_summary_counts_measurable_rows_per_metric() -> None:
    store = RunStore()
    run_id, _ = store.create_or_resume_run(store.save_dataset(_frame_dataset(_frame())), {"m": 1}, name="mine")
    store.record_row(run_id, 0, "q1", [MetricResult("faith", 0.2)])
    store.record_row(run_id, 1, "q2", [not_measurable("faith", "no_temporal_claims", "none")])
    store.set_status(run_id, "finished")
    summary = store.run_summary(run_id)
    assert summary["name"] == "mine" and summary["status"] == "finished" and summary["finished_at"]
    assert summary["metrics"]["faith"] == {"n": 2, "n_measurable": 1, "mean": pytest.approx(0.2)}
    runs = store.list_runs()
    assert runs.loc[0, "n_results"] == 2 and runs.loc[0, "dataset"] == "data.csv"


def test_an_unknown_status_is_refused() -> None:
    store = RunStore()
    run_id, _ = store.create_or_resume_run(store.save_dataset(_frame_dataset(_frame())), {"m": 1})
    with pytest.raises(ValueError, match="status must be one of"):
        store.set_status(run_id, "done")


def test_deleting_a_dataset_removes_its_runs_results_and_claims() -> None:
    store = RunStore()
    dataset_id = store.save_dataset(_frame_dataset(_frame()))
    run_id, _ = store.create_or_resume_run(dataset_id, {"m": 1})
    store.record_row(run_id, 0, "q1", [MetricResult("faith", 1.0, details={"claims": [{"claim": "a"}]})])
    other_run, _ = store.create_or_resume_run(dataset_id, {"m": 2})
    store.delete_run(other_run)
    assert store.list_runs()["id"].tolist() == [run_id]
    store.delete_dataset(dataset_id)
    assert store.list_datasets().empty and store.list_runs().empty
    counts = [store.connection.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("results", "claims")]
    assert counts == [0, 0]


def _open_new_workspace(path: str, barrier: multiprocessing.synchronize.Barrier, report: str) -> None:
    """In a child process: open the workspace the moment every sibling is ready; write what broke."""
    try:
        barrier.wait(timeout=60)
        conn = connect(path)
        found = (conn.execute("PRAGMA user_version").fetchone()[0], conn.execute("PRAGMA journal_mode").fetchone()[0])
        conn.execute("INSERT INTO verdict_cache (key, record) VALUES (?, '{}')", (report,))
        conn.commit()
        conn.close()
        if found != (SCHEMA_VERSION, "wal"):
            raise AssertionError(f"opened at {found}")
    except BaseException:
        Path(report).write_text(traceback.format_exc())
        raise


def test_several_processes_opening_one_new_workspace_at_once_all_succeed(tmp_path: Path) -> None:
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    for workspace in range(6):
        path = tmp_path / f"ws{workspace}" / DB_FILENAME
        barrier = context.Barrier(4)
        reports = [tmp_path / f"ws{workspace}-{i}.err" for i in range(4)]
        processes = [
            context.Process(target=_open_new_workspace, args=(str(path), barrier, str(report)))
            for report in reports
        ]
        for process in processes:
            process.start()
        for process in processes:
            process.join(timeout=120)
        errors = [report.read_text() for report in reports if report.exists()]
        assert not errors, errors[0]
        assert [process.exitcode for process in processes] == [0, 0, 0, 0]
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("SELECT COUNT(*) FROM verdict_cache").fetchone()[0] == 4
        conn.close()


def test_a_failed_migration_step_leaves_the_version_found(tmp_path, monkeypatch) -> None:
    import tempo_eval.store.migrations.legacy as db

    path = tmp_path / "half.sqlite"
    monkeypatch.setattr(db, "MIGRATIONS", [*MIGRATIONS, "CREATE TABLE extra (x); CREATE TABLE extra (y);"])
    monkeypatch.setattr(db, "SCHEMA_VERSION", len(MIGRATIONS) + 1)
    from tempo_eval.store import WorkspaceError

    with pytest.raises(WorkspaceError, match="already exists"):  # SQLite's errors come as WorkspaceError
        connect(path)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 0  # the whole upgrade rolled back
    assert conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0] == 0
    conn.close()


@pytest.mark.parametrize("code", ["row_error", "judge_error", "verifier_error", "error"])
def test_failure_reason_codes_are_retryable(code: str) -> None:
    assert is_retryable(code)


@pytest.mark.parametrize(
    "code", [None, "no_temporal_claims", "empty_query_time", "no_relevant_documents", "missing_input", "no_claims"]
)
def test_not_measurable_reason_codes_are_not_retryable(code: str | None) -> None:
    assert not is_retryable(code)


def test_completed_leaves_out_failed_results_when_asked_to_retry_them() -> None:
    store = RunStore()
    run_id, _ = store.create_or_resume_run(store.save_dataset(_frame_dataset(_frame())), {"m": 1})
    store.record_row(run_id, 0, "q1", [MetricResult("a", 0.5), not_measurable("b", "judge_error", "timeout")])
    store.record_row(run_id, 1, "q2", [not_measurable("a", "no_temporal_claims", "none"),
                                       not_measurable("b", "row_error", "boom")])
    everything = {(0, "a"), (0, "b"), (1, "a"), (1, "b")}
    assert store.completed(run_id) == everything
    assert store.completed(run_id, retry_failed=True) == {(0, "a"), (1, "a")}


def test_opening_retries_while_the_database_is_locked_and_only_then(monkeypatch) -> None:
    import tempo_eval.store.db as db

    monkeypatch.setattr(db, "_OPEN_BACKOFF", 0.0)

    def failing(messages: list[str]):
        attempts: list[str] = []

        def action() -> str:
            attempts.append("tried")
            if len(attempts) <= len(messages):
                raise sqlite3.OperationalError(messages[len(attempts) - 1])
            return "opened"

        return action, attempts

    action, attempts = failing(["database is locked", "database is busy"])
    assert db._retry_busy(action) == "opened" and len(attempts) == 3
    action, attempts = failing(["no such table: x"])
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        db._retry_busy(action)
    assert len(attempts) == 1
    action, attempts = failing(["database is locked"] * db._OPEN_ATTEMPTS)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        db._retry_busy(action)
    assert len(attempts) == db._OPEN_ATTEMPTS


# ---- run management (issue 8) ----------------------------------------------------------------

def test_a_version_2_workspace_opens_with_empty_notes_tags_and_usage(tmp_path) -> None:
    path = tmp_path / "v2.sqlite"
    old = sqlite3.connect(path)
    old.executescript(f"BEGIN; {MIGRATIONS[0]}; {MIGRATIONS[1]}; PRAGMA user_version = 2; COMMIT;")
    old.execute("INSERT INTO datasets (name, content_hash, mapping, n_rows, rows) VALUES ('d', 'h', '{}', 0, '{}')")
    old.execute("INSERT INTO runs (dataset_id, name, config, config_hash, status) VALUES (1, 'old', '{}', 'c', 'finished')")
    old.commit()
    old.close()

    store = RunStore(path)
    runs = store.list_runs()
    assert runs.loc[0, "name"] == "old" and runs.loc[0, "note"] == "" and runs.loc[0, "tags"] == []
    assert runs.loc[0, "usage"] is None and store.run_info(1)["tags"] == []


def test_runs_are_renamed_noted_tagged_and_their_judge_usage_summed() -> None:
    store = RunStore()
    run_id, _ = store.create_or_resume_run(store.save_dataset(_frame_dataset(_frame())), {"m": 1})
    store.rename_run(run_id, "  bm25   baseline ")
    store.set_run_note(run_id, "first try")
    store.set_run_tags(run_id, ["baseline", " baseline", "", "k10"])
    store.add_run_usage(run_id, {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12, "requests": 1})
    store.add_run_usage(run_id, {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6, "requests": 1})
    info = store.run_info(run_id)
    assert info["name"] == "bm25 baseline" and info["note"] == "first try"
    assert info["tags"] == ["baseline", "k10"]
    assert info["usage"] == {"prompt_tokens": 15, "completion_tokens": 3, "total_tokens": 18, "requests": 2}
    with pytest.raises(ValueError, match="must not be empty"):
        store.rename_run(run_id, "   ")
    with pytest.raises(KeyError, match="no run with id 999"):
        store.set_run_note(999, "x")


def _default_run(store: RunStore, dataset_id: int) -> int | None:
    """The run a page opens on for a dataset (as `tempo_eval_app.selection` picks it): the newest
    run with results that is not failed (see `list_runs`), else None."""
    runs = store.list_runs(dataset_id)
    usable = runs[(runs["status"] != "failed") & (runs["n_results"] > 0)]
    return None if usable.empty else int(usable["id"].iloc[0])


def test_a_run_whose_every_result_failed_is_failed_and_never_the_default() -> None:
    store = RunStore()
    dataset_id = store.save_dataset(_frame_dataset(_frame()))
    good, _ = store.create_or_resume_run(dataset_id, {"m": 1})
    store.record_row(good, 0, "q1", [MetricResult("faith", 1.0)])
    store.record_row(good, 1, "q2", [not_measurable("faith", "no_temporal_claims", "none")])
    store.set_status(good, "finished")
    bad, _ = store.create_or_resume_run(dataset_id, {"m": 2})
    for row in (0, 1):
        store.record_row(bad, row, f"q{row + 1}", [not_measurable("faith", "judge_error", "HTTP 401")])
    store.set_status(bad, "finished")

    runs = store.list_runs(dataset_id).set_index("id")
    assert runs.loc[bad, "status"] == "failed" and runs.loc[bad, "n_failed"] == 2
    assert runs.loc[good, "status"] == "finished" and runs.loc[good, "n_failed"] == 0
    assert _default_run(store, dataset_id) == good  # the newest run, but failed: not the default
    store.delete_run(good)
    assert _default_run(store, dataset_id) is None


def test_deleting_a_run_keeps_the_verdict_cache_and_a_dataset_says_what_it_takes() -> None:
    store = RunStore()
    VerdictCache(connection=store.connection).put_many({"k": ClaimVerdict("a", Verdict.SUPPORTED).to_record()})
    dataset_id = store.save_dataset(_frame_dataset(_frame()))
    run_id, _ = store.create_or_resume_run(dataset_id, {"m": 1})
    store.record_row(run_id, 0, "q1", [MetricResult("faith", 1.0, details={"claims": [{"claim": "a"}, {"claim": "b"}]})])
    assert store.run_dependents(run_id) == {"results": 1, "claims": 2}
    assert store.dataset_dependents(dataset_id) == {"runs": 1, "results": 1, "claims": 2}
    store.delete_run(run_id)
    assert store.dataset_dependents(dataset_id) == {"runs": 0, "results": 0, "claims": 0}
    assert len(VerdictCache(connection=store.connection)) == 1


def test_run_scores_reads_several_runs_at_once() -> None:
    store = RunStore()
    dataset_id = store.save_dataset(_frame_dataset(_frame()))
    a, _ = store.create_or_resume_run(dataset_id, {"m": 1})
    b, _ = store.create_or_resume_run(dataset_id, {"m": 2})
    store.record_row(a, 0, "q1", [MetricResult("faith", 0.5)])
    store.record_row(b, 0, "q1", [not_measurable("faith", "no_temporal_claims", "none")])
    scores = store.run_scores([a, b])
    assert scores["run_id"].tolist() == [a, b] and scores["score"].isna().tolist() == [False, True]
    assert store.run_scores([]).empty


def test_one_column_or_one_row_of_a_stored_dataset_is_read_without_the_rest() -> None:
    store = RunStore()
    frame = pd.DataFrame({"query_id": ["q1", "q2"], "query": ["When?", None], "contexts": [["a", "b"], []]}, dtype=object)
    dataset_id = store.save_dataset(_frame_dataset(frame))
    assert store.dataset_column(dataset_id, "query") == ["When?", None]
    assert store.dataset_column(dataset_id, "answer") is None
    assert store.dataset_row(dataset_id, 0) == {"query_id": "q1", "query": "When?", "contexts": ["a", "b"]}
    assert store.dataset_row(dataset_id, 1)["contexts"] == []
    with pytest.raises(KeyError, match="no row 2"):
        store.dataset_row(dataset_id, 2)
