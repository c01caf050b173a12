"""As-of evaluation (docs/metrics.md, "As-of evaluation"): dates, the formulas on hand-computed
cases, the row metrics with their details and reason codes."""

from __future__ import annotations

import math
from datetime import date

import numpy as np
import pytest

from tempo_eval.core.pubdates import (
    DateError,
    parse_date,
    parse_day_column,
    read_id_dates,
)
from tempo_eval.metrics import asof
from tempo_eval.metrics.answer_currency import AnswerCurrency
from tempo_eval.metrics.evidence_age import (
    FutureLeak,
    MedianEvidenceAge,
    RecencyNDCG,
    StaleEvidence,
)
from tempo_eval.verify.base import Verdict


def day(text: str) -> float:
    return float(parse_date(text).day)


# ---- dates ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("2023-01-06", date(2023, 1, 6)),
    ("20230106", date(2023, 1, 6)),
    ("2023/01/06", date(2023, 1, 6)),
    ("2023/1/6", date(2023, 1, 6)),
    ("6 January 2023", date(2023, 1, 6)),
    ("January 6, 2023", date(2023, 1, 6)),
    ("2023-01-06T10:00:00", date(2023, 1, 6)),
    ("2023-01-06T10:00:00Z", date(2023, 1, 6)),
    # a zone is converted to UTC before the date is taken
    ("2023-01-06T23:30:00-02:00", date(2023, 1, 7)),
    ("2023-01-06T01:00:00+02:00", date(2023, 1, 5)),
    ("Fri, 06 Jan 2023 00:30:00 +0100", date(2023, 1, 5)),
    ("Fri, 06 Jan 2023 10:00:00 GMT", date(2023, 1, 6)),
])
def test_dates_in_every_listed_format_are_read(text, expected):
    parsed = parse_date(text)
    assert parsed.first == parsed.last == expected
    assert not parsed.is_interval


def test_a_year_and_a_month_are_intervals_standing_for_their_first_day():
    year, month = parse_date("2023"), parse_date("2024-02")
    assert (year.first, year.last, year.label) == (date(2023, 1, 1), date(2023, 12, 31), "2023")
    assert (month.first, month.last, month.label) == (date(2024, 2, 1), date(2024, 2, 29), "2024-02")
    assert year.is_interval and year.day == date(2023, 1, 1).toordinal() - date(1970, 1, 1).toordinal()


@pytest.mark.parametrize("missing", [None, "", "   ", float("nan")])
def test_a_missing_date_is_unknown_not_an_error(missing):
    assert parse_date(missing) is None


@pytest.mark.parametrize("bad", ["yesterday", "2023-13-01", "2023-02-30", "13/01/2023", "2023-1"])
def test_an_unreadable_date_names_row_column_and_value(bad):
    with pytest.raises(DateError) as caught:
        parse_date(bad, source="news.csv", row=4, column="context_dates")
    message = str(caught.value)
    assert "news.csv" in message and "row 4" in message and "'context_dates'" in message
    assert repr(bad) in message and "ISO 8601" in message


def test_a_column_of_dates_reads_iso_fast_and_the_other_formats_one_by_one():
    days = parse_day_column(["2023-01-06", None, " ", "2023", "January 6, 2023", "1970-01-02"])
    expected = [day("2023-01-06"), math.nan, math.nan, day("2023-01-01"), day("2023-01-06"), 1.0]
    np.testing.assert_array_equal(days, expected)


def test_a_column_with_an_unreadable_date_names_its_line():
    with pytest.raises(DateError, match=r"line 7.*'nope'"):
        parse_day_column(["2023-01-06", "nope"], source="d.tsv", column="date", lines=np.array([3, 7]))


