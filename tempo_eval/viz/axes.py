"""Axis ranges from a metric's declared scale (`tempo_eval.metrics.catalog.scale`): a score or
share on [0, 1], median evidence age in days on its own values' span."""

from __future__ import annotations

from typing import Any

import numpy as np

from tempo_eval.metrics.catalog import Scale

#: the range of an axis of scores in [0, 1], with a margin so points on 0 and 1 show whole
UNIT_RANGE = [-0.03, 1.03]


def axis_range(metric_scale: Scale, values: Any) -> list[float]:
    """The axis range of a metric's scores: [0, 1] with a margin for a score or share; for another
    scale (median evidence age, in days) the values' own span with a margin, from the scale's
    lower bound when it has one (an empty chart: 0 to 1). Scores outside [0, 1] of a metric the
    catalog takes for a score (an imported tool's 1-5 rubric) get their span too: never clipped."""
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    if metric_scale.is_unit_interval and (not finite.size or (finite.min() >= 0.0 and finite.max() <= 1.0)):
        return list(UNIT_RANGE)
    low = float(finite.min()) if finite.size else 0.0
    high = float(finite.max()) if finite.size else 1.0
    if metric_scale.low is not None:
        low = min(low, metric_scale.low)
    margin = max(high - low, 1.0) * 0.03
    return [low - margin, high + margin]
