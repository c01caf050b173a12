"""Every dashboard page through Streamlit's AppTest: sample data, an empty workspace, uploads
(good, malformed, hostile), an evaluation with the offline verifier, selections set through
session state, and views reopened from query parameters.

Each test gets its own TEMPO_EVAL_HOME (tests/conftest.py), so its store starts empty.
"""

from __future__ import annotations

import html
import re
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tempo_eval.store.jobs import JobQueue
from tempo_eval_app import worker_jobs
from tests.support.paths import ROOT

APP = str(ROOT / "app.py")
SAMPLE = ROOT / "data" / "sample"
PAGES = ["overview", "datasets", "evaluate", "runs", "results", "compare", "claims", "conversation", "heatmaps", "agreement",
         "run_diff", "time"]
TIMEOUT = 180


@pytest.fixture(autouse=True)
def worker_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pages' jobs run by `run_worker` in a thread of the test process (a test double for the
    detached worker process, tests/jobs/test_queue.py and the browser tests run the real one), so a
    test can patch a metric and see the page report what the patched metric did."""
    import threading

    from tempo_eval.cli.job import run_worker

    def spawn(*, key_for: int | None = None, api_key: str | None = None) -> None:
        keys = {key_for: api_key} if key_for is not None and api_key else {}

        def work() -> None:
            queue = JobQueue()
            try:
                run_worker(queue, limit=1, keys=keys)
            finally:
                queue.close()

        threading.Thread(target=work, daemon=True).start()

    monkeypatch.setattr(worker_jobs, "spawn_worker", spawn)


def wait_job(at: AppTest) -> dict:
    """The Evaluate page's job once it has ended (fails after TIMEOUT seconds)."""
    queue = JobQueue()
    deadline = time.monotonic() + TIMEOUT
    while True:
        job = queue.get(at.session_state["eval_job_id"])
        assert job is not None
        if not job["active"]:
            return job
        assert time.monotonic() < deadline, "the evaluation did not finish"
        time.sleep(0.05)


def evaluate_conversation(at: AppTest) -> AppTest:
    """Click Evaluate on the Conversation page, wait for the worker job it queued, then run the
    page again: it selects the job's run and shows it."""
    at.button(key="conv_run").click().run()
    try:
        job_id = at.session_state["conv_job_id"]
    except KeyError:  # refused before a job was queued (the page says why)
        return at
    queue = JobQueue()
    deadline = time.monotonic() + TIMEOUT
    while (queue.get(job_id) or {}).get("active", False):
        assert time.monotonic() < deadline, "the conversation's evaluation did not finish"
        time.sleep(0.05)
    return at.run()


def open_app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=TIMEOUT).run()


def goto(at: AppTest, page: str) -> AppTest:
    return at.switch_page(f"views/{page}.py").run()


def assert_clean(at: AppTest) -> None:
    """No exception reached the page and no error box is shown."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def table_with(at: AppTest, *columns: str):
    """The first table showing all these columns (plain st.dataframe elements carry no key)."""
    for element in at.dataframe:
        value = element.value
        if all(c in value.columns for c in columns):
            return value
    raise AssertionError(f"no table with columns {columns}")


def all_html(at: AppTest) -> str:
    return "\n".join(str(h.value) for h in at.get("html"))


def evaluate_with_lexical(at: AppTest, *, fc: bool = False, run_name: str = "") -> int:
    """Run Temporal Faithfulness in claims mode with the lexical verifier; returns the run id."""
    goto(at, "evaluate")
    at.selectbox(key="keep_ev_tf_mode").set_value("nli")
    at.text_input(key="keep_ev_run_name").set_value(run_name)
    at.radio(key="keep_ev_verifier").set_value("lexical")
    if fc:
        at.checkbox(key="keep_ev_fc").check()
    at.run()
    at.button(key="run_evaluation").click().run()
    job = wait_job(at)
    assert job["status"] == "finished", job["error"]
    at.run()  # the progress panel sees the finished job and selects its run
    at.run()
    assert_clean(at)
    return int(job["run_id"])


def pick_row(at: AppTest, query_id: str, run: str | None = None) -> AppTest:
    """Open the overview row of `query_id` (of `run`) as a click on its table row does (AppTest
    cannot click a table): the selected position goes to the row's session value."""
    table = table_with(at, "query_id", "temporal_faithfulness")
    match = table["query_id"].astype(str) == query_id
    if run is not None:
        match &= table["run"].astype(str) == run
    at.session_state["overview_row"] = int(match.to_numpy().nonzero()[0][0])
    return at.run()


def upload_dataset(at: AppTest, name: str, data: bytes) -> AppTest:
    """Upload a dataset file on the Datasets page, make it the active dataset, open the overview."""
    goto(at, "datasets")
    at.file_uploader(key="dataset_upload").set_value((name, data, "text/csv")).run()
    assert_clean(at)
    at.button(key="use_upload").click().run()
    at.run()
    return goto(at, "overview")


# ---- opening the app ------------------------------------------------------------------------

def test_app_opens_on_the_bundled_sample_without_any_upload() -> None:
    at = open_app()
    assert_clean(at)
    assert at.title[0].value == "Overview"
    labels = {m.label: m.value for m in at.metric}
    assert labels["Temporal Faithfulness (focus time)"] not in ("", "—")
    assert any("Sample: temporal QA" in o for o in at.sidebar.selectbox(key="dataset_id").options)
    assert at.query_params["dataset"] == str(at.session_state["dataset_id"])