def test_an_id_dates_file_is_read_and_looked_up(tmp_path):
    path = tmp_path / "doc-dates.tsv"
    path.write_text("d1\t2023-01-06\n\nd2\t\nd3\tFri, 06 Jan 2023 10:00:00 +0000\r\nd4\t2022\n")
    dates = read_id_dates(path)
    assert dates.ids.to_pylist() == ["d1", "d2", "d3", "d4"]
    np.testing.assert_array_equal(dates.days_of(["d1", "d2", "d3", "d4", None, "d9"]),
                                  [day("2023-01-06"), math.nan, day("2023-01-06"), day("2022-01-01"), math.nan, math.nan])
    looked = dates.days_of(np.array([["d4", "x"], ["d1", "d3"]], dtype=object))
    np.testing.assert_array_equal(looked, [[day("2022-01-01"), math.nan], [day("2023-01-06")] * 2])


@pytest.mark.parametrize(("content", "message"), [
    ("d1\t2023-01-06\nd2 2023-01-07\n", r"line 2: expected 'doc_id<TAB>date'"),
    ("d1\t2023-01-06\nd1\t2023-01-07\n", r"'d1' is given twice \(lines 1 and 2\)"),
    ("d1\t2023-01-06\n\nd2\tsoon\n", r"line 3.*'soon'"),
    ("\t2023-01-06\n", r"line 1: the doc id is empty"),
])
def test_a_bad_id_dates_file_names_the_file_and_line(tmp_path, content, message):
    path = tmp_path / "dates.tsv"
    path.write_text(content)
    with pytest.raises(DateError, match=message) as caught:
        read_id_dates(path).days_of(["d1", "d2"])
    assert str(path) in str(caught.value)


# ---- formulas on hand-computed cases ------------------------------------------------------------

AS_OF = day("2023-01-10")
#            age 7               future (-1)         undated  interval: age 9   interval: future
PUBLISHED = [day("2023-01-03"), day("2023-01-11"), math.nan, day("2023-01-01"), day("2024-01-01")]


def test_ages_are_whole_days_and_an_interval_takes_its_first_day():
    ages = asof.evidence_ages(AS_OF, np.array([PUBLISHED]))
    np.testing.assert_array_equal(ages, [[7, -1, math.nan, 9, -356]])


def test_future_leak_counts_only_dated_documents():
    ages = asof.evidence_ages(AS_OF, np.array([PUBLISHED]))
    assert asof.future_leak(ages)[0] == pytest.approx(2 / 4)


def test_an_interval_that_began_before_the_as_of_date_is_not_from_the_future():
    # 2023-01 ends after 2023-01-10, but its first day is before it
    ages = asof.evidence_ages(AS_OF, np.array([[day("2023-01-01")]]))
    assert asof.future_leak(ages)[0] == 0.0


def test_stale_evidence_is_the_share_older_than_max_age():
    ages = asof.evidence_ages(AS_OF, np.array([PUBLISHED]))
    assert asof.stale_evidence(ages, max_age=8)[0] == pytest.approx(1 / 4)   # only the 9-day one
    assert asof.stale_evidence(ages, max_age=9)[0] == 0.0                    # age > max_age, strictly
    assert asof.stale_evidence(ages, max_age=0)[0] == pytest.approx(2 / 4)


def test_median_age_is_over_dated_documents_not_from_the_future():
    ages = asof.evidence_ages(AS_OF, np.array([PUBLISHED]))
    assert asof.median_evidence_age(ages)[0] == 8.0        # median of 7 and 9
    odd = asof.evidence_ages(AS_OF, np.array([[day("2023-01-10"), day("2023-01-03"), day("2022-01-10")]]))
    assert asof.median_evidence_age(odd)[0] == 7.0         # 0, 7, 365


def test_empty_and_undated_rows_are_nan_not_zero():
    undated = np.full((1, 3), math.nan)
    empty = np.zeros((1, 0))
    for ages in (undated, empty):
        assert math.isnan(asof.future_leak(ages)[0])
        assert math.isnan(asof.stale_evidence(ages)[0])
        assert math.isnan(asof.median_evidence_age(ages)[0])
    only_future = np.array([[-3.0, -1.0]])
    assert math.isnan(asof.median_evidence_age(only_future)[0])
    assert asof.future_leak(only_future)[0] == 1.0


def test_recency_gains_decay_by_half_life_zero_for_future_full_for_undated():
    gains = asof.recency_gains(np.array([[1, 2, 1, 0]]), np.array([[10, -3, math.nan, 0]]), half_life=10)
    np.testing.assert_allclose(gains, [[0.5, 0.0, 1.0, 0.0]])


