"""The sidebar's dataset and runs survive a run in which Streamlit dropped the widgets' values.

Under load, a page switch can cut a run short before the sidebar is drawn; Streamlit then drops
the sidebar widgets' values, and the address's query parameters are gone with the page switch.
The selectbox used to fall back to its first option, the newest dataset, so a session silently
moved to another (often much bigger) dataset (issue 29's memory growth under an evaluation).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from tempo_eval.io import load_dataset
from tempo_eval.store.runs import RunStore
from tempo_eval_app.selection import _LAST_DATASET, _LAST_RUNS, DATASET_KEY, RUNS_KEY
from tempo_eval_app.store_reads import db_path
from tests.support.paths import ROOT

APP = str(ROOT / "app.py")


def _dataset_csv(path: Path, label: str) -> Path:
    frame = pd.DataFrame({"query_id": [f"{label}1", f"{label}2"], "query": ["When?", "Where?"],
                          "answer": ["In 1999.", "In 2001."],
                          "contexts": ['["It was 1999."]', '["It was 2001."]']})
    frame.to_csv(path, index=False)
    return path


def _newer_dataset(tmp_path: Path, label: str = "n") -> int:
    return RunStore(db_path()).save_dataset(load_dataset(_dataset_csv(tmp_path / f"{label}.csv", label)))


def _dataset_with_two_runs(tmp_path: Path) -> tuple[int, int, int]:
    """A dataset stored after the sample, with two runs: (dataset, older run, newest run)."""
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    path, store = _dataset_csv(tmp_path / "runs.csv", "r"), RunStore(db_path())
    older, newest = (evaluate(path, [TemporalFaithfulness(reference_date=day)], store=store)
                     for day in ("2020-01-01", "2021-01-01"))
    assert older.dataset_id == newest.dataset_id
    return older.dataset_id, older.run_id, newest.run_id


def test_a_session_whose_widget_values_were_dropped_keeps_its_dataset_and_runs(tmp_path) -> None:
    """A session that has lost the sidebar widgets' values (and its address's parameters) but
    drew the sidebar before: it stays on the dataset and runs it had, not the first option."""
    sample = AppTest.from_file(APP, default_timeout=180).run().session_state[DATASET_KEY]
    dataset, older, newest = _dataset_with_two_runs(tmp_path)
    last = _newer_dataset(tmp_path)
    assert RunStore(db_path()).list_datasets()["id"].tolist()[0] == last  # what index 0 picked
    assert len({sample, dataset, last}) == 3

    dropped = AppTest.from_file(APP, default_timeout=180)
    dropped.session_state[_LAST_DATASET] = dataset
    dropped.session_state[_LAST_RUNS] = (dataset, [older])
    dropped.run()
    assert not dropped.exception
    assert dropped.session_state[DATASET_KEY] == dataset
    assert dropped.sidebar.selectbox(key=DATASET_KEY).value == dataset
    assert list(dropped.session_state[RUNS_KEY]) == [older]

    other = AppTest.from_file(APP, default_timeout=180)
    other.session_state[_LAST_DATASET] = dataset
    other.session_state[_LAST_RUNS] = (sample, [older])  # runs kept for another dataset: not used
    other.run()
    assert list(other.session_state[RUNS_KEY]) == [newest]


def test_a_new_session_opens_on_the_default_dataset_or_the_one_its_address_names(tmp_path) -> None:
    first = AppTest.from_file(APP, default_timeout=180).run()
    sample = first.session_state[DATASET_KEY]
    newer = _newer_dataset(tmp_path)
    fresh = AppTest.from_file(APP, default_timeout=180).run()
    assert fresh.session_state[DATASET_KEY] == sample
    assert fresh.sidebar.selectbox(key=DATASET_KEY).value == sample
    linked = AppTest.from_file(APP, default_timeout=180)
    linked.query_params["dataset"] = str(newer)
    linked.run()
    assert linked.session_state[DATASET_KEY] == newer


def test_the_sidebar_widgets_default_to_the_sessions_choice_so_a_browser_redrawing_them_keeps_it(tmp_path) -> None:
    """A browser that draws a sidebar widget anew (it dropped the value with a run cut short) starts
    from the widget's default and sends it back with the next click: the defaults are the
    session's dataset and runs, not the first option (the newest dataset) and no run. Seen under
    load: sessions walking the sample landed on a generated 1-million-row dataset."""
    at = AppTest.from_file(APP, default_timeout=180).run()
    dataset, older, newest = _dataset_with_two_runs(tmp_path)
    last = _newer_dataset(tmp_path)
    at.run()  # the new datasets listed
    at.sidebar.selectbox(key=DATASET_KEY).set_value(dataset).run()
    at.sidebar.multiselect(key=RUNS_KEY).set_value([older]).run()
    assert not at.exception
    box = at.sidebar.selectbox(key=DATASET_KEY)
    assert box.options[0] == box.format_func(last)  # the newest dataset is the first option
    assert box.options[box.proto.default] == box.format_func(dataset)
    runs = at.sidebar.multiselect(key=RUNS_KEY)
    assert [runs.options[i] for i in runs.proto.default] == [runs.format_func(older)]
    assert newest != older
