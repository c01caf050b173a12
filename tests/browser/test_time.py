"""Scores over time in headless Chromium: two runs of the bundled answers_over_time.csv are
stored before the server starts; the Time page opens, a point of the curve is clicked and the
rows of its bin open, the first in the row details Results uses."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from tempo_eval.store.db import DB_FILENAME
from tempo_eval.store.runs import RunStore
from tests.browser.test_main_pages import (
    ARTIFACTS,
    app_page,
    expect,
    require_browser,
    shot,
    wait_idle,
)
from tests.support.time_runs import make_time_runs

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def time_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, object, int, int]]:
    require_browser()
    home = tmp_path_factory.mktemp("time_home")
    store = RunStore(home / DB_FILENAME)
    first, second = make_time_runs(store)
    store.close()
    ARTIFACTS.mkdir(exist_ok=True)
    with app_page(home) as (page, server, _dialogs):
        yield page, server, first, second


def test_open_the_time_page_and_click_a_bin(time_page) -> None:
    page, server, first, _ = time_page
    page.goto(f"{server.url}/time?bin=year")
    wait_idle(page)
    chart = page.locator(".js-plotly-plot").first
    chart.locator(".scatterlayer path.point").first.wait_for(state="attached", timeout=60_000)
    expect(page.get_by_text(re.compile(r"the level changes at 2023-01-01"))).to_be_visible()
    heading = page.get_by_role("heading", name=re.compile(r"^Bin \d{4}-\d{2}-\d{2}: \d+ row\(s\) of run #\d+"))
    # a click can be lost while the chart settles or a rerun redraws it: click again, as a user would
    deadline = time.monotonic() + 60
    while not heading.count() and time.monotonic() < deadline:
        box = chart.locator(".scatterlayer path.point").first.bounding_box()
        if box is not None:
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        wait_idle(page)
        page.wait_for_timeout(1_000)
    expect(heading.first).to_be_visible(timeout=1_000)
    expect(page.get_by_text(re.compile(r"^Bin 2020-01-01: 52 row"))).to_be_visible()
    # the bin's first row opens in the row details: its query, with the council's question
    query = page.locator("text=/What did the Harbourtown council decide/ >> visible=true").first
    expect(query).to_be_visible(timeout=60_000)
    shot(page, "time_bin_click")
