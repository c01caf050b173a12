"""A dataset or foreign file saved with its index (pandas' `Unnamed: 0`, `__index_level_0__`) keeps no
index column (issue 24)."""

from __future__ import annotations

import pandas as pd
import pytest

from tempo_eval.common.schema import is_index_column
from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.foreign import load_foreign_results


def _ragas_frame() -> pd.DataFrame:
    return pd.DataFrame({
        "user_input": ["When did it open?", "Who built it?"],
        "response": ["It opened in 1990.", "Bob built it."],
        "retrieved_contexts": [["It opened in 1990."], ["Bob built it in 1980."]],
        "faithfulness": [1.0, 0.5],
    })


@pytest.mark.parametrize("name", ["Unnamed: 0", "", "__index_level_0__", "Unnamed: 0_level_0"])
def test_index_column_names_are_recognised(name: str) -> None:
    assert is_index_column(name)


@pytest.mark.parametrize("name", ["index", "year", "faithfulness", "Unnamed"])
def test_data_columns_are_not_index_columns(name: str) -> None:
    assert not is_index_column(name)


def test_a_ragas_csv_saved_with_its_index_imports_no_index_column() -> None:
    foreign = load_foreign_results(_ragas_frame().to_csv().encode(), name="ragas.csv")
    assert foreign.metrics == ["ragas:faithfulness"]
    assert not [c for c in foreign.dataset.frame.columns if c.startswith("Unnamed")]
    assert any("saved row index" in w for w in foreign.dataset.warnings)


def test_a_parquet_dataset_with_a_pandas_index_keeps_no_index_column() -> None:
    frame = _ragas_frame().drop(columns="faithfulness")
    frame.index = [7, 9]
    dataset = load_dataset(frame.to_parquet(), name="d.parquet")
    assert "__index_level_0__" not in dataset.frame.columns
    assert list(dataset.frame["answer"]) == ["It opened in 1990.", "Bob built it."]


def test_a_csv_dataset_saved_with_its_index_keeps_no_index_column() -> None:
    frame = _ragas_frame().drop(columns="faithfulness")
    dataset = load_dataset(frame.to_csv().encode(), name="d.csv")
    assert [c for c in dataset.frame.columns if c not in ("query_id", "query", "contexts", "answer")] == []