def test_overview_marks_the_wrong_year_of_an_answer_as_not_in_the_contexts() -> None:
    at = open_app()
    pick_row(at, "q2")  # Berlin Wall: 1987 instead of 1989
    assert_clean(at)
    page = all_html(at)
    assert 'class="te-ungrounded"' in page and "November 1987" in page


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_with_the_sample_data_and_no_runs(page: str) -> None:
    at = goto(open_app(), page)
    assert_clean(at)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_its_own_in_an_empty_workspace(page: str) -> None:
    at = AppTest.from_file(str(ROOT / "views" / f"{page}.py"), default_timeout=TIMEOUT).run()
    assert_clean(at)


def test_claims_page_explains_that_no_run_is_selected() -> None:
    at = goto(open_app(), "claims")
    assert any("evaluation runs" in i.value for i in at.info)


# ---- uploads ----------------------------------------------------------------------------------

def test_uploaded_csv_is_previewed_and_becomes_the_active_dataset() -> None:
    at = goto(open_app(), "datasets")
    data = (SAMPLE / "temporal_qa.jsonl").read_bytes()
    at.file_uploader(key="dataset_upload").set_value(("mine.jsonl", data, "application/jsonl")).run()
    assert_clean(at)
    assert any("Read 30 rows" in s.value for s in at.success)
    at.button(key="use_upload").click().run()
    at.run()
    assert_clean(at)
    info = at.sidebar.selectbox(key="dataset_id")
    assert at.session_state["dataset_id"] == info.value
    assert "mine.jsonl" in info.format_func(info.value) if hasattr(info, "format_func") else any("mine.jsonl" in o for o in info.options)


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("broken.csv", b'query,answer\n"When?,"unterminated\n', "broken.csv"),
        ("nothing.csv", b"colour,size\nred,3\n", "nothing.csv"),
        ("bad.parquet", b"PAR1 this is not parquet", "bad.parquet"),
        ("rows.jsonl", b'{"query": "a", "answer": "b"}\n{not json}\n', "line 2"),
        ("data.xlsx", b"PK\x03\x04 excel", "data.xlsx"),
    ],
)
def test_malformed_upload_shows_the_loaders_message_not_a_traceback(name: str, content: bytes, expected: str) -> None:
    at = goto(open_app(), "datasets")
    at.file_uploader(key="dataset_upload").set_value((name, content, "application/octet-stream")).run()
    assert not at.exception
    assert at.error, "a malformed upload must be reported"
    message = at.error[0].value.replace("\\", "")
    assert expected in message
    assert "Traceback" not in message


def test_column_mapping_can_be_fixed_by_hand() -> None:
    at = goto(open_app(), "datasets")
    content = b"Frage,Antwort\nWhen did the Berlin Wall fall?,It fell in 1989.\n"
    at.file_uploader(key="dataset_upload").set_value(("de.csv", content, "text/csv")).run()
    assert at.error  # neither column is recognised
    at.selectbox(key="map_query").set_value("Frage")
    at.selectbox(key="map_answer").set_value("Antwort")
    at.button[[b.label for b in at.button].index("Apply mapping")].click().run()
    assert_clean(at)
    assert any("Read 1 rows" in s.value for s in at.success)
    mapping = table_with(at, "canonical column")
    assert dict(zip(mapping["canonical column"], mapping["from file column"], strict=True))["query"] == "Frage"


def test_trec_runs_and_qrels_upload_becomes_a_dataset_with_two_systems() -> None:
    at = goto(open_app(), "datasets")
    at.file_uploader(key="trec_runs").set_value([
        ("run_bm25.trec", (SAMPLE / "run_bm25.trec").read_bytes(), "text/plain"),
        ("run_dense.trec", (SAMPLE / "run_dense.trec").read_bytes(), "text/plain"),
    ])
    at.file_uploader(key="trec_qrels").set_value(("qrels.txt", (SAMPLE / "qrels.txt").read_bytes(), "text/plain"))
    at.run()
    at.button(key="read_runs").click().run()
    assert_clean(at)
    at.button(key="use_runs").click().run()
    at.run()
    at = goto(at, "compare")
    assert_clean(at)
    assert at.get("plotly_chart"), "the NDCG curves and the scatter plot are drawn"


def test_malformed_qrels_are_reported_with_their_line() -> None:
    at = goto(open_app(), "datasets")
    at.file_uploader(key="trec_runs").set_value(("r.trec", (SAMPLE / "run_bm25.trec").read_bytes(), "text/plain"))
    at.file_uploader(key="trec_qrels").set_value(("q.txt", b"q1 0 d1 1\nq2 0 d2 maybe\n", "text/plain"))
    at.run()
    at.button(key="read_runs").click().run()
    assert not at.exception
    assert "line 2" in at.error[0].value.replace("\\", "")


# ---- safety -----------------------------------------------------------------------------------

def test_hostile_html_in_a_dataset_is_shown_as_text() -> None:
    at = goto(open_app(), "datasets")
    at.file_uploader(key="dataset_upload").set_value(
        ("xss_answers.csv", (SAMPLE / "xss_answers.csv").read_bytes(), "text/csv")
    ).run()
    at.button(key="use_upload").click().run()
    at = goto(at, "overview")
    payloads = {"x1": "<script>alert(1)</script>", "x2": "<img src=x onerror=alert(1)>",
                "x3": "<span onmouseover=alert(1)>"}
    for row, payload in payloads.items():
        pick_row(at, row)
        assert_clean(at)
        page = all_html(at)
        assert "<script" not in page and "<img" not in page and "<span on" not in page
        # no element of the page carries an event handler attribute
        assert re.search(r"<[a-z][^<>]*\son[a-z]+\s*=", page, re.IGNORECASE) is None
        assert html.escape(payload, quote=False) in page


