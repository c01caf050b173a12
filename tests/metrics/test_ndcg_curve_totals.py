"""`ndcg_curve_totals` (one pass) gives the floats the two DCG curves and their ratio give."""

from __future__ import annotations

import math
import random

from tempo_eval.metrics.ndcg import ndcg_curve_totals
from tests.support.ndcg_curves import dcg_curve_unchecked, ndcg_of_curves


def _bits(values):
    return [("nan" if v != v else (v, math.copysign(1.0, v))) for v in values]


def test_one_pass_equals_the_curves_it_replaces():
    rng = random.Random(3)
    values = [0.0, -0.0, math.nan, 4.0, 0.5, -1.0, math.inf, 1e-300]
    for _ in range(5000):
        gains = [rng.choice(values + [rng.random() * 4]) for _ in range(rng.choice([0, 1, 2, 5, 10, 30, 1100]))]
        others = [rng.choice(values) for _ in range(rng.choice([0, 1, 3, 12]))]
        ideal = sorted(gains if rng.random() < 0.5 else others, reverse=True)
        k = rng.choice([1, 3, 5, 10, 20, 1030, 2000])
        dcg, idcg = dcg_curve_unchecked(gains, k), dcg_curve_unchecked(ideal, k)
        curve, dcg_k, idcg_k = ndcg_curve_totals(gains, ideal, k)
        assert _bits(curve) == _bits(ndcg_of_curves(dcg, idcg))
        assert _bits([dcg_k, idcg_k]) == _bits([dcg[-1], idcg[-1]])
