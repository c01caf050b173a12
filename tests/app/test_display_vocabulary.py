"""One thing, one name: the words the pages use for verdicts, metrics, table columns, dataset rows
and years, each from one function."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tempo_eval.verify.base import VERDICT_LABELS, Verdict, verdict_label
from tempo_eval_app import formatting, words


def test_every_verdict_has_one_display_name() -> None:
    assert set(VERDICT_LABELS) == {v.value for v in Verdict}
    assert verdict_label("NEUTRAL") == verdict_label(Verdict.NEUTRAL) == "Neutral (not stated)"
    assert verdict_label("PARTIALLY_SUPPORTED") == "Partly supported"
    assert verdict_label("supported") == "Supported"  # a human label as stored by older versions
    # Turn Faithfulness' yes / no / idk are the same verdicts, with the same names
    assert verdict_label("idk") == verdict_label("NEUTRAL")
    assert verdict_label("yes") == verdict_label("SUPPORTED") and verdict_label("no") == verdict_label("CONTRADICTED")
    assert verdict_label(None) == "" and verdict_label("something else") == "something else"
    assert len(set(VERDICT_LABELS.values())) == len(VERDICT_LABELS)


def test_the_legend_and_the_highlight_titles_use_the_same_names() -> None:
    from tempo_eval.viz.highlight import claim_marks, legend_html

    legend = legend_html()
    for label in VERDICT_LABELS.values():
        assert label in legend
    assert "not addressed" not in legend
    marks, _ = claim_marks("It rained.", [{"claim": "It rained.", "verdict": "NEUTRAL"}])
    assert marks[0].title == "Neutral (not stated)"


def test_tables_show_verdicts_metrics_and_pair_columns_by_name() -> None:
    pairs = pd.DataFrame([{"metric": "temporal_faithfulness", "run_a": "x", "run_b": "y", "mean_a": 0.5,
                           "mean_b": 0.6, "p_value": 0.2, "p_adjusted": 0.2, "significant": False, "wins": 1,
                           "ties": 2, "losses": 3, "n_queries": 6}])
    shown = formatting.display_table(pairs)
    assert list(shown.columns) == ["metric", "run A", "run B", "mean A", "mean B", "p-value", "p-value (adjusted)",
                                   "significant", "A better", "ties", "A worse", "queries"]
    assert shown.loc[0, "metric"] == "Temporal Faithfulness"
    compact = formatting.pairs_table(pairs)
    assert list(compact.columns) == ["run A", "run B", "mean A", "mean B", "p-value", "p-value (adjusted)",
                                     "significant", "A better / tie / worse", "queries"]
    assert compact.loc[0, "A better / tie / worse"] == "1 / 2 / 3"
    assert "metric" in formatting.pairs_table(pd.concat([pairs, pairs.assign(metric="other")])).columns
    claims = formatting.display_table(pd.DataFrame({"verdict": ["NEUTRAL", "CONTRADICTED"], "label": ["idk", "no"],
                                                    "human": [None, "SUPPORTED"]}))
    assert claims["verdict"].tolist() == ["Neutral (not stated)", "Contradicted"]
    assert claims["counts as"].tolist() == ["Neutral (not stated)", "Contradicted"]
    assert claims["human label"].tolist() == [formatting.MISSING, "Supported"]
    ranks = formatting.display_table(pd.DataFrame([{"rank": 1, "doc": "d1", "relevance": 1, "gain": 1.0,
                                                    "discounted_gain": 1.0}]))
    assert "discounted gain" in ranks.columns and "discounted_gain" not in ranks.columns


def test_a_row_is_named_by_its_query_id_else_counted_from_one() -> None:
    assert formatting.row_name("q1", 0) == "query q1"
    assert formatting.row_name(None, 0) == "row 1"
    assert formatting.row_name(float("nan"), 1233) == "row 1,234"


@pytest.mark.parametrize(("years", "text"), [
    ([1666, *range(1675, 1711)], "1666, 1675–1710"),
    ([1989], "1989"),
    ([1990, 1989], "1989–1990"),
    ([2001, 1999, 2000, 2000, 1066], "1066, 1999–2001"),
    ([], ""),
    (np.array([1914, 1915, 1918]), "1914–1915, 1918"),
    ([-44, -43, 14], "-44–-43, 14"),
])
def test_consecutive_years_are_one_range(years, text) -> None:
    assert formatting.year_ranges(years) == text


def test_a_long_list_of_years_is_cut_after_so_many_pieces() -> None:
    assert formatting.year_ranges([1, 3, 5, 6, 7, 9], most=2) == "1, 3 …"
    assert formatting.year_ranges([1, 3, 5], most=3) == "1, 3, 5"


def test_metric_names_are_display_names() -> None:
    assert words.metric_label("temporal_faithfulness") == "Temporal Faithfulness"
    assert words.column_label("n_queries") == "queries"


def test_the_link_to_a_view_is_the_pages_address_and_its_query() -> None:
    from tempo_eval_app.links import view_url

    assert view_url("?dataset=1&runs=2", "http://127.0.0.1:8501/claims") == "http://127.0.0.1:8501/claims?dataset=1&runs=2"
    assert view_url("?a=1", "https://host.example/app/results?old=1#x") == "https://host.example/app/results?a=1"
    assert view_url("?a=1", None) == "?a=1"
    assert view_url("?a=1", "javascript:alert(1)") == "?a=1"


def test_the_page_icon_is_an_image_in_the_repository() -> None:
    from tempo_eval_app.selection import PAGE_ICON

    with open(PAGE_ICON, "rb") as icon:
        assert icon.read(8) == b"\x89PNG\r\n\x1a\n"
