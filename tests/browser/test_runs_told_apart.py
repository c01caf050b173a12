"""Three things a newcomer tripped on (issue 41), in headless Chromium at 1280 × 800: runs with long
names that share their start look alike wherever a run is named; the Overview shows focus-time
figures with no word of the chosen runs' own; and Evaluate is a very tall page whose Mode labels
are cut, with the NLI and judge fields shown while the offline verifier is chosen.

Two runs of the bundled sample are stored before the server starts: claims checked by the lexical
verifier, and focus times, named by long names that differ only at their end."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tempo_eval.engine.runner import evaluate
from tempo_eval.io.dataset import load_dataset
from tempo_eval.metrics import TemporalFaithfulness
from tempo_eval.store.db import DB_FILENAME
from tempo_eval.store.runs import RunStore
from tempo_eval.verify import make_verifier
from tempo_eval_app.samples import SAMPLE_DIR, SAMPLE_QA_NAME
from tests.browser.test_main_pages import app_page, expect, require_browser, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

VIEWPORT = {"width": 1280, "height": 800}
PREFIX = "Quarterly retriever comparison for the board report, prompt "
CLAIMS_NAME, FOCUS_NAME = PREFIX + "version A", PREFIX + "version B"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, object, int, int]]:
    require_browser()
    home = tmp_path_factory.mktemp("told_apart_home")
    store = RunStore(home / DB_FILENAME)
    dataset = load_dataset(str(SAMPLE_DIR / "temporal_qa.csv"))
    dataset.name = SAMPLE_QA_NAME
    claims = evaluate(dataset, [TemporalFaithfulness(verifier=make_verifier("lexical"))], store=store,
                      run_name=CLAIMS_NAME)
    focus = evaluate(dataset, [TemporalFaithfulness()], store=store, run_name=FOCUS_NAME)
    dataset_id = int(store.run_info(int(claims.run_id))["dataset_id"])
    store.close()
    with app_page(home, VIEWPORT) as (page, server, _dialogs):
        yield page, server, dataset_id, (int(claims.run_id), int(focus.run_id))


def _main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def test_two_runs_with_the_same_long_start_are_told_apart_on_run_diff_and_in_the_sidebar(app) -> None:
    page, server, dataset_id, (claims, focus) = app
    page.goto(f"{server.url}/run_diff?base={claims}&cand={focus}&dataset={dataset_id}&runs={claims},{focus}")
    wait_idle(page)
    text = _main_text(page)
    claims_label, focus_label = f"#{claims} · claims TF · lexical", f"#{focus} · focus-time TF"
    assert claims_label in text and focus_label in text, text[:2000]
    # the selectors show the labels whole at the start, before any cut
    for box in page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').all()[:2]:
        shown = box.locator('input[role="combobox"]').input_value()
        assert re.search(rf"#({claims}|{focus}) · (claims|focus-time) TF", shown), shown
    # the sidebar's chips: each run's id and what ran come first
    sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
    assert f"#{claims} · claims TF · lexical · Quarterly" in sidebar, sidebar
    assert f"#{focus} · focus-time TF · Quarterly" in sidebar, sidebar


def test_the_overview_shows_the_chosen_runs_means_and_says_which_figures_are_computed_here(app) -> None:
    page, server, dataset_id, (claims, focus) = app
    page.goto(f"{server.url}/?dataset={dataset_id}&runs={claims}")
    page.get_by_text("Selected runs, as stored").first.wait_for(timeout=60_000)
    wait_idle(page)
    text = _main_text(page)
    assert "Computed here in focus-time mode" in text
    table = page.locator('[data-testid="stTable"]').first
    expect(table).to_contain_text(f"#{claims} · claims TF · lexical", timeout=30_000)
    # the claims run's own Temporal Faithfulness, beside the focus-time 0.800 computed here
    expect(table).to_contain_text("0.742")


def test_evaluate_is_short_its_mode_labels_whole_and_the_offline_verifier_shows_no_model_fields(app) -> None:
    page, server, dataset_id, _runs = app
    page.goto(f"{server.url}/evaluate?dataset={dataset_id}")
    page.get_by_role("button", name="Run evaluation").wait_for(timeout=60_000)
    wait_idle(page)
    # the offline verifier is chosen: the NLI model and the judge's fields are folded away
    expect(page.get_by_label("NLI model (hub id or local path)")).to_be_hidden()
    expect(page.get_by_label("Judge model")).to_be_hidden()
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"] [data-testid=\"stMainBlockContainer\"]')"
                           ".scrollHeight")
    assert height < 1800, height  # 2,165 px on main 689f33d (issue 41), 1,640 now
    # each Mode box shows its whole choice, not a cut one
    for box in page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').filter(has_text=re.compile("Mode")).all():
        value = box.locator('input[role="combobox"]')
        cut = value.evaluate("e => e.scrollWidth > e.clientWidth + 1")
        assert not cut, value.input_value()
    # choosing the judge opens its fold
    page.get_by_text("LLM judge", exact=True).click()
    wait_idle(page)
    expect(page.get_by_label("Judge model")).to_be_visible()
