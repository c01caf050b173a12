"""What a newcomer stumbles on (issue 24): the engine side of each point."""

from __future__ import annotations

from pathlib import Path

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


def test_compare_says_one_pair_of_runs_and_uses_the_pages_default_test() -> None:
    from tempo_eval.cli.parser import build_parser
    from tempo_eval.compare.statistics import DEFAULT_TEST, _pairs_text

    assert _pairs_text(1) == "1 pair of runs" and _pairs_text(3) == "3 pairs of runs"
    args = build_parser().parse_args(["compare", "a.trec", "b.trec", "--qrels", "q.txt"])
    assert args.test == DEFAULT_TEST
    source = (Path(__file__).resolve().parent.parent / "views" / "compare.py").read_text(encoding="utf-8")
    assert "[DEFAULT_TEST, *(t for t in TESTS if t != DEFAULT_TEST)]" in source  # the page's first option


def test_numbers_read_the_same_everywhere() -> None:
    from tempo_eval_app.formatting import display_table, fmt_count, fmt_p, fmt_score

    assert fmt_score(0.12345) == "0.123" and fmt_score(float("nan")) == "—" and fmt_score(None) == "—"
    assert fmt_p(0.0004) == "< 0.001" and fmt_p(0.0123) == "0.012"
    assert fmt_count(12345) == "12,345"
    shown = display_table(pd.DataFrame({"ci_low": [0.5, None], "n_measurable": [1200, 3],
                                        "nan_reasons": [{}, {"missing_input": 2}],
                                        "verifier": ["lexical:minilm-l6-v2+calibrated-v2", None]}))
    assert list(shown.columns) == ["95% CI low", "rows measured", "why not measured", "verifier"]
    text = shown.to_string()
    assert "None" not in text and "nan" not in text
    assert shown["verifier"].tolist() == ["Lexical (offline), calibrated", "—"]
