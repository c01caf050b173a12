"""The statistics of scores over time, as pure functions of plain arrays: calendar bins, the
Wilson interval, a size-weighted change-point search over bins and its permutation test.

Days are counted from 1970-01-01 (`tempo_eval.core.pubdates.EPOCH`), as float arrays with NaN
for unknown. A bin is labelled by its first day: an ISO week starts on Monday, a quarter on
1 January, 1 April, 1 July or 1 October.

Why not `ruptures`: its costs weigh every sample alike, so a change point on bins of uneven size
needs the row-level signal (one sample per result: a million for a large run, searched at every
row, not at the few bin boundaries where a break can be seen), and it gives no test of "no
change". On B bins the exact best single split is a cumulative sum (O(B)), and the penalised
search for several change points an optimal partition over bin boundaries (O(B^2)): the same
least-squares cost as ruptures' `Dynp`/`Pelt` with model "l2" on the row-level signal, restricted
to bin boundaries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: the normal quantile of a two-sided 95% interval
Z95 = 1.959963984540054
BINS = ("week", "month", "quarter", "year")
#: a change point is reported when its permutation p-value is below this (1%: a flat curve shows
#: a break about once in a hundred)
ALPHA = 0.01
N_PERMUTATIONS = 999


def bin_starts(days: np.ndarray, bin: str) -> np.ndarray:
    """The first day of each day's bin (days since 1970-01-01, float, NaN stays NaN)."""
    if bin not in BINS:
        raise ValueError(f"bin must be one of {', '.join(BINS)}, got {bin!r}")
    days = np.asarray(days, dtype=np.float64)
    known = ~np.isnan(days)
    out = np.full(days.shape, np.nan)
    whole = np.floor(days[known]).astype(np.int64)
    if bin == "week":  # 1970-01-01 was a Thursday: (day + 3) % 7 is 0 on Mondays
        starts = whole - (whole + 3) % 7
    else:
        unit = "M" if bin in ("month", "quarter") else "Y"
        coarse = whole.astype("datetime64[D]").astype(f"datetime64[{unit}]")
        if bin == "quarter":
            months = coarse.astype(np.int64)
            coarse = (months - months % 3).astype("datetime64[M]")
        starts = coarse.astype("datetime64[D]").astype(np.int64)
    out[known] = starts
    return out


def day_iso(day: float) -> str:
    """A day count as its ISO date."""
    return str(np.datetime64(int(day), "D"))