def test_url_parameters_reach_the_page_only_as_plain_text() -> None:
    at = AppTest.from_file(str(ROOT / "views" / "overview.py"), default_timeout=TIMEOUT)
    at.query_params.update({"evil": "x`![u](http://evil.example/p.png)`", "k": "5"})
    at.run()
    assert_clean(at)
    shown = [e.value for e in (*at.markdown, *at.caption)]
    assert not any("evil.example" in text for text in shown), shown
    assert any("k=5" in c.value and "evil" not in c.value for c in at.code)


def test_a_dataset_without_a_query_column_opens_on_the_overview() -> None:
    data = b'query_id,answer,contexts\nq1,The wall fell in 1989.,"[""It fell on 9 November 1989.""]"\n'
    at = upload_dataset(open_app(), "no_query.csv", data)
    assert_clean(at)
    assert not [b for b in at.selectbox if b.key == "overview_row"]  # rows open by a click on the table, no row-number box (issue 24.10)
    assert any("q1" in m.value for m in at.markdown)
    assert "1989" in all_html(at)


def test_overview_row_picker_tells_apart_runs_with_the_same_query_ids() -> None:
    data = (
        b'query_id,run,query,answer,contexts\n'
        b'q1,alpha,When did the wall fall?,Alpha says 1989.,"[""It fell in 1989.""]"\n'
        b'q1,beta,When did the wall fall?,Beta says 1987.,"[""It fell in 1989.""]"\n'
    )
    at = upload_dataset(open_app(), "two_runs.csv", data)
    pick_row(at, "q1", run="beta")
    assert_clean(at)
    page = all_html(at)
    assert "Beta says" in page and "Alpha says" not in page
    pick_row(at, "q1", run="alpha")
    page = all_html(at)
    assert "Alpha says" in page and "Beta says" not in page


def test_a_page_error_becomes_one_line_with_details_in_the_log(monkeypatch: pytest.MonkeyPatch) -> None:
    from tempo_eval_app import dataset_scores

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire\nsecond line that must not be shown")

    monkeypatch.setattr(dataset_scores, "focus_time_scores", explode)
    at = open_app()
    assert not at.exception
    message = at.error[0].value.replace("\\", "")
    assert "disk on fire" in message and "details in the log" in message
    assert "second line" not in message


# ---- evaluation, claims ------------------------------------------------------------------------

@pytest.mark.slow
def test_lexical_evaluation_lands_in_the_store_and_the_claims_page_highlights_verdicts() -> None:
    at = open_app()
    run_id = evaluate_with_lexical(at, run_name="[x](http://evil.example)")
    assert at.session_state["run_ids"][0] == run_id
    assert any(f"run #{run_id}" in s.value for s in at.success)

    at = goto(at, "claims")
    assert_clean(at)
    heading = at.subheader[-1].value
    assert "evil" in heading and "](http" not in heading  # the run name is shown, never a link
    page = all_html(at)
    assert 'class="te-' in page  # the focused answer's claims are marked
    # focus a hallucinated claim through session state (what a table click does)
    at.toggle(key="claims_hallucinated").set_value(True).run()
    table = at.dataframe(key="claims_table").value
    assert set(table["verdict"]) <= {"Not supported", "Contradicted"}  # by their names
    assert len(table) > 0
    at.session_state["claims_focus"] = f"{run_id}:1:temporal_faithfulness:0"  # q2: the Berlin Wall, 1987
    at.run()
    assert_clean(at)
    page = all_html(at)
    assert "November 1987" in page
    assert 'class="te-CONTRADICTED"' in page or 'class="te-NOT_SUPPORTED"' in page
    assert at.query_params.get("hallucinated") == "1"


@pytest.mark.slow
def test_a_refresh_finds_the_finished_run_in_the_store() -> None:
    at = open_app()
    run_id = evaluate_with_lexical(at)
    fresh = AppTest.from_file(APP, default_timeout=TIMEOUT)
    fresh.query_params["runs"] = str(run_id)
    fresh.run()
    goto(fresh, "claims")
    assert_clean(fresh)
    assert fresh.session_state["run_ids"] == [run_id]
    assert len(fresh.dataframe(key="claims_table").value) > 0


def test_evaluate_page_says_why_a_verifier_is_not_available() -> None:
    at = goto(open_app(), "evaluate")
    # the offline default chosen: the others are listed by their availability alone
    assert any("❔ llm" in c.value or "❌ llm" in c.value for c in at.caption)
    at.radio(key="keep_ev_verifier").set_value("llm")
    at.selectbox(key="keep_ev_tf_mode").set_value("nli").run()
    text = " ".join(m.value for m in at.markdown)
    assert "No judge configured" in text  # the chosen one says why it is not available
    assert any("needs a judge" in w.value or "not available" in w.value for w in at.warning)
    assert at.button(key="run_evaluation").disabled


def test_api_key_typed_in_the_page_is_never_stored() -> None:
    at = goto(open_app(), "evaluate")
    at.text_input(key="keep_ev_api_key").set_value("sk-test-1234567890-secret").run()
    assert "sk-test" not in str(at.query_params)
    from tempo_eval.store.db import default_db_path

    assert b"sk-test" not in Path(default_db_path()).read_bytes()


def test_the_servers_key_goes_only_to_the_default_endpoint() -> None:
    from tempo_eval_app.verifier_choice import KEY_NONE, KEY_SERVER, KEY_TYPED, judge_api_key

    env = {"OPENAI_API_KEY": "sk-server-secret"}
    assert judge_api_key("http://visitor.example/v1", "", env) == ("not-needed", KEY_NONE)
    assert judge_api_key("", "", env) == (None, KEY_SERVER)
    assert judge_api_key("", "", {}) == (None, KEY_NONE)
    assert judge_api_key("http://visitor.example/v1", " sk-typed ", env) == ("sk-typed", KEY_TYPED)


