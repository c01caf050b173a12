"""The Claims page on a stored run (no evaluation needed): counters follow the filters, ERROR
verdicts show their error text, the verdict/claim/evidence/reason columns come first, confidence
comes from the store."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tempo_eval.io.dataset import load_dataset
from tempo_eval.metrics.base import MetricResult
from tempo_eval.store.runs import RunStore
from tempo_eval.verify.base import ClaimVerdict, Verdict
from tempo_eval_app.samples import SAMPLE_QA_NAME
from tests.support.paths import ROOT

APP = str(ROOT / "app.py")

METRIC = "factual_correctness"
CLAIMS = {
    0: [
        ClaimVerdict("The fire broke out on 2 September 1666.", Verdict.SUPPORTED, evidence="e", confidence=0.9),
        ClaimVerdict("It burned for about four days.", Verdict.NEUTRAL, evidence="e", confidence=0.55),
    ],
    1: [
        ClaimVerdict("The Berlin Wall fell in November 1987.", Verdict.CONTRADICTED,
                     evidence="On the night of 9 November 1989, ...", reason="years differ", confidence=0.97),
        ClaimVerdict("Crowds began to tear it down.", Verdict.ERROR, error="judge timed out after 30 s"),
    ],
}


def stored_run() -> int:
    """The sample dataset with one run whose claims are written straight into the store."""
    store = RunStore()
    dataset = load_dataset(ROOT / "data" / "sample" / "temporal_qa.csv")
    dataset.name = SAMPLE_QA_NAME
    dataset_id = store.save_dataset(dataset)
    run_id, _ = store.create_or_resume_run(dataset_id, {"metrics": [{"name": METRIC, "settings": {}}]}, name="stored")
    for row, claims in CLAIMS.items():
        records = [{"side": "response", **c.to_record()} for c in claims]
        store.record_row(run_id, row, f"q{row + 1}", [MetricResult(METRIC, 0.5, details={"claims": records})])
    store.set_status(run_id, "finished")
    return run_id


def open_claims(run_id: int, page: str = "claims") -> AppTest:
    """A fresh session on `page` (views/PAGE.py) with the run selected."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["runs"] = str(run_id)
    at.run()
    at.switch_page(f"views/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def table_with(at: AppTest, *columns: str):
    for element in at.dataframe:
        if all(c in element.value.columns for c in columns):
            return element.value
    raise AssertionError(f"no table with columns {columns}")


def counters(at: AppTest) -> dict[str, str]:
    return {m.label: str(m.value) for m in at.metric}


def test_claims_page_counters_columns_errors_and_confidence() -> None:
    run_id = stored_run()
    at = open_claims(run_id)
    assert counters(at) == {"Claims": "4 of 4", "Supported": "1", "Neutral (not stated)": "1", "Not supported": "0",
                            "Contradicted": "1"}
    table = at.dataframe(key="claims_table").value
    assert table.columns[:4].tolist() == ["verdict", "claim", "evidence", "reason"]
    assert table["confidence"].round(2).tolist()[:3] == [0.9, 0.55, 0.97]
    error_row = table[table["verdict"] == "Not verified (error)"].iloc[0]
    assert "judge timed out after 30 s" in error_row["reason"]

    # the counters follow the filters
    at.multiselect(key="claims_verdicts").set_value(["CONTRADICTED"]).run()
    assert counters(at) == {"Claims": "1 of 4", "Supported": "0", "Neutral (not stated)": "0", "Not supported": "0",
                            "Contradicted": "1"}
    at.multiselect(key="claims_verdicts").set_value(["SUPPORTED", "NEUTRAL", "CONTRADICTED", "ERROR"]).run()
    at.slider(key="claims_confidence").set_value(0.6).run()
    assert counters(at)["Claims"] == "2 of 4" and counters(at)["Supported"] == "1"

    # the hallucinated-only view says what it shows
    at.slider(key="claims_confidence").set_value(0.0).run()
    at.toggle(key="claims_hallucinated").set_value(True).run()
    assert any("Not supported and Contradicted claims only" in c.value for c in at.caption)
    assert at.multiselect(key="claims_verdicts_hallucinated").options == ["Contradicted"]  # what the switch keeps

    # an ERROR claim in focus shows its error text
    at.toggle(key="claims_hallucinated").set_value(False).run()
    at.session_state["claims_focus"] = f"{run_id}:1:{METRIC}:1"
    at.run()
    assert not at.exception
    # the selected claim's card is one HTML element (issue 29: fewer elements per page)
    assert any("judge timed out after 30 s" in h.proto.body for h in at.get("html"))


def test_a_verdict_is_confirmed_or_corrected_and_the_review_page_scores_agreement() -> None:
    run_id = stored_run()
    at = open_claims(run_id)
    at.session_state["claims_focus"] = f"{run_id}:0:{METRIC}:1"  # "It burned for about four days." NEUTRAL
    at.run()
    at.radio(key=f"label_{run_id}:0:{METRIC}:1").set_value("SUPPORTED").run()
    at.button(key="claims_save_label").click().run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe(key="claims_table").value
    assert table.loc[table["claim"] == "It burned for about four days.", "human"].iloc[0] == "Supported"
    at.session_state["claims_focus"] = f"{run_id}:1:{METRIC}:0"  # the 1987 claim: confirm CONTRADICTED
    at.run()
    at.button(key="claims_save_label").click().run()

    # the label is kept by claim + premises: a fresh session (a re-run's page) finds it
    review = open_claims(run_id, "review")
    assert not review.error, [e.value for e in review.error]
    assert not review.info, [e.value for e in review.info]
    agreement = table_with(review, "verifier", "kappa")
    row = agreement.iloc[0]
    assert row["n"] == 2 and row["accuracy"] == 0.5
    scores = table_with(review, "model_score", "human_score")
    first = scores[scores["row"] == 0].iloc[0]
    assert first["model_score"] == 0.5 and first["human_score"] == 1.0  # precision 1/2 -> 2/2 (no reference side)
    assert review.get("download_button")


def test_evaluate_shows_each_verifiers_measured_accuracy_from_the_bench_output() -> None:
    from tempo_eval.verify.accuracy import verifier_accuracy

    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("views/evaluate.py").run()
    assert not at.exception, [e.value for e in at.exception]
    macro_f1 = verifier_accuracy("lexical")["heldout"]["macro_f1"]
    # the chosen verifier's accuracy, in its fold
    assert any(e.label == "How accurate is lexical? What can it not judge?" for e in at.expander)
    captions = " ".join(c.value for c in at.caption).replace("\\", "")  # markdown escapes
    assert "Measured on" in captions and f"macro-F1 {macro_f1:.2f}" in captions
    # per kind of data: QA answers, news summaries and the bundled sample
    assert "QA answers with one invented name" in captions and "News summaries, FaithBench-style" in captions
    assert "Bundled sample: Factual Correctness" in captions
    at.radio(key="keep_ev_verifier").set_value("nli").run()
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "Accuracy not measured" in captions
