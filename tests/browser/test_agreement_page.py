"""The Agreement page in headless Chromium: imported RAGAS scores against ours, and an import
through the page. Same browser rules as tests/browser/test_main_pages.py (Debian's Chromium, skipped when
missing unless TEMPO_EVAL_REQUIRE_BROWSER=1)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.browser.test_main_pages import (
    ARTIFACTS,
    app_page,
    expect,
    nav,
    require_browser,
    shot,
    upload,
    wait_idle,
)
from tests.support.paths import TESTS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DATA = TESTS / "data" / "interop"


@pytest.fixture(scope="module")
def agreement_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    require_browser()
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io import load_dataset
    from tempo_eval.io.foreign import import_foreign_results, load_foreign_results
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
    from tempo_eval.store.db import DB_FILENAME
    from tempo_eval.store.runs import RunStore

    home = tmp_path_factory.mktemp("agreement_home")
    store = RunStore(home / DB_FILENAME)
    import_foreign_results(load_foreign_results(DATA / "ragas_result.csv"), store)
    evaluate(load_dataset(DATA / "ragas_result.csv"), [TemporalNDCG(k=10)], store=store)
    store.close()
    ARTIFACTS.mkdir(exist_ok=True)
    with app_page(home) as (page, _server, _dialogs):
        yield page


def test_imported_ragas_scores_are_set_against_ours(agreement_page) -> None:
    page = agreement_page
    nav(page, "Agreement")
    page.get_by_text("Spearman ρ").first.wait_for()
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .scatterlayer .point').length === 3")
    assert page.get_by_text("Rows where they disagree most").first.is_visible()
    shot(page, "agreement_scatter")


def test_a_deepeval_test_run_is_imported_from_the_page(agreement_page) -> None:
    page = agreement_page
    nav(page, "Agreement")
    page.get_by_text("Import RAGAS or DeepEval scores").first.click()
    upload(page, "Results file", "test_run.json", (DATA / "deepeval_test_run.json").read_bytes(), "application/json")
    page.get_by_role("button", name="Import", exact=True).click()
    wait_idle(page)
    expect(page.get_by_role("combobox", name="Dataset")).to_have_value(re.compile("test_run.json"), timeout=60_000)
    page.get_by_text("1 foreign and 0 of our metrics").first.wait_for()
    shot(page, "agreement_import")
