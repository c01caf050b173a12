"""An empty contexts list is not measurable in every mode of Temporal Faithfulness, and the stored run
agrees with the loader's warning about such a row (issue 19.16)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

# ---- 16: empty contexts, a full disk, a doubled space ------------------------------------------


@pytest.mark.parametrize("mode", ["focus_time", "nli", "llm"])
def test_an_empty_contexts_list_is_not_measurable_in_every_mode(mode: str) -> None:
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    result = TemporalFaithfulness(mode=mode).measure(answer="It happened in 2020.", contexts=[])
    assert math.isnan(result.score) and result.reason_code == "missing_input"
    assert "contexts" in result.reason


def test_an_empty_contexts_row_agrees_with_the_loader_warning(tmp_path: Path) -> None:
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.store.runs import RunStore

    data = tmp_path / "data.jsonl"
    data.write_text(
        '{"query": "When?", "answer": "It happened in 2020.", "contexts": []}\n'
        '{"query": "When?", "answer": "It happened in 2021.", "contexts": []}\n',
        encoding="utf-8",
    )
    dataset = load_dataset(data)
    assert any("missing_input" in warning and "contexts" in warning for warning in dataset.warnings)
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    frame = evaluate(dataset, [TemporalFaithfulness(mode="focus_time")], store=RunStore()).frame
    assert frame["score"].isna().all() and set(frame["reason_code"]) == {"missing_input"}

