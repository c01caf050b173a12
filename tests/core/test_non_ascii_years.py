"""Years written with non-ASCII digits (full-width, Arabic-Indic; issue 19.15) are years, with offsets into
the original text, for extraction, faithfulness and highlighting."""

from __future__ import annotations

import pytest

# ---- 15: non-ASCII digits in answers and contexts ----------------------------------------------


@pytest.mark.parametrize(
    ("text", "years", "expression"),
    [
        ("It happened in ２０２０.", {2020}, "２０２０"),
        ("It happened in ٢٠٢٠.", {2020}, "٢٠٢٠"),
        ("Built in ۱۹۹۹ and rebuilt ۲۰۰۵–۲۰۰۷.", {1999, 2005, 2006, 2007}, "۲۰۰۵–۲۰۰۷"),
        ("The war lasted from １９１４ to １９１８.", set(range(1914, 1919)), "from １９１４ to １９１８"),
        ("In the ١٩٩٠s prices rose.", set(range(1990, 2000)), "١٩٩٠s"),
    ],
)
def test_non_ascii_year_digits_are_years_with_offsets_into_the_original(text: str, years: set[int], expression: str) -> None:
    from tempo_eval.core.extract import extract_aft

    focus = extract_aft(text)
    assert years <= set(focus.years)
    assert any(span.text == expression for span in focus.spans)
    for span in focus.spans:
        assert text[span.start : span.end] == span.text


def test_focus_time_faithfulness_grounds_full_width_and_arabic_indic_years() -> None:
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    metric = TemporalFaithfulness(mode="focus_time")
    grounded = metric.measure(answer="It happened in ２０２０.", contexts=["In ٢٠٢٠ it happened."])
    assert grounded.score == 1.0
    missing = metric.measure(answer="It happened in ２０２０ and 1999.", contexts=["In ٢٠٢٠ it happened."])
    assert missing.score == 0.5
    assert missing.details["years"][1]["answer_spans"] == ["２０２０"]


def test_highlighting_marks_the_original_full_width_year() -> None:
    from tempo_eval.core.extract import extract_aft
    from tempo_eval.viz.highlight import render_marks, year_marks

    text = "Ｉt was ２０２０, then 2021."
    html = render_marks(text, year_marks(extract_aft(text).spans))
    assert ">２０２０</mark>" in html and ">2021</mark>" in html

