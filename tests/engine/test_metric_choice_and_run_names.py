"""The metrics that apply follow the dataset's columns, a refused metric names those that apply, and a
run without a name is named after what ran (issue 24)."""

from __future__ import annotations

import pytest

from tempo_eval.io.dataset import load_dataset


def test_the_metrics_that_apply_follow_the_columns() -> None:
    from tempo_eval.engine.scoring import metric_needs

    conversation = metric_needs(["conversation_id", "turns"])
    assert conversation["turn_faithfulness"] == []
    assert conversation["temporal_faithfulness"] == ["answer", "contexts"]
    rows = metric_needs(["query_id", "query", "answer", "contexts"])
    assert rows["temporal_faithfulness"] == [] and rows["factual_correctness"] == ["reference"]
    assert rows["turn_faithfulness"] == ["turns"]


def test_a_refused_metric_names_the_metrics_that_apply() -> None:
    from tempo_eval.engine.scoring import check_columns
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    with pytest.raises(ValueError, match="metrics that apply to these columns: turn_faithfulness"):
        check_columns([TemporalFaithfulness()], ["conversation_id", "turns"])


def test_a_run_is_named_after_what_ran() -> None:
    import datetime

    from tempo_eval.engine.scoring import default_run_name
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.verify import make_verifier

    metric = TemporalFaithfulness(mode="nli", verifier=make_verifier("lexical"))
    name = default_run_name("temporal_qa.csv", [metric], datetime.datetime(2026, 11, 24, 14, 5))
    assert name == "temporal_qa · claims TF · lexical · 24 Nov 14:05"


def test_the_runner_names_an_unnamed_run_by_what_ran(tmp_path) -> None:
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.store.runs import RunStore

    dataset = load_dataset(b"query,answer,contexts\nWhen?,In 1990.,\"[\"\"In 1990.\"\"]\"\n", name="temporal_qa.csv")
    store = RunStore(tmp_path / "w.db")
    result = evaluate(dataset, [TemporalFaithfulness(mode="focus_time")], store=store)
    assert store.run_info(result.run_id)["name"].startswith("temporal_qa · focus-time TF · ")

