"""compare --engine ray gives the local engine's results (issue 21.3)."""

from __future__ import annotations

import contextlib
import io
import random
from pathlib import Path

import pytest

from tempo_eval.cli import main
from tempo_eval.compare.trec_scores import score_trec_files
from tempo_eval.engine.distributed.compare import _score_one, combine
from tests.compare.test_trec_scores import _qrels_text, _run_text
from tests.metrics.test_ndcg_trec_eval import _random_collection


def _files(folder: Path) -> tuple[list[Path], Path]:
    run, qrels = _random_collection(seed=3, n_queries=120)
    runs = []
    for i in range(4):
        rng = random.Random(i)
        kept = {q: d for q, d in run.items() if rng.random() > 0.1}  # each run misses some queries
        path = folder / f"r{i}.run"
        # two files share the tag "same": both are named from their file, as locally
        path.write_text(_run_text(kept, "same" if i < 2 else f"t{i}", rng))
        runs.append(path)
    (folder / "qrels").write_text(_qrels_text(qrels))
    return runs, folder / "qrels"


@pytest.mark.parametrize("missing", ["zero", "drop"])
def test_combining_per_file_results_equals_the_local_engine(tmp_path: Path, missing: str) -> None:
    runs, qrels = _files(tmp_path)
    local = score_trec_files(runs, qrels, metrics=["ndcg@5", "ndcg@10"], missing=missing)
    parts = [_score_one(str(r), str(qrels), ("ndcg@5", "ndcg@10"), None, "float32", None) for r in runs]
    combined = combine(parts, ["ndcg@5", "ndcg@10"], missing)
    assert combined.runs == local.runs == ["r0", "r1", "t2", "t3"]
    assert combined.per_query == local.per_query
    assert (combined.missing, combined.missing_everywhere) == (local.missing, local.missing_everywhere)
    assert combined.missing_summary() == local.missing_summary()


def _cli(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(list(args)) == 0
    return out.getvalue(), err.getvalue()


@pytest.mark.slow
def test_compare_engine_ray_prints_what_the_local_engine_prints(tmp_path: Path, ray_cluster: str) -> None:

    runs, qrels = _files(tmp_path)
    common = ["compare", *map(str, runs), "--qrels", str(qrels), "--test", "student"]
    local = _cli(*common, "--per-query", str(tmp_path / "local.csv"))
    distributed = _cli(*common, "--engine", "ray", "--per-query", str(tmp_path / "ray.csv"))
    (tmp_path / "bad.run").write_text("q1 Q0 d1 1_0 1.0 x\n")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["compare", *map(str, runs), str(tmp_path / "bad.run"), "--qrels", str(qrels),
                     "--engine", "ray"]) == 2
    assert distributed == local
    assert (tmp_path / "ray.csv").read_text() == (tmp_path / "local.csv").read_text()
    assert "bad.run, line 1, field 'rank'" in err.getvalue() and "Traceback" not in err.getvalue()