def wilson_interval(successes: np.ndarray | float, n: np.ndarray | float,
                    z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson score interval of a proportion, successes / n, elementwise:
    (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n). NaN where n is 0."""
    s = np.asarray(successes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = s / n
        z2 = z * z
        centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    low, high = np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)
    empty = n <= 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def difference_interval(a: tuple[float, float, float], b: tuple[float, float, float]) -> tuple[float, float, float]:
    """a - b with its interval, from each mean's (mean, low, high) (MOVER, Zou & Donner 2008;
    with Wilson intervals this is Newcombe's hybrid score interval for two proportions)."""
    (ma, la, ha), (mb, lb, hb) = a, b
    d = ma - mb
    return d, d - math.hypot(ma - la, hb - mb), d + math.hypot(ha - ma, mb - lb)


def split_gain(n: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """For bins in order with counts `n` and sums `sums` (the last axis), the between-segment sum
    of squares of each split into bins [0, k) and [k, B), k = 1..B-1: S_L²/N_L + S_R²/N_R - S²/N,
    the drop in the row-level squared error when the two sides get their own means. -inf where a
    side is empty or the right side's first bin has no rows."""
    n = np.asarray(n, dtype=np.float64)
    sums = np.asarray(sums, dtype=np.float64)
    left_n = np.cumsum(n, axis=-1)[..., :-1]
    left_s = np.cumsum(sums, axis=-1)[..., :-1]
    total_n = n.sum(axis=-1, keepdims=True)
    total_s = sums.sum(axis=-1, keepdims=True)
    right_n, right_s = total_n - left_n, total_s - left_s
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = left_s ** 2 / left_n + right_s ** 2 / right_n - total_s ** 2 / total_n
    # a split starts its right side at a bin with rows: the first bin after a break has rows
    return np.where((left_n > 0) & (right_n > 0) & (n[..., 1:] > 0), gain, -np.inf)


@dataclass(frozen=True)
class Split:
    """The best single split of a run of bins: the first bin after it, its gain and p-value."""

    index: int
    gain: float
    p_value: float


def best_split(values: np.ndarray, bin_index: np.ndarray, n_bins: int, *,
               n_permutations: int = N_PERMUTATIONS, seed: int = 42) -> Split | None:
    """The split of bins 0..n_bins-1 that most reduces the squared error of the row values
    (`values[i]` in bin `bin_index[i]`), and the permutation p-value of "no change": the share of
    random reassignments of the values to the bins (bin sizes kept) whose best split gains as
    much, (1 + count) / (1 + n_permutations). None when fewer than two bins hold values.

    0/1 values are permuted as a multivariate hypergeometric draw of the ones among the bins
    (the same distribution, without drawing each row)."""
    values = np.asarray(values, dtype=np.float64)
    bin_index = np.asarray(bin_index, dtype=np.int64)
    n = np.bincount(bin_index, minlength=n_bins).astype(np.float64)
    if np.count_nonzero(n) < 2:
        return None
    sums = np.bincount(bin_index, weights=values, minlength=n_bins)
    gains = split_gain(n, sums)
    index = int(np.argmax(gains))
    observed = float(gains[index])
    rng = np.random.default_rng(seed)
    count = 0
    binary = bool(np.isin(values, (0.0, 1.0)).all())
    done = 0
    # permutation statistics in chunks: at most ~4 million row values at a time
    chunk = n_permutations if binary else max(1, min(n_permutations, 4_000_000 // max(1, values.size)))
    if not binary:
        sorted_values = values[np.argsort(bin_index, kind="stable")]
        edges = np.concatenate(([0], np.cumsum(n)[:-1])).astype(np.int64)
        occupied = n > 0
        ones = 0
    else:
        ones = int(np.count_nonzero(values))
    while done < n_permutations:
        size = min(chunk, n_permutations - done)
        if binary:
            perm_sums = rng.multivariate_hypergeometric(n.astype(np.int64), ones, size=size)
        else:
            shuffled = rng.permuted(np.broadcast_to(sorted_values, (size, values.size)), axis=1)
            perm_sums = np.zeros((size, n_bins))
            perm_sums[:, occupied] = np.add.reduceat(shuffled, edges[occupied], axis=1)
        perm_gain = split_gain(np.broadcast_to(n, (size, n_bins)), perm_sums).max(axis=1)
        # a tolerance: equal statistics computed in another order must count as equal
        count += int(np.count_nonzero(perm_gain >= observed * (1 - 1e-12) - 1e-12))
        done += size
    return Split(index + 1, observed, (1 + count) / (1 + n_permutations))


def penalised_splits(n: np.ndarray, sums: np.ndarray, sumsq: np.ndarray, penalty: float) -> list[int]:
    """The change points (first bin after each) of the optimal partition of the bins minimising
    the row-level squared error divided by the pooled variance, plus `penalty` per change point
    (penalty = log(rows) is BIC-like). Bins without rows never start a segment."""
    n = np.asarray(n, dtype=np.float64)
    sums = np.asarray(sums, dtype=np.float64)
    total_n = n.sum()
    variance = (np.sum(sumsq) - sums.sum() ** 2 / total_n) / total_n if total_n else 0.0
    if total_n == 0 or variance <= 0:
        return []
    cn = np.concatenate(([0.0], np.cumsum(n)))
    cs = np.concatenate(([0.0], np.cumsum(sums)))
    cq = np.concatenate(([0.0], np.cumsum(sumsq)))
    size = n.size
    best = np.full(size + 1, np.inf)
    best[0] = -penalty
    previous = np.zeros(size + 1, dtype=np.int64)
    for end in range(1, size + 1):
        if n[end - 1] == 0 and end < size:
            continue  # a segment ends where its last bin has rows
        starts = np.arange(end)
        seg_n = cn[end] - cn[starts]
        with np.errstate(divide="ignore", invalid="ignore"):
            cost = (cq[end] - cq[starts]) - np.where(seg_n > 0, (cs[end] - cs[starts]) ** 2 / seg_n, 0.0)
        total = best[starts] + cost / variance + penalty
        total[seg_n == 0] = np.inf
        start = int(np.argmin(total))
        best[end], previous[end] = total[start], start
    points, end = [], size
    while end > 0:
        end = int(previous[end])
        if end > 0:
            points.append(end)
    return sorted(points)
