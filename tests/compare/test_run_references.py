"""How the command line chooses a run (`tempo_eval.compare.run_diff.resolve_run`): "#12" is an id, "name:X"
a name, digits an id or a name, and digits that are one run's id and another run's name are
refused, naming both runs. The same rule for diff, runs show, runs export and runs delete."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tempo_eval.compare.run_diff import resolve_run
from tempo_eval.store.runs import RunStore
from tests.support.cli import run_cli_streams as run_cli
from tests.support.sample_runs import make_sample_runs


@pytest.fixture
def crossed(tmp_path: Path) -> tuple[int, int]:
    """Two runs whose names are each other's ids: run #a is named str(b), run #b str(a)."""
    store = RunStore()
    a, b = make_sample_runs(store, tmp_path)
    store.rename_run(a, str(b))
    store.rename_run(b, str(a))
    return a, b


def test_digits_that_are_an_id_and_another_runs_name_are_refused_naming_both(crossed, capsys) -> None:
    a, b = crossed
    for args in (["diff", str(a), str(b)], ["runs", "show", str(a)], ["runs", "delete", str(a), "--yes"],
                 ["runs", "export", str(a), "--out", "x.csv"]):
        code, out, err = run_cli(args, capsys)
        assert code == 2 and not out, args
        assert f"run #{a}" in err and f"#{b}" in err and f"'#{a}'" in err and f"'name:{a}'" in err, err
    assert len(RunStore().list_runs()) == 2  # nothing deleted


def test_name_and_hash_choose_without_doubt(crossed, capsys, tmp_path: Path) -> None:
    a, b = crossed
    code, out, _ = run_cli(["diff", f"name:{b}", f"name:{a}", "--format", "json"], capsys)
    report = json.loads(out)
    assert code == 0 and (report["baseline"]["id"], report["candidate"]["id"]) == (a, b)
    code, out, _ = run_cli(["diff", f"#{a}", f"#{b}", "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["baseline"]["name"] == str(b)
    code, out, _ = run_cli(["runs", "show", f"name:{a}", "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["id"] == b
    code, _, err = run_cli(["runs", "export", f"name:{a}", "--out", str(tmp_path / "b.csv")], capsys)
    assert code == 0 and f"run {b}:" in err
    code, _, _ = run_cli(["runs", "delete", f"name:{a}", "--yes"], capsys)
    assert code == 0 and list(RunStore().list_runs()["id"]) == [a]
    # the clash is gone: the digits are the id of run a, whose name is b's id
    assert resolve_run(RunStore(), str(a)) == a and resolve_run(RunStore(), str(b)) == a


def test_a_name_made_of_digits_that_is_no_id_is_found_and_unknowns_are_named(tmp_path: Path) -> None:
    store = RunStore()
    a, _ = make_sample_runs(store, tmp_path)
    store.rename_run(a, "2024")
    assert resolve_run(store, "2024") == a and resolve_run(store, "name:2024") == a
    for ref, said in (("#2024", "no run with id '#2024'"), ("name:nothing", "no run with name 'nothing'"),
                      ("#x", "no run with id '#x'")):
        with pytest.raises(LookupError, match=said):
            resolve_run(store, ref)

