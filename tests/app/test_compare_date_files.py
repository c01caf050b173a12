"""Hostile date files on the Compare page (issue 23): a date that cannot be read, a line without
a tab, an id given twice, a folder of several files, a path outside the allowed folders; each is
said in the page's words with the file, the line and the value, never a traceback; an uploaded
file is called by its name, not by the path it was saved under."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.test_pages import worker_in_this_process  # noqa: F401 - the page's jobs run in this process
from tests.support.paths import ROOT

FIXTURE = ROOT / "data" / "asof"
FILES = "TREC run files (paths on this machine, a folder of runs, or uploads)"
RUNS = f"{FIXTURE / 'run_live.trec'}\n{FIXTURE / 'run_snapshot.trec'}"


def _workspace() -> Path:
    return Path(os.environ["TEMPO_EVAL_HOME"])


def _broken(kind: str, line_of: str, text: str) -> tuple[Path, int]:
    """The fixture's `kind`-dates file with the line of id `line_of` replaced by `text`, in the
    workspace; returns its path and the line's number."""
    lines = (FIXTURE / f"{kind}-dates.tsv").read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith(line_of + "\t"))
    lines[index] = text
    path = _workspace() / f"bad-{kind}-dates.tsv"
    path.write_text("\n".join(lines) + "\n")
    return path, index + 1


def _page(doc: Path | str, query: Path | str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "views" / "compare.py"), default_timeout=120)
    at.session_state["compare_source"] = FILES
    at.session_state["compare_run_paths"] = RUNS
    at.session_state["compare_qrels_path"] = str(FIXTURE / "qrels.txt")
    at.session_state["compare_doc_dates_path"] = str(doc)
    at.session_state["compare_query_dates_path"] = str(query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _said(at: AppTest) -> str:
    return " ".join(e.value for e in at.error).replace("\\", "")


@pytest.mark.parametrize(("kind", "doc_id"), [("query", "w03-uk_pm"), ("doc", "bbc-fed-20230106")])
def test_a_bad_date_names_the_file_the_line_and_the_value(kind: str, doc_id: str) -> None:
    bad, line = _broken(kind, doc_id, f"{doc_id}\tsoon")
    good = FIXTURE / ("doc-dates.tsv" if kind == "query" else "query-dates.tsv")
    at = _page(*((good, bad) if kind == "query" else (bad, good)))
    said = _said(at)
    assert said.startswith("A date file could not be read: ")
    assert f"bad-{kind}-dates.tsv, line {line}" in said and "'soon'" in said and "Traceback" not in said
    assert "DateError" not in said and not any("future_leak" in str(t.value.columns) for t in at.dataframe)


def test_a_line_without_a_tab_is_named() -> None:
    bad, line = _broken("query", "w05-fed", "w05-fed 2023-02-03")
    said = _said(_page(FIXTURE / "doc-dates.tsv", bad))
    assert f"line {line}" in said and "expected 'query_id<TAB>date'" in said


def test_an_id_given_twice_is_named_with_both_lines() -> None:
    path = _workspace() / "twice.tsv"
    text = (FIXTURE / "query-dates.tsv").read_text()
    path.write_text(text + "w01-fed\t2023-01-07\n")
    said = _said(_page(FIXTURE / "doc-dates.tsv", path))
    assert "'w01-fed' is given twice (lines 1 and 27)" in said


def test_an_uploaded_bad_date_file_is_called_by_its_name() -> None:
    at = AppTest.from_file(str(ROOT / "views" / "compare.py"), default_timeout=120)
    at.session_state["compare_source"] = FILES
    at.session_state["compare_run_paths"] = RUNS
    at.session_state["compare_qrels_path"] = str(FIXTURE / "qrels.txt")
    at.session_state["compare_doc_dates_path"] = str(FIXTURE / "doc-dates.tsv")
    at.run()
    data = (FIXTURE / "query-dates.tsv").read_text().replace("w02-twitter\t2023-01-13", "w02-twitter\t13.01.2023")
    at.file_uploader(key="compare_query_dates_upload").set_value(("my dates.tsv", data.encode(), "text/plain"))
    at.run()
    assert not at.exception
    said = _said(at)
    assert "my dates.tsv (uploaded), line 2" in said and "'13.01.2023'" in said
    assert str(_workspace() / "uploads") not in said


def test_a_date_path_outside_the_allowed_folders_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "dates.tsv"
    outside.write_text("w01-fed\t2023-01-06\n")
    at = _page(FIXTURE / "doc-dates.tsv", outside)
    assert "outside the folders the app may read" in _said(at)
    from tempo_eval.store.jobs import JobQueue

    assert JobQueue().jobs(kind="compare_runs") == []  # nothing was queued for the worker


def test_a_folder_of_several_files_is_not_a_date_file() -> None:
    at = _page(FIXTURE, FIXTURE / "query-dates.tsv")
    assert "holds several files; name one file" in _said(at)
