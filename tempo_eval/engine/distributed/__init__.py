"""Distributed evaluation on Ray: the same scores as the local runner, on a cluster.

    from tempo_eval.engine.distributed import evaluate_ray, import_results
    run = evaluate_ray("s3://bucket/logs/", metrics, out="results/", num_workers=8)
    import_results("results/")            # an output made elsewhere, into this workspace

- `reader`: reads Parquet / CSV / JSONL with Ray Data's readers into the canonical columns, with
  the local loaders' mapping, validation and located errors (a URI, a directory of parts; a
  file on the driver's machine is streamed by the local engine's reader instead).
- `shipping`: sends metrics to the workers (no database connection, no loaded model travels) and
  gives each worker the verdict cache.
- `engine`: `evaluate_ray` and the actor class (`BlockScorer`: each actor builds its metrics once).
- `driver`: the actors driven directly (`ray.wait`), blocks handed over as they are read and
  written (files, workspace) as they come back, finished blocks skipped.
- `output`: the layout of an output directory and `import_results`; `workspace`: the run in
  the workspace, written block by block.

Ray is an optional dependency (`pip install tempo-eval[ray]`); it is imported only when used.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["evaluate_ray", "import_results", "read_results"]
#: where each public name lives
_MODULES = {"evaluate_ray": "engine", "import_results": "output", "read_results": "output"}


def __getattr__(name: str) -> Any:
    # lazy: importing the package loads neither Ray nor pandas
    if name in _MODULES:
        return getattr(importlib.import_module(f"{__name__}.{_MODULES[name]}"), name)
    raise AttributeError(f"module 'tempo_eval.engine.distributed' has no attribute {name!r}")