def test_recency_ndcg_hand_computed_with_a_tie_in_the_ideal_ordering():
    # retrieved: d1 rel 1 age 10 (gain .5), d2 rel 0, d3 rel 2 from the future (gain 0), d4 rel 1 undated (1)
    rel = np.array([[1, 0, 2, 1]])
    ages = np.array([[10, 5, -3, math.nan]])
    # every relevant doc: d1 (.5), d3 (0), d4 (1, undated), d5 (1, not retrieved: undated): d4 and d5 tie
    ideal_rel = np.array([[1, 2, 1, 1]])
    ideal_ages = np.array([[10, -3, math.nan, math.nan]])
    dcg = 0.5 / math.log2(2) + 1.0 / math.log2(5)
    idcg = 1.0 / math.log2(2) + 1.0 / math.log2(3) + 0.5 / math.log2(4)
    score = asof.recency_ndcg(rel, ages, ideal_rel, ideal_ages, half_life=10)[0]
    assert score == pytest.approx(dcg / idcg)
    swapped = asof.recency_ndcg(rel, ages, ideal_rel[:, [0, 1, 3, 2]], ideal_ages[:, [0, 1, 3, 2]], half_life=10)
    assert swapped[0] == score


def test_recency_ndcg_cuts_the_ideal_at_k():
    # k = 1: only the best ideal gain counts
    score = asof.recency_ndcg(np.array([[1]]), np.array([[0]]), np.array([[1, 1]]), np.array([[0, 0]]), 365)
    assert score[0] == 1.0


def test_recency_ndcg_is_nan_when_every_relevant_document_is_from_the_future_or_none_is_dated():
    future = asof.recency_ndcg(np.array([[1]]), np.array([[-1]]), np.array([[1]]), np.array([[-1]]), 365)
    undated = asof.recency_ndcg(np.array([[1]]), np.array([[math.nan]]), np.array([[1]]), np.array([[math.nan]]), 365)
    assert math.isnan(future[0]) and math.isnan(undated[0])


def test_reason_codes_in_order_of_precedence():
    ages = np.array([[math.nan], [1.0], [math.nan], [2.0]])
    codes = asof.reason_codes(np.array([math.nan, 5.0, 5.0, 5.0]), ages, relevant=np.array([1, 0, 1, 1]))
    assert codes == ["no_as_of", "no_gold", "no_dates", None]


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf, "7", True])
def test_half_life_must_be_a_positive_number_of_days(bad):
    with pytest.raises(ValueError, match="half_life"):
        asof.recency_gains(np.ones((1, 1)), np.ones((1, 1)), half_life=bad)


def test_one_matrix_of_queries_gives_each_row_its_own_value():
    published = np.array([PUBLISHED, [day("2020-01-01"), math.nan, math.nan, math.nan, math.nan]])
    ages = asof.evidence_ages(np.array([AS_OF, day("2021-01-01")]), published)
    np.testing.assert_allclose(asof.future_leak(ages), [0.5, 0.0])
    np.testing.assert_allclose(asof.stale_evidence(ages, 365), [0.0, 1.0])
    np.testing.assert_allclose(asof.median_evidence_age(ages), [8.0, 366.0])


# ---- answer currency --------------------------------------------------------------------------

def test_answers_are_normalised_squad_style_and_matched_on_word_boundaries():
    assert asof.normalize_answer("  The U.S.   President, an  Officer! ") == "us president officer"
    assert asof.mentions("It is Joe Biden.", "joe biden")
    assert not asof.mentions("Bidenomics is a word", "Biden")
    assert not asof.mentions("anything", "the")   # a reference that normalises to nothing


