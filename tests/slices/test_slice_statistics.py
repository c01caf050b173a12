"""The statistics of scores over time (tempo_eval.slices.stats): calendar bins, the Wilson
interval, the change point and its permutation test, on synthetic curves of 100 seeds."""

from __future__ import annotations

import numpy as np
import pytest

from tempo_eval.slices.report import changepoints
from tempo_eval.slices.stats import (
    ALPHA,
    best_split,
    bin_starts,
    day_iso,
    difference_interval,
    penalised_splits,
    wilson_interval,
)

YEARS = np.arange(2000, 2025)


def _curve(seed: int, rows_per_year: np.ndarray, break_year: int | None) -> tuple[np.ndarray, np.ndarray, int]:
    rng = np.random.default_rng(seed)
    year_of_row = np.repeat(YEARS, rows_per_year)
    rate = np.where(break_year is not None and year_of_row >= (break_year or 0), 0.35, 0.80)
    values = (rng.random(year_of_row.size) < rate).astype(float)
    return values, year_of_row - YEARS[0], YEARS.size


def _found_year(values: np.ndarray, bins: np.ndarray, n_bins: int, seed: int) -> int | None:
    split = best_split(values, bins, n_bins, seed=seed)
    return None if split is None or split.p_value >= ALPHA else int(YEARS[split.index])


def test_a_break_from_80_to_35_percent_is_found_within_a_year_in_95_of_100_seeds() -> None:
    hits = 0
    for seed in range(100):
        true_year = int(np.random.default_rng(1000 + seed).integers(2003, 2023))
        found = _found_year(*_curve(seed, np.full(YEARS.size, 200), true_year), seed=seed)
        hits += found is not None and abs(found - true_year) <= 1
    assert hits >= 95


def test_a_flat_curve_shows_no_break_in_95_of_100_seeds() -> None:
    quiet = sum(_found_year(*_curve(seed, np.full(YEARS.size, 200), None), seed=seed) is None for seed in range(100))
    assert quiet >= 95


def test_uneven_bins_still_place_the_break_within_a_year_in_90_of_100_seeds() -> None:
    hits = 0
    for seed in range(100):
        rng = np.random.default_rng(2000 + seed)
        sizes = np.where(rng.random(YEARS.size) < 0.3, 10, 200)  # some years with 10 rows
        true_year = int(rng.integers(2003, 2023))
        found = _found_year(*_curve(seed, sizes, true_year), seed=seed)
        hits += found is not None and abs(found - true_year) <= 1
    assert hits >= 90


def test_the_95_percent_intervals_hold_the_true_rate_93_to_97_percent_of_the_time() -> None:
    covered = total = 0
    for seed in range(100):
        values, bins, _ = _curve(seed, np.full(YEARS.size, 200), 2012)
        n = np.bincount(bins)
        low, high = wilson_interval(np.bincount(bins, weights=values), n)
        truth = np.where(YEARS >= 2012, 0.35, 0.80)
        covered += int(np.count_nonzero((low <= truth) & (truth <= high)))
        total += YEARS.size
    assert 0.93 <= covered / total <= 0.97


def test_wilson_matches_the_textbook_values() -> None:
    low, high = wilson_interval(np.array([0, 5, 10]), np.array([10, 10, 10]))
    assert low[0] == 0 and high[0] == pytest.approx(0.2775, abs=1e-4)
    assert (low[1], high[1]) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    assert np.isnan(wilson_interval(0, 0)[0])


def test_bins_start_on_monday_first_of_month_quarter_and_year() -> None:
    day = float(np.datetime64("2024-08-15", "D").astype(np.int64))  # a Thursday
    assert [day_iso(bin_starts(np.array([day]), b)[0]) for b in ("week", "month", "quarter", "year")] == [
        "2024-08-12", "2024-08-01", "2024-07-01", "2024-01-01"]
    assert np.isnan(bin_starts(np.array([np.nan]), "year")[0])
    with pytest.raises(ValueError, match="bin must be one of"):
        bin_starts(np.array([day]), "day")


