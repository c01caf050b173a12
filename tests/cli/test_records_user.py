"""The command line records who made what it stores: the operating-system user by default, or
`--user NAME`; `runs list` shows it and filters by it (`--user`, `--mine`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tempo_eval.store.runs import RunStore
from tests.support.cli import run_cli, run_cli_streams
from tests.support.paths import TESTS

ROWS = [
    {"query_id": "q1", "query": "When was the bridge built?", "answer": "It was built in 2001.",
     "contexts": ["Construction finished in 2001."], "retrieved_ids": ["d1"], "gold_ids": ["d1"]},
    {"query_id": "q2", "query": "When did it open?", "answer": "It opened in 2005.",
     "contexts": ["It opened in 2005."], "retrieved_ids": ["d2"], "gold_ids": ["d3"]},
]


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in ROWS) + "\n", encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _os_user(monkeypatch: pytest.MonkeyPatch) -> None:
    # getpass.getuser reads these first: the operating-system user of this test
    monkeypatch.setenv("LOGNAME", "os-alice")
    monkeypatch.setenv("USER", "os-alice")


def _evaluate(data_file: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> int:
    """A new run of `data_file` (a run name of its own), with the options `extra`; its id."""
    name = f"run by {' '.join(extra) or 'default'}"
    code, _, err = run_cli_streams(["evaluate", str(data_file), "--metrics", "temporal_ndcg", "--no-progress",
                                    "--run-name", name, *extra], capsys)
    assert code == 0, err
    store = RunStore()
    try:
        return int(store.list_runs()["id"].max())
    finally:
        store.close()


def _made_by(run_id: int) -> tuple[str | None, str | None]:
    store = RunStore()
    try:
        info = store.run_info(run_id)
        return info["created_by"], store.dataset_info(info["dataset_id"])["created_by"]
    finally:
        store.close()


def test_evaluate_records_the_operating_system_user_by_default(data_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _made_by(_evaluate(data_file, capsys)) == ("os-alice", "os-alice")


def test_evaluate_records_the_user_given_with_user(data_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_id = _evaluate(data_file, capsys, "--user", "bob@example.org")
    assert _made_by(run_id)[0] == "bob@example.org"


def test_an_empty_user_is_refused_before_anything_is_stored(data_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(["evaluate", str(data_file), "--metrics", "temporal_ndcg", "--no-progress", "--user", " "],
                        capsys)
    assert code == 2 and "--user must name a user" in err
    store = RunStore()
    assert store.list_runs().empty
    store.close()


def test_runs_list_shows_who_made_each_run_and_filters_by_user_or_mine(data_file: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    mine = _evaluate(data_file, capsys)
    bobs = _evaluate(data_file, capsys, "--user", "bob")
    store = RunStore()
    dataset_id = store.run_info(mine)["dataset_id"]
    old, _ = store.create_or_resume_run(dataset_id, {"before": "users"}, resume=False)  # nobody recorded
    store.close()
    code, out, _ = run_cli_streams(["runs", "list"], capsys)
    assert code == 0
    header, *lines = out.splitlines()
    assert header.split()[6] == "by"
    by_id = {int(line.split()[0]): line for line in lines}
    assert " os-alice " in by_id[mine] and " bob " in by_id[bobs] and " unknown " in by_id[old]
    for args, expected in ((["--mine"], {mine}), (["--user", "bob"], {bobs}), (["--user", "unknown"], {old})):
        code, out, _ = run_cli_streams(["runs", "list", "--format", "json", *args], capsys)
        assert code == 0
        records = json.loads(out)
        assert {r["id"] for r in records} == expected, args
    assert {r["created_by"] for r in json.loads(run_cli_streams(["runs", "--format", "json"], capsys)[1])} == {
        "os-alice", "bob", None}
    code, out, _ = run_cli_streams(["runs", "list", "--user", "nobody"], capsys)
    assert code == 0 and "made by nobody" in out


def test_import_records_the_user_given(capsys: pytest.CaptureFixture[str]) -> None:
    scores = TESTS / "data" / "interop" / "deepeval_test_run.json"
    code, err = run_cli(["import", str(scores), "--user", "carol"], capsys)
    assert code == 0, err
    store = RunStore()
    (run_id,) = store.list_runs()["id"].tolist()
    store.close()
    assert _made_by(run_id) == ("carol", "carol")
