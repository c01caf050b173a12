"""Run files on the Compare page: paths confined to allowed folders, the background scoring, and
the same means and missing-query counts as the command line (issue 21, issue 19.2)."""

from __future__ import annotations

import contextlib
import io
import math
import os
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tempo_eval.cli import main
from tempo_eval_app import paths
from tests.app.test_pages import worker_in_this_process  # noqa: F401 - the page's jobs run in this process
from tests.support.paths import ROOT

TIMEOUT = 120

# alpha misses q4, beta misses q1, no run has q6; q5 has no relevant document
RUN_A = "q1 Q0 d1 1 3 alpha\nq1 Q0 x 2 2 alpha\nq2 Q0 x 1 3 alpha\nq2 Q0 d2 2 2 alpha\nq3 Q0 d3 1 1 alpha\n"
RUN_B = ("q2 Q0 d2 1 3 beta\nq3 Q0 x 1 3 beta\nq3 Q0 d3 2 2 beta\nq4 Q0 y 1 3 beta\nq4 Q0 d4 2 2 beta\n"
         "q5 Q0 d5 1 1 beta\n")
QRELS = "q1 0 d1 1\nq2 0 d2 2\nq3 0 d3 1\nq4 0 d4 1\nq5 0 d5 0\nq6 0 d6 1\n"


def _workspace() -> Path:
    return Path(os.environ["TEMPO_EVAL_HOME"])


def _write(folder: Path) -> tuple[Path, Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a.run").write_text(RUN_A)
    (folder / "b.run").write_text(RUN_B)
    (folder / "qrels.txt").write_text(QRELS)
    return folder / "a.run", folder / "b.run", folder / "qrels.txt"


# ---- paths ------------------------------------------------------------------------------------

def test_paths_inside_the_workspace_and_data_are_read(tmp_path: Path) -> None:
    a, _, _ = _write(_workspace() / "runs")
    assert paths.confine(str(a)) == a.resolve()
    assert paths.files_named(str(a.parent)) == sorted(p.resolve() for p in a.parent.iterdir())
    assert paths.confine(str(ROOT / "data" / "sample" / "qrels.txt")).name == "qrels.txt"


def test_outside_paths_dot_dot_and_links_leading_outside_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.run"
    outside.write_text(RUN_A)
    with pytest.raises(paths.PathRefused, match="outside the folders"):
        paths.confine(str(outside))
    with pytest.raises(paths.PathRefused, match="outside the folders"):
        paths.confine("/etc/passwd")
    inside = _workspace() / "runs"
    inside.mkdir()
    with pytest.raises(paths.PathRefused, match=r"contains '\.\.'"):
        paths.confine(str(inside / ".." / "runs"))
    (inside / "link.run").symlink_to(outside)
    with pytest.raises(paths.PathRefused, match="a link to"):
        paths.confine(str(inside / "link.run"))
    with pytest.raises(paths.PathRefused, match="outside the folders"):
        paths.files_named(str(inside))  # the folder holds the link
    with pytest.raises(paths.PathRefused, match="does not exist"):
        paths.confine(str(inside / "missing.run"))
    os.mkfifo(inside / "fifo")
    (inside / "link.run").unlink()
    with pytest.raises(paths.PathRefused, match="not a regular file"):
        paths.files_named(str(inside / "fifo"))


def test_allowed_dirs_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extra = tmp_path / "shared_runs"
    a, _, _ = _write(extra)
    monkeypatch.setenv(paths.ALLOWED_ENV, f"{tmp_path / 'nothing'}{os.pathsep}{extra}")
    assert paths.confine(str(a)) == a.resolve()
    assert extra.resolve() in paths.allowed_roots()


# ---- the page against the command line -----------------------------------------------------------

def _cli_means(a: Path, b: Path, qrels: Path, missing: str) -> tuple[dict[str, float], str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["compare", str(a), str(b), "--qrels", str(qrels), "--test", "student",
                     "--format", "csv", "--missing", missing]) == 0
    table = pd.read_csv(io.StringIO(out.getvalue()))
    return dict(zip(table["run"], table["ndcg@10"], strict=True)), err.getvalue()


def _page(a: Path, b: Path, qrels: Path, missing: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "views" / "compare.py"), default_timeout=TIMEOUT)
    at.session_state["compare_source"] = "TREC run files (paths on this machine, a folder of runs, or uploads)"
    at.session_state["compare_run_paths"] = f"{a}\n{b}"
    at.session_state["compare_qrels_path"] = str(qrels)
    at.session_state["compare_missing"] = missing
    at.session_state["compare_test"] = "student"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


