"""Issue 29 in a real browser, with one evaluation at a time (TEMPO_EVAL_MAX_JOBS=1, as on a
2-core machine): an upload read on Datasets starts and finishes while an evaluation runs; the
evaluation shows in a second session and after a reload; a running read is cancelled from its
page and leaves no dataset; the evaluation is cancelled from its page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tempo_eval.store.jobs import JobQueue
from tests.browser.test_main_pages import app_page, expect, nav, require_browser, upload, wait_idle
from tests.support.jobs import write_rows

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _store(home, n_rows: int) -> int:
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.store.runs import RunStore

    store = RunStore()
    try:
        return store.save_dataset(load_dataset(write_rows(home / "long.jsonl", n_rows)))
    finally:
        store.close()


def test_an_upload_is_read_beside_a_running_evaluation_and_a_running_read_is_cancelled(tmp_path, monkeypatch) -> None:
    require_browser()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("TEMPO_EVAL_HOME", str(home))
    monkeypatch.setenv("TEMPO_EVAL_MAX_JOBS", "1")
    monkeypatch.setenv("TEMPO_EVAL_PAGE_WAIT_S", "1")  # the page shows a read in progress at once
    dataset_id = _store(home, 200_000)
    big = write_rows(tmp_path / "big.jsonl", 300_000, word="tunnel")  # 70 MB: given by its path
    with app_page(home) as (page, server, _):
        page.goto(f"{server.url}/evaluate?dataset={dataset_id}")
        wait_idle(page)
        page.get_by_role("button", name="Run evaluation").click()
        progress = re.compile(r"of 200,000 rows")
        expect(page.get_by_text(progress).first).to_be_visible(timeout=120_000)
        queue = JobQueue()  # the workspace of TEMPO_EVAL_HOME, as the app's
        evaluation = queue.jobs(kind="evaluate")[0]

        # a second session, and a reload, find the evaluation running
        second = page.context.browser.new_page()
        second.goto(f"{server.url}/evaluate?dataset={dataset_id}")
        expect(second.get_by_text(progress).first).to_be_visible(timeout=120_000)
        second.close()
        page.reload()
        expect(page.get_by_text(progress).first).to_be_visible(timeout=120_000)

        # an upload is read while the evaluation runs: it does not wait behind it
        nav(page, "Datasets")
        page.get_by_role("tab", name="Upload a dataset").click()
        rows = "\n".join(f"q{i},When did the bridge open?,It opened in {1900 + i}." for i in range(12))
        upload(page, "Dataset file", "bridges.csv", f"query_id,query,answer\n{rows}\n".encode())
        expect(page.get_by_text("Read 12 rows from").first).to_be_visible(timeout=120_000)
        assert queue.get(evaluation["id"])["status"] == "running"

        # a big upload, cancelled while a worker reads it
        uploader = page.locator('[data-testid="stFileUploader"]').filter(has_text="Dataset file").first
        uploader.locator('input[type="file"]').set_input_files(str(big))
        expect(page.get_by_text(re.compile(r"Read big\.jsonl: a worker is reading it")).first).to_be_visible(
            timeout=120_000)
        page.get_by_role("button", name="Cancel").first.click()
        expect(page.get_by_text("Read big.jsonl: cancelled; nothing of it was stored.").first).to_be_visible(
            timeout=120_000)
        read = queue.jobs(kind="dataset_upload")[0]
        assert read["status"] == "cancelled" and read["done"] < 300_000, read  # seen at its first batch or a later one
        assert queue.get(evaluation["id"])["status"] == "running"
        assert not Path(read["arguments"]["path"]).exists()  # the cancelled read's upload is removed
        expect(page.get_by_role("button", name="Read it again")).to_be_visible()
        page.get_by_role("tab", name="Stored datasets").click()
        stored = page.locator('[data-testid="stDataFrame"]:visible [role="gridcell"]')
        expect(stored.filter(has_text=re.compile(r"^long\.jsonl$")).first).to_be_attached(timeout=30_000)
        assert stored.filter(has_text=re.compile(r"^big\.jsonl$")).count() == 0

        # the evaluation is cancelled from its page
        nav(page, "Evaluate")
        page.get_by_role("button", name="Cancel").first.click()
        expect(page.get_by_text(re.compile(r"^Cancelled after")).first).to_be_visible(timeout=120_000)
        assert queue.get(evaluation["id"])["status"] == "cancelled"
        queue.close()
        assert "Traceback" not in server.log()
