"""The Scores over time page through Streamlit's AppTest, on two runs of the bundled
answers_over_time.csv: the page's numbers are those of `tempo_eval.slices` (and so of the CLI),
the change point is named, the downloads are there; Run diff offers the same curve."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

import tempo_eval
from tempo_eval.store.runs import RunStore
from tests.support.paths import ROOT
from tests.support.time_runs import METRIC, make_time_runs

APP = str(ROOT / "app.py")
TIMEOUT = 180


def _bins(at: AppTest) -> pd.DataFrame:
    """The table of bins (the columns of the CLI's CSV)."""
    return next(d.value for d in at.dataframe if list(d.value.columns)[:2] == ["run", "bin_start"])


def _open(path: str, **params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    at.switch_page(path).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_the_time_page_shows_the_numbers_of_the_python_api(tmp_path: Path) -> None:
    first, second = make_time_runs(RunStore())
    at = _open("views/time.py", bin="quarter")
    at.multiselect(key="time_runs").set_value([first, second]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="time_metric").value == METRIC
    shown = _bins(at)
    expected = tempo_eval.slices([first, second], METRIC, by="as_of", bin="quarter").frame()
    pd.testing.assert_frame_equal(shown.reset_index(drop=True), expected, check_dtype=False)
    captions = " ".join(c.value for c in at.caption).replace("\\", "")  # markdown escapes away
    assert "the level changes at **2023-01-01**" in captions
    assert {"CSV", "HTML"} <= {b.proto.label for b in at.get("download_button")}


def test_focus_and_evidence_year_bin_by_year(tmp_path: Path) -> None:
    first, _ = make_time_runs(RunStore())
    at = _open("views/time.py", by="focus_year")
    assert at.selectbox(key="time_bin").options == ["year"]
    shown = _bins(at)
    assert shown["bin_start"].str.endswith("-01-01").all() and int((shown["n"] + shown["not_measured"]).sum()) == 240


def test_run_diff_offers_the_same_curve_for_its_two_runs(tmp_path: Path) -> None:
    first, second = make_time_runs(RunStore())
    at = _open("views/run_diff.py", base=str(first), cand=str(second))
    shown = _bins(at)
    expected = tempo_eval.slices([first, second], METRIC, by="as_of", bin="year").frame()
    pd.testing.assert_frame_equal(shown.reset_index(drop=True), expected, check_dtype=False)


def test_the_curve_never_loads_the_rows_of_a_run(monkeypatch) -> None:
    first, second = make_time_runs(RunStore())

    def refuse(*_args, **_kwargs):
        raise AssertionError("the Time page loaded a run's results")

    for name in ("results_frame", "results_frames", "scores_frame", "results_rows"):
        monkeypatch.setattr(RunStore, name, refuse)
    at = _open("views/time.py", bin="month")
    at.multiselect(key="time_runs").set_value([first, second]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(_bins(at)) > 0
