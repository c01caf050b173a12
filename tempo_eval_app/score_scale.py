"""The scale a metric's scores live on, for the Results page's range filter: 0 to 1 for a share or
a score, the values' own range and unit for the others (Median evidence age, in days)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tempo_eval.metrics import catalog


@dataclass(frozen=True)
class Scale(catalog.Scale):
    """`catalog.Scale` as the range slider draws it: both bounds set, and the slider's step."""

    step: float = 0.05

    def holds(self, low: float, high: float) -> bool:
        """Whether the range low..high lies on this scale."""
        return self.low <= low <= high <= self.high


UNIT_INTERVAL = Scale(0.0, 1.0)


def score_scale(metric: str, values: Any) -> Scale:
    """0 to 1 (step 0.05) for a metric whose finite scores all lie in [0, 1] and that has no unit;
    else from the floor of its smallest to the ceiling of its largest score, in its unit (as the metric declares it, `tempo_eval.metrics.catalog.scale`;
    step 1 for days or a span of 20 and more, a hundredth of the span below). A metric with a unit
    and no finite score: 0 to 1 in its unit."""
    unit = catalog.scale(str(metric)).unit
    scores = np.asarray(values, dtype=np.float64)
    scores = scores[np.isfinite(scores)]
    if unit is None and (not scores.size or (scores.min() >= 0.0 and scores.max() <= 1.0)):
        return UNIT_INTERVAL
    if not scores.size:
        return Scale(0.0, 1.0, unit, step=1.0)
    low, high = float(math.floor(scores.min())), float(math.ceil(scores.max()))
    if high <= low:
        high = low + 1.0
    step = 1.0 if unit == "days" or high - low >= 20 else (high - low) / 100
    return Scale(low, high, unit, step=step)
