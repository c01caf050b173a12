"""Agreement between reviewers: Cohen's kappa (checked against scikit-learn's
`cohen_kappa_score`), per pair of reviewers on the claims both labelled, the reviewers' consensus
(majority; ties have none and are counted), and the Review page that shows them, with each
reviewer's labels kept apart."""

from __future__ import annotations

import json
import math
import random

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from tempo_eval.compare.review import cohen_kappa, consensus, majority, reviewer_agreement
from tempo_eval.store.labels import LabelStore
from tests.app.test_claims_page import METRIC, open_claims, stored_run, table_with

S, N, C = "SUPPORTED", "NEUTRAL", "CONTRADICTED"


@pytest.mark.parametrize("first, second", [
    ([S, S, N, C, S, N, C, C, S, N], [S, N, N, C, S, S, C, N, S, N]),
    ([S, S, S, N], [S, S, N, N]),
    ([S, N, C], [C, S, N]),              # no agreement at all
    ([S, S, N, N], [S, N, S, N]),        # agreement at chance level
    ([S, N, C, S], [S, N, C, S]),        # perfect
    ([S, S], [N, N]),                    # two labels that never meet
])
def test_kappa_is_scikit_learns(first: list[str], second: list[str]) -> None:
    assert cohen_kappa(first, second) == pytest.approx(cohen_kappa_score(first, second))


def test_kappa_is_scikit_learns_on_random_labelings() -> None:
    draw = random.Random(7)
    for _ in range(50):
        n = draw.randint(2, 40)
        first = [draw.choice((S, N, C)) for _ in range(n)]
        second = [x if draw.random() < 0.6 else draw.choice((S, N, C)) for x in first]
        expected = cohen_kappa_score(first, second)
        assert cohen_kappa(first, second) == pytest.approx(expected, nan_ok=True)


def test_kappa_by_hand_perfect_none_and_chance() -> None:
    assert cohen_kappa([S, N, C, S], [S, N, C, S]) == pytest.approx(1.0)
    # p_o = 0, p_e = 1/3 (each label once on each side): (0 - 1/3) / (2/3)
    assert cohen_kappa([S, N, C], [C, S, N]) == pytest.approx(-0.5)
    # p_o = 1/2 = p_e: exactly what chance gives
    assert cohen_kappa([S, S, N, N], [S, N, S, N]) == pytest.approx(0.0)
    # scikit-learn's values, written down: NaN where chance agreement is 1
    assert math.isnan(cohen_kappa([S, S], [S, S])) and math.isnan(cohen_kappa_score([S, S], [S, S]))


def _labels(*rows: tuple[str, str, str]) -> pd.DataFrame:
    """(claim, reviewer, label) rows as `LabelStore.reviews` gives them (one premises hash)."""
    return pd.DataFrame([(c, "h", r, label) for c, r, label in rows],
                        columns=["claim", "premises_hash", "reviewer", "label"])


def test_kappa_per_pair_of_reviewers_on_the_claims_both_labelled() -> None:
    labels = _labels(("a", "ann", S), ("b", "ann", C), ("c", "ann", S),
                     ("a", "bob", N), ("b", "bob", C), ("d", "bob", N),
                     ("e", "eve", S), ("f", "eve", S),
                     ("a", "", S), ("b", "", C))  # the unknown reviewer (labels from before) counts as one
    pairs = reviewer_agreement(labels).set_index(["reviewer_a", "reviewer_b"])
    assert list(pairs.index) == [("", "ann"), ("", "bob"), ("", "eve"), ("ann", "bob"), ("ann", "eve"), ("bob", "eve")]
    ann_bob = pairs.loc[("ann", "bob")]
    # shared a, b: p_o = 1/2; p_e = P(C) * P(C) = 1/2 * 1/2 = 1/4 -> (1/2 - 1/4) / (3/4)
    assert (ann_bob["n"], ann_bob["agreed"], ann_bob["reason"]) == (2, 1, "")
    assert ann_bob["kappa"] == pytest.approx(1 / 3) == pytest.approx(cohen_kappa_score([S, C], [N, C]))
    assert pairs.loc[("", "ann"), "kappa"] == pytest.approx(1.0)
    no_shared = pairs.loc[("ann", "eve")]
    assert no_shared["n"] == 0 and math.isnan(no_shared["kappa"]) and no_shared["reason"] == "no claim labelled by both"


