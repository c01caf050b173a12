"""The metrics. Each is a `Metric`: `compute`/`acompute` return the score, `measure`/`ameasure`
return a `MetricResult` with `.score`, `.reason`, `.reason_code` and `.details`."""

from tempo_eval.metrics.base import METRICS, Metric, MetricResult
from tempo_eval.metrics.factual_correctness import FactualCorrectness
from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
from tempo_eval.metrics.turn_faithfulness import TurnFaithfulness

__all__ = [
    "METRICS",
    "FactualCorrectness",
    "Metric",
    "MetricResult",
    "TemporalFaithfulness",
    "TemporalNDCG",
    "TurnFaithfulness",
]
