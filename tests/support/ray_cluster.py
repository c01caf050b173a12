"""A local Ray cluster for one test: joined when one is running, else started and stopped here."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def local_ray_cluster() -> Iterator[None]:
    """Join the running cluster (tests/engine/test_ray.py's session cluster, when it ran first: a second
    `ray.init` would fail) or start a 2-CPU one with the checkout importable, shut down on exit."""
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
    try:
        yield
    finally:
        if started:
            ray.shutdown()
