"""The README's five-minute tour, driven in headless Chromium, one screenshot per step.

Open the sample, evaluate it, open a claim, compare two retriever runs, read a heatmap, diff two
evaluation runs, read scores over time: the same clicks a new user makes, against the real
`streamlit run`. The screenshots go to a temporary folder, or to
docs/screenshots/ (the ones the README shows) when TEMPO_EVAL_WRITE_SCREENSHOTS=1, so regenerating
them is one command and a plain test run never changes the tree:

    TEMPO_EVAL_WRITE_SCREENSHOTS=1 .venv/bin/python -m pytest tests/browser/test_walkthrough_screenshots.py
"""

from __future__ import annotations

import os
import re
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.test_main_pages import (
    app_page,
    choose,
    expect,
    nav,
    require_browser,
    wait_idle,
)
from tests.support.app_server import ROOT, AppServer

SCREENSHOTS = ROOT / "docs" / "screenshots"
#: the walk-through's steps, in order; the README links each of these files
STEPS = ("01_open_the_sample", "02_evaluate", "03_open_a_claim", "04_compare_two_runs", "05_read_a_heatmap",
         "06_diff_two_runs", "07_scores_over_time")
VIEWPORT = {"width": 1280, "height": 800}

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def shots_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("TEMPO_EVAL_WRITE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return SCREENSHOTS
    return tmp_path_factory.mktemp("walkthrough_screenshots")


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, AppServer, list[str]]]:
    """A headless Chromium page on a fresh app (fresh workspace), its server, and the dialogs it
    raised."""
    require_browser()
    with app_page(tmp_path_factory.mktemp("walkthrough_home"), VIEWPORT) as opened:
        yield opened


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk; fails on anything that is not a PNG."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def scroll_to(locator, block: str = "start") -> None:
    """Scroll so the element sits at the top ("start") or middle ("center") of the viewport."""
    locator.evaluate(f"e => e.scrollIntoView({{block: '{block}'}})")


def settle(page) -> None:
    """Wait until no element is left over from an earlier script run.

    Streamlit keeps such "stale" elements on screen until a script run completes; a run cut short
    by a newer one (the Evaluate page's progress panel reruns every second) can leave them there,
    so a screenshot would show them. One more rerun (Streamlit's "r" shortcut) clears them.
    """
    wait_idle(page)
    stale = page.locator('[data-stale="true"]')
    if stale.count():
        page.evaluate("() => document.activeElement && document.activeElement.blur()")  # not typed into a widget
        page.keyboard.press("r")
        wait_idle(page)
    expect(stale).to_have_count(0, timeout=30_000)


def save(page, folder: Path, step: str, focus=None, block: str = "start") -> Path:
    """Screenshot the viewport, scrolled to `focus`, into folder/step.png as a 256-colour PNG (a
    third of the bytes)."""
    from PIL import Image

    assert step in STEPS
    settle(page)
    if focus is not None:
        scroll_to(focus, block)
    page.wait_for_timeout(800)  # let charts finish their transitions
    path = folder / f"{step}.png"
    page.screenshot(path=str(path))
    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256, dither=Image.Dither.NONE)
    small.save(path, optimize=True)
    assert png_size(path) == (VIEWPORT["width"], VIEWPORT["height"])
    return path


def test_first_ten_minutes_walkthrough(walk, shots_dir: Path, tmp_path: Path) -> None:
    page, server, dialogs = walk
    try:
        walk_through(page, shots_dir)
    except Exception:
        page.screenshot(path=str(tmp_path / "failed.png"))
        print(f"screenshot of the failure: {tmp_path / 'failed.png'}\n{server.log()[-4000:]}")
        raise
    assert {p.stem for p in shots_dir.glob("*.png")} >= set(STEPS)
    assert not dialogs, dialogs


