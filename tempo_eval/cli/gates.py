"""The gates of `evaluate`: --fail-under (a minimum for a higher-is-better metric) and --fail-over
(a maximum for a lower-is-better one), read from the command line, checked against what each metric
declares of its direction (`tempo_eval.metrics.catalog`), and applied to a run's means."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from tempo_eval.cli.common import CLIError

if TYPE_CHECKING:
    import pandas as pd


def parse_fail_under(text: str | None, option: str = "--fail-under") -> dict[str, float]:
    """"temporal_faithfulness=0.8,factual_correctness=0.7" -> {metric: threshold} (the value of
    --fail-under, or of `option`: --fail-over)."""
    if not text:
        return {}
    thresholds: dict[str, float] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        metric, sep, value = item.partition("=")
        try:
            threshold = float(value)
        except ValueError:
            threshold = math.nan
        if not sep or not metric.strip() or math.isnan(threshold):
            example = "future_leak=0.1" if option == "--fail-over" else "temporal_faithfulness=0.8"
            raise CLIError(f"{option} {item.strip()!r}: expected METRIC=THRESHOLD, e.g. {example}")
        thresholds[metric.strip()] = threshold
    return thresholds


def below_thresholds(aggregate: pd.DataFrame, thresholds: dict[str, float],
                     maxima: dict[str, float] | None = None) -> list[str]:
    """One line per metric whose mean is below its threshold (--fail-under), above its maximum
    (--fail-over, `maxima`), or that has no measurable row."""
    lines = []
    for gates, fails, sign in ((thresholds, lambda mean, t: mean < t, "<"),
                               (maxima or {}, lambda mean, t: mean > t, ">")):
        for metric, threshold in gates.items():
            mean = float(aggregate.loc[metric, "mean"]) if metric in aggregate.index else math.nan
            if math.isnan(mean):
                lines.append(f"fail: {metric} has no measurable row (threshold {threshold:g})")
            elif fails(mean, threshold):
                lines.append(f"fail: {metric} {mean:.4f} {sign} {threshold:g}")
    return lines


def check_gates(thresholds: dict[str, float], maxima: dict[str, float], names: list[str]) -> None:
    """CLIError unless every gate names a computed metric the right way round, as the metric
    declares its direction (`tempo_eval.metrics.catalog.direction`): --fail-under (a minimum) for a
    higher-is-better metric, --fail-over (a maximum) for a lower-is-better one (future_leak,
    stale_evidence), and neither for a metric with no better direction (median_evidence_age)."""
    from tempo_eval.metrics.catalog import direction

    for option, gates, wanted, other in (("--fail-under", thresholds, "higher", "--fail-over"),
                                         ("--fail-over", maxima, "lower", "--fail-under")):
        unknown = [metric for metric in gates if metric not in names]
        if unknown:
            raise CLIError(f"{option} names {', '.join(unknown)}, which --metrics does not compute ({', '.join(names)})")
        for metric, threshold in gates.items():
            way = direction(metric)
            if way == "none":
                raise CLIError(f"{option} {metric}={threshold:g}: {metric} has no better direction (neither a "
                               "higher nor a lower mean is better), so no threshold on it can pass or fail a run")
            if way != wanted:
                word = "lower" if way == "lower" else "higher"
                raise CLIError(f"{option} {metric}={threshold:g}: {word} is better for {metric}, so its gate is "
                               f"{'a maximum' if way == 'lower' else 'a minimum'}: use {other} {metric}={threshold:g}")
