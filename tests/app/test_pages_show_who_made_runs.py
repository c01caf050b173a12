"""The Runs and Datasets pages show who made each run and dataset ("unknown" where nobody was
recorded) and filter by it: "Mine" keeps the current user's, "Made by" the users chosen."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tempo_eval.store.runs import RunStore
from tests.app.test_pages import (  # noqa: F401
    evaluate_with_lexical,
    open_app,
    upload_dataset,
    worker_in_this_process,
)

# the pages' jobs run by a worker in a thread of this process (an autouse fixture of test_app_pages)
from tests.support.paths import ROOT

APP = str(ROOT / "app.py")


@pytest.fixture(autouse=True)
def _os_user(monkeypatch: pytest.MonkeyPatch) -> None:
    # without sign-in the app acts as the operating-system user (getpass reads these first)
    monkeypatch.setenv("LOGNAME", "os-alice")
    monkeypatch.setenv("USER", "os-alice")


def _runs(at: AppTest) -> dict[str, str]:
    """run name -> by, as the Runs page's table shows them."""
    table = next(d.value for d in at.dataframe if "by" in d.value.columns and "name" in d.value.columns)
    return dict(zip(table["name"], table["by"], strict=True))


def test_the_runs_page_shows_who_made_each_run_and_mine_keeps_the_current_users() -> None:
    at = AppTest.from_file(APP, default_timeout=180).run()  # opens on the bundled sample: stored as os-alice's
    store = RunStore()
    dataset_id = int(store.list_datasets()["id"].iloc[0])
    for name, user in (("alice's run", "os-alice"), ("bob's run", "bob@example.org"), ("old run", None)):
        run_id, _ = store.create_or_resume_run(dataset_id, {"name": name}, name=name, user=user)
        store.set_status(run_id, "finished")
    store.close()
    at.switch_page("views/runs.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert _runs(at) == {"alice's run": "os-alice", "bob's run": "bob@example.org", "old run": "unknown"}
    at.toggle(key="runs_mine").set_value(True).run()
    assert _runs(at) == {"alice's run": "os-alice"}
    assert at.query_params["mine"] == "1"
    at.toggle(key="runs_mine").set_value(False).run()
    assert sorted(at.multiselect(key="runs_by").options) == ["bob@example.org", "os-alice", "unknown"]
    at.multiselect(key="runs_by").set_value(["bob@example.org", "unknown"]).run()
    assert _runs(at) == {"bob's run": "bob@example.org", "old run": "unknown"}
    assert not at.exception, [e.value for e in at.exception]


def test_the_datasets_page_shows_who_stored_each_dataset_and_filters_by_it() -> None:
    at = AppTest.from_file(APP, default_timeout=180).run()
    store = RunStore()
    store.connection.execute("INSERT INTO datasets (name, content_hash, mapping, n_rows, rows) "
                             "VALUES ('before users', 'x', '{}', 0, '{}')")
    store.connection.commit()
    store.close()
    at.switch_page("views/datasets.py").run()
    assert not at.exception, [e.value for e in at.exception]
    stored = next(d.value for d in at.dataframe if "by" in d.value.columns and "name" in d.value.columns)
    by_name = dict(zip(stored["name"], stored["by"], strict=True))
    assert by_name["before users"] == "unknown" and set(by_name.values()) == {"os-alice", "unknown"}
    at.toggle(key="datasets_mine").set_value(True).run()
    stored = next(d.value for d in at.dataframe if "by" in d.value.columns and "name" in d.value.columns)
    assert set(stored["by"]) == {"os-alice"} and "before users" not in set(stored["name"])


def test_an_upload_and_an_evaluation_from_the_pages_are_the_current_users() -> None:
    rows = (ROOT / "data" / "sample" / "temporal_qa.jsonl").read_bytes()
    at = upload_dataset(open_app(), "uploaded.jsonl", rows)
    run_id = evaluate_with_lexical(at, run_name="from the page")
    store = RunStore()
    info = store.run_info(run_id)
    uploaded = store.dataset_info(info["dataset_id"])
    store.close()
    assert uploaded["name"] == "uploaded.jsonl" and uploaded["created_by"] == "os-alice"
    assert info["created_by"] == "os-alice"


def test_the_evaluate_page_says_who_started_another_sessions_evaluation() -> None:
    from tempo_eval.store.jobs import JobQueue

    at = AppTest.from_file(APP, default_timeout=180).run()
    queue = JobQueue()
    # keyed: only the other session's worker may take it, so it stays queued here
    queue.submit("evaluate", {"dataset_id": 1}, label="their.jsonl", session="another-session", user="bob@example.org",
                 needs_key=True)
    queue.close()
    at.switch_page("views/evaluate.py").run()
    assert not at.exception, [e.value for e in at.exception]
    said = [i.value.replace("\\", "").replace("\u2060", "") for i in at.info if "Another session is evaluating" in i.value]
    assert said and "their.jsonl: waiting in the queue, started by bob@example.org." in said[0]
