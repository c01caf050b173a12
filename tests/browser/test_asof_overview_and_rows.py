"""As-of metrics in headless Chromium: upload the dated news fixture, see the as-of section of the
Overview with its age distribution, evaluate the as-of metrics, and open a row's dated documents on
Results."""

from __future__ import annotations

import re

import pytest

from tests.browser.test_main_pages import (
    ARTIFACTS,
    app_page,
    click_until,
    nav,
    require_browser,
    shot,
    upload,
    use_uploaded_dataset,
    wait_idle,
)
from tests.support.paths import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FIXTURE = ROOT / "data" / "asof" / "news_asof.jsonl"


def test_upload_the_dated_fixture_see_its_ages_and_evaluate_the_as_of_metrics(tmp_path) -> None:
    require_browser()
    ARTIFACTS.mkdir(exist_ok=True)
    with app_page(tmp_path / "home") as (page, _server, dialogs):
        nav(page, "Datasets")
        page.get_by_role("tab", name="Upload a dataset").click()
        upload(page, "Dataset file", "news_asof.jsonl", FIXTURE.read_bytes(), mime="application/json")
        page.get_by_text("Read 52 rows").first.wait_for(timeout=120_000)
        use_uploaded_dataset(page, "news_asof.jsonl")

        nav(page, "Overview")
        page.get_by_role("heading", name="As-of: when the evidence was published").wait_for()
        page.get_by_text(re.compile(r"were published after their question's as-of date")).first.wait_for()
        chart = page.locator(".js-plotly-plot").filter(has_text="Age of the top 10 documents").first
        chart.scroll_into_view_if_needed()
        # one bar trace per retriever, overlaid
        page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .barlayer .trace').length >= 2")
        shot(page, "asof_01_overview_ages")

        nav(page, "Evaluate")
        for label in ("Temporal Faithfulness", "Temporal NDCG@k"):
            box = page.get_by_role("checkbox", name=label)
            if box.is_checked():
                box.click(force=True)
                wait_idle(page)
        click_until(page, "Run evaluation", page.get_by_text(re.compile(r"Finished: 52 rows evaluated")),
                    timeout_s=240)
        shot(page, "asof_02_evaluated")

        # one row in detail: its dated documents, each counted as future, stale, undated or dated
        nav(page, "Results")
        page.get_by_text(re.compile(r"Dated documents")).first.wait_for(timeout=120_000)
        documents = page.locator('[data-testid="stDataFrame"]').filter(
            has=page.locator('[role="columnheader"]', has_text="counted as")).first
        documents.scroll_into_view_if_needed()
        headers = documents.locator('[role="columnheader"]').all_inner_texts()
        assert {"rank", "doc", "published", "age (days)", "counted as"} <= {h.strip() for h in headers}, headers
        cells = {c.strip() for c in documents.locator('[role="gridcell"]').all_inner_texts()}
        assert cells & {"future", "stale", "dated", "undated"}, cells
        # each score's arithmetic below it (escaped text: a word joiner follows "@")
        page.get_by_text(re.compile(r"Future leak@\u2060?10 = \d+ future of \d+ dated")).first.wait_for()
        shot(page, "asof_03_results_row")

        assert not dialogs
