"""In headless Chromium: two TREC runs opened by path on the Compare page (issue 21)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.test_compare_run_files import QRELS, RUN_A, RUN_B
from tests.browser.test_main_pages import (
    ARTIFACTS,
    app_page,
    expect,
    nav,
    require_browser,
    shot,
    wait_idle,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def home_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, Path]]:
    require_browser()
    ARTIFACTS.mkdir(exist_ok=True)
    home = tmp_path_factory.mktemp("browser_compare_home")
    runs = home / "runs"
    runs.mkdir()
    (runs / "alpha.run").write_text(RUN_A)
    (runs / "beta.run.gz").write_bytes(__import__("gzip").compress(RUN_B.encode()))
    (home / "qrels.txt").write_text(QRELS)
    with app_page(home) as (page, _server, _dialogs):
        yield page, home


def test_two_runs_opened_by_path_are_compared(home_page) -> None:
    page, home = home_page
    nav(page, "Compare runs")
    page.get_by_text("TREC run files (paths on this machine").first.click()
    wait_idle(page)
    box = page.get_by_role("textbox", name="Run files or folders of runs (one path per line)")
    box.fill(f"{home / 'runs' / 'alpha.run'}\n{home / 'runs' / 'beta.run.gz'}")
    box.press("Control+Enter")
    wait_idle(page)
    qrels = page.get_by_role("textbox", name="Qrels file (path)")
    qrels.fill(str(home / "qrels.txt"))
    qrels.press("Enter")
    expect(page.get_by_text(re.compile(r"alpha 2, beta 2; 1 in no run")).first).to_be_visible(timeout=120_000)
    wait_idle(page)
    assert page.locator('[data-testid="stPlotlyChart"]').count() >= 2  # the curves and the scatter
    shot(page, "compare_run_files_by_path")


def test_a_path_outside_the_allowed_folders_is_refused_with_a_message(home_page) -> None:
    page, _home = home_page
    box = page.get_by_role("textbox", name="Run files or folders of runs (one path per line)")
    box.fill("/etc/passwd")
    box.press("Control+Enter")
    expect(page.get_by_text(re.compile("outside the folders the app may read")).first).to_be_visible(timeout=60_000)
