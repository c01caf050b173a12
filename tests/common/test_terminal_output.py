"""User text printed by the command line cannot drive the terminal: run names, dataset names and
query ids holding ESC sequences, other controls, DEL, C1 controls or bidi overrides are shown as
visible escapes (`tempo_eval.common.safe_text.terminal_safe`) by `runs`, `runs show`, `diff` and the
error lines; Compare's Markdown escapes run names with the same function as `diff --format
markdown` (`tempo_eval.common.safe_text.md_cell`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tempo_eval.common.safe_text import md_cell, one_line, terminal_safe
from tempo_eval.compare.run_diff import diff_runs
from tempo_eval.compare.statistics import compare
from tempo_eval.engine.runner import evaluate
from tempo_eval.io.dataset import load_dataset
from tempo_eval.store.runs import RunStore
from tests.support.cli import run_cli_streams as run_cli
from tests.support.sample_runs import SAMPLE, changed_sample, metrics

HOSTILE = "evil\x1b]0;pwned\x07\x1b[2J\x9b31m\u202etxt.exe\x7f\x08"
#: what a terminal would obey: ESC, BEL, CSI (C1), DEL, backspace, a bidi override
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_terminal_safe_shows_every_control_as_a_visible_escape() -> None:
    assert terminal_safe(HOSTILE) == "evil\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202etxt.exe\\x7f\\x08"
    assert terminal_safe("a\tb\nc\r\u2066d\u200f") == "a\\tb\\nc\\r\\u2066d\\u200f"
    assert terminal_safe("Zoë — 2024 ≥ 1 日本") == "Zoë — 2024 ≥ 1 日本"  # printable text as typed
    assert one_line("two\n lines\x1b") == "two lines\\x1b"


def _hostile_runs(tmp_path: Path) -> tuple[int, int]:
    """The sample and its changed copy, with q1's query id made hostile, stored as two runs with
    hostile names."""
    def hostile_ids(source: Path, target: Path) -> Path:
        rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
        for row in rows:
            if row["query_id"] == "q1":
                row["query_id"] = "q1" + HOSTILE
        target.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return target

    store = RunStore()
    base = evaluate(load_dataset(str(hostile_ids(SAMPLE, tmp_path / "a.jsonl"))), metrics(), store=store,
                    run_name="base " + HOSTILE)
    cand = evaluate(load_dataset(str(hostile_ids(changed_sample(tmp_path), tmp_path / "b.jsonl"))), metrics(),
                    store=store, run_name="cand " + HOSTILE)
    return base.run_id, cand.run_id


def test_runs_runs_show_and_diff_print_no_raw_control(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base, cand = _hostile_runs(tmp_path)
    for args in (["runs"], ["runs", "show", str(base)], ["diff", str(base), str(cand)],
                 ["diff", str(base), str(cand), "--format", "markdown"], ["runs", "delete", str(cand)]):
        _, out, err = run_cli(args, capsys)
        assert not RAW.search(out) and not RAW.search(err), (args, out, err)
        assert "\\x1b" in out + err, (args, out, err)
    _, out, _ = run_cli(["diff", str(base), str(cand)], capsys)
    assert "q1evil\\x1b]0;pwned" in out  # the regressed query id, in the worst regressions
    _, _, err = run_cli(["diff", str(base), "no run\x1b[31m"], capsys)
    assert not RAW.search(err) and "\\x1b[31m" in err


def test_compare_markdown_escapes_run_names_as_diff_markdown_does() -> None:
    name_a, name_b = "a|b*[link](http://x)_" + HOSTILE, "plain `code` <b>"
    per_query = {name_a: {"ndcg": {"q1": 0.1, "q2": 0.5, "q3": 0.2}},
                 name_b: {"ndcg": {"q1": 0.9, "q2": 0.8, "q3": 0.7}}}
    text = compare(per_query, test="student").to_markdown()
    assert md_cell(name_a) in text and md_cell(name_b) in text
    assert name_b not in text and not RAW.search(text)
    assert "a\\|b\\*\\[link\\](http://x)\\_evil\\x1b" in text
    results = {
        "row": [0], "query_id": ["q1"], "run": [None], "metric": ["m"], "score": [0.5], "reason_code": [None],
    }
    import pandas as pd

    frame = pd.DataFrame(results)
    diff = diff_runs(frame, frame, baseline={"id": 1, "name": name_a}, candidate={"id": 2, "name": name_b})
    assert md_cell(diff.headline(escape=str)) in diff.to_markdown()
    assert "a\\|b\\*\\[link\\](http://x)\\_evil\\x1b" in diff.to_markdown()


def test_json_outputs_escape_what_a_terminal_obeys_and_keep_the_value(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    base, cand = _hostile_runs(tmp_path)
    outputs = {}
    for args in (["runs", "--format", "json"], ["runs", "show", str(base), "--format", "json"],
                 ["diff", str(base), str(cand), "--format", "json"]):
        code, out, _ = run_cli(args, capsys)
        assert code == 0 and not RAW.search(out), args
        outputs[args[0] + args[1]] = json.loads(out)
    # the values are kept exactly
    assert {r["name"] for r in outputs["runs--format"]} == {"base " + HOSTILE, "cand " + HOSTILE}
    assert outputs["runsshow"]["name"] == "base " + HOSTILE
    assert outputs[f"diff{base}"]["candidate"]["name"] == "cand " + HOSTILE


def test_compare_latex_shows_controls_as_text() -> None:
    per_query = {"a" + HOSTILE: {"ndcg": {"q1": 0.1, "q2": 0.5}}, "b": {"ndcg": {"q1": 0.9, "q2": 0.8}}}
    latex = compare(per_query, test="student").to_latex()
    assert not RAW.search(latex) and "\\textbackslash{}x1b" in latex
