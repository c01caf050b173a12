"""The run summary's bootstrap at size (issue 27): the resampling loops hold a few MB whatever
the number of values, and give the intervals of drawing every resample at once."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tempo_eval.compare import statistics as compare_module
from tempo_eval.compare.statistics import bootstrap_ci


def _all_at_once(values: np.ndarray, n_resamples: int, seed: int) -> tuple[float, float]:
    """The percentile bootstrap as it was drawn before chunking: every resample in one call."""
    levels, counts = np.unique(values, return_counts=True)
    n = values.size
    rng = np.random.default_rng(seed)
    if levels.size * 20 <= n:
        means = rng.multinomial(n, counts / n, size=n_resamples) @ levels / n
    else:
        means = values[rng.integers(0, n, size=(n_resamples, n))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


@pytest.mark.parametrize("kind", ["continuous", "levels"])
@pytest.mark.parametrize("chunk", [37, 1000, 1 << 18])  # one resample in pieces, some a chunk, all
def test_chunked_resampling_gives_the_intervals_of_one_draw(monkeypatch, kind: str, chunk: int) -> None:
    rng = np.random.default_rng(5)
    values = rng.random(400) if kind == "continuous" else rng.integers(0, 7, 400) / 6
    monkeypatch.setattr(compare_module, "BOOTSTRAP_CHUNK_ENTRIES", chunk)
    ours = bootstrap_ci(values, n_resamples=301, seed=11)
    assert ours == pytest.approx(_all_at_once(values, 301, 11), rel=1e-12, abs=1e-12)


PEAK = textwrap.dedent("""
    import resource, sys
    import numpy as np
    from tempo_eval.compare.statistics import bootstrap_ci
    rng = np.random.default_rng(1)
    continuous = rng.random(300_000)                       # the index path
    levels = rng.integers(0, 30_000, 600_000) / 30_000     # the multinomial path, 30,000 levels
    np.unique(continuous), np.unique(levels)               # their sorting, before the baseline
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    bootstrap_ci(continuous, n_resamples=150)
    bootstrap_ci(levels, n_resamples=150)
    print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
""")


def test_the_bootstrap_of_many_values_holds_a_few_megabytes() -> None:
    # drawn 4 million entries at a time, as before: about 60 MB for the indices and their values
    out = subprocess.run([sys.executable, "-c", PEAK], capture_output=True, text=True, check=True, timeout=300)
    grown_mb = float(out.stdout.strip())
    assert grown_mb < 20, f"peak memory grew by {grown_mb:.0f} MB during the bootstrap"
