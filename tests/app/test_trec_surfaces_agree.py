"""The same TREC runs and qrels give the same means on every door: the command line
(`tempo-eval compare`), the Compare page's run files (paths and uploads) and runs uploaded on
the Datasets page then compared as the dataset's retrieval systems. Judged queries missing from
one run and from every run count as the command line counts them (trec_eval -c with "zero"),
whichever way the runs came in: a stored dataset keeps the full qrels, zero grades included.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.test_compare_run_files import _cli_means
from tests.app.test_pages import worker_in_this_process  # noqa: F401 - the page's jobs run in this process
from tests.support.paths import ROOT

TIMEOUT = 120
FILES = "TREC run files (paths on this machine, a folder of runs, or uploads)"
SYSTEMS = "Retrieval systems of this dataset (NDCG@k from gold_ids)"

# alpha misses q4, beta misses q1, no run has q6 nor q7; q5 has no relevant document; zero grades
# sit beside relevant ones (q2's x) and alone (q5)
RUN_A = ("q1 Q0 d1 1 3 alpha\nq1 Q0 x 2 2 alpha\nq2 Q0 x 1 3 alpha\nq2 Q0 d2 2 2 alpha\nq3 Q0 d3 1 1 alpha\n"
         "q3 Q0 e 2 1 alpha\nq9 Q0 d9 1 1 alpha\n")
RUN_B = ("q2 Q0 d2 1 3 beta\nq3 Q0 x 1 3 beta\nq3 Q0 d3 2 2 beta\nq4 Q0 y 1 3 beta\nq4 Q0 d4 2 2 beta\n"
         "q5 Q0 d5 1 1 beta\n")
QRELS = ("q1 0 d1 1\nq1 0 d8 2\nq2 0 d2 2\nq2 0 x 0\nq3 0 d3 1\nq4 0 d4 1\nq5 0 d5 0\nq6 0 d6 1\n"
         "q7 0 d7 3\n")
COUNTS = "alpha 3, beta 3; 2 in no run"


def _workspace() -> Path:
    return Path(os.environ["TEMPO_EVAL_HOME"])


def _files() -> tuple[Path, Path, Path]:
    folder = _workspace() / "runs"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (("a.run", RUN_A), ("b.run", RUN_B), ("qrels.txt", QRELS)):
        (folder / name).write_text(text)
    return folder / "a.run", folder / "b.run", folder / "qrels.txt"


def _cli(missing: str) -> tuple[dict[str, float], str]:
    return _cli_means(*_files(), missing)


def _shown(at: AppTest) -> tuple[dict[str, float], str]:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    table = next(t.value for t in at.dataframe if "label" in t.value.columns)
    captions = "\n".join(c.value.replace("\\", "") for c in at.caption)
    return dict(zip(table["run"], table["ndcg@10"], strict=True)), captions


def _compare_page(missing: str, **state: object) -> AppTest:
    at = AppTest.from_file(str(ROOT / "views" / "compare.py"), default_timeout=TIMEOUT)
    at.session_state["compare_missing"] = missing
    at.session_state["compare_test"] = "student"
    for key, value in state.items():
        if key == "dataset":
            at.query_params["dataset"] = str(value)
        else:
            at.session_state[key] = value
    return at


def _stored_by_the_datasets_page() -> int:
    """The runs read and stored as the Datasets page has them: a `trec_runs` job with the saved
    uploads, run by a worker; returns the stored dataset's id."""
    from tempo_eval.cli.job import run_worker
    from tempo_eval.store.jobs import JobQueue

    a, b, qrels = _files()
    queue = JobQueue()
    try:
        job_id = queue.submit("trec_runs", {"runs": [["a.run", str(a)], ["b.run", str(b)]],
                                            "qrels": ["qrels.txt", str(qrels)], "queries": None, "corpus": None,
                                            "store": True}, label="Store the runs")
        run_worker(queue, limit=1, poll=0.05)
        job = queue.get(job_id)
    finally:
        queue.close()
    assert job["status"] == "finished", job
    return int(job["dataset_id"])


def _through(door: str, missing: str) -> AppTest:
    """The Compare page showing the runs entered by `door`: stored on Datasets (the dataset's
    retrieval systems), run files named by their paths, or run files uploaded on Compare."""
    if door == "datasets":
        at = _compare_page(missing, dataset=_stored_by_the_datasets_page(), compare_source=SYSTEMS)
        return at.run()
    if door == "paths":
        a, b, qrels = _files()
        at = _compare_page(missing, compare_source=FILES, compare_run_paths=f"{a}\n{b}",
                           compare_qrels_path=str(qrels))
        return at.run()
    at = _compare_page(missing, compare_source=FILES).run()
    at.file_uploader(key="compare_run_uploads").set_value([("a.run", RUN_A.encode(), "text/plain"),
                                                            ("b.run", RUN_B.encode(), "text/plain")])
    at.file_uploader(key="compare_qrels_upload").set_value(("qrels.txt", QRELS.encode(), "text/plain"))
    return at.run()


@pytest.mark.parametrize("missing", ["zero", "drop"])
@pytest.mark.parametrize("door", ["datasets", "paths", "uploads"])
def test_the_compare_page_gives_the_command_line_means_whichever_way_the_runs_came_in(door: str, missing: str) -> None:
    expected, said = _cli(missing)
    assert COUNTS in said
    means, captions = _shown(_through(door, missing))
    assert means == pytest.approx(expected, abs=1e-12)
    assert COUNTS in captions


def test_a_stored_trec_dataset_keeps_its_full_qrels() -> None:
    from tempo_eval.store.runs import RunStore

    dataset_id = _stored_by_the_datasets_page()
    store = RunStore()
    try:
        qrels = store.dataset_qrels(dataset_id)
    finally:
        store.close()
    assert qrels is not None and qrels.decode() == QRELS
