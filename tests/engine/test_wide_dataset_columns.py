"""The runner names only a few columns of a wide dataset when a metric's columns are missing (issue 11)."""

from __future__ import annotations

import pytest


def test_the_runner_names_a_few_columns_of_a_wide_dataset() -> None:
    from tempo_eval.engine.runner import check_columns
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    with pytest.raises(ValueError) as error:
        check_columns([TemporalFaithfulness()], ["query_id", "answer", *(f"c{i}" for i in range(5000))])
    assert len(str(error.value)) < 1000 and "5002 in all" in str(error.value)

