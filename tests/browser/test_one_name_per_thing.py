"""What a newcomer trips on in the tour, in headless Chromium at 1280 × 800 against the real app:
one name for each thing (verdicts, metrics, table columns, dataset rows), years as ranges, a
heatmap whose rows have room and whose colours one crowded cell does not set, a full link to the
view, and a page that asks nothing of a server other than its own (the icon is in the repository).

One workspace, prepared before the app starts: the sample's focus-time run and its changed copy
(tests/support/sample_runs.py), and a claims-mode run with the lexical verifier.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.browser.test_main_pages import app_page, expect, nav, require_browser, wait_idle
from tests.support.app_server import ROOT

VIEWPORT = {"width": 1280, "height": 800}
SAMPLE = ROOT / "data" / "sample" / "temporal_qa.jsonl"
#: the engine's verdict values: a page shows their names, never these
ENGINE_VERDICTS = ("SUPPORTED", "PARTIALLY_SUPPORTED", "NEUTRAL", "NOT_SUPPORTED", "CONTRADICTED")

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _prepare(home: Path) -> dict[str, int]:
    """Store the runs the tests open; their ids and datasets."""
    import os

    previous = os.environ.get("TEMPO_EVAL_HOME")
    os.environ["TEMPO_EVAL_HOME"] = str(home)
    try:
        from tempo_eval.engine.runner import evaluate
        from tempo_eval.io.dataset import load_dataset
        from tempo_eval.metrics import TemporalFaithfulness
        from tempo_eval.store.runs import RunStore
        from tempo_eval.verify import make_verifier
        from tests.support.sample_runs import make_sample_runs

        store = RunStore()
        baseline, candidate = make_sample_runs(store, home)
        claims = evaluate(load_dataset(str(SAMPLE)), [TemporalFaithfulness(verifier=make_verifier("lexical"))],
                          store=store, run_name="claims").run_id
        info = store.run_info
        return {"baseline": baseline, "candidate": candidate, "claims": int(claims),
                "dataset": int(info(baseline)["dataset_id"]), "claims_dataset": int(info(claims)["dataset_id"])}
    finally:  # the workspace the session had before, not none (a later module would fall to ~/.tempo_eval)
        if previous is None:
            os.environ.pop("TEMPO_EVAL_HOME", None)
        else:
            os.environ["TEMPO_EVAL_HOME"] = previous


@pytest.fixture(scope="module")
def tour(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, object, dict[str, int]]]:
    require_browser()
    home = tmp_path_factory.mktemp("newcomer_tour_home")
    runs = _prepare(home)
    with app_page(home, VIEWPORT) as (page, server, _dialogs):
        yield page, server, runs


def _open(page, server, path: str) -> None:
    page.goto(f"{server.url}/{path}")
    wait_idle(page)


def _main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def _grid_with(page, header: str):
    """The first table with a column named `header` (the grid keeps its headers in an accessible
    DOM; a table without a selection carries no key class)."""
    grid = page.locator('[data-testid="stDataFrame"]:visible').filter(
        has=page.locator('[role="columnheader"]', has_text=re.compile(f"^{re.escape(header)}$"))).first
    grid.wait_for()
    return grid


def _headers(grid) -> list[str]:
    return grid.locator('[role="columnheader"]').all_inner_texts()


def test_hallucinated_only_offers_only_the_verdicts_it_keeps_by_their_names(tour) -> None:
    page, server, runs = tour
    _open(page, server, f"claims?dataset={runs['claims_dataset']}&runs={runs['claims']}")
    expect(page.get_by_text("Neutral (not stated)").first).to_be_visible()  # the counter
    page.get_by_text("Hallucinated only").first.click()
    wait_idle(page)
    verdicts = page.locator(".st-key-claims_verdicts_hallucinated .react-aria-ComboBox")
    chips = [c.get_attribute("aria-label") for c in verdicts.locator("[data-tag]").all()]
    assert chips and set(chips) <= {"Not supported", "Contradicted"}, chips
    chip = verdicts.locator("[data-tag]").first
    chip.get_by_role("button").click()  # take one off: it is what the list then offers
    wait_idle(page)
    verdicts.locator("input").first.click()
    offered = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    assert offered and set(offered) <= {"Not supported", "Contradicted"}, offered
    text = _main_text(page)
    for value in ENGINE_VERDICTS:
        assert not re.search(rf"\b{value}\b", text), f"{value} on the Claims page"
    assert "not addressed" not in text
    expect(page.get_by_text("Showing Not supported and Contradicted claims only", exact=False)).to_be_visible()


def test_run_diff_and_compare_say_metric_and_column_names_in_words(tour) -> None:
    page, server, runs = tour
    _open(page, server, f"run_diff?dataset={runs['dataset']}&runs={runs['baseline']}"
                        f"&base={runs['baseline']}&cand={runs['candidate']}")
    page.locator(".js-plotly-plot").first.wait_for()
    text = _main_text(page)
    assert "Temporal Faithfulness" in text and "temporal_faithfulness" not in text
    expect(page.get_by_role("combobox", name="Metric")).to_have_value(re.compile("Temporal"))

    nav(page, "Compare runs")
    page.get_by_role("button", name="Open the BM25 vs dense sample runs").click()
    wait_idle(page)
    page.get_by_text("Table (LaTeX)").first.scroll_into_view_if_needed()  # a grid draws its cells once in view
    grid = _grid_with(page, "mean A")
    headers = _headers(grid)
    assert {"run A", "run B", "mean A", "mean B", "queries"} <= set(headers), headers
    assert not {"run_a", "mean_b", "n_queries"} & set(headers)
    # every column on screen: the grid's scroller holds no more than it shows (no header cut off)
    widths = grid.locator(".dvn-scroller").first.evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert widths[0] <= widths[1] + 1, widths


def test_results_name_rows_by_query_and_columns_and_years_in_words(tour) -> None:
    page, server, runs = tour
    _open(page, server, f"results?dataset={runs['dataset']}&runs={runs['baseline']}")
    headers = _headers(_grid_with(page, "query id"))
    assert "query id" in headers and "row" not in headers, headers
    expect(page.get_by_text(re.compile(r"· query q1$"))).to_be_visible()
    text = _main_text(page)
    assert "Context 2 · years: 1666, 1675–1710" in text
    assert "row 0" not in text and "discounted_gain" not in text and "temporal_ndcg" not in text
    page.get_by_text("Link to this view").first.scroll_into_view_if_needed()
    ranks = _grid_with(page, "relevance")
    assert "discounted gain" in _headers(ranks)


def test_the_heatmap_gives_each_row_room_and_one_cell_does_not_set_the_colours(tour) -> None:
    page, server, runs = tour
    _open(page, server, f"heatmaps?dataset={runs['dataset']}&runs={runs['baseline']}")
    chart = page.locator(".st-key-heat_qd_chart .js-plotly-plot")
    chart.wait_for()
    chart.scroll_into_view_if_needed()
    rows = len({t for t in chart.locator(".ytick text").all_text_contents() if t.strip()})
    plot = chart.locator(".nsewdrag").first.bounding_box()
    assert rows >= 5 and plot["height"] / rows >= 24, (rows, plot)
    ticks = chart.locator(".colorbar text").all_text_contents()
    assert any(t.startswith("≥") for t in ticks), ticks  # the crowded cell shares the top colour


def test_link_to_this_view_is_the_full_address_and_reopens_the_view(tour) -> None:
    page, server, runs = tour
    _open(page, server, f"results?dataset={runs['dataset']}&runs={runs['baseline']}")
    link = page.get_by_role("link", name="open this view again")
    expect(link).to_be_visible()
    href = link.get_attribute("href")
    assert href.startswith(f"{server.url}/results?") and f"runs={runs['baseline']}" in href, href
    expect(page.locator('[data-testid="stCode"]').filter(has_text=href)).to_have_count(1)
    link.click()
    wait_idle(page)
    assert page.url == href
    expect(page.get_by_text(re.compile(r"· query q1$"))).to_be_visible()


def test_the_app_asks_nothing_of_another_server_and_its_icon_is_its_own(tour) -> None:
    page, server, _runs = tour
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.reload()
    wait_idle(page)
    page.wait_for_timeout(1000)
    icons = page.locator('link[rel*="icon"]')
    assert icons.count() >= 1
    for href in [icons.nth(i).get_attribute("href") for i in range(icons.count())]:
        assert urlsplit(page.url).netloc == urlsplit(page.evaluate("(h) => new URL(h, location.href).href", href)).netloc
    host = urlsplit(server.url).netloc
    elsewhere = [u for u in requested if urlsplit(u).scheme in ("http", "https", "ws", "wss")
                 and urlsplit(u).netloc != host]
    assert not elsewhere, elsewhere
