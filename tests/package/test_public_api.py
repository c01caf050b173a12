"""The package's public nouns: `from tempo_eval import evaluate, compare, diff, load_dataset,
METRICS, RunStore` works, in any order, while `import tempo_eval` alone stays light (each noun's
module is imported the first time the noun is asked for)."""

from __future__ import annotations

import subprocess
import sys

import pytest

NOUNS = ["METRICS", "RunStore", "compare", "diff", "evaluate", "load_dataset"]


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_the_public_nouns_are_listed_in_all() -> None:
    import tempo_eval

    assert set(NOUNS) <= set(tempo_eval.__all__)
    assert set(NOUNS) <= set(dir(tempo_eval))
    with pytest.raises(AttributeError, match="no_such_noun"):
        tempo_eval.no_such_noun  # noqa: B018


def test_importing_the_package_loads_none_of_the_engine() -> None:
    out = _run("import sys, tempo_eval; print(sorted(m for m in ('pandas', 'numpy', 'pyarrow', 'torch', "
               "'tempo_eval.engine.runner', 'tempo_eval.store.runs') if m in sys.modules))")
    assert out == "[]"


def test_the_nouns_are_the_engine_s_own() -> None:
    import tempo_eval.compare.run_diff
    import tempo_eval.engine.runner
    import tempo_eval.io.dataset
    import tempo_eval.metrics.base
    import tempo_eval.store.runs
    from tempo_eval import METRICS, RunStore, compare, diff, evaluate, load_dataset

    assert evaluate is tempo_eval.engine.runner.evaluate and load_dataset is tempo_eval.io.dataset.load_dataset
    assert RunStore is tempo_eval.store.runs.RunStore and diff is tempo_eval.compare.run_diff.diff_stored
    assert METRICS is tempo_eval.metrics.base.METRICS and {"temporal_ndcg", "temporal_faithfulness"} <= set(METRICS)
    per_query = {"a": {"m": {"q1": 1.0, "q2": 0.5}}, "b": {"m": {"q1": 0.0, "q2": 0.25}}}
    assert compare(per_query, test="student").means["a"]["m"] == pytest.approx(0.75)


def test_compare_is_the_function_whichever_noun_is_imported_first() -> None:
    # evaluate's module imports tempo_eval.compare.statistics (the module of the statistics) on its way
    out = _run("from tempo_eval import evaluate, compare\n"
               "import tempo_eval.compare.statistics as module\n"
               "per_query = {'a': {'m': {'q1': 1.0}}, 'b': {'m': {'q1': 0.0}}}\n"
               "print(compare(per_query, test='student').means['a']['m'], module.bootstrap_ci is not None)")
    assert out == "1.0 True"