def test_evaluate_page_says_which_key_the_judge_gets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server-secret")
    at = goto(open_app(), "evaluate")
    at.text_input(key="keep_ev_judge_model").set_value("m").run()
    assert any("the server's OPENAI_API_KEY" in c.value for c in at.caption)
    at.text_input(key="keep_ev_judge_url").set_value("http://visitor.example/v1").run()
    judge = [c.value for c in at.caption if "Judge API key" in c.value]
    assert judge and "no key" in judge[0] and "only ever sent to the default endpoint" in judge[0]
    at.text_input(key="keep_ev_api_key").set_value("sk-typed").run()
    assert any("the key typed here" in c.value for c in at.caption)
    assert not any("sk-server-secret" in e.value or "sk-typed" in e.value for e in (*at.caption, *at.markdown))


def test_a_judge_with_no_key_and_no_endpoint_is_a_problem_before_the_run() -> None:
    at = goto(open_app(), "evaluate")  # conftest removes OPENAI_API_KEY
    at.selectbox(key="keep_ev_tf_mode").set_value("llm")
    at.text_input(key="keep_ev_judge_model").set_value("m").run()
    assert any("no API key and no endpoint" in w.value for w in at.warning)
    assert at.button(key="run_evaluation").disabled
    at.text_input(key="keep_ev_judge_url").set_value("http://127.0.0.1:9/v1").run()
    assert not any("no API key and no endpoint" in w.value for w in at.warning)


def test_a_verifier_message_quoting_user_text_is_not_markdown() -> None:
    at = goto(open_app(), "evaluate")
    at.selectbox(key="keep_ev_tf_mode").set_value("nli")
    at.radio(key="keep_ev_verifier").set_value("nli")
    at.text_input(key="keep_ev_nli_model").set_value("![u](http://evil.example/x.png)").run()
    for _ in range(300):  # the NLI check runs in the background; rerun until it has answered
        if any("could not be loaded" in w.value for w in at.warning):
            break
        time.sleep(0.1)
        at.run()
    warnings = [w.value for w in at.warning if "could not be loaded" in w.value]
    assert warnings, [w.value for w in at.warning]
    assert not any("](http" in text for text in (*warnings, *(m.value for m in at.markdown)))


def test_a_run_where_every_row_failed_is_not_reported_as_a_success(monkeypatch: pytest.MonkeyPatch) -> None:
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    async def broken(self: object, **inputs: object) -> None:
        raise RuntimeError("the verifier exploded")

    monkeypatch.setattr(TemporalFaithfulness, "_ameasure", broken)
    at = goto(open_app(), "evaluate")
    at.checkbox(key="keep_ev_ndcg").uncheck().run()
    at.button(key="run_evaluation").click().run()
    wait_job(at)
    at.run()
    warning = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "30 of 30 results failed" in warning and "the verifier exploded" in warning
    assert not at.success


# ---- comparison, heatmaps, conversation ---------------------------------------------------------

def open_sample_runs() -> AppTest:
    at = goto(open_app(), "datasets")
    at.button(key="load_sample_runs").click().run()
    at.run()
    assert_clean(at)
    return at


def test_compare_page_draws_curves_significance_and_a_drill_down_from_session_state() -> None:
    at = goto(open_sample_runs(), "compare")
    assert_clean(at)
    assert len(at.get("plotly_chart")) == 2
    table = table_with(at, "label", "run")
    assert list(table["run"]) == ["bm25", "dense-minilm"]
    at.session_state["compare_query"] = "q2"  # what a click on a scatter point does
    at.run()
    assert_clean(at)
    listing = table_with(at, "rank", "doc_id")
    assert list(listing.columns[:3]) == ["rank", "doc_id", "grade"]
    assert at.query_params["q"] == "q2"


def test_compare_view_reopens_from_query_parameters() -> None:
    at = open_sample_runs()
    dataset_id = at.session_state["dataset_id"]
    fresh = AppTest.from_file(str(ROOT / "views" / "compare.py"), default_timeout=TIMEOUT)
    fresh.query_params.update({"dataset": str(dataset_id), "k": "5", "q": "q7"})
    fresh.run()
    assert_clean(fresh)
    assert fresh.number_input(key="compare_k").value == 5
    assert fresh.selectbox(key="compare_query").value == "q7"


def _trace_values(values: object) -> list[float]:
    """A plotly JSON array: a plain list, or plotly 6's {"dtype", "bdata"} typed array."""
    import base64

    import numpy as np

    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).tolist()
    return list(values)


