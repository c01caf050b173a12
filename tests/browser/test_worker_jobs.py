"""Issue 29 in a real browser: an evaluation started on the Evaluate page runs in a worker process,
survives a restart of the app, shows on a second app process over the same workspace; and the
app process never loads torch, whatever page is opened."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from tests.browser.test_main_pages import (
    CHROMIUM,
    LAUNCH_ARGS,
    app_page,
    expect,
    nav,
    require_browser,
    upload,
    use_uploaded_dataset,
    wait_idle,
)
from tests.support.app_server import AppServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = ["Overview", "Datasets", "Evaluate", "Runs", "Results", "Compare runs", "Claims", "Review verdicts",
         "Conversation", "Temporal heatmaps", "Agreement"]
#: shared libraries that only torch (and the model stack over it) brings into a process
MODEL_LIBRARIES = re.compile(r"libtorch|torch/_C\.|tokenizers\.|safetensors")


def store_dataset(home: Path, n_rows: int) -> int:
    """A generated dataset of `n_rows` stored in the workspace `home` (before the app starts)."""
    import os

    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.store.runs import RunStore

    frame = pd.DataFrame({
        "query_id": [f"q{i}" for i in range(n_rows)],
        "query": [f"What happened in {1900 + i % 120}?" for i in range(n_rows)],
        "answer": [f"In {1900 + i % 120} the bridge opened; it closed in {1950 + i % 60}." for i in range(n_rows)],
        "contexts": [[f"The bridge opened in {1900 + i % 120}.", "It closed later."] for i in range(n_rows)],
    })
    home.mkdir(parents=True, exist_ok=True)
    path = home / f"generated_{n_rows}.jsonl"
    frame.to_json(path, orient="records", lines=True)
    old = os.environ.get("TEMPO_EVAL_HOME")
    os.environ["TEMPO_EVAL_HOME"] = str(home)
    try:
        store = RunStore()
        dataset_id = store.save_dataset(load_dataset(path))
        store.close()
    finally:
        os.environ["TEMPO_EVAL_HOME"] = old or ""
    return dataset_id


def model_libraries(pid: int) -> list[str]:
    maps = Path(f"/proc/{pid}/maps").read_text()
    return sorted({line.split()[-1] for line in maps.splitlines() if MODEL_LIBRARIES.search(line)})


def test_no_page_loads_torch_into_the_app_process(tmp_path) -> None:
    require_browser()
    with app_page(tmp_path / "home") as (page, server, _):
        for title in PAGES:
            nav(page, title)
            if title == "Evaluate":
                # the NLI check answers from a worker: it settles while the app stays free of torch
                # the chosen verifier (lexical) in full, the others by their availability: nli's settles
                line = page.get_by_text(re.compile(r"^Also here: ")).first
                expect(line).to_contain_text(re.compile("(❌|✅) nli"), timeout=150_000)
        assert server._process is not None
        assert model_libraries(server._process.pid) == []
        assert "Traceback" not in server.log()


def _start_evaluation(page, url: str, dataset_id: int) -> None:
    page.goto(f"{url}/evaluate?dataset={dataset_id}")
    wait_idle(page)
    page.get_by_role("button", name="Run evaluation").click()
    expect(page.get_by_text(re.compile(r"rows/s|Finished:")).first).to_be_visible(timeout=120_000)


def test_a_job_survives_a_restart_of_the_app_and_shows_on_a_second_app_process(tmp_path) -> None:
    require_browser()
    from playwright.sync_api import sync_playwright

    home = tmp_path / "home"
    dataset_id = store_dataset(home, 20_000)
    progress = re.compile(r"of 20,000 rows|Finished: 20,000 rows")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(60_000)
            with AppServer(home) as first, AppServer(home) as second:  # two app processes, one workspace
                _start_evaluation(page, first.url, dataset_id)
                # the same browser (its session: the job is its own) on the second app process
                other = context.new_page()
                other.goto(f"{second.url}/evaluate?dataset={dataset_id}")
                wait_idle(other)
                expect(other.get_by_text(progress).first).to_be_visible(timeout=60_000)
            # both app processes are gone; the worker is not
            with AppServer(home) as restarted:
                page.goto(f"{restarted.url}/evaluate?dataset={dataset_id}")
                wait_idle(page)
                expect(page.get_by_text(progress).first).to_be_visible(timeout=60_000)
                cancel = page.get_by_role("button", name="Cancel")
                if cancel.count():
                    cancel.first.click()  # leave no worker behind
                    expect(page.get_by_text(re.compile("Cancelled after|Finished:")).first).to_be_visible(timeout=60_000)
                assert "Traceback" not in restarted.log()
        finally:
            browser.close()


def _use_path(page, path: str) -> None:
    page.get_by_text("A file on this machine (path)").first.click()
    wait_idle(page)
    box = page.get_by_role("textbox", name="Path of the dataset file on the app's machine")
    box.fill(path)
    box.press("Enter")
    wait_idle(page)


def write_dataset_file(path: Path, n_rows: int) -> None:
    frame = pd.DataFrame({
        "query_id": [f"q{i}" for i in range(n_rows)],
        "query": [f"What happened in {1900 + i % 120}?" for i in range(n_rows)],
        # every text its own (bridge i): repeated texts are extracted once, and the run would end
        # before the page shows its progress
        "answer": [f"In {1900 + i % 120} bridge {i} opened; it closed in {1950 + i % 60}." for i in range(n_rows)],
        "contexts": [[f"Bridge {i} opened in {1900 + i % 120}.", f"Bridge {i} closed later."] for i in range(n_rows)],
    })
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_json(path, orient="records", lines=True)


def test_a_dataset_named_by_path_is_evaluated_with_a_progress_bar(tmp_path) -> None:
    require_browser()
    home = tmp_path / "home"
    write_dataset_file(home / "logs" / "answers.jsonl", 20_000)
    with app_page(home) as (page, server, _):
        page.goto(f"{server.url}/evaluate")
        wait_idle(page)
        _use_path(page, str(home / "logs" / "answers.jsonl"))
        expect(page.get_by_text(re.compile(r"answers\.jsonl · [\d.]+ MB")).first).to_be_visible()
        page.get_by_text("Temporal NDCG@k").first.click()  # the file has no ranking to score
        wait_idle(page)
        page.get_by_role("button", name="Run evaluation").click()
        expect(page.locator('[data-testid="stProgress"]').first).to_be_visible(timeout=120_000)
        expect(page.get_by_text(re.compile(r"answers\.jsonl: .* of 20,000 rows · [\d,.]+ rows/s")).first).to_be_visible(
            timeout=120_000)
        nav(page, "Runs")  # leave the page and come back: the job is still there
        nav(page, "Evaluate")
        expect(page.get_by_text(re.compile(r"of 20,000 rows|Finished: 20,000 rows")).first).to_be_visible(timeout=60_000)
        expect(page.get_by_text("Finished: 20,000 rows").first).to_be_visible(timeout=400_000)
        assert "Traceback" not in server.log()


def test_paths_outside_the_allowed_folders_are_refused_on_evaluate(tmp_path) -> None:
    require_browser()
    home = tmp_path / "home"
    write_dataset_file(tmp_path / "outside" / "secret.jsonl", 3)
    home.mkdir(parents=True)
    (home / "link.jsonl").symlink_to(tmp_path / "outside" / "secret.jsonl")
    with app_page(home) as (page, server, _):
        page.goto(f"{server.url}/evaluate")
        wait_idle(page)
        for typed, why in ((str(tmp_path / "outside" / "secret.jsonl"), "outside the folders the app may read"),
                           (f"{home}/../outside/secret.jsonl", "contains '..'"),
                           (str(home / "link.jsonl"), "a link to")):
            _use_path(page, typed)
            expect(page.get_by_text(re.compile(r"^Refused:")).first).to_contain_text(why)
            expect(page.get_by_role("button", name="Run evaluation")).to_be_disabled()


def test_a_dataset_uploaded_on_datasets_is_read_by_a_worker_and_listed_after_a_reload(tmp_path) -> None:
    require_browser()
    rows = "\n".join(f"q{i},When did the bridge open?,It opened in {1900 + i}." for i in range(12))
    with app_page(tmp_path / "home") as (page, server, _):
        nav(page, "Datasets")
        page.get_by_role("tab", name="Upload a dataset").click()
        upload(page, "Dataset file", "bridges.csv", f"query_id,query,answer\n{rows}\n".encode())
        expect(page.get_by_text("Read 12 rows from").first).to_be_visible(timeout=120_000)
        use_uploaded_dataset(page, "bridges.csv")
        page.reload()
        wait_idle(page)
        nav(page, "Datasets")
        page.get_by_role("tab", name="Stored datasets").click()
        # the tables draw on a canvas; their cells are in the page for assistive technology
        stored = page.locator('[data-testid="stDataFrame"]:visible [role="gridcell"]')
        expect(stored.filter(has_text=re.compile(r"^bridges\.csv$")).first).to_be_attached(timeout=30_000)
        expect(page.get_by_role("combobox", name="Dataset")).to_have_value(re.compile("bridges.csv"), timeout=30_000)
        page.get_by_text("Uploads read by workers").first.click()
        expect(stored.filter(has_text="Store bridges.csv").first).to_be_attached(timeout=30_000)
        assert "Traceback" not in server.log()
