"""Distributed evaluation on Ray Data: the same scores as the local runner, on a cluster.

    from tempo_eval.distributed import evaluate_ray, import_results
    run = evaluate_ray("s3://bucket/logs/", metrics, out="results/", num_workers=8)
    import_results("results/")            # the run, as a normal run in the workspace

- `reader`: reads Parquet / CSV / JSONL with Ray Data's readers into the canonical columns, with
  the local loaders' mapping, validation and located errors.
- `shipping`: sends metrics to the workers (no database connection, no loaded model travels) and
  gives each worker the verdict cache.
- `engine`: the actor pool (`map_batches` with a callable class; each actor builds its metrics
  once) and the driver that writes one Parquet file per block of rows, skipping finished blocks.
- `output`: the layout of an output directory and `import_results`.

Ray is an optional dependency (`pip install tempo-eval[ray]`); it is imported only when used.
"""

from __future__ import annotations

from typing import Any

__all__ = ["evaluate_ray", "import_results", "read_results"]


def __getattr__(name: str) -> Any:
    # lazy: importing the package loads neither Ray nor pandas
    if name == "evaluate_ray":
        from tempo_eval.distributed.engine import evaluate_ray

        return evaluate_ray
    if name in ("import_results", "read_results"):
        from tempo_eval.distributed import output

        return getattr(output, name)
    raise AttributeError(f"module 'tempo_eval.distributed' has no attribute {name!r}")
