"""Numbers read the same on every page: counts, scores and p-values through one formatter each (issue 24)."""

from __future__ import annotations

import pandas as pd


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

