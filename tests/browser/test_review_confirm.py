"""Human review in headless Chromium: confirm a claim's verdict on Claims with a real click, then
see the agreement on the Review page. The run is written to the workspace before the server starts
(no evaluation needed)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.browser.test_main_pages import ARTIFACTS, app_page, expect, nav, require_browser, shot
from tests.support.app_server import AppServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def review_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, AppServer, int]]:
    require_browser()
    from tests.app import test_claims_page

    home = tmp_path_factory.mktemp("review_home")
    previous = os.environ.get("TEMPO_EVAL_HOME")
    os.environ["TEMPO_EVAL_HOME"] = str(home)
    try:
        run_id = test_claims_page.stored_run()
    finally:
        if previous is None:
            os.environ.pop("TEMPO_EVAL_HOME", None)
        else:
            os.environ["TEMPO_EVAL_HOME"] = previous
    ARTIFACTS.mkdir(exist_ok=True)
    with app_page(home) as (page, server, _dialogs):
        yield page, server, run_id


def test_confirm_a_verdict_then_review_the_agreement(review_page) -> None:
    page, server, run_id = review_page
    page.goto(f"{server.url}/claims?runs={run_id}")
    expect(page.get_by_text("Your verdict")).to_be_visible(timeout=60_000)
    page.get_by_role("button", name="Save label").click()
    expect(page.get_by_text("Stored human label")).to_be_visible(timeout=60_000)
    shot(page, "review-claims-labelled")
    nav(page, "Review verdicts")
    expect(page.get_by_text("Agreement with the human labels")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("1 of 4 claims of the selected runs carry a human label")).to_be_visible(timeout=60_000)
    shot(page, "review-agreement")
