"""What a newcomer stumbles on (issue 24), in headless Chromium at 1280 × 800 against the real app.

One fresh workspace, the points in the order a new user meets them: an empty page, a dataset saved
with its index, a conversation file on the wrong page and on the right one, the metrics Evaluate
offers, an evaluation run named after what ran and renamed, its claims counted with NEUTRAL, the
Results and Overview rows opened by a click, Compare of two evaluation runs, heatmap bins, and
nothing cut off. The command-line points (13-15) run the real command line in a subprocess.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pandas as pd
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.test_main_pages import (
    app_page,
    choose,
    click_grid_row,
    expect,
    nav,
    require_browser,
    upload,
    wait_idle,
)
from tests.support.app_server import ROOT, AppServer

INTEROP = ROOT / "tests" / "data" / "interop"
VIEWPORT = {"width": 1280, "height": 800}
#: engine names a user must not meet on the way from an upload to a hallucinated claim
INTERNAL = ("temporal_faithfulness", "ci_low", "n_measurable", "nan_reasons", "tf_reason", "mapping={", "lexical:minilm", "None", "nan")

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, AppServer, list[str]]]:
    require_browser()
    with app_page(tmp_path_factory.mktemp("newcomer_home"), VIEWPORT) as opened:
        yield opened


def main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def grid_texts(page, index: int = 0) -> list[str]:
    """The texts of a table's header and cells (Streamlit's grid keeps them in an accessible DOM)."""
    grid = page.locator('[data-testid="stDataFrame"]:visible').nth(index)
    grid.wait_for()
    return grid.locator('[role="columnheader"], [role="gridcell"]').all_inner_texts()


def assert_no_internal_names(page) -> None:
    text = main_text(page)
    for name in INTERNAL:
        assert not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text), f"{name!r} on the page"


def test_10_an_empty_page_offers_the_button_that_fills_it(app) -> None:
    page, _server, _dialogs = app
    page.get_by_text("Temporal Faithfulness (focus time)").first.wait_for()
    nav(page, "Claims")
    expect(page.get_by_role("link", name="Run an evaluation")).to_be_visible()
    assert "python -m" not in main_text(page) and "tempo-eval " not in main_text(page)


def test_01_a_dataset_saved_with_its_index_has_no_index_column(app) -> None:
    page, _server, _dialogs = app
    frame = pd.read_csv(ROOT / "data" / "sample" / "temporal_qa.csv").head(3)
    nav(page, "Datasets")
    page.get_by_role("tab", name="Upload a dataset").click()
    upload(page, "Dataset file", "with_index.csv", frame.to_csv().encode("utf-8"))
    page.get_by_text("Read 3 rows").first.wait_for()
    assert "saved row index" in main_text(page)
    assert "Unnamed: 0" not in page.get_by_text(re.compile(r"^3 rows · columns")).first.inner_text()


def test_03_a_conversation_file_on_datasets_points_to_the_conversation_page(app) -> None:
    page, _server, _dialogs = app
    upload(page, "Dataset file", "goldens.jsonl", (INTEROP / "deepeval_conversational_goldens.jsonl").read_bytes(),
           "application/json")
    error = page.locator('[data-testid="stAlertContentError"]').first
    expect(error).to_contain_text("conversation")
    assert "mapping=" not in error.inner_text()
    expect(page.get_by_role("link", name="Open the Conversation page")).to_be_visible()


def test_02_the_conversation_page_reads_a_ragas_jsonl_file(app) -> None:
    page, _server, _dialogs = app
    page.get_by_role("link", name="Open the Conversation page").click()
    page.get_by_role("heading", name="Conversation", exact=True).first.wait_for()
    wait_idle(page)
    upload(page, "upload a conversation file", "ragas_multi.jsonl", (INTEROP / "ragas_multi.jsonl").read_bytes(),
           "application/json")
    page.get_by_role("button", name="Evaluate the conversation").click()
    page.locator(".js-plotly-plot").first.wait_for(timeout=300_000)
    wait_idle(page)
    assert "found nothing" not in main_text(page)


def test_04_evaluate_offers_turn_faithfulness_for_a_conversation(app) -> None:
    page, _server, _dialogs = app
    nav(page, "Evaluate")
    expect(page.get_by_text("Turn Faithfulness", exact=True).first).to_be_visible()
    expect(page.get_by_role("checkbox", name="Temporal Faithfulness")).to_have_count(0)
    expect(page.get_by_text(re.compile("Temporal Faithfulness needs an answer column"))).to_be_visible()


#: what Evaluate shows once an evaluation of the sample has ended, naming its run
FINISHED = re.compile(r"Finished: 30 rows evaluated and stored \(run #(\d+)\)")


def _finished_runs(page) -> set[int]:
    """The runs named by the "Finished" messages on the page."""
    texts = page.get_by_text(FINISHED).all_inner_texts()
    return {int(run) for text in texts for run in FINISHED.findall(text)}


def _evaluate_sample(page, mode: str) -> int:
    """Evaluate the sample in `mode` and wait for the new run to finish; returns its id.

    Evaluate shows the dataset's last evaluation until the new one has started (and keeps it on
    screen while the page reruns after the click): waiting for any "Finished" message would
    return at once, before the new run exists."""
    nav(page, "Datasets")
    page.get_by_role("button", name="Open the temporal QA sample").click()
    expect(page.get_by_role("combobox", name="Dataset")).to_have_value(re.compile("temporal QA"), timeout=60_000)
    wait_idle(page)
    nav(page, "Evaluate")
    choose(page, "Mode", mode)
    wait_idle(page)
    before = _finished_runs(page)
    page.get_by_role("button", name="Run evaluation").click()
    deadline = time.monotonic() + 600
    while not (new := _finished_runs(page) - before):
        assert time.monotonic() < deadline, "the evaluation did not finish in 10 minutes"
        page.wait_for_timeout(250)
    wait_idle(page)
    return new.pop()


def test_07_09_a_run_is_named_after_what_ran_and_its_summary_speaks_plainly(app) -> None:
    page, _server, _dialogs = app
    _evaluate_sample(page, "Claims, by the verifier")
    expect(page.locator('[role="columnheader"]').filter(has_text="95% CI low").first).to_be_attached(timeout=60_000)
    texts = " ".join(grid_texts(page))
    for words in ("95% CI low", "rows measured", "why not measured"):
        assert words in texts
    assert "ci_low" not in texts and "n_measurable" not in texts and "None" not in texts
    named = page.locator('[role="gridcell"]').filter(has_text=re.compile("claims TF"))
    expect(named.first).to_be_attached(timeout=60_000)  # "Runs of this dataset"
    runs = " ".join(named.all_inner_texts())
    assert re.search(r"temporal QA.* · claims TF.* · lexical · \d+ \w{3} \d\d:\d\d", runs), runs


def test_06_claims_counts_neutral_and_a_hallucinated_claim_has_no_internal_name(app) -> None:
    page, _server, _dialogs = app
    nav(page, "Claims")
    labels = page.locator('[data-testid="stMetricLabel"]').all_inner_texts()
    assert "Neutral (not stated)" in [label.strip() for label in labels]  # the verdict's one name
    page.get_by_text("Hallucinated only").click()
    wait_idle(page)
    page.locator("mark.te-CONTRADICTED, mark.te-NOT_SUPPORTED").first.wait_for()
    expect(page.get_by_text("Lexical (offline), calibrated").first).to_be_visible()
    assert_no_internal_names(page)


def test_07_a_run_can_be_renamed(app) -> None:
    page, _server, _dialogs = app
    nav(page, "Runs")
    page.get_by_role("combobox", name="Selected runs").click()
    page.get_by_role("option").first.click()
    page.keyboard.press("Escape")
    wait_idle(page)
    field = page.get_by_role("textbox", name="Name")
    field.fill("my first run")
    page.get_by_role("button", name="Save name, note and tags").click()
    wait_idle(page)
    expect(page.get_by_text("my first run").first).to_be_visible()


def test_10_results_and_overview_rows_open_with_a_click_and_one_link_per_page(app) -> None:
    page, _server, _dialogs = app
    nav(page, "Results")
    assert page.get_by_role("spinbutton", name=re.compile("Dataset row")).count() == 0
    click_grid_row(page, 0, 2)
    expect(page.get_by_text(re.compile(r"query q3\b"))).to_be_visible()
    assert page.get_by_text("Link to this view").count() == 1
    nav(page, "Overview")
    assert page.get_by_role("combobox", name="Row").count() == 0
    click_grid_row(page, 0, 1)
    expect(page.get_by_text(re.compile(r"^q2 · "))).to_be_visible()
    assert page.get_by_text("Link to this view").count() == 1


def test_05_compare_two_evaluation_runs_without_the_single_system_notice(app) -> None:
    page, _server, _dialogs = app
    run_id = _evaluate_sample(page, "Focus time (no model)")
    # Evaluate selects the run it saw finish, so the sidebar holds it on every page
    expect(page).to_have_url(re.compile(rf"[?&]runs=(\d+,)*{run_id}\b"), timeout=30_000)
    nav(page, "Compare runs")
    chosen = page.locator('[data-testid="stSidebar"] [data-testid="stMultiSelectTagsContainer"]')
    expect(chosen).to_contain_text(f"#{run_id} · ")
    sidebar_runs = page.get_by_role("combobox", name=re.compile("Evaluation runs"))
    for _ in range(2):  # every run of the dataset (the new one may or may not be selected already)
        sidebar_runs.click()
        options = page.get_by_role("option")
        # the list opens after the click: wait for an option or the empty list's text, since
        # count() does not wait and a slow machine otherwise reads an unopened list as empty
        try:
            options.or_(page.locator("text=/^No results$/ >> visible=true")).first.wait_for(timeout=15_000)
        except PlaywrightTimeout:  # the list of a box whose every run is chosen may not open at all
            page.keyboard.press("Escape")
            break
        if not options.count():
            page.keyboard.press("Escape")
            break
        options.first.click()
        page.keyboard.press("Escape")
        wait_idle(page)
    expect(page.get_by_text("Choose at least two runs")).to_have_count(0)
    expect(page.get_by_text(re.compile("single retrieval system"))).to_have_count(0)


def test_12_heatmap_rows_and_columns_share_their_bins(app) -> None:
    page, _server, _dialogs = app
    nav(page, "Temporal heatmaps")
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .heatmaplayer .hm').length >= 1")
    axes = page.evaluate("() => { const d = document.querySelector('.js-plotly-plot').data[0]; return [d.x, d.y]; }")
    assert axes[0] == axes[1] and len(axes[0]) <= 40


def test_11_nothing_is_cut_off_at_1280_px(app) -> None:
    page, _server, _dialogs = app
    page.get_by_role("combobox", name="Dataset").click()
    options = page.get_by_role("option")
    options.first.wait_for()
    cut = page.evaluate(
        "() => [...document.querySelectorAll('[role=option], [role=option] *')]"
        ".filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)"
    )
    page.keyboard.press("Escape")
    assert cut == []
    headers = page.locator('[data-testid="stDataFrame"]').first.locator('[role="columnheader"]')
    cut = headers.evaluate_all("hs => hs.filter(h => h.scrollWidth > h.clientWidth + 1).map(h => h.textContent)")
    assert cut == []
    nav(page, "Claims")
    cut = page.evaluate(
        "() => [...document.querySelectorAll('[data-testid=stMetricLabel] *, [data-baseweb=tag] span')]"
        ".filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)"
    )
    assert cut == []
