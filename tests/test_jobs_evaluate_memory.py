"""The Evaluate page reads a stored dataset's columns, not its rows (issue 29): `RunStore.dataset_head`
reads the first rows from the beginning of the stored parts, the same as `dataset_frame.head`
for a dataset stored whole, in parts, in parts of different columns, or as plain text; the
Evaluate page and Datasets' preview of the active dataset never decode the whole dataset."""

from __future__ import annotations

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tempo_eval.io.dataset import load_dataset
from tempo_eval.store.runs import RunStore
from tempo_eval_app.upload_jobs import read_dataset
from tests.support.jobs import write_rows
from tests.test_app_pages import ROOT, TIMEOUT


def _stored(tmp_path) -> dict[str, int]:
    store = RunStore()
    try:
        whole = store.save_dataset(load_dataset(write_rows(tmp_path / "whole.jsonl", 3_500)))
        parts = read_dataset({"path": str(write_rows(tmp_path / "parts.jsonl", 3_500, word="tunnel")),
                              "name": "parts.jsonl", "store": True})["dataset_id"]
        mixed, _ = store.begin_dataset(name="mixed", content_hash="h", mapping={}, source_format="jsonl")
        store.add_dataset_rows(mixed, 0, pd.DataFrame({"query_id": ["a", "b"], "query": ["é ünï \"x\"", "]"]}))
        store.add_dataset_rows(mixed, 2, pd.DataFrame({"query_id": ["c"], "query": ["y"], "gold_ids": [["d1"]]}))
        store.finish_dataset(mixed, 3, [])
        one = store.save_dataset(load_dataset(write_rows(tmp_path / "one.jsonl", 1)))
        return {"whole": whole, "parts": parts, "mixed": mixed, "one": one}
    finally:
        store.close()


@pytest.mark.parametrize("n_rows", [0, 1, 50, 1_500, 10_000])
def test_the_head_is_the_frames_head_however_the_dataset_was_stored(tmp_path, n_rows) -> None:
    for name, dataset_id in _stored(tmp_path).items():
        store = RunStore()  # a new store: nothing decoded before
        head = store.dataset_head(dataset_id, n_rows)
        whole = store.dataset_frame(dataset_id)
        assert list(head.columns) == list(whole.columns), name
        assert head.astype(str).equals(whole.head(n_rows).astype(str)), name
        assert store.dataset_head(dataset_id, n_rows).astype(str).equals(head.astype(str))  # decoded already
        store.close()
    with pytest.raises(KeyError):
        RunStore().dataset_head(999)


def test_evaluate_and_the_datasets_preview_never_decode_the_whole_dataset(tmp_path, monkeypatch) -> None:
    ids = _stored(tmp_path)

    def refused(self, dataset_id):
        raise AssertionError("the whole dataset was decoded")

    monkeypatch.setattr(RunStore, "dataset_frame", refused)
    monkeypatch.setattr(RunStore, "_stored_rows", refused)
    for name in ("whole", "parts"):
        for page in ("evaluate", "datasets"):  # each page on its own (Overview, the first page, reads rows)
            at = AppTest.from_file(str(ROOT / "views" / f"{page}.py"), default_timeout=TIMEOUT)
            at.query_params["dataset"] = str(ids[name])
            at.run()
            assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
            captions = " ".join(c.value for c in at.caption).replace("\\", "")  # markdown escapes
            if page == "evaluate":
                assert "3500 rows" in captions and "columns query_id, query, contexts, answer" in captions, captions
                assert at.button(key="run_evaluation") is not None
            else:
                assert "3,500 rows" in captions, captions
                preview = [d.value for d in at.dataframe if "query_id" in d.value.columns and len(d.value) == 50]
                assert preview and preview[0]["query_id"].tolist()[:2] == ["q0", "q1"]
