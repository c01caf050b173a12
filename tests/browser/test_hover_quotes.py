"""In headless Chromium, plotly draws the hover label of a run diff point whose query holds quotes
with the quotes, not "&quot;" (issue 38.16): the standalone diff report (plotly.js embedded) is
opened and a point hovered through plotly's own hover API."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.compare.report_html import diff_html
from tempo_eval.compare.run_diff import diff_runs
from tests.browser.test_main_pages import CHROMIUM, LAUNCH_ARGS, require_browser

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUERY = 'Who said "veni, vidi" & didn\'t <b>stop</b>?'


def test_the_hover_label_shows_quotes_as_typed(tmp_path: Path) -> None:
    require_browser()
    from playwright.sync_api import sync_playwright

    def results(score: float) -> pd.DataFrame:
        return pd.DataFrame({"row": [0], "query_id": ["q1"], "run": [None], "metric": ["temporal_faithfulness"],
                             "score": [score], "reason_code": [None]})

    report = diff_runs(results(0.2), results(0.9), baseline_queries=[QUERY], candidate_queries=[QUERY],
                       baseline={"id": 1, "name": 'run "one"'}, candidate={"id": 2, "name": "two"})
    page_file = tmp_path / "diff.html"
    page_file.write_text(diff_html(report), encoding="utf-8")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            page = browser.new_page()
            page.goto(page_file.as_uri())
            page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 2")
            label = page.evaluate("""() => {
                const plots = [...document.querySelectorAll('.js-plotly-plot')];
                const gd = plots.find(p => p.data.some(t => (t.text || []).length));
                const curve = gd.data.findIndex(t => (t.text || []).length);
                Plotly.Fx.hover(gd, [{curveNumber: curve, pointNumber: 0}]);
                const text = gd.querySelector('.hoverlayer .hovertext');
                return text ? text.textContent : null;
            }""")
            axis = page.evaluate("""() => [...document.querySelectorAll('.xtitle')].map(t => t.textContent)""")
        finally:
            browser.close()
    assert label is not None and "&quot;" not in label and "&amp;" not in label
    assert 'Who said "veni, vidi" & didn\'t <b>stop</b>?' in label
    assert any('baseline: run "one"' in title for title in axis)
