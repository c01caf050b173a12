"""tempo-eval: evaluate retrieval-augmented generation with time as a first-class dimension.

    from tempo_eval import evaluate, compare, diff, load_dataset, METRICS, RunStore

    result = evaluate("qa.csv", metrics=["temporal_faithfulness"])   # a run in the workspace
    report = compare(per_query, test="student")                      # runs against each other
    changes = diff(RunStore(), baseline_id, candidate_id)            # two stored runs row by row

Importing this package is cheap: each public noun's module is imported the first time the noun
is asked for (module `__getattr__`), and torch, transformers, sentence-transformers and openai
only by the code paths that need them.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from tempo_eval.common import __version__ as __version__  # noqa: E402

# eager: light, and the function must win over the `tempo_eval.slices` subpackage of the same name
from tempo_eval.slices.report import slices  # noqa: E402

#: public noun -> (module, name there)
_NOUNS = {
    "METRICS": ("tempo_eval.metrics", "METRICS"),  # the registry, filled as the metrics package loads
    "RunStore": ("tempo_eval.store.runs", "RunStore"),  # the workspace: datasets, runs, results
    "compare": ("tempo_eval.compare", ""),  # the package, callable as `statistics.compare`
    "diff": ("tempo_eval.compare.run_diff", "diff_stored"),
    "evaluate": ("tempo_eval.engine.runner", "evaluate"),
    "load_dataset": ("tempo_eval.io.dataset", "load_dataset"),
}

__all__ = [
    "METRICS",
    "RunStore",
    "compare",
    "diff",
    "evaluate",
    "load_dataset",
    "slices",
]


def __getattr__(name: str) -> Any:
    found = _NOUNS.get(name)
    if found is None:
        raise AttributeError(f"module 'tempo_eval' has no attribute {name!r}")
    module = import_module(found[0])
    value = getattr(module, found[1]) if found[1] else module
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
