"""Fixtures of the engine's tests: one local Ray cluster for the whole session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.paths import ROOT
from tests.support.s3_server import FAKE_AWS


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[str]:
    """A local Ray cluster (2 CPUs, no dashboard) shared by every Ray test of the session: started
    by the first test that asks for it, shut down when the session ends; its address (the GCS
    address a second driver joins). Its workers import this checkout and have the fake S3
    credentials (`FAKE_AWS`) that the object-store tests need; without them a worker would look
    for credentials at the EC2 metadata address. Starting a cluster costs seconds to tens of
    seconds, so no test module starts its own."""
    import ray

    if ray.is_initialized():  # a test that called ray.init itself
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT), **FAKE_AWS}})
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()
