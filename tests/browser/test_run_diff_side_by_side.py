"""Run diff in headless Chromium: two runs of the sample (one with some answers' years changed)
are stored before the server starts; the diff opens, a regressed row is clicked and both versions
of it show side by side."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tempo_eval.store.db import DB_FILENAME
from tempo_eval.store.runs import RunStore
from tests.browser.test_main_pages import (
    ARTIFACTS,
    app_page,
    expect,
    grid_cells,
    require_browser,
    shot,
    wait_idle,
)
from tests.support.app_server import AppServer
from tests.support.sample_runs import make_sample_runs

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def diff_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, AppServer, int, int]]:
    require_browser()
    home = tmp_path_factory.mktemp("diff_home")
    store = RunStore(home / DB_FILENAME)
    baseline, candidate = make_sample_runs(store, home)
    store.close()
    ARTIFACTS.mkdir(exist_ok=True)
    with app_page(home) as (page, server, _dialogs):
        yield page, server, baseline, candidate


def test_open_the_diff_click_a_regressed_row_and_see_both_versions(diff_page) -> None:
    page, server, baseline, candidate = diff_page
    page.goto(f"{server.url}/run_diff?base={baseline}&cand={candidate}")
    page.get_by_role("heading", name="Rows, worst regression first").wait_for(timeout=60_000)
    wait_idle(page)
    rows = page.locator('[data-testid="stDataFrame"]').filter(has=page.locator('[role="columnheader"]', has_text="candidate score"))
    expect(rows.first.locator('[role="gridcell"]').filter(has_text="q1").first).to_be_attached(timeout=30_000)
    # the grid draws on a canvas: a click on the first data row's row marker selects it
    grid = rows.first
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 18, box["y"] + 35 + 17)  # header 35 px, then the first row
    both = page.get_by_role("heading", name="Both versions of the row")
    expect(both).to_be_visible(timeout=60_000)
    wait_idle(page)
    # each run by its label: id, what ran, then the name it was given
    paragraphs = page.locator('[data-testid="stMain"] p')
    expect(paragraphs.filter(has_text=re.compile(r"^Baseline\s*· #\d+ · .*sample baseline")).first).to_be_visible()
    expect(paragraphs.filter(has_text=re.compile(r"^Candidate\s*· #\d+ · .*years changed")).first).to_be_visible()
    # the baseline answer has 1666 found in the contexts, the candidate's 1766 is not there
    baseline_html = page.locator('mark.te-grounded').filter(has_text="1666")
    candidate_html = page.locator('mark.te-ungrounded').filter(has_text="1766")
    expect(baseline_html.first).to_be_visible()
    expect(candidate_html.first).to_be_visible()
    assert grid_cells(page).count() > 0
    shot(page, "run_diff_both_versions")