def test_compare_scores_runs_with_disjoint_queries_as_the_engine_does() -> None:
    import json

    from tempo_eval.compare.trec_scores import compare_trec
    from tempo_eval.io.trec_dataset import _named, load_runs_dataset
    from tempo_eval.store.runs import RunStore
    from tests.support.trec import load_qrels, load_run

    # alpha ranks q1-q3, beta q2-q4: q1 and q4 are each missing from one run (scored 0, as
    # trec_eval -c); q5 has no relevant document and is not measurable
    run_a = b"q1 Q0 d1 1 3 alpha\nq1 Q0 x 2 2 alpha\nq2 Q0 x 1 3 alpha\nq2 Q0 d2 2 2 alpha\nq3 Q0 d3 1 1 alpha\n"
    run_b = b"q2 Q0 d2 1 3 beta\nq3 Q0 x 1 3 beta\nq3 Q0 d3 2 2 beta\nq4 Q0 y 1 3 beta\nq4 Q0 d4 2 2 beta\nq5 Q0 d5 1 1 beta\n"
    qrels = b"q1 0 d1 1\nq2 0 d2 2\nq3 0 d3 1\nq4 0 d4 1\nq5 0 d5 0\n"
    dataset = load_runs_dataset([("a.trec", run_a), ("b.trec", run_b)], ("qrels.txt", qrels), name="disjoint")
    dataset_id = RunStore().save_dataset(dataset)
    runs = load_run([_named("a.trec", run_a), _named("b.trec", run_b)])
    expected = compare_trec({name: run.scores for name, run in runs.items()},
                            load_qrels(_named("qrels.txt", qrels)).judgments, metrics=["ndcg@10"], test="student")

    at = AppTest.from_file(str(ROOT / "views" / "compare.py"), default_timeout=TIMEOUT)
    at.query_params.update({"dataset": str(dataset_id)})
    at.run()
    assert_clean(at)
    table = table_with(at, "label", "run")
    means = dict(zip(table["run"], table["ndcg@10"], strict=True))
    assert means == pytest.approx({run: expected.means[run]["ndcg@10"] for run in ("alpha", "beta")})
    assert means["alpha"] != means["beta"]
    curves = json.loads(at.get("plotly_chart")[0].proto.spec)
    lines = {t["name"]: _trace_values(t["y"]) for t in curves["data"] if t.get("mode") == "lines+markers"}
    assert {run: values[-1] for run, values in lines.items()} == pytest.approx(means)
    assert any("alpha 1, beta 1" in c.value.replace("\\", "") for c in at.caption)


def test_heatmap_cell_selected_through_session_state_lists_its_rows() -> None:
    at = goto(open_app(), "heatmaps")
    assert_clean(at)
    at.session_state["heat_bin"] = "century"
    at.run()
    options = at.selectbox(key="heat_ac_cell").options
    assert options
    at.session_state["heat_ac_cell"] = ("1900–1999", "1900–1999")
    at.run()
    assert_clean(at)
    rows = table_with(at, "answer years", "query_id")
    assert {"q2", "q5"} <= set(rows["query_id"])  # Berlin Wall and Apollo 11 answers


def test_heatmaps_of_a_conversation_dataset_say_what_they_need() -> None:
    # the Conversation page and `evaluate conversations.jsonl` store datasets without query rows
    from tempo_eval.io.conversation import load_conversations
    from tempo_eval.store.runs import RunStore

    dataset_id = RunStore().save_dataset(load_conversations(ROOT / "tests" / "data" / "interop" / "ragas_multi.jsonl"))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["dataset"] = str(dataset_id)
    at.run()
    goto(at, "heatmaps")
    assert_clean(at)
    assert any("conversations" in i.value for i in at.info), [i.value for i in at.info]


@pytest.mark.slow
def test_conversation_sample_gives_a_timeline_and_flags_the_wrong_excavation_year() -> None:
    at = goto(open_app(), "conversation")
    at.button(key="conv_sample_museum").click().run()
    evaluate_conversation(at)
    assert_clean(at)
    assert at.get("plotly_chart")
    windows = table_with(at, "window", "interactions")
    assert len(windows) == 4
    at.selectbox(key="conv_window_pick").set_value(3).run()
    claims = table_with(at, "claim", "counts as")  # Turn Faithfulness' yes / no / idk, by the verdicts' names
    flagged = claims[claims["claim"].str.contains("1949")]
    assert list(flagged["counts as"]) == ["Contradicted"]


def test_malformed_conversation_shows_the_parsers_message() -> None:
    at = goto(open_app(), "conversation")
    at.text_area(key="conversation_text").set_value("Context:\n- a document with no answer after it\n").run()
    at.button(key="conv_run").click().run()
    assert not at.exception
    assert at.error


# ---- runs leaderboard and per-row results (issue 8) ---------------------------------------------

def store_focus_time_run(name: str, k: int = 10, *, fail: bool = False) -> int:
    """Evaluate the bundled QA sample in focus-time mode (no model) straight through the runner,
    into the test's workspace, as the app's sample dataset; returns the run id."""
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.metrics.base import Metric
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
    from tempo_eval.store.runs import RunStore
    from tempo_eval_app.samples import SAMPLE_QA_NAME

    dataset = load_dataset(SAMPLE / "temporal_qa.csv")
    dataset.name = SAMPLE_QA_NAME
    metrics: list[Metric] = [TemporalFaithfulness(mode="focus_time"), TemporalNDCG(k=k, mode="focus_time")]
    if fail:
        class Broken(TemporalFaithfulness):
            async def _ameasure(self, **inputs: object):  # type: ignore[override]
                raise RuntimeError("the judge is down")

        metrics = [Broken(mode="focus_time")]
    return evaluate(dataset, metrics, store=RunStore(), run_name=name, resume=False).run_id


def test_evaluate_then_a_new_session_shows_the_per_row_results_and_downloads() -> None:
    at = goto(open_app(), "evaluate")
    at.checkbox(key="keep_ev_ndcg").uncheck()
    at.selectbox(key="keep_ev_tf_mode").set_value("focus_time").run()
    at.button(key="run_evaluation").click().run()
    job = wait_job(at)
    assert job["status"] == "finished", job["error"]
    at.run()
    at.run()
    run_id = int(job["run_id"])

    fresh = AppTest.from_file(APP, default_timeout=TIMEOUT)  # a reload: a new session, same store
    fresh.query_params["dataset"] = str(at.session_state["dataset_id"])
    fresh.query_params["runs"] = str(run_id)
    fresh.run()
    goto(fresh, "results")
    assert_clean(fresh)
    grid = table_with(fresh, "query_id", "temporal_faithfulness reason")
    assert len(grid) == 30 and "temporal_faithfulness" in grid.columns
    assert "temporal_faithfulness reason" in grid.columns
    assert grid["temporal_faithfulness"].notna().sum() > 0
    labels = [b.proto.label for b in fresh.get("download_button")]
    assert {"CSV", "JSONL", "Parquet"} <= set(labels)
    # the row detail: query, answer with claims or years, contexts with years, per-year grounding
    assert any("Context 1 · years" in h.proto.body for h in fresh.get("html"))
    assert any("Per-year grounding" in m.value for m in fresh.markdown)