@pytest.mark.parametrize(("answer", "label", "score"), [
    ("The CEO is Linda Yaccarino.", "current", 1.0),
    ("Elon Musk runs it.", "outdated", 0.0),
    ("Both Elon Musk and Linda Yaccarino", "current", 1.0),   # current wins
    ("Jack Dorsey", "other", 0.0),
])
def test_answer_currency_labels(answer, label, score):
    result = AnswerCurrency().measure(answer=answer, reference="Linda Yaccarino",
                                      outdated_references=["Elon Musk", "Parag Agrawal"])
    assert (result.details["label"], result.score) == (label, score)
    assert result.reason.startswith(label)


def test_answer_currency_without_a_reference_is_nan_no_reference():
    result = AnswerCurrency().measure(answer="Elon Musk", outdated_references=["Elon Musk"])
    assert math.isnan(result.score) and result.reason_code == "no_reference"


def test_outdated_answer_rate_is_among_rows_with_outdated_references():
    labels = ["outdated", "current", "outdated", "other", None]
    has = [True, True, False, True, True]
    assert asof.currency_counts(labels, has)["outdated_rate"] == pytest.approx(1 / 3)
    assert math.isnan(asof.currency_counts(["current"], [False])["outdated_rate"])


# ---- the row metrics: details and reason codes ---------------------------------------------------

ROW = {
    "retrieved_ids": ["a", "b", "c", "a", "d", "e"],
    "context_dates": ["2023-01-03", "2023-01-11", None, "1999-01-01", "2023", "January 1, 2024"],
    "reference_date": "2023-01-10",
}


def test_future_leak_row_details_explain_every_document():
    result = FutureLeak(k=5).measure(**ROW)
    assert result.score == pytest.approx(2 / 4)   # "a" repeated: deduplicated, its first date kept
    ranks = result.details["ranks"]
    assert [r["doc"] for r in ranks] == ["a", "b", "c", "d", "e"]
    assert ranks[1] == {"rank": 2, "doc": "b", "date": "2023-01-11", "age": -1, "future": True,
                        "stale": False, "undated": False}
    assert ranks[2]["undated"] and ranks[2]["age"] is None
    assert ranks[3]["date"] == "2023" and ranks[3]["age"] == 9 and not ranks[3]["future"]
    assert ranks[4]["date"] == "2024-01-01" and ranks[4]["future"]


def test_stale_and_median_rows():
    stale = StaleEvidence(k=5, max_age=8).measure(**ROW)
    assert stale.score == pytest.approx(1 / 4)
    assert [r["stale"] for r in stale.details["ranks"]] == [False, False, False, True, False]
    assert MedianEvidenceAge(k=5).measure(**ROW).score == 8.0
    assert MedianEvidenceAge(k=1).measure(**ROW).score == 7.0


def test_row_metrics_not_measurable_cases():
    no_as_of = FutureLeak().measure(retrieved_ids=["a"], context_dates=["2023-01-01"])
    assert math.isnan(no_as_of.score) and no_as_of.reason_code == "no_as_of"
    no_dates = StaleEvidence().measure(retrieved_ids=["a", "b"], context_dates=[None, None], reference_date="2023-01-01")
    assert no_dates.reason_code == "no_dates"
    empty = MedianEvidenceAge().measure(retrieved_ids=[], context_dates=[], reference_date="2023-01-01")
    assert empty.reason_code == "no_dates"
    all_future = MedianEvidenceAge().measure(retrieved_ids=["a"], context_dates=["2024"], reference_date="2023-01-01")
    assert math.isnan(all_future.score) and all_future.reason_code == "no_dates"
    no_gold = RecencyNDCG().measure(retrieved_ids=["a"], context_dates=["2022"], reference_date="2023-01-01")
    assert no_gold.reason_code == "no_gold"
    future_gold = RecencyNDCG().measure(retrieved_ids=["a"], context_dates=["2024"],
                                        reference_date="2023-01-01", gold_ids=["a"])
    assert math.isnan(future_gold.score) and future_gold.reason_code == "no_gold"


