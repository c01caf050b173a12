"""The chart's bands are the table's intervals, and Fisher's exact test has bounded memory (issue 28)."""

from __future__ import annotations

import numpy as np
import pytest

import tempo_eval.compare.statistics as compare_module
from tempo_eval.compare.statistics import MAX_PERMUTATIONS, bootstrap_ci, randomization_test
from tempo_eval.viz.curves import curve_bands


@pytest.mark.parametrize("kind", ["binary", "continuous", "mixed"])
def test_curve_bands_equal_bootstrap_ci_of_each_cutoff(kind: str) -> None:
    rng = np.random.default_rng(7)
    if kind == "binary":
        matrix = rng.integers(0, 2, size=(200, 3)).astype(float)
    elif kind == "continuous":
        matrix = rng.random((200, 3))
    else:  # NDCG@1 with binary judgements is 0/1, deeper cutoffs are continuous
        matrix = np.column_stack([rng.integers(0, 2, 200), rng.random(200), rng.random(200)]).astype(float)
    bands = curve_bands({"run": matrix}, n_resamples=1000)
    for j in range(3):
        row = bands[bands["k"] == j + 1].iloc[0]
        assert (row["low"], row["high"]) == bootstrap_ci(matrix[:, j], n_resamples=1000)


def test_exact_fisher_test_in_chunks_equals_the_one_shot_enumeration(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    a, b = rng.random(12), rng.random(12)
    whole = randomization_test(a, b, n_permutations=2**12)
    monkeypatch.setattr(compare_module, "BOOTSTRAP_CHUNK_ENTRIES", 12 * 100)  # 41 chunks of 100 assignments
    assert randomization_test(a, b, n_permutations=2**12) == whole
    d = a - b
    signs = 1 - 2 * ((np.arange(2**12)[:, None] >> np.arange(12)) & 1)
    observed = abs(d.sum()) / 12
    assert whole == np.count_nonzero(np.abs(signs @ d) / 12 >= observed * (1 - 1e-9)) / 2**12


def test_an_unreachable_number_of_permutations_is_a_clear_error() -> None:
    a, b = np.arange(26) / 26, np.zeros(26)
    with pytest.raises(ValueError, match="n_permutations is at most"):
        randomization_test(a, b, n_permutations=MAX_PERMUTATIONS + 1)