def test_results_filters_live_in_the_url_and_reopen_the_same_view() -> None:
    run_id = store_focus_time_run("focus")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["runs"] = str(run_id)
    at.run()
    goto(at, "results")
    at.selectbox(key="results_metric").set_value("temporal_faithfulness")
    at.slider(key="results_range").set_value((0.0, 0.5)).run()
    assert_clean(at)
    low = table_with(at, "query_id", "temporal_faithfulness reason")
    assert len(low) > 0 and (low["temporal_faithfulness"] <= 0.5).all()
    params = {k: at.query_params[k] for k in ("metric", "range")}
    assert params == {"metric": ["temporal_faithfulness"], "range": ["0.0,0.5"]} or params == {
        "metric": "temporal_faithfulness", "range": "0.0,0.5"}

    again = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in {"runs": str(run_id), "metric": "temporal_faithfulness", "range": "0.0,0.5", "q": "berlin wall"}.items():
        again.query_params[key] = value
    again.run()
    goto(again, "results")
    assert_clean(again)
    grid = table_with(again, "query_id", "temporal_faithfulness reason")
    assert grid["query_id"].tolist() == ["q2"]  # the wrong-year answer: below 0.5


def test_runs_page_lists_each_run_with_its_means_and_diffs_two() -> None:
    a = store_focus_time_run("k5", k=5)
    b = store_focus_time_run("k10", k=10)
    failed = store_focus_time_run("broken", fail=True)
    at = goto(open_app(), "runs")
    assert_clean(at)
    assert at.session_state["run_ids"] == [b]  # the newest run that did not fail
    grid = table_with(at, "id", "status", "duration").set_index("id")
    assert set(grid.index) == {a, b, failed}
    assert grid.loc[failed, "status"] == "failed"
    assert 0 <= grid.loc[a, "temporal_faithfulness"] <= 1
    assert grid.loc[a, "temporal_faithfulness"] == pytest.approx(grid.loc[b, "temporal_faithfulness"])
    assert grid.loc[a, "temporal_faithfulness measurable"].endswith("/30")
    assert "–" in grid.loc[a, "temporal_faithfulness 95% CI"]
    assert grid.loc[failed, "temporal_faithfulness NaN"] == "row_error: 30"
    at.multiselect(key="runs_selected").set_value([a, b]).run()
    assert_clean(at)
    settings = table_with(at, "setting")
    assert settings["setting"].tolist() == ["metrics.temporal_ndcg.settings.k"]
    assert at.query_params["sel"] in (f"{a},{b}", [f"{a},{b}"])


def test_a_run_is_renamed_and_deleted_after_a_confirmation() -> None:
    from tempo_eval.store.runs import RunStore

    keep = store_focus_time_run("keep")
    gone = store_focus_time_run("gone", k=3)
    at = goto(open_app(), "runs")
    at.multiselect(key="runs_selected").set_value([gone]).run()
    at.text_input(key=f"runs_name_{gone}").set_value("renamed")
    at.text_input(key=f"runs_tags_{gone}").set_value("a, b").run()
    at.button(key=f"runs_save_{gone}").click().run()
    assert RunStore().run_info(gone)["name"] == "renamed" and RunStore().run_info(gone)["tags"] == ["a", "b"]
    at.button(key="runs_delete_run").click().run()
    assert_clean(at)
    assert any("with its 60 results" in w.value for w in at.warning)
    assert gone in RunStore().list_runs()["id"].tolist()  # nothing is gone before the confirmation
    at.button(key="runs_delete_run_yes").click().run()
    assert_clean(at)
    assert RunStore().list_runs()["id"].tolist() == [keep]
    assert table_with(at, "id", "status", "duration")["id"].tolist() == [keep]


def test_a_run_being_evaluated_is_not_deleted_and_the_page_says_why() -> None:
    from tempo_eval.store.runs import RunStore

    busy = store_focus_time_run("busy")
    evaluating = RunStore()
    assert evaluating.acquire_run(busy) is None  # as an evaluation in progress holds it
    at = goto(open_app(), "runs")
    at.multiselect(key="runs_selected").set_value([busy]).run()
    at.button(key="runs_delete_run").click().run()
    at.button(key="runs_delete_run_yes").click().run()
    assert not at.exception
    assert any("is being evaluated" in w.value for w in at.warning), [w.value for w in at.warning]
    assert busy in RunStore().list_runs()["id"].tolist()
    evaluating.release_run(busy)


def test_deleting_a_dataset_says_what_it_takes_first() -> None:
    from tempo_eval.store.runs import RunStore

    store_focus_time_run("one")
    at = goto(open_app(), "runs")
    at.button(key="runs_delete_dataset").click().run()
    text = " ".join(w.value for w in at.warning)
    assert "1 run(s), 60 results and 0 claims" in text
    at.button(key="runs_delete_dataset_yes").click().run()
    assert_clean(at)
    assert RunStore().list_runs().empty


