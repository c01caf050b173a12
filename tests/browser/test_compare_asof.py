"""As-of metrics of run files on the Compare page in headless Chromium (issue 23), scored by a
worker process (issue 29.1): the data/asof runs and qrels by path, the two date files uploaded;
the as-of columns for both runs, the overlaid age chart, a leaking query opened to its dated
documents; a reload shows the same comparison; a date file with a bad line is named with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser.test_main_pages import (
    ARTIFACTS,
    app_page,
    choose,
    download_by_clicking,
    expect,
    grid_cells,
    nav,
    require_browser,
    shot,
    upload,
    wait_idle,
)
from tests.support.paths import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FIXTURE = ROOT / "data" / "asof"
LIVE_LEAKS = "live: 11 of 26 queries have a document from after their as-of date in the top 10"


def _as_of_columns_for_both_runs(page) -> None:
    expect(page.get_by_text(LIVE_LEAKS).first).to_be_visible(timeout=180_000)
    wait_idle(page)
    table = page.locator('[data-testid="stDataFrame"]').first
    table.scroll_into_view_if_needed()
    expect(table.locator('[role="columnheader"]').first).to_be_attached()
    headers = [h.strip() for h in table.locator('[role="columnheader"]').all_inner_texts()]
    for metric in ("future_leak@10", "stale_evidence@10", "median_age@10", "recency_ndcg@10"):
        assert metric in headers and f"{metric} 95% CI" in headers, headers
    cells = [c.strip() for c in grid_cells(page).all_inner_texts()]
    assert "live" in cells and "snapshot" in cells, cells[:30]
    expect(page.get_by_text(re.compile(r"^snapshot: 0 of 26 queries")).first).to_be_visible()
    chart = page.locator(".js-plotly-plot").filter(has_text="Age of the top 10 documents").first
    chart.scroll_into_view_if_needed()
    expect(chart.locator(".barlayer .trace")).to_have_count(2)  # one histogram per run, overlaid
    expect(chart.locator(".legendtext").filter(has_text="snapshot")).to_have_count(1)


def test_dated_run_files_leaks_ages_and_a_reload(tmp_path: Path) -> None:
    require_browser()
    ARTIFACTS.mkdir(exist_ok=True)
    # the run table is wide (a mean, its CI and the runs it beats, per metric): a wide window shows it whole
    with app_page(tmp_path / "home", viewport={"width": 2600, "height": 1200}) as (page, _server, dialogs):
        nav(page, "Compare runs")
        page.get_by_text("TREC run files (paths on this machine").first.click()
        wait_idle(page)
        upload(page, "…or upload the doc-dates file", "doc-dates.tsv", (FIXTURE / "doc-dates.tsv").read_bytes(),
               mime="text/tab-separated-values")
        upload(page, "…or upload the query-dates file", "query-dates.tsv", (FIXTURE / "query-dates.tsv").read_bytes(),
               mime="text/tab-separated-values")
        box = page.get_by_role("textbox", name="Run files or folders of runs (one path per line)")
        box.fill(f"{FIXTURE / 'run_live.trec'}\n{FIXTURE / 'run_snapshot.trec'}")
        box.press("Control+Enter")
        wait_idle(page)
        qrels = page.get_by_role("textbox", name="Qrels file (path)")
        qrels.fill(str(FIXTURE / "qrels.txt"))
        qrels.press("Enter")
        _as_of_columns_for_both_runs(page)
        expect(page).to_have_url(re.compile(r"cmp=\d+"))
        shot(page, "compare_asof_01_table_and_ages")
        header = Path(download_by_clicking(page, "Table (CSV)").path()).read_text(encoding="utf-8").splitlines()[0]
        assert "future_leak@10,future_leak@10 CI low,future_leak@10 CI high" in header, header
        html = Path(download_by_clicking(page, "Comparison (HTML)").path()).read_text(encoding="utf-8")
        assert "median_age@10 CI high" in html and "snapshot" in html and "<script" in html

        page.get_by_role("combobox", name="Open a leaking query", exact=True).first.scroll_into_view_if_needed()
        choose(page, "Open a leaking query", "w03-uk_pm")
        documents = page.locator('[data-testid="stDataFrame"]').filter(
            has=page.locator('[role="columnheader"]', has_text="flag"))
        expect(documents.first.locator('[role="gridcell"]').filter(has_text=re.compile(r"^bbc-uk_pm-20230126$")).first
               ).to_be_attached()
        cells = [c.strip() for c in documents.first.locator('[role="gridcell"]').all_inner_texts()]
        assert "future" in cells and "undated" in cells and "2023-01-26" in cells and "-6" in cells, cells[:40]
        expect(page.get_by_text(re.compile(r"w03-uk_pm, as of 2023-01-20: 1 future, 0 stale, 1 undated")).first
               ).to_be_visible()
        shot(page, "compare_asof_02_leaking_query")

        page.reload()  # a new session: the address names the comparison, the worker's files hold it
        wait_idle(page)
        _as_of_columns_for_both_runs(page)
        shot(page, "compare_asof_03_after_reload")

        # a query-dates file with a bad date on line 3 is named with its line and value
        dates = page.get_by_role("textbox", name="Query-dates file (path, optional: query_id<TAB>date)")
        dates.fill("")
        dates.press("Enter")
        wait_idle(page)
        bad = (FIXTURE / "query-dates.tsv").read_text().replace("w03-uk_pm\t2023-01-20", "w03-uk_pm\tnext Friday")
        upload(page, "…or upload the query-dates file", "bad-dates.tsv", bad.encode(), mime="text/tab-separated-values")
        message = page.get_by_text(re.compile(r"A date file could not be read: bad-dates\.tsv \(uploaded\), line 3"))
        expect(message.first).to_be_visible(timeout=120_000)
        expect(page.get_by_text(re.compile("'next Friday'")).first).to_be_visible()
        expect(page.get_by_text("Traceback")).to_have_count(0)
        shot(page, "compare_asof_04_bad_date_line")
        assert not dialogs
