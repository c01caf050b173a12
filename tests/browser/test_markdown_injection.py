"""Markdown injection in headless Chromium (issue 19.8): a dataset whose file name, cells, run name
and claims hold a markdown image and link is uploaded and shown on Overview, Results, Claims and
Review; no <img> loads its URL and no <a> points at it, and the text is still shown as typed."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator

import pytest

from tempo_eval.io.dataset import load_dataset
from tempo_eval.metrics.base import MetricResult
from tempo_eval.store.runs import RunStore
from tempo_eval.verify.base import ClaimVerdict, Verdict
from tests.browser.test_main_pages import (
    ARTIFACTS,
    SAMPLE,
    app_page,
    expect,
    nav,
    require_browser,
    shot,
    upload,
    wait_idle,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

IMAGE = "![x](http://127.0.0.1:9/x.png)"
LINK = "[click](http://evil.example)"
HOSTILE = f"{IMAGE} {LINK}"
FILE_NAME = f"{HOSTILE}.csv"

#: elements the hostile text would have become, counted in the page
_INJECTED = """() => [...document.querySelectorAll('img, a')].filter(e =>
    (e.getAttribute('src') || '').includes('127.0.0.1:9') || (e.getAttribute('href') || '').includes('evil.example')
    || (e.getAttribute('href') || '').includes('127.0.0.1:9')).map(e => e.outerHTML)"""
#: the page's visible text, word joiners (what md_escape adds, invisible) removed
_TEXT = "() => document.body.innerText.replace(/\\u2060/g, '')"


def hostile_csv() -> bytes:
    with (SAMPLE / "temporal_qa.csv").open(encoding="utf-8") as handle:
        records = list(csv.DictReader(handle))[:2]
    for record in records:
        record["query"] = f"{record['query']} {HOSTILE}"
        record["answer"] = f"{record['answer']} {HOSTILE}"
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(records[0]))
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue().encode("utf-8")


def stored_hostile_run(tmp_file) -> int:
    """The hostile dataset with a run (named with the link) whose claims hold the image and link."""
    tmp_file.write_bytes(hostile_csv())
    store = RunStore()
    dataset = load_dataset(tmp_file)
    dataset.name = FILE_NAME
    dataset_id = store.save_dataset(dataset)
    metric = "factual_correctness"
    run_id, _ = store.create_or_resume_run(dataset_id, {"metrics": [{"name": metric, "settings": {}}]}, name=LINK)
    for row in range(2):
        claims = [ClaimVerdict(f"Claim {HOSTILE}", Verdict.SUPPORTED, evidence=HOSTILE, reason=LINK, confidence=0.9)]
        records = [{"side": "response", **c.to_record()} for c in claims]
        store.record_row(run_id, row, f"q{row + 1}", [MetricResult(metric, 0.5, details={"claims": records})])
    store.set_status(run_id, "finished")
    return run_id


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, object, int]]:
    require_browser()
    home = tmp_path_factory.mktemp("injection_home")
    previous = os.environ.get("TEMPO_EVAL_HOME")
    os.environ["TEMPO_EVAL_HOME"] = str(home)
    try:
        run_id = stored_hostile_run(home / "hostile.csv")
    finally:
        if previous is None:
            os.environ.pop("TEMPO_EVAL_HOME", None)
        else:
            os.environ["TEMPO_EVAL_HOME"] = previous
    ARTIFACTS.mkdir(exist_ok=True)
    with app_page(home) as (page, server, _dialogs):
        yield page, server, run_id


def assert_inert(page, name: str, shown: str = HOSTILE) -> None:
    wait_idle(page)
    shot(page, f"injection_{name}")
    assert page.evaluate(_INJECTED) == [], f"{name}: the markdown became an element"
    assert shown in page.evaluate(_TEXT), f"{name}: the text is not shown as typed"


def test_an_uploaded_file_name_and_cells_show_as_text(hostile_page) -> None:
    page, _server, _run_id = hostile_page
    nav(page, "Datasets")
    page.get_by_role("tab", name="Upload a dataset").click()
    upload(page, "Dataset file", FILE_NAME, hostile_csv())
    page.get_by_text("Read 2 rows").first.wait_for()
    assert_inert(page, "datasets_upload")


def test_overview_results_claims_and_review_render_the_run_as_text(hostile_page) -> None:
    page, server, run_id = hostile_page
    page.goto(f"{server.url}/?dataset=1&runs={run_id}")
    wait_idle(page)
    nav(page, "Overview")
    assert_inert(page, "overview")
    nav(page, "Results")
    assert_inert(page, "results")
    page.goto(f"{server.url}/claims?dataset=1&runs={run_id}")
    expect(page.get_by_text("Your verdict")).to_be_visible(timeout=60_000)
    assert_inert(page, "claims")
    page.get_by_role("button", name="Save label").click()
    expect(page.get_by_text("Stored human label")).to_be_visible(timeout=60_000)
    nav(page, "Review verdicts")
    expect(page.get_by_text("Agreement with the human labels")).to_be_visible(timeout=60_000)
    assert_inert(page, "review", shown=LINK)


def test_a_label_import_error_quoting_the_file_name_shows_it_as_text(hostile_page) -> None:
    page, server, run_id = hostile_page
    page.goto(f"{server.url}/review?dataset=1&runs={run_id}")
    page.get_by_role("heading", name="Review verdicts", exact=True).first.wait_for()
    wait_idle(page)
    page.get_by_text("Export or import labels").first.click()
    upload(page, "Import labels", FILE_NAME, b"claim,label\nx,NOT_A_LABEL\n")
    page.get_by_role("button", name="Import", exact=True).click()
    wait_idle(page)
    expect(page.locator('[data-testid="stAlertContentError"]').first).to_be_visible(timeout=60_000)
    assert_inert(page, "review_import_error", shown=FILE_NAME)