@pytest.mark.slow
def test_a_conversation_is_stored_as_a_run_and_reopens_after_a_reload() -> None:
    from tempo_eval.store.runs import RunStore

    at = goto(open_app(), "conversation")
    at.button(key="conv_sample_museum").click().run()
    evaluate_conversation(at)
    assert_clean(at)
    runs = RunStore().list_runs()
    assert len(runs) == 1 and runs.loc[0, "dataset"].startswith("Conversation: ")
    run_id, dataset_id = int(runs.loc[0, "id"]), int(runs.loc[0, "dataset_id"])
    assert at.query_params["runs"] in (str(run_id), [str(run_id)])

    fresh = AppTest.from_file(APP, default_timeout=TIMEOUT)
    fresh.query_params["dataset"] = str(dataset_id)
    fresh.query_params["runs"] = str(run_id)
    fresh.query_params["window"] = "3"
    fresh.run()
    goto(fresh, "conversation")
    assert_clean(fresh)
    assert len(table_with(fresh, "window", "interactions")) == 4
    assert fresh.selectbox(key="conv_window_pick").value == 3
    claims = table_with(fresh, "claim", "counts as")
    assert list(claims[claims["claim"].str.contains("1949")]["counts as"]) == ["Contradicted"]
    # the Runs page lists it among all datasets
    goto(fresh, "runs")
    fresh.toggle(key="runs_all").set_value(True).run()
    assert run_id in table_with(fresh, "id", "status", "duration")["id"].tolist()


def test_the_conversation_page_uses_the_verifier_chosen_on_evaluate() -> None:
    at = goto(open_app(), "evaluate")
    at.radio(key="keep_ev_verifier").set_value("llm").run()
    goto(at, "conversation")
    assert any("LLM judge" in c.value for c in at.caption)
    at.button(key="conv_sample_museum").click().run()
    at.button(key="conv_run").click().run()
    # no judge model was given on Evaluate: the page says so instead of silently using another verifier
    assert any("no model" in e.value for e in at.error)