def test_the_drop_interval_combines_the_two_means_intervals() -> None:
    d, low, high = difference_interval((0.8, 0.7, 0.9), (0.3, 0.2, 0.4))
    assert d == pytest.approx(0.5) and low == pytest.approx(0.5 - np.hypot(0.1, 0.1))
    assert high == pytest.approx(0.5 + np.hypot(0.1, 0.1))


def test_a_penalty_finds_two_breaks() -> None:
    rng = np.random.default_rng(3)
    bins = np.repeat(np.arange(30), 100)
    rate = np.select([bins < 10, bins < 20], [0.9, 0.2], 0.6)
    values = (rng.random(bins.size) < rate).astype(float)
    n, s = np.bincount(bins), np.bincount(bins, weights=values)
    assert penalised_splits(n, s, s, penalty=float(np.log(bins.size))) == [10, 20]
    found = changepoints(values, bins, [str(i) for i in range(30)], binary=True, penalty=float(np.log(bins.size)))
    assert [c["start"] for c in found] == ["10", "20"]
    assert found[0]["drop"]["value"] > 0.6 and found[1]["drop"]["value"] < -0.3


def test_continuous_scores_are_permuted_row_by_row() -> None:
    rng = np.random.default_rng(5)
    bins = np.repeat(np.arange(12), 50)
    values = np.clip(rng.normal(np.where(bins >= 7, 0.3, 0.7), 0.1), 0, 1)
    split = best_split(values, bins, 12, n_permutations=199)
    assert split.index == 7 and split.p_value == pytest.approx(1 / 200)
    assert best_split(values[bins == 3], bins[bins == 3], 12) is None  # one bin: nothing to split


def test_a_change_point_starts_at_a_bin_with_rows() -> None:
    bins = np.repeat([0, 1, 3, 4], 100)  # bin 2 holds no measured row
    values = np.where(bins >= 3, 0.0, 1.0)
    split = best_split(values, bins, 5, n_permutations=99)
    assert split.index == 3 and split.p_value == pytest.approx(0.01)


def test_the_best_split_is_the_least_squares_split_of_the_rows_at_bin_boundaries() -> None:
    """What ruptures' Dynp(model="l2", n_bkps=1) finds on the row-level signal, restricted to the
    boundaries between bins: checked by an exhaustive search over the rows."""
    rng = np.random.default_rng(11)
    for _ in range(20):
        sizes = rng.integers(1, 40, size=15)
        bins = np.repeat(np.arange(15), sizes)
        values = rng.random(bins.size) < np.where(bins >= rng.integers(2, 13), 0.3, 0.7)
        values = values.astype(float)
        edges = np.cumsum(sizes)[:-1]
        costs = [((values[:e] - values[:e].mean()) ** 2).sum() + ((values[e:] - values[e:].mean()) ** 2).sum()
                 for e in edges]
        assert best_split(values, bins, 15, n_permutations=9).index == int(np.argmin(costs)) + 1


def _partition_cost(values: np.ndarray, bins: np.ndarray, points: tuple[int, ...], variance: float,
                    penalty: float) -> float:
    cuts = [0, *points, int(bins.max()) + 1]
    total = 0.0
    for a, b in zip(cuts, cuts[1:], strict=False):
        part = values[(bins >= a) & (bins < b)]
        total += ((part - part.mean()) ** 2).sum()
    return total / variance + penalty * len(points)


def test_the_penalised_partition_is_the_exhaustive_optimum() -> None:
    """`penalised_splits` against every subset of bin boundaries (8 bins: 128 partitions)."""
    from itertools import combinations

    rng = np.random.default_rng(12)
    for trial in range(20):
        sizes = rng.integers(1, 30, size=8)
        bins = np.repeat(np.arange(8), sizes)
        values = (rng.random(bins.size) < rng.choice([0.2, 0.5, 0.9], size=8)[bins]).astype(float)
        variance = values.var()
        if variance == 0:
            continue
        penalty = float(rng.uniform(0.5, 6))

        options = [c for k in range(8) for c in combinations(range(1, 8), k)]
        costs = {points: _partition_cost(values, bins, points, variance, penalty) for points in options}
        n, s = np.bincount(bins), np.bincount(bins, weights=values)
        found = tuple(penalised_splits(n, s, s, penalty))
        assert costs[found] == pytest.approx(min(costs.values())), (trial, found)
