"""Which run a second `evaluate` continues, and what it is called (issue 38.8, 38.14):

- the same dataset and settings with no --run-name, or with the same --run-name, resume the
  run and say so on stderr ("resumed run #N 'name'");
- another --run-name makes a new run: the first keeps its name and its rows;
- an empty or blank --run-name is refused before anything is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from tempo_eval.engine.runner import evaluate
from tempo_eval.io.dataset import load_dataset
from tempo_eval.store.runs import RunStore
from tests.support.cli import run_cli_streams as run_cli
from tests.support.sample_runs import SAMPLE, metrics


def _evaluate(tmp_path: Path, capsys: pytest.CaptureFixture[str], *name: str) -> tuple[int, str, str]:
    return run_cli(["evaluate", str(SAMPLE), "--metrics", "temporal_faithfulness", "--out",
                    str(tmp_path / "out.csv"), "--no-progress", *(("--run-name", name[0]) if name else ())], capsys)


def _runs() -> list[tuple[int, str, int]]:
    runs = RunStore().list_runs().sort_values("id")
    return [(int(r.id), str(r.name), int(r.n_results)) for r in runs.itertuples()]


def test_another_run_name_makes_a_new_run_and_keeps_the_first(tmp_path: Path, capsys) -> None:
    code, _, err = _evaluate(tmp_path, capsys, "first")
    assert code == 0 and "resumed" not in err
    code, _, err = _evaluate(tmp_path, capsys, "second")
    assert code == 0 and "resumed" not in err
    runs = _runs()
    assert [(name, n) for _, name, n in runs] == [("first", 30), ("second", 30)]


def test_the_same_name_or_no_name_resumes_and_says_which_run(tmp_path: Path, capsys) -> None:
    _evaluate(tmp_path, capsys, "first")
    (first, _, _), = _runs()
    code, _, err = _evaluate(tmp_path, capsys, "first")
    assert code == 0 and f"resumed run #{first} 'first'" in err
    code, _, err = _evaluate(tmp_path, capsys)
    assert code == 0 and f"resumed run #{first} 'first'" in err
    assert [name for _, name, _ in _runs()] == ["first"]


def test_the_library_never_renames_a_run() -> None:
    store = RunStore()
    a = evaluate(load_dataset(str(SAMPLE)), metrics(), store=store, run_name="a")
    b = evaluate(load_dataset(str(SAMPLE)), metrics(), store=store, run_name="b")
    again = evaluate(load_dataset(str(SAMPLE)), metrics(), store=store, run_name="a")
    assert a.run_id != b.run_id and again.run_id == a.run_id and again.resumed and not b.resumed
    assert store.run_info(a.run_id)["name"] == "a" and store.run_info(b.run_id)["name"] == "b"


@pytest.mark.parametrize("name", ["", "   ", "\t\n"])
def test_an_empty_run_name_is_refused_before_anything_is_stored(tmp_path: Path, capsys, name: str) -> None:
    code, _, err = _evaluate(tmp_path, capsys, name)
    assert code == 2 and "--run-name" in err and "empty" in err
    assert RunStore().list_runs().empty
    with pytest.raises(ValueError, match="run_name must not be empty"):
        evaluate(load_dataset(str(SAMPLE)), metrics(), run_name=name)
    store = RunStore()
    assert store.list_runs().empty
    assert store.connection.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
