"""The Evaluate page's jobs belong to the browser session that queued them, in a real browser
with two sessions (two browser contexts, each with its own cookies) on one app and workspace:

- while one session evaluates a file, the other sees that an evaluation runs in the workspace
  (not as its own dataset's job), has no Cancel for it, and can run its own;
- the owner can cancel its own; after its worker is killed, a reload (and a brand-new session)
  lists the interrupted file evaluation with Resume, and resuming from the new session works:
  the job's row holds all the worker needs, and the new session owns it from then on."""

from __future__ import annotations

import os
import re
import signal
import time

import pytest

from tempo_eval.store.jobs import JobQueue
from tests.browser.test_main_pages import app_page, expect, require_browser, wait_idle
from tests.browser.test_worker_jobs import _use_path, store_dataset
from tests.support.jobs import write_rows

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROWS = 200_000
PROGRESS = re.compile(rf"big\.jsonl: .* of {ROWS:,} rows · [\d,.]+ rows/s")


def _evaluate_page(browser, url: str, dataset_id: int):
    context = browser.new_context(viewport={"width": 1400, "height": 1100})  # a session of its own
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{url}/evaluate?dataset={dataset_id}")
    wait_idle(page)
    return page


def _wait_for(condition, seconds: float = 120.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError("timed out")


def test_a_job_belongs_to_its_session_and_an_interrupted_one_resumes_after_a_reload(tmp_path, monkeypatch) -> None:
    require_browser()
    home = tmp_path / "home"
    dataset_id = store_dataset(home, 20)
    (home / "logs").mkdir()
    big = write_rows(home / "logs" / "big.jsonl", ROWS)
    monkeypatch.setenv("TEMPO_EVAL_HOME", str(home))
    queue = JobQueue()
    with app_page(home) as (first, server, _):
        browser = first.context.browser
        try:
            # session A (the helper's page: a browser context of its own) evaluates a file given by its path
            first.goto(f"{server.url}/evaluate?dataset={dataset_id}")
            wait_idle(first)
            _use_path(first, str(big))
            first.get_by_role("button", name="Run evaluation").click()
            expect(first.get_by_text(PROGRESS).first).to_be_visible(timeout=120_000)
            owned = queue.jobs(kind="evaluate")[0]
            assert owned["arguments"]["path"] == str(big)
            expect(first.get_by_role("button", name="Cancel")).to_be_visible()

            # session B, on the same dataset: sees it runs in the workspace, cannot cancel it, queues its own
            second = _evaluate_page(browser, server.url, dataset_id)
            other = re.compile(r"Another session is evaluating in this workspace: big\.jsonl")
            expect(second.get_by_text(other).first).to_be_visible(timeout=60_000)
            expect(second.get_by_role("button", name="Cancel")).to_have_count(0)
            run = second.get_by_role("button", name="Run evaluation")
            expect(run).to_be_enabled()
            run.click()
            wait_idle(second)
            mine = _wait_for(lambda: (j := queue.jobs(kind="evaluate")[0])["id"] != owned["id"] and j)
            assert mine["session"] and owned["session"] and mine["session"] != owned["session"]
            assert queue.get(owned["id"])["status"] == "running"  # B's run did not touch A's job
            expect(second.get_by_text(other).first).to_be_visible()
            expect(first.get_by_role("button", name="Cancel")).to_be_visible()  # still A's to cancel

            # A's worker dies: B's run goes on, and a reload of A lists the interrupted file evaluation with Resume
            pid = _wait_for(lambda: queue.get(owned["id"])["done"] and queue.get(owned["id"])["pid"])
            os.kill(pid, signal.SIGKILL)
            expect(second.get_by_text("Finished: 20 rows").first).to_be_visible(timeout=180_000)
            first.reload()
            wait_idle(first)
            stopped = re.compile(r"big\.jsonl: .*the worker stopped after")
            expect(first.get_by_text(stopped).first).to_be_visible(timeout=60_000)
            expect(first.get_by_role("button", name="Resume")).to_be_visible()
            assert queue.get(owned["id"])["status"] == "interrupted"

            # a brand-new session lists it too, and resumes it: it becomes that session's job
            third = _evaluate_page(browser, server.url, dataset_id)
            expect(third.get_by_text(stopped).first).to_be_visible(timeout=60_000)
            third.get_by_role("button", name="Resume").click()
            wait_idle(third)
            expect(third.get_by_text(PROGRESS).first).to_be_visible(timeout=120_000)
            resumed = _wait_for(lambda: (j := queue.get(owned["id"]))["status"] == "running" and j)
            # rows done written by the new worker (after it took the job), not the old worker's last figures
            _wait_for(lambda: (j := queue.get(owned["id"]))["done"] > 0 and j["updated_at"] > j["started_at"], 240)
            expect(third.get_by_text(PROGRESS).first).to_be_visible(timeout=60_000)
            assert resumed["session"] not in (owned["session"], mine["session"])
            expect(third.get_by_role("button", name="Cancel")).to_be_visible()
            first.reload()
            wait_idle(first)
            expect(first.get_by_text(re.compile(r"Another session is evaluating in this workspace: big\.jsonl"))
                   .first).to_be_visible(timeout=60_000)
            expect(first.get_by_role("button", name="Cancel")).to_have_count(0)

            # the owner cancels it (no worker is left behind)
            third.get_by_role("button", name="Cancel").first.click()
            expect(third.get_by_text(re.compile(r"^Cancelled after|^Finished:")).first).to_be_visible(timeout=120_000)
            assert "Traceback" not in server.log()
        finally:
            queue.close()
