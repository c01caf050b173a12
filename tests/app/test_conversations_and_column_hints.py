"""What a newcomer stumbles on (issue 24), page by page through Streamlit's AppTest."""

from __future__ import annotations

import pytest

from tests.app.test_pages import (
    assert_clean,
    evaluate_conversation,
    goto,
    open_app,
    table_with,
    wait_job,
    worker_in_this_process,  # noqa: F401 - the page's jobs run in this process
)
from tests.support.paths import TESTS

INTEROP = TESTS / "data" / "interop"
CONVERSATION_FILES = [
    "deepeval_conversational_goldens.json", "deepeval_conversational_goldens.jsonl",
    "deepeval_conversational_test_cases.csv", "deepeval_conversational_test_cases.json",
    "ragas_multi.jsonl", "ragas_multi.csv", "ragas_multi_hf.parquet",
]


def _evaluated_conversations(at) -> int:
    evaluate_conversation(at)
    assert_clean(at)
    return len(table_with(at, "window", "interactions"))


@pytest.mark.parametrize("name", CONVERSATION_FILES)
def test_the_conversation_page_reads_every_file_the_command_line_reads(name: str) -> None:
    from tempo_eval.io.conversation import load_conversations

    assert len(load_conversations(INTEROP / name).frame) >= 1  # what the command line reads
    at = goto(open_app(), "conversation")
    at.file_uploader(key="conversation_upload").set_value((name, (INTEROP / name).read_bytes(), "text/plain")).run()
    assert_clean(at)
    assert _evaluated_conversations(at) >= 1


def test_a_pasted_ragas_line_is_a_conversation() -> None:
    line = (INTEROP / "ragas_multi.jsonl").read_text(encoding="utf-8").splitlines()[0]
    at = goto(open_app(), "conversation")
    at.text_area(key="conversation_text").set_value(line).run()
    assert _evaluated_conversations(at) >= 1


def test_a_conversation_file_on_the_datasets_page_points_to_the_conversation_page() -> None:
    at = goto(open_app(), "datasets")
    data = (INTEROP / "deepeval_conversational_goldens.jsonl").read_bytes()
    at.file_uploader(key="dataset_upload").set_value(("goldens.jsonl", data, "text/plain")).run()
    assert not at.exception
    message = " ".join(e.value for e in at.error)
    assert "conversation" in message and "Conversation page" in message
    assert "mapping=" not in message and "{" not in message


def test_a_near_miss_column_is_suggested_in_the_screens_words() -> None:
    at = goto(open_app(), "datasets")
    at.file_uploader(key="dataset_upload").set_value(("d.csv", b"querry,answer\nWhen?,1990\n", "text/csv")).run()
    message = " ".join(e.value for e in at.error)
    assert "Column mapping" in message and "mapping=" not in message


def test_evaluate_offers_turn_faithfulness_on_conversations_and_says_what_the_others_need() -> None:
    at = goto(open_app(), "conversation")
    at.button(key="conv_sample_museum").click().run()
    evaluate_conversation(at)
    goto(at, "evaluate")
    assert_clean(at)
    keys = {c.key for c in at.checkbox}
    assert "keep_ev_turn" in keys and "keep_ev_tf" not in keys and "keep_ev_fc" not in keys
    captions = " ".join(c.value for c in at.caption)
    assert "Temporal Faithfulness** needs an answer column and a contexts column" in captions
    at.radio(key="keep_ev_verifier").set_value("lexical").run()
    at.button(key="run_evaluation").click().run()
    job = wait_job(at)
    assert job["status"] == "finished", job["error"]


def test_evaluate_on_the_sample_offers_the_row_metrics_not_turn_faithfulness() -> None:
    at = goto(open_app(), "evaluate")
    keys = {c.key for c in at.checkbox}
    assert {"keep_ev_tf", "keep_ev_ndcg", "keep_ev_fc"} <= keys and "keep_ev_turn" not in keys
    assert "Turn Faithfulness** needs a turns column" in " ".join(c.value for c in at.caption)
