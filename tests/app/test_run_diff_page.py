"""The Run diff page through Streamlit's AppTest, on two runs of the sample (one with some answers'
years changed)."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tempo_eval.store.runs import RunStore
from tests.support.paths import ROOT
from tests.support.sample_runs import make_sample_runs

APP = str(ROOT / "app.py")
TIMEOUT = 180


def _open_diff(tmp_path: Path, **params: str) -> tuple[AppTest, int, int]:
    baseline, candidate = make_sample_runs(RunStore(), tmp_path)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for name, value in {"base": str(baseline), "cand": str(candidate), **params}.items():
        at.query_params[name] = value
    at.run()
    at.switch_page("views/run_diff.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at, baseline, candidate


def test_the_diff_page_shows_the_figures_in_user_words_and_the_regressed_rows_first(tmp_path: Path) -> None:
    at, baseline, candidate = _open_diff(tmp_path)
    assert at.selectbox(key="diff_base").value == baseline and at.selectbox(key="diff_cand").value == candidate
    summary = next(d.value for d in at.dataframe if "rows measured" in d.value.columns).set_index("metric")
    assert {"rows measured", "95% CI low", "95% CI high", "p-value", "regressed", "became not measurable"} <= set(
        summary.columns)
    assert summary.loc["Temporal Faithfulness", "regressed"] == 2  # the metric by its display name
    rows = at.dataframe(key="diff_rows").value
    assert set(rows["query id"]) == {"q1", "q3"} and (rows["outcome"] == "regressed").all()
    assert rows["query id"].iloc[0] == "q1"  # 1.0 -> 0.0 before q3's smaller drop
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"Export HTML", "Export CSV"} <= labels


def test_the_runs_page_opens_the_diff_with_compare_with(tmp_path: Path) -> None:
    baseline, candidate = make_sample_runs(RunStore(), tmp_path)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("views/runs.py").run()
    at.toggle(key="runs_all").set_value(True).run()
    at.multiselect(key="runs_selected").set_value([baseline]).run()
    at.button(key="runs_run_diff").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="diff_base").value == baseline
    assert at.selectbox(key="diff_cand").value == candidate


def test_the_runs_page_pins_a_baseline_for_change_columns_and_draws_the_trends(tmp_path: Path) -> None:
    baseline, candidate = make_sample_runs(RunStore(), tmp_path)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("views/runs.py").run()
    at.toggle(key="runs_all").set_value(True).run()
    at.selectbox(key="runs_baseline").set_value(baseline).run()
    assert not at.exception, [e.value for e in at.exception]
    grid = next(d.value for d in at.dataframe if "temporal_faithfulness Δ" in d.value.columns).set_index("id")
    assert grid.loc[baseline, "temporal_faithfulness Δ"] == 0
    assert round(grid.loc[candidate, "temporal_faithfulness Δ"], 3) == round(0.81 - 0.8, 3)


def test_the_runs_page_draws_each_metrics_trend_across_the_runs_of_a_dataset(tmp_path: Path) -> None:
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io.dataset import load_dataset
    from tests.support.sample_runs import SAMPLE, metrics

    store = RunStore()
    baseline, _ = make_sample_runs(store, tmp_path)
    again = evaluate(load_dataset(str(SAMPLE)), metrics(), store=store, run_name="again", resume=False).run_id
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["dataset"] = str(store.run_info(baseline)["dataset_id"])
    at.run()
    at.switch_page("views/runs.py").run()
    assert not at.exception, [e.value for e in at.exception]
    charts = at.get("plotly_chart")
    assert len(charts) == 1, "the trend chart is drawn"
    figure = json.loads(charts[0].proto.spec)
    assert [list(t["customdata"]) for t in figure["data"]] == [[baseline, again], [baseline, again]]