@pytest.mark.parametrize("missing", ["zero", "drop"])
def test_page_and_command_line_give_the_same_means_and_counts(missing: str) -> None:
    a, b, qrels = _write(_workspace() / "runs")
    expected, said = _cli_means(a, b, qrels, missing)
    at = _page(a, b, qrels, missing)
    table = next(t.value for t in at.dataframe if "label" in t.value.columns)
    means = dict(zip(table["run"], table["ndcg@10"], strict=True))
    assert means == pytest.approx(expected, abs=1e-12)
    counts = "alpha 2, beta 2; 1 in no run"  # q4 / q1, and q6 that no run has
    assert counts in said
    assert any(counts in c.value.replace("\\", "") for c in at.caption)
    if missing == "zero":  # q1-q4 and q6 (in no run) averaged, the missing ones as 0 (trec_eval -c)
        assert expected["alpha"] == pytest.approx((1 + 1 / math.log2(3) + 1 + 0 + 0) / 5)
    else:  # only q2 and q3 are in both runs
        assert expected["alpha"] == pytest.approx((1 / math.log2(3) + 1) / 2)


def test_page_refuses_a_path_outside_the_allowed_folders(tmp_path: Path) -> None:
    a, b, qrels = _write(tmp_path / "elsewhere")
    at = AppTest.from_file(str(ROOT / "views" / "compare.py"), default_timeout=TIMEOUT)
    at.session_state["compare_source"] = "TREC run files (paths on this machine, a folder of runs, or uploads)"
    at.session_state["compare_run_paths"] = f"{a}\n{b}"
    at.session_state["compare_qrels_path"] = str(qrels)
    at.run()
    assert not at.exception
    assert any("outside the folders the app may read" in e.value for e in at.error)


def test_page_reads_a_folder_of_runs_and_says_what_is_wrong_in_a_file() -> None:
    a, b, qrels = _write(_workspace() / "runs")
    qrels.rename(_workspace() / "qrels.txt")
    at = AppTest.from_file(str(ROOT / "views" / "compare.py"), default_timeout=TIMEOUT)
    at.session_state["compare_source"] = "TREC run files (paths on this machine, a folder of runs, or uploads)"
    at.session_state["compare_run_paths"] = str(a.parent)
    at.session_state["compare_qrels_path"] = str(_workspace() / "qrels.txt")
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert {t.value["run"].tolist().__len__() for t in at.dataframe if "label" in t.value.columns} == {2}
    b.write_text("q1 Q0 d1 1_0 1.0 beta\n")
    at.run()
    shown = [e.value.replace("\\", "") for e in at.error]
    assert any("b.run, line 1" in m and "ASCII" in m for m in shown), shown


def test_corpus_texts_reads_only_the_wanted_documents(tmp_path: Path) -> None:
    from tempo_eval.io.trec_dataset import corpus_texts

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(f'{{"doc_id": "d{i}", "text": "text {i}, see d1"}}\n' for i in range(5000)))
    assert corpus_texts(corpus, ["d1", "d4999", "nowhere"], chunk_bytes=4096) == {
        "d1": "text 1, see d1", "d4999": "text 4999, see d1",
    }
    tsv = tmp_path / "corpus.tsv"
    tsv.write_text("a\tfirst\nb\tsecond\n")
    assert corpus_texts(tsv, ["b"]) == {"b": "second"}


def test_page_shows_the_corpus_texts_of_the_opened_query() -> None:
    a, b, qrels = _write(_workspace() / "runs")
    corpus = _workspace() / "corpus.tsv"
    corpus.write_text("d1\tthe first document\nx\tan unjudged one\n")
    at = AppTest.from_file(str(ROOT / "views" / "compare.py"), default_timeout=TIMEOUT)
    at.session_state["compare_source"] = "TREC run files (paths on this machine, a folder of runs, or uploads)"
    at.session_state["compare_run_paths"] = f"{a}\n{b}"
    at.session_state["compare_qrels_path"] = str(qrels)
    at.session_state["compare_corpus_path"] = str(corpus)
    at.session_state["compare_query"] = "q1"
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    shown = "\n".join(str(h.value) for h in at.get("html"))
    assert "1. d1 (grade 1): the first document" in shown and "2. x (grade 0): an unjudged one" in shown


def test_page_compares_uploaded_runs_compressed_or_not() -> None:
    import gzip

    at = AppTest.from_file(str(ROOT / "views" / "compare.py"), default_timeout=TIMEOUT)
    at.session_state["compare_source"] = "TREC run files (paths on this machine, a folder of runs, or uploads)"
    at.session_state["compare_test"] = "student"
    at.run()
    at.file_uploader(key="compare_run_uploads").set_value([
        ("a.run", RUN_A.encode(), "text/plain"),
        ("b.run.gz", gzip.compress(RUN_B.encode()), "application/gzip"),
    ])
    at.file_uploader(key="compare_qrels_upload").set_value(("qrels.txt", QRELS.encode(), "text/plain"))
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = next(t.value for t in at.dataframe if "label" in t.value.columns)
    assert table["run"].tolist() == ["alpha", "beta"]
    assert any("alpha 2, beta 2; 1 in no run" in c.value.replace("\\", "") for c in at.caption)
