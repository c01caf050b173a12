"""Answer currency with a verifier chosen (issue 23, asof-spec: "with a verifier chosen, when the
verifier says SUPPORTED"): the real lexical verifier, offline, on an answer the word match misses
(a paraphrase) and one it wrongly accepts (the current answer named only to be denied), through
the metric, `evaluate --verifier lexical` and the Evaluate page."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.app.test_pages import (  # noqa: F401 - worker_in_this_process: the page's jobs run in this process
    assert_clean,
    goto,
    open_app,
    wait_job,
    worker_in_this_process,
)
from tests.support.cli import run_cli_streams

#: (answer, reference, outdated references, word-match label, lexical-verifier label)
CASES = [
    # a paraphrase: "between 4.25 and 4.50" is not "4.25 to 4.50" word for word
    ("The rate is between 4.25 and 4.50 percent.", "4.25 to 4.50 percent", ["3.75 to 4 percent"],
     "other", "current"),
    # the current answer is named only to be denied: the word match takes it as current
    ("Not Elon Musk: Parag Agrawal is still the chief executive.", "Elon Musk", ["Parag Agrawal"],
     "current", "outdated"),
]


def rows() -> list[dict]:
    return [{"query_id": f"q{i}", "query": "What is it now?", "answer": answer, "reference": reference,
             "outdated_references": outdated, "contexts": [answer]}
            for i, (answer, reference, outdated, _, _) in enumerate(CASES)]


@pytest.fixture(scope="module")
def lexical():
    from tempo_eval.verify import make_verifier

    return make_verifier("lexical")


@pytest.mark.parametrize(("answer", "reference", "outdated", "word", "verified"), CASES)
def test_the_lexical_verifier_decides_where_the_word_match_errs(lexical, answer, reference, outdated, word,
                                                                verified) -> None:
    from tempo_eval.metrics.answer_currency import AnswerCurrency

    plain = AnswerCurrency().measure(answer=answer, reference=reference, outdated_references=outdated)
    checked = AnswerCurrency(verifier=lexical).measure(answer=answer, reference=reference,
                                                       outdated_references=outdated)
    assert plain.details["label"] == word and "verdicts" not in plain.details
    assert checked.details["label"] == verified
    assert checked.score == (1.0 if verified == "current" else 0.0)
    assert checked.reason.startswith(f"{verified}:")
    assert len(checked.details["verdicts"]) == 1 + len(outdated)


def test_evaluate_with_a_verifier_labels_answer_currency_by_its_verdicts(tmp_path, capsys) -> None:
    data = tmp_path / "answers.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows()))
    labels = {}
    for option in ([], ["--verifier", "lexical"]):
        out = tmp_path / f"out{len(option)}.csv"
        code, _, err = run_cli_streams(["evaluate", str(data), "--metrics", "answer_currency", "--out", str(out),
                                        "--no-progress", *option], capsys)
        assert code == 0, err
        frame = pd.read_csv(out).sort_values("row")
        labels[bool(option)] = list(frame["reason"].str.split(":").str[0])
    assert labels[False] == [case[3] for case in CASES]
    assert labels[True] == [case[4] for case in CASES]


@pytest.mark.parametrize("match", ["verifier", "words"])
def test_the_evaluate_page_gives_answer_currency_the_chosen_match(match: str) -> None:
    """The page's "matches by" choice: the verifier chosen below, or the word match (the default,
    as `evaluate` without --verifier), which loads no model."""
    from tempo_eval.io.dataset import Dataset
    from tempo_eval.store.runs import RunStore, frame_content_hash

    frame = pd.DataFrame(rows())
    dataset_id = RunStore().save_dataset(Dataset(frame, "answers", {}, frame_content_hash(frame), "test"))
    at = open_app()
    at.query_params["dataset"] = str(dataset_id)
    at = goto(at.run(), "evaluate")
    assert_clean(at)
    for key in ("keep_ev_tf", "keep_ev_ndcg"):
        if any(box.key == key for box in at.checkbox):
            at.checkbox(key=key).uncheck()
    at.multiselect(key="keep_ev_asof").set_value(["answer_currency"])
    at.radio(key="keep_ev_verifier").set_value("lexical")
    assert at.radio(key="keep_ev_currency_match").value == "words"  # the default
    at.radio(key="keep_ev_currency_match").set_value(match)
    at.run()
    at.button(key="run_evaluation").click().run()
    job = wait_job(at)
    assert job["status"] == "finished", job["error"]
    store = RunStore()
    results = [store.get_result(int(job["run_id"]), row, "answer_currency") for row in range(len(CASES))]
    setting = store.run_configs([int(job["run_id"])])[int(job["run_id"])]["metrics"][0]["settings"]
    if match == "words":
        assert [r.details["label"] for r in results] == [case[3] for case in CASES]
        assert not any("verdicts" in r.details for r in results)
        assert not setting.get("verifier")
        return
    assert [r.details["label"] for r in results] == [case[4] for case in CASES]
    assert all("verdicts" in r.details for r in results)
    assert setting["verifier"]["name"] == "lexical"
