"""A team's set-up on one PostgreSQL: two app processes (two machines' worth: each its own
workspace folder, one shared files folder) and several workers on one database.

An evaluation queued from the first app's Evaluate page is run once, by one worker, while two more
workers started beside the app's own race to claim it (`FOR UPDATE SKIP LOCKED`); the run it
makes then shows on the Runs page of both apps, in real browsers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.browser.test_evaluate_sessions import _wait_for
from tests.browser.test_main_pages import CHROMIUM, LAUNCH_ARGS, expect, require_browser, wait_idle
from tests.support.app_server import AppServer
from tests.support.paths import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROWS = 40


def _dataset(folder: Path) -> int:
    """A small generated dataset stored in the PostgreSQL workspace (TEMPO_EVAL_DB is set)."""
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.store.runs import RunStore

    frame = pd.DataFrame({
        "query_id": [f"q{i}" for i in range(ROWS)],
        "query": [f"When did the bridge open, question {i}?" for i in range(ROWS)],
        "answer": [f"The bridge opened in {1900 + i}." for i in range(ROWS)],
        "contexts": [[f"The bridge opened in {1900 + i}."] for i in range(ROWS)],
    })
    path = folder / "bridges.jsonl"
    frame.to_json(path, orient="records", lines=True)
    store = RunStore()
    try:
        return store.save_dataset(load_dataset(path), user="setup")
    finally:
        store.close()


def _worker(home: Path) -> subprocess.Popen[str]:
    """A worker process of its own (as on a third machine): takes queued jobs until none is left."""
    return subprocess.Popen([sys.executable, "-m", "tempo_eval", "job", "run", "--workspace", str(home), "--limit", "1"],
                            cwd=ROOT, env={**os.environ, "TEMPO_EVAL_HOME": str(home)}, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def test_a_job_queued_on_one_app_runs_once_and_shows_on_both(postgres_url: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    require_browser()
    from playwright.sync_api import sync_playwright

    from tempo_eval.store.jobs import JobQueue
    from tempo_eval.store.runs import RunStore

    files = tmp_path / "shared-files"  # the shared volume of a team's machines
    files.mkdir()
    monkeypatch.setenv("TEMPO_EVAL_FILES", str(files))
    dataset_id = _dataset(tmp_path)
    homes = [tmp_path / "machine-a", tmp_path / "machine-b"]
    with AppServer(homes[0], wait=False) as first, AppServer(homes[1], wait=False) as second, \
            sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        first.wait_healthy()
        second.wait_healthy()
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        page.set_default_timeout(90_000)
        page.goto(f"{first.url}/evaluate?dataset={dataset_id}")
        wait_idle(page)
        page.get_by_role("button", name="Run evaluation").click()
        queue = JobQueue()
        job = _wait_for(lambda: next(iter(queue.jobs(kind="evaluate")), None), 60)
        extra = [_worker(homes[0]), _worker(homes[1])]  # two more workers race the app's for the job
        try:
            ended = _wait_for(lambda: (j := queue.get(job["id"]))["status"] in ("finished", "failed") and j, 180)
            for worker in extra:
                worker.wait(timeout=120)
        finally:
            for worker in extra:
                if worker.poll() is None:
                    worker.kill()
        assert ended["status"] == "finished", ended.get("error")
        logs = [worker.stdout.read() for worker in extra]
        app_workers = (files / "logs" / "workers.log").read_text(encoding="utf-8", errors="replace")
        started = re.compile(rf"job {job['id']} \(evaluate\) started")
        assert sum(len(started.findall(text)) for text in [*logs, app_workers]) == 1, (logs, app_workers[-2000:])
        assert [job["id"] for job in queue.jobs(kind="evaluate")] == [job["id"]]  # queued once
        store = RunStore()
        runs = store.list_runs(dataset_id)
        store.close()
        assert len(runs) == 1 and int(runs.iloc[0]["id"]) == ended["run_id"]
        run_id = int(ended["run_id"])

        # both apps show it: the one that queued it and the other machine's
        for server in (first, second):
            other = browser.new_page(viewport={"width": 1400, "height": 1100})
            other.set_default_timeout(90_000)
            other.goto(f"{server.url}/runs?dataset={dataset_id}")
            wait_idle(other)
            expect(other.get_by_text(re.compile(rf"#{run_id}\b")).first).to_be_visible(timeout=90_000)
            other.close()
        browser.close()