def test_the_server_binds_this_machine_only_and_never_watches_the_venv() -> None:
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))["server"]
    assert config["address"] == "127.0.0.1"
    # the watchdog watcher watches the repository recursively, .venv included (inotify overflow)
    assert config["fileWatcherType"] in ("poll", "none")
    assert ".venv" in config["folderWatchBlacklist"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    serving = (ROOT / "docs" / "operations" / "serving.md").read_text(encoding="utf-8")
    assert "http://localhost:8501" in readme and "Ctrl+C" in readme and "docs/operations/serving.md" in readme
    assert "--server.address 0.0.0.0" in serving and "Ctrl+C" in serving


# ---- Evaluate: the audit's fixes (issue 8) ----------------------------------------------------------

def test_the_lexical_verifier_is_described_once() -> None:
    at = goto(open_app(), "evaluate")
    lines = [m.value for m in at.markdown if "**lexical**" in m.value]
    assert len(lines) == 1 and lines[0].count("MiniLM") == 1, lines


def test_the_lexical_verifier_description_is_the_calibrated_one() -> None:
    # the verifier decides with a calibrated softmax model, not by year and number agreement alone
    from tempo_eval.verify import available_verifiers
    from tempo_eval.verify.lexical import SUMMARY

    at = goto(open_app(), "evaluate")
    line = next(m.value for m in at.markdown if "**lexical**" in m.value)
    assert SUMMARY in line and "calibrated" in SUMMARY
    assert "agreement decide" not in line
    assert available_verifiers(check_nli=False)["lexical"] == (True, SUMMARY)


def test_a_judge_is_not_called_available_before_it_answered() -> None:
    at = goto(open_app(), "evaluate")
    at.text_input(key="keep_ev_judge_model").set_value("m").run()
    assert any("❔ llm" in c.value for c in at.caption)  # listed beside the chosen verifier: not yet known
    at.radio(key="keep_ev_verifier").set_value("llm").run()
    line = next(m.value for m in at.markdown if "**llm**" in m.value)
    assert "✅" not in line and "test request" in line


def test_an_unreachable_judge_is_reported_before_the_run_starts() -> None:
    from tests.support.openai_server import Reply, ScriptedOpenAIServer

    with ScriptedOpenAIServer(lambda request: Reply(status=401, raw_body='{"error": {"message": "bad key"}}')) as server:
        at = goto(open_app(), "evaluate")
        at.selectbox(key="keep_ev_tf_mode").set_value("llm")
        at.checkbox(key="keep_ev_ndcg").uncheck()
        at.text_input(key="keep_ev_judge_url").set_value(server.base_url)
        at.text_input(key="keep_ev_judge_model").set_value("judge").run()
        at.button(key="run_evaluation").click().run()
        assert len(server.requests) == 1  # one cheap request, not one per row
    errors_shown = " ".join(e.value for e in at.error).replace("\\", "")
    assert "did not answer a test request" in errors_shown and "401" in errors_shown
    assert "eval_job_id" not in at.session_state  # no run was started


def test_check_judge_accepts_a_judge_that_answers() -> None:
    from tempo_eval_app.verifier_choice import check_judge
    from tests.support.openai_server import ScriptedOpenAIServer, json_reply

    with ScriptedOpenAIServer(lambda request: json_reply({"ok": True})) as server:
        ok, why = check_judge(server.base_url, "judge", "not-needed")
    assert ok and "answered a test request" in why


# ---- Overview and Compare: the audit's fixes (issue 8) -----------------------------------------------

def test_overview_shows_each_retrieval_system_not_one_pooled_mean() -> None:
    at = open_sample_runs()
    goto(at, "overview")
    assert_clean(at)
    per_system = table_with(at, "system", "Temporal NDCG@10 (gold)").set_index("system")
    assert set(per_system.index) == {"bm25", "dense-minilm"}
    gold = per_system["Temporal NDCG@10 (gold)"]
    assert gold["bm25"] == "0.774" and gold["dense-minilm"] == "0.938"  # 3 decimals (issue 24.8)
    assert not [m for m in at.metric if "NDCG" in m.label]  # no pooled headline (was 0.856)
    rows = next(d for d in at.dataframe if "ndcg_gold" in d.value.columns)
    order = list(rows.proto.column_order)
    assert order.index("ndcg_gold") < order.index("query")  # scores before the long texts


def _ndcg_only_run() -> int:
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
    from tempo_eval.store.runs import RunStore
    from tempo_eval_app.samples import SAMPLE_QA_NAME

    dataset = load_dataset(SAMPLE / "temporal_qa.csv")
    dataset.name = SAMPLE_QA_NAME
    return evaluate(dataset, [TemporalNDCG(k=3, mode="focus_time")], store=RunStore(), run_name="ndcg only").run_id


def test_compare_offers_the_metrics_two_runs_share() -> None:
    both = store_focus_time_run("both")  # temporal_faithfulness and temporal_ndcg
    ndcg = _ndcg_only_run()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["runs"] = f"{both},{ndcg}"
    at.run()
    goto(at, "compare")
    assert_clean(at)
    assert not any("at least two runs" in i.value for i in at.info)
    assert at.selectbox(key="compare_metric").options == ["Temporal NDCG@k"]  # its display name
    assert len(table_with(at, "label", "temporal_ndcg beats")) == 2


def test_compare_says_why_when_runs_share_no_metric() -> None:
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.store.runs import RunStore
    from tempo_eval_app.samples import SAMPLE_QA_NAME

    dataset = load_dataset(SAMPLE / "temporal_qa.csv")
    dataset.name = SAMPLE_QA_NAME
    tf = evaluate(dataset, [TemporalFaithfulness(mode="focus_time")], store=RunStore()).run_id
    ndcg = _ndcg_only_run()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["runs"] = f"{tf},{ndcg}"
    at.run()
    goto(at, "compare")
    text = " ".join(i.value for i in at.info).replace("\\", "")
    assert "share no metric" in text and "temporal_faithfulness" in text and "temporal_ndcg" in text


def test_compare_caption_describes_the_table_on_screen() -> None:
    at = open_sample_runs()
    goto(at, "compare")
    assert_clean(at)
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "beats” columns" in captions and "Superscripts" not in captions
    markdown = next(b for b in at.get("download_button") if b.proto.label == "Table (Markdown)")
    assert markdown is not None  # the exported table keeps its superscripts and their caption


def test_messages_speak_in_the_apps_terms_not_python_names() -> None:
    at = goto(open_app(), "datasets")
    # a qrels file given as a run file: the loader's hint names its Python function
    at.file_uploader(key="trec_runs").set_value(("q.txt", (SAMPLE / "qrels.txt").read_bytes(), "text/plain"))
    at.file_uploader(key="trec_qrels").set_value(("q2.txt", (SAMPLE / "qrels.txt").read_bytes(), "text/plain"))
    at.run()
    at.button(key="read_runs").click().run()
    assert not at.exception
    message = " ".join(e.value for e in at.error).replace("\\", "")
    assert "upload it as Qrels on Datasets" in message and "read_qrels" not in message


@pytest.mark.slow
def test_a_judged_run_records_its_token_usage_for_the_runs_page() -> None:
    from tempo_eval.store.runs import RunStore
    from tests.support.openai_server import ScriptedOpenAIServer, json_reply, last_user_message

    def judge(request: dict) -> object:
        if "Reply with the JSON object" in last_user_message(request):
            return json_reply({"ok": True}, prompt_tokens=5, completion_tokens=2)
        return json_reply({"relevance_score": 3}, prompt_tokens=11, completion_tokens=7)

    with ScriptedOpenAIServer(judge) as server:
        at = goto(open_app(), "evaluate")
        at.checkbox(key="keep_ev_tf").uncheck()
        at.selectbox(key="keep_ev_ndcg_mode").set_value("llm")
        at.number_input(key="keep_ev_k").set_value(2)
        at.text_input(key="keep_ev_judge_url").set_value(server.base_url)
        at.text_input(key="keep_ev_judge_model").set_value("judge").run()
        at.button(key="run_evaluation").click().run()
        job = wait_job(at)
        assert job["status"] == "finished", job["error"]
        graded = len(server.requests) - 1  # the first request was the reachability check
    usage = RunStore().run_info(job["run_id"])["usage"]
    assert usage["prompt_tokens"] == 11 * graded and usage["completion_tokens"] == 7 * graded
    at.run()
    goto(at, "runs")
    tokens = table_with(at, "id", "judge tokens").set_index("id").loc[job["run_id"], "judge tokens"]
    assert tokens.startswith(f"{18 * graded:,} (")


def test_runs_selected_on_the_runs_page_open_in_results_with_a_link() -> None:
    a = store_focus_time_run("first", k=4)
    b = store_focus_time_run("second", k=6)
    at = goto(open_app(), "runs")
    at.multiselect(key="runs_selected").set_value([a]).run()
    at.button(key="runs_open_Results").click().run()
    assert_clean(at)
    assert at.title[0].value == "Results"
    assert at.session_state["run_ids"] == [a] and b not in at.session_state["run_ids"]
    assert at.query_params["runs"] in (str(a), [str(a)])
    assert len(table_with(at, "query_id", "temporal_ndcg reason")) == 30
