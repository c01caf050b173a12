"""Every metric by name: the module that defines it, and what its class declares once (`Metric`):
which way is better (`direction`) and the scale of its scores (`score_range`, `unit`). Every
surface asks here: `diff` and the Run diff page (improved / regressed), trends, the leaderboard,
`evaluate --fail-under / --fail-over` and Compare (best run, "beats").

    direction("future_leak")           # "lower": a rise is a regression
    direction("future_leak@10")        # "lower": Compare's as-of names carry their cutoff
    direction("median_age@10")         # "none": Compare's name of median_evidence_age
    direction("ndcg@10")               # "higher": any metric no class here declares
    scale("median_evidence_age")       # Scale(low=0.0, high=None, unit='days')

A name is read without its "@K" suffix and case; `ALIASES` maps other surfaces' names of a metric
to its class's. A metric the catalog does not know (a retrieval measure, an imported tool's score)
is higher-is-better on [0, 1]. Looking a metric up imports its module (no model is loaded).
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Any

#: the module defining each metric, by metric name
METRIC_MODULES = {
    "temporal_faithfulness": "tempo_eval.metrics.temporal_faithfulness",
    "temporal_ndcg": "tempo_eval.metrics.temporal_ndcg",
    "factual_correctness": "tempo_eval.metrics.factual_correctness",
    "turn_faithfulness": "tempo_eval.metrics.turn_faithfulness",
    "future_leak": "tempo_eval.metrics.evidence_age",
    "stale_evidence": "tempo_eval.metrics.evidence_age",
    "median_evidence_age": "tempo_eval.metrics.evidence_age",
    "recency_ndcg": "tempo_eval.metrics.evidence_age",
    "answer_currency": "tempo_eval.metrics.answer_currency",
}

#: other names of a metric held here: Compare's as-of metrics on TREC runs (`median_age@K`)
ALIASES = {"median_age": "median_evidence_age"}

#: what each direction means, in user words (help texts, captions, reports)
DIRECTION_WORDS = {"higher": "higher is better", "lower": "lower is better", "none": "no better direction"}


@dataclass(frozen=True)
class Scale:
    """The scale of a metric's scores: bounds (None: unbounded on that side) and unit (None: a
    plain score or share)."""

    low: float | None = 0.0
    high: float | None = 1.0
    unit: str | None = None

    @property
    def is_unit_interval(self) -> bool:
        return self.unit is None and (self.low, self.high) == (0.0, 1.0)


UNIT_INTERVAL = Scale()


def canonical_name(metric: Any) -> str:
    """The catalog's name of `metric`: without "@K", lower case, aliases resolved."""
    head = str(metric).strip().lower().partition("@")[0]
    return ALIASES.get(head, head)


def metric_class(metric: Any) -> type | None:
    """The `Metric` class named `metric` (see `canonical_name`), or None for one no class declares."""
    from tempo_eval.metrics.base import METRICS

    name = canonical_name(metric)
    if name in METRIC_MODULES and name not in METRICS:
        importlib.import_module(METRIC_MODULES[name])
    return METRICS.get(name)


def build_metric(name: str, **settings: Any) -> Any:
    """The metric `name` made with those of `settings` its class takes (None: its default), the one
    way every surface builds a metric from its options (KeyError for a name no class declares)."""
    cls = metric_class(name)
    if cls is None:
        raise KeyError(name)
    accepted = inspect.signature(cls).parameters
    return cls(**{key: value for key, value in settings.items() if value is not None and key in accepted})


def direction(metric: Any) -> str:
    """"higher", "lower" or "none": which way is better for `metric`, as its class declares it
    (`Metric.direction`); "higher" for a metric no class declares."""
    cls = metric_class(metric)
    return "higher" if cls is None else str(cls.direction)


def scale(metric: Any) -> Scale:
    """The scale of `metric`'s scores, as its class declares it (`Metric.score_range`, `unit`);
    [0, 1] for a metric no class declares."""
    cls = metric_class(metric)
    if cls is None:
        return UNIT_INTERVAL
    low, high = cls.score_range
    return Scale(low, high, cls.unit)
