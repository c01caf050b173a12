"""The row bins of a dataset (which bin each row falls in) are kept in the workspace's
cache/slices/, so that another process (a new app server, the command line) slices a run
without decoding its dataset again, and a damaged file is only computed again."""

from __future__ import annotations

from pathlib import Path

import pytest

from tempo_eval.slices import keys
from tempo_eval.slices.report import slices
from tempo_eval.store.db import DB_FILENAME
from tempo_eval.store.runs import RunStore
from tests.support.time_runs import METRIC, make_time_runs


@pytest.fixture
def store(tmp_path: Path):
    opened = RunStore(tmp_path / DB_FILENAME)
    yield opened
    opened.close()


def test_a_second_process_slices_without_decoding_the_dataset(store: RunStore, monkeypatch) -> None:
    first, _ = make_time_runs(store)
    keys._CACHE.clear()
    before = slices([first], METRIC, by="as_of", bin="quarter", store=store).to_dict()
    saved = list((store.folder() / "cache" / "slices").glob("*.npz"))
    assert len(saved) == 1
    keys._CACHE.clear()  # as a new process

    def no_decoding(*_args, **_kwargs):
        raise AssertionError("the dataset was decoded again")

    monkeypatch.setattr(store, "dataset_column", no_decoding)
    monkeypatch.setattr(store, "dataset_frame", no_decoding)
    assert slices([first], METRIC, by="as_of", bin="quarter", store=store).to_dict() == before


def test_a_damaged_saved_file_is_computed_again(store: RunStore) -> None:
    first, _ = make_time_runs(store)
    keys._CACHE.clear()
    before = slices([first], METRIC, by="as_of", bin="year", store=store).to_dict()
    for saved in (store.folder() / "cache" / "slices").glob("*.npz"):
        saved.write_bytes(b"not a numpy file")
    keys._CACHE.clear()
    assert slices([first], METRIC, by="as_of", bin="year", store=store).to_dict() == before