def test_recency_ndcg_row_takes_a_relevant_document_date_from_any_retrieved_copy():
    # k=1: "b" (relevant, age 365 = one half life) is retrieved at rank 2, beyond k: IDCG uses its date
    result = RecencyNDCG(k=1, half_life=365).measure(
        retrieved_ids=["a", "b"], context_dates=["2023-01-01", "2022-01-01"],
        reference_date="2023-01-01", gold_ids={"a": 1, "b": 2},
    )
    # DCG = 1 (a, age 0); ideal top 1 = max(1, 2 * 0.5) = 1 -> 1.0
    assert result.score == pytest.approx(1.0)
    assert result.details["ranks"][0]["gain"] == 1.0 and result.details["idcg"] == pytest.approx(1.0)


def test_dates_misaligned_with_ids_are_an_error():
    with pytest.raises(ValueError, match="context_dates has 1 dates but retrieved_ids has 2"):
        FutureLeak().measure(retrieved_ids=["a", "b"], context_dates=["2023"], reference_date="2023")


def test_a_row_with_contexts_only_is_ranked_by_list_position():
    result = FutureLeak(k=2).measure(contexts=["x", "y"], context_dates=["2023", "2025"], reference_date="2024-06-01")
    assert [r["doc"] for r in result.details["ranks"]] == [0, 1] and result.score == 0.5


def test_run_scores_equal_the_row_metrics_query_by_query():
    published = np.array([PUBLISHED, [day("2020-01-01"), math.nan, math.nan, math.nan, math.nan]])
    as_of = np.array([AS_OF, math.nan])
    relevance = np.array([[1, 0, 2, 1, 0], [1, 0, 0, 0, 0]])
    ideal_relevance = np.array([[1, 2, 1], [1, 0, 0]])
    ideal_published = np.array([[PUBLISHED[0], PUBLISHED[2], PUBLISHED[3]], [day("2020-01-01"), math.nan, math.nan]])
    scores = asof.run_scores(published, as_of, 4, relevance=relevance, ideal_relevance=ideal_relevance,
                             ideal_published=ideal_published, max_age=8, half_life=10)
    np.testing.assert_allclose(scores["future_leak"], [1 / 3, math.nan])     # top 4: 7, -1, ?, 9
    np.testing.assert_allclose(scores["stale_evidence"], [1 / 3, math.nan])
    np.testing.assert_allclose(scores["median_age"], [8.0, math.nan])
    gains = [2 ** -0.7, 0.0, 2.0, 2 ** -0.9]    # ages 7, -1 (future), undated, 9; half-life 10
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    idcg = 2.0 + 2 ** -0.7 / math.log2(3) + 2 ** -0.9 / 2     # the undated rel-2 document first
    np.testing.assert_allclose(scores["recency_ndcg"], [dcg / idcg, math.nan])


def test_answer_currency_with_a_verifier_matches_what_it_says_supported():
    from tests.support.verifiers import TableVerifier

    verifier = TableVerifier({"Elon Musk": Verdict.SUPPORTED})
    result = AnswerCurrency(verifier=verifier).measure(
        answer="Twitter's boss is the Tesla founder.", reference="Linda Yaccarino", outdated_references=["Elon Musk"])
    assert (result.details["label"], result.score) == ("outdated", 0.0)
    assert [v["verdict"] for v in result.details["verdicts"]] == ["NEUTRAL", "SUPPORTED"]


def test_answer_currency_is_nan_when_the_verifier_fails():
    from tests.support.verifiers import TableVerifier

    verifier = TableVerifier({"Linda Yaccarino": Verdict.ERROR})
    result = AnswerCurrency(verifier=verifier).measure(answer="x", reference="Linda Yaccarino")
    assert math.isnan(result.score) and result.reason_code == "verifier_error"


