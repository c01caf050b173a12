"""An absurd cutoff k (issue 19.6): TemporalNDCG with a huge k equals k at the list's length, `evaluate`
with it stays small, and `compare` parses a huge cutoff and scores it as trec_eval does."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

# ---- 6: no upper bound on k --------------------------------------------------------------------

HUGE_K = 10**12


def _peak_mb(code: str, timeout: float = 120) -> float:
    """Peak resident memory of `code` run in a fresh interpreter, in MB."""
    # VmHWM: the peak of this process image (ru_maxrss would include the forking test runner's)
    probe = code + "\nimport re; print(re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read())[1])"
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
    try:
        done = subprocess.run([sys.executable, "-c", limit + probe], cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {timeout:g} s")
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.split()[-1]) / 1024


def test_temporal_ndcg_with_a_huge_k_equals_k_at_the_list_length() -> None:
    cases = [
        {"retrieved_ids": ["a", "b", "c"], "gold_ids": {"a": 1, "c": 2, "x": 3}},
        {"retrieved_ids": ["a", "b"], "gold_ids": ["b"]},
        {"query": "What happened in 2020?", "contexts": ["Back in 1999.", "It was 2020.", "2019-2021"]},
        {"qft": {2020}, "dfts": [{1999}, {2020}], "candidate_pool": [{1999}, {2020}, {2020, 2021}, {2020}]},
    ]
    # in a child process: before the fix, k = 10**12 looped (and allocated) for ever
    code = f"""
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
for inputs in {cases!r}:
    huge = TemporalNDCG(k={HUGE_K}).measure(**inputs)
    for sane in (5, 10, 100):
        assert abs(huge.score - TemporalNDCG(k=sane).measure(**inputs).score) < 1e-12, inputs
    assert len(huge.details["curve"]) <= 1000 and huge.details["k"] == {HUGE_K}
"""
    assert _peak_mb(code, timeout=60) < 1000


def test_evaluate_with_a_huge_k_stays_small(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text('{"query": "q in 2020", "retrieved_ids": ["a", "b"], "gold_ids": ["b"]}\n', encoding="utf-8")
    args = ["evaluate", str(data), "--metrics", "temporal_ndcg", "--k", str(HUGE_K), "--out",
            str(tmp_path / "o.csv"), "--no-progress", "--workspace", str(tmp_path / "ws")]
    peak = _peak_mb(f"from tempo_eval.cli import main; assert main({args!r}) == 0")
    assert peak < 1000
    from tempo_eval.io.export import read_csv_export

    assert read_csv_export(tmp_path / "o.csv")["score"].tolist() == pytest.approx([1 / math.log2(3)])


def test_compare_parses_a_huge_cutoff_and_scores_it_as_trec_eval(tmp_path: Path) -> None:
    from tempo_eval.compare.statistics import parse_trec_metric
    from tests.support.trec import ndcg_per_query

    assert parse_trec_metric(f"ndcg@{HUGE_K}") == HUGE_K
    run = {"q1": {"a": 1.0, "b": 0.5}, "q2": {"c": 2.0}}
    qrels = {"q1": {"b": 1, "z": 2}, "q2": {"c": 1}}
    assert ndcg_per_query(run, qrels, HUGE_K) == pytest.approx(ndcg_per_query(run, qrels, 10))
    for name in ("a", "b"):
        (tmp_path / f"{name}.run").write_text(f"q1 Q0 d1 1 1.0 {name}\nq1 Q0 d2 2 0.5 {name}\n", encoding="utf-8")
    (tmp_path / "qrels.txt").write_text("q1 0 d2 1\n", encoding="utf-8")
    args = ["compare", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--qrels", str(tmp_path / "qrels.txt"),
            "--metric", f"ndcg@{HUGE_K}", "--out", str(tmp_path / "table.md")]
    peak = _peak_mb(f"from tempo_eval.cli import main; assert main({args!r}) == 0")
    assert peak < 1000
    assert "0.631" in (tmp_path / "table.md").read_text(encoding="utf-8")