def test_a_pair_that_gave_one_label_to_everything_has_no_kappa_and_says_why() -> None:
    pairs = reviewer_agreement(_labels(("a", "ann", S), ("b", "ann", S), ("a", "bob", S), ("b", "bob", S)))
    (row,) = pairs.itertuples(index=False)
    assert row.n == 2 and row.agreed == 2 and math.isnan(row.kappa) and "undefined" in row.reason


def test_the_consensus_is_the_majority_and_a_tie_has_none() -> None:
    assert majority([S, S, N]) == S
    assert majority([S, N]) is None and majority([S, S, N, N, C]) is None and majority([]) is None
    agreed = consensus(_labels(("a", "ann", S), ("a", "bob", S), ("a", "eve", N),
                               ("b", "ann", S), ("b", "bob", N),
                               ("c", "eve", C))).set_index("claim")
    assert agreed.loc["a", "consensus"] == S and agreed.loc["a", "reviewers"] == 3
    assert agreed.loc["b", "consensus"] is None  # a tie
    assert agreed.loc["c", "consensus"] == C
    assert list(reviewer_agreement(_labels()).columns) == ["reviewer_a", "reviewer_b", "n", "agreed", "kappa", "reason"]


def test_the_review_page_keeps_reviewers_apart_and_shows_their_agreement(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGNAME", "os-alice")
    run_id = stored_run()
    at = open_claims(run_id)
    # alice labels two claims on Claims: "four days" SUPPORTED (the verifier said NEUTRAL), 1987 CONTRADICTED
    for focus, label in ((f"{run_id}:0:{METRIC}:1", S), (f"{run_id}:1:{METRIC}:0", C)):
        at.session_state["claims_focus"] = focus
        at.run()
        at.radio(key=f"label_{focus}").set_value(label).run()
        at.button(key="claims_save_label").click().run()
    assert not at.exception, [e.value for e in at.exception]
    labels = LabelStore()
    stored = {row.claim: json.loads(row.premises) for row in labels.frame().itertuples()}
    assert set(labels.frame()["reviewer"]) == {"os-alice"}
    # bob disagrees on "four days", agrees on 1987; carol labels only the fire claim
    labels.set_label("It burned for about four days.", stored["It burned for about four days."], N, user="bob")
    labels.set_label("The Berlin Wall fell in November 1987.", stored["The Berlin Wall fell in November 1987."], C,
                     user="bob")
    labels.set_label("The fire broke out on 2 September 1666.", stored["It burned for about four days."], S, user="carol")
    labels.close()

    # bob's Claims page shows his own label as his, not alice's
    monkeypatch.setenv("LOGNAME", "bob")
    bob = open_claims(run_id)
    table = bob.dataframe(key="claims_table").value
    assert table.loc[table["claim"] == "It burned for about four days.", "human"].iloc[0] == "Neutral (not stated)"
    bob.session_state["claims_focus"] = f"{run_id}:0:{METRIC}:1"
    bob.run()
    said = [c.value.replace("\\", "") for c in bob.caption]
    assert "Stored human label (yours): Neutral (not stated). Other reviewers' labels are kept apart; **Review " \
           "verdicts** shows how far reviewers agree." in said
    assert "Other reviewers: os-alice: Supported" in said

    review = open_claims(run_id, "review")
    assert not review.error, [e.value for e in review.error]
    pairs = table_with(review, "reviewer_a", "reviewer_b", "kappa").set_index(["reviewer_a", "reviewer_b"])
    assert pairs.loc[("bob", "carol"), "reason"] == "no claim labelled by both"
    assert pairs.loc[("bob", "os-alice"), "n"] == 2
    assert pairs.loc[("bob", "os-alice"), "kappa"] == pytest.approx(cohen_kappa_score([N, C], [S, C]))
    # against the consensus: the "four days" claim is tied (alice S, bob N), left out and counted
    verifiers = table_with(review, "verifier", "kappa")
    row = verifiers.iloc[0]
    # 1987 (CONTRADICTED by alice and bob) and the fire (SUPPORTED by carol) agree with the verifier
    assert row["n"] == 2 and row["ties left out"] == 1 and row["accuracy"] == 1.0
    assert any("1 claim(s) of these runs are tied" in c.value for c in review.caption)