def walk_through(page, shots_dir: Path) -> None:
    """The README's tour, one screenshot per step."""
    # 1. The app opens on the bundled sample, its focus-time scores computed without any model.
    page.get_by_text("Temporal Faithfulness (focus time)").first.wait_for()
    wait_idle(page)
    assert page.locator('[data-testid="stMetricValue"]').first.inner_text().strip() not in ("", "—")
    save(page, shots_dir, "01_open_the_sample")

    # 2. Evaluate the sample: temporal claims checked by the offline lexical verifier.
    nav(page, "Evaluate")
    choose(page, "Mode", "Claims, by the verifier")
    page.get_by_role("button", name="Run evaluation").click()
    finished = page.get_by_text(re.compile(r"Finished: 30 rows evaluated"))
    finished.first.wait_for(timeout=600_000)  # seconds alone; minutes on a loaded machine
    wait_idle(page)
    # the progress panel reruns every second while the job runs: wait for its last rerun's page
    expect(finished).to_have_count(1, timeout=30_000)
    save(page, shots_dir, "02_evaluate", finished.first, "center")

    # 3. Open a claim: the hallucinated ones, the answer coloured by verdict, the evidence sentence.
    nav(page, "Claims")
    page.get_by_text("Hallucinated only").click()
    wait_idle(page)
    page.locator("mark.te-CONTRADICTED, mark.te-NOT_SUPPORTED").first.wait_for()
    selected = page.get_by_text("Selected claim").first
    selected.wait_for()
    expect(page.get_by_text("Evidence sentence").first).to_be_visible()
    save(page, shots_dir, "03_open_a_claim", page.get_by_role("heading", name=re.compile(r"^Query ")).first)

    # 4. Compare two runs: BM25 against dense retrieval, NDCG@k curves with confidence bands.
    nav(page, "Compare runs")
    page.get_by_role("button", name="Open the BM25 vs dense sample runs").click()
    wait_idle(page)
    page.get_by_text("NDCG@k curves").first.wait_for()
    page.wait_for_function(
        "() => document.querySelectorAll('.js-plotly-plot .scatterlayer .trace path').length >= 4"
    )
    save(page, shots_dir, "04_compare_two_runs", page.get_by_text("NDCG@k curves").first)

    # 5. Read a heatmap: the years queries ask about against the years the documents talk about.
    nav(page, "Temporal heatmaps")
    heatmap = page.locator(".js-plotly-plot").first
    heatmap.wait_for()
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .heatmaplayer .hm').length >= 1")
    save(page, shots_dir, "05_read_a_heatmap", page.get_by_role("tab", name="Query × retrieved documents"))

    # 6. Diff two runs: the sample evaluated again in focus-time mode, against the claims run.
    choose(page, "Dataset", "Sample: temporal QA")  # step 4 opened the retriever runs' dataset
    nav(page, "Evaluate")
    choose(page, "Mode", "Focus time (no model)")
    page.get_by_role("button", name="Run evaluation").click()
    wait_idle(page)
    # the first run's "Finished" may still be on screen: wait on Run diff for the second run
    summary = page.get_by_text(re.compile(r"improved|regressed")).first
    deadline = time.monotonic() + 600
    while True:
        nav(page, "Run diff")
        if summary.count() or time.monotonic() > deadline:
            break
        page.wait_for_timeout(2_000)
    summary.wait_for(timeout=60_000)
    expect(page.get_by_text(re.compile(r"#\d+ · (claims|focus-time) TF")).first).to_be_visible()
    save(page, shots_dir, "06_diff_two_runs")

    # 7. Scores over time: the bundled run whose answers degrade from 2023, by as-of date.
    nav(page, "Evaluate")
    page.get_by_text("A file on this machine (path)").click()
    wait_idle(page)
    box = page.get_by_label("Path of the dataset file on the app's machine")
    box.fill(str(ROOT / "data" / "sample" / "answers_over_time.csv"))
    box.press("Enter")
    wait_idle(page)
    if page.get_by_role("checkbox", name="Temporal NDCG@k").is_checked():  # no gold ids in this file
        page.get_by_text("Temporal NDCG@k", exact=True).first.click()
        wait_idle(page)
    page.get_by_role("button", name="Run evaluation").click()
    page.get_by_text(re.compile(r"Finished: 240 rows evaluated")).first.wait_for(timeout=600_000)
    wait_idle(page)
    choose(page, "Dataset", "answers_over_time")
    nav(page, "Scores over time")
    page.locator(".js-plotly-plot .scatterlayer path.point").first.wait_for(state="attached", timeout=60_000)
    changes = page.get_by_text(re.compile(r"the level changes at 2023-01-01")).first
    expect(changes).to_be_visible(timeout=60_000)
    save(page, shots_dir, "07_scores_over_time", page.locator(".js-plotly-plot").first, "center")
