"""End to end in headless Chromium: the real `streamlit run`, a real browser, real clicks.

Upload a CSV, evaluate it with the offline (lexical) verifier, see the claims highlighted, see the
comparison chart drawn, and check that a dataset full of HTML and script renders as inert text.
Screenshots go to test-artifacts/. Chromium comes from Debian (/usr/bin/chromium), never from a
browser download: without it the test is skipped, unless TEMPO_EVAL_REQUIRE_BROWSER=1 (CI), where a
missing browser is a failure.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.app_server import ROOT, AppServer

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
SAMPLE = ROOT / "data" / "sample"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _browser_missing() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed"
    return None


@pytest.fixture(scope="module")
def browser_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, AppServer, list[str]]]:
    missing = _browser_missing()
    if missing:
        if os.environ.get("TEMPO_EVAL_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests are required here but {missing}")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    home = tmp_path_factory.mktemp("browser_home")
    with AppServer(home) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        try:
            page.goto(server.url)
            yield page, server, dialogs
        except Exception:
            print(server.log()[-4000:])
            raise
        finally:
            browser.close()


def expect(locator):
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def shot(page, name: str) -> None:
    page.wait_for_timeout(800)  # let charts finish their transitions
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def nav(page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"] a').filter(has_text=title).first.click()
    try:
        page.get_by_role("heading", name=title, exact=True).first.wait_for()
    except Exception:
        shot(page, f"failed_nav_{title}")
        raise
    wait_idle(page)


def wait_idle(page) -> None:
    """Wait until the script run finished (the status widget leaves 'Running...')."""
    page.wait_for_timeout(300)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=120_000)


def upload(page, label: str, name: str, content: bytes, mime: str = "text/csv") -> None:
    uploader = page.locator('[data-testid="stFileUploader"]').filter(has_text=label).first
    uploader.locator('input[type="file"]').set_input_files({"name": name, "mimeType": mime, "buffer": content})
    wait_idle(page)


def choose(page, label: str, option: str) -> None:
    """Pick an option of a Streamlit selectbox by its label."""
    page.get_by_role("combobox", name=label, exact=True).first.click()
    page.get_by_role("option", name=option).first.click()
    wait_idle(page)


def use_uploaded_dataset(page, name: str) -> None:
    """Click "Use this dataset" and wait until the sidebar shows it as the active dataset.

    Navigating before that run has finished can drop the button's click (a new run replaces it),
    so the test waits for the visible outcome rather than for a fixed time.
    """
    page.get_by_role("button", name="Use this dataset").click()
    expect(page.get_by_role("combobox", name="Dataset")).to_have_value(
        re.compile(re.escape(name)), timeout=60_000
    )
    wait_idle(page)


def small_csv(rows: int) -> bytes:
    with (SAMPLE / "temporal_qa.csv").open(encoding="utf-8") as handle:
        records = list(csv.DictReader(handle))[:rows]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(records[0]))
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue().encode("utf-8")


def test_the_app_opens_on_the_sample_with_its_focus_time_metrics(browser_page) -> None:
    page, _server, dialogs = browser_page
    page.get_by_text("Temporal Faithfulness (focus time)").first.wait_for()
    wait_idle(page)
    assert page.locator('[data-testid="stMetricValue"]').first.inner_text().strip() not in ("", "—")
    shot(page, "01_overview_sample")
    assert not dialogs


def test_upload_evaluate_with_the_lexical_verifier_and_see_the_highlighted_claims(browser_page) -> None:
    page, _server, dialogs = browser_page
    nav(page, "Datasets")
    page.get_by_role("tab", name="Upload a dataset").click()
    upload(page, "Dataset file", "twelve_questions.csv", small_csv(12))
    page.get_by_text("Read 12 rows").first.wait_for()
    shot(page, "02_upload_mapping_preview")
    use_uploaded_dataset(page, "twelve_questions.csv")

    nav(page, "Evaluate")
    choose(page, "Mode", "Claims: each temporal sentence checked by the verifier")
    page.get_by_role("button", name="Run evaluation").click()
    page.get_by_text(re.compile(r"Finished: 12 rows evaluated")).first.wait_for(timeout=240_000)
    wait_idle(page)
    shot(page, "03_evaluate_finished")

    nav(page, "Claims")
    shot(page, "04_claims")
    marks = page.locator("mark[class^='te-']")
    marks.first.wait_for()
    classes = {marks.nth(i).get_attribute("class") for i in range(marks.count())}
    verdict_marks = classes & {"te-SUPPORTED", "te-PARTIALLY_SUPPORTED", "te-NEUTRAL", "te-NOT_SUPPORTED", "te-CONTRADICTED"}
    assert verdict_marks, classes
    page.get_by_text("Hallucinated only").click()
    wait_idle(page)
    answer_marks = page.locator("mark.te-CONTRADICTED, mark.te-NOT_SUPPORTED")
    answer_marks.first.wait_for()
    answer_marks.first.scroll_into_view_if_needed()
    background = answer_marks.first.evaluate("el => getComputedStyle(el).backgroundColor")
    assert background not in ("rgba(0, 0, 0, 0)", "transparent")
    shot(page, "05_claims_hallucinated")
    assert not dialogs


def test_the_comparison_chart_is_drawn(browser_page) -> None:
    page, _server, dialogs = browser_page
    nav(page, "Compare runs")
    page.get_by_role("button", name="Open the BM25 vs dense sample runs").click()
    wait_idle(page)
    curves = page.locator(".js-plotly-plot").first
    curves.wait_for()
    page.get_by_text("NDCG@k curves").first.wait_for()
    # plotly draws one path per line and band; an empty chart has none
    page.wait_for_function(
        "() => document.querySelectorAll('.js-plotly-plot .scatterlayer .trace path').length >= 4"
    )
    assert page.get_by_text("bm25").first.is_visible()
    shot(page, "06_compare_curves")
    page.get_by_role("heading", name="Drill-down").scroll_into_view_if_needed()
    shot(page, "07_compare_scatter_drilldown")
    assert not dialogs


def test_a_dataset_of_script_and_html_renders_as_inert_text(browser_page) -> None:
    page, _server, dialogs = browser_page
    nav(page, "Datasets")
    page.get_by_role("tab", name="Upload a dataset").click()
    upload(page, "Dataset file", "xss_answers.csv", (SAMPLE / "xss_answers.csv").read_bytes())
    page.get_by_text("Read 3 rows").first.wait_for()
    use_uploaded_dataset(page, "xss_answers.csv")
    nav(page, "Overview")
    page.get_by_text("<script>alert(1)</script>").first.wait_for()
    shot(page, "08_xss_row_x1")
    choose(page, "Row", "x2 · When did Apollo 11 land on the Moon?")
    page.get_by_text("<img src=x onerror=alert(1)>", exact=False).first.wait_for()
    shot(page, "09_xss_row_x2")
    # nothing the dataset holds became an element: no injected <img>, <script> or handler
    injected = page.evaluate(
        "() => [...document.querySelectorAll('img[src=x], script:not([src]), [onerror], [onmouseover]')]"
        ".filter(e => (e.textContent || '').includes('alert') || e.getAttribute('onerror') || e.getAttribute('onmouseover')).length"
    )
    assert injected == 0
    assert dialogs == [], f"a dialog fired: {dialogs}"