def test_run_columns_give_the_row_metrics_values(tmp_path):
    import pyarrow as pa

    from tempo_eval.metrics.asof_columns import run_asof_scores

    (tmp_path / "docs.tsv").write_text("a\t2023-01-03\nb\t2023-01-11\nc\t\nd\t2023\ne\t2022-01-10\nf\t2022-06-01\n")
    (tmp_path / "queries.tsv").write_text("q1\t2023-01-10\nq2\t2023-01-10\nq3\t2023-01-10\n")
    docs, queries = read_id_dates(tmp_path / "docs.tsv"), read_id_dates(tmp_path / "queries.tsv", kind="query")
    codes = np.array([0, 0, 0, 0, 1, 1])
    docids = pa.array(["a", "b", "c", "d", "e", "a"])
    qrels = (np.array([0, 0, 1, 0, 1]), pa.array(["a", "c", "e", "f", "x"]), np.array([1, 2, 1, 1, 0]))
    scores = run_asof_scores(codes, docids, np.array([0, 1, 2]), ["q1", "q2", "q3"], 3, doc_dates=docs,
                             query_dates=queries, qrels=qrels, max_age=8, half_life=10)
    rows = [
        {"retrieved_ids": ["a", "b", "c", "d"], "context_dates": ["2023-01-03", "2023-01-11", None, "2023"],
         "gold_ids": {"a": 1, "c": 2, "f": 1}},
        {"retrieved_ids": ["e", "a"], "context_dates": ["2022-01-10", "2023-01-03"], "gold_ids": {"e": 1, "x": 0}},
    ]
    for index, row in enumerate(rows):
        row["reference_date"] = "2023-01-10"
        assert scores["future_leak"][index] == pytest.approx(FutureLeak(k=3).compute(**{
            key: row[key] for key in ("retrieved_ids", "context_dates", "reference_date")}))
        assert scores["stale_evidence"][index] == pytest.approx(StaleEvidence(k=3, max_age=8).compute(**{
            key: row[key] for key in ("retrieved_ids", "context_dates", "reference_date")}))
    # Recency NDCG: f (relevant, never retrieved) takes its date from the doc-dates file
    gains = [2 ** -0.7, 0.0, 2.0]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    idcg = 2.0 + 2 ** -0.7 / math.log2(3) + 2 ** (-223 / 10) / 2    # c undated; a age 7; f age 223
    assert scores["recency_ndcg"][0] == pytest.approx(dcg / idcg)
    assert scores["recency_ndcg"][1] == pytest.approx(2 ** (-365 / 10) / 2 ** (-365 / 10))
    assert all(math.isnan(scores[name][2]) for name in scores)   # q3: no result in the run


@pytest.mark.parametrize(("value", "expected"), [
    (2023, "2023"),                                          # a year as a JSON number
    (np.datetime64("2023-01-06T23:00"), "2023-01-06"),
    (date(2023, 1, 6), "2023-01-06"),
    ("2023-01-06 10:00", "2023-01-06"),
    ("2023-01-06T10:00:00.123456789Z", "2023-01-06"),
    ("  2023-01-06  ", "2023-01-06"),
])
def test_dates_given_as_values_or_with_odd_spacing_are_read(value, expected):
    assert parse_date(value).label == expected


@pytest.mark.parametrize("bad", ["0000", "0000-01-01", "2023-01-06T25:00", 20230106, True, 12, "+2023-01-06"])
def test_hostile_dates_are_refused_with_the_place(bad):
    with pytest.raises(DateError, match=r"row 1, column 'context_dates'"):
        parse_date(bad, row=1, column="context_dates")


def test_a_date_time_in_another_zone_is_taken_in_utc():
    import pandas as pd

    assert parse_date(pd.Timestamp("2023-01-06T23:30", tz="America/New_York")).label == "2023-01-07"


def test_an_id_dates_file_read_for_wanted_ids_keeps_only_them_and_names_lines(tmp_path):
    path = tmp_path / "doc-dates.tsv"
    path.write_text("a\t2023-01-06\n\nb\tnot a date\nc\t2022\na\t2021\nd\t2020\n")
    dates = read_id_dates(path, wanted=np.array([["c", "d"], ["zz", None]], dtype=object))
    assert dates.ids.to_pylist() == ["c", "d"]
    np.testing.assert_array_equal(dates.days_of(["d", "c", "a"]), [day("2020-01-01"), day("2022-01-01"), math.nan])
    with pytest.raises(DateError, match=r"line 3.*'not a date'"):
        read_id_dates(path, wanted=["b"]).days_of(["b"])
    with pytest.raises(DateError, match=r"'a' is given twice \(lines 1 and 5\)"):
        read_id_dates(path, wanted=["a"]).days_of(["a"])
