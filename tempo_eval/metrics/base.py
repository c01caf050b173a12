"""What every metric shares: keyword checking, sync/async entry points and the result object.

A metric class gathers settings and implements one coroutine, `_ameasure`; the math lives in small
pure functions beside it. `compute`/`acompute` return the float, `measure`/`ameasure` the full
`MetricResult`.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from tempo_eval._async import run_sync

NAN = float("nan")


@dataclass
class MetricResult:
    """A score with its explanation.

    `score` is a float in [0, 1] or NaN. When NaN, `reason_code` is a machine-readable cause such
    as "no_temporal_claims" or "judge_error"; `reason` is always a sentence a person can read.
    `details` holds the evidence the score was computed from (per-year grounding, per-rank gains,
    per-claim verdicts under "claims", per-window scores) and is what the dashboard draws.
    """

    metric: str
    score: float
    reason: str = ""
    reason_code: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    success: bool | None = None

    @property
    def is_nan(self) -> bool:
        return math.isnan(self.score)

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "score": self.score,
            "reason": self.reason,
            "reason_code": self.reason_code,
            "success": self.success,
            "details": self.details,
        }


def not_measurable(metric: str, reason_code: str, reason: str, **details: Any) -> MetricResult:
    """A NaN result; every NaN carries a machine-readable reason and a readable sentence."""
    return MetricResult(metric, NAN, reason, reason_code, dict(details))


#: every concrete metric class by its `name`, filled in as the classes are defined
METRICS: dict[str, type[Metric]] = {}


class Metric:
    """Base class. Subclasses set `name` and `input_names`, and implement `_ameasure`."""

    name: ClassVar[str] = "metric"
    #: keyword arguments accepted by compute/measure; anything else raises TypeError.
    input_names: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name != "metric":
            METRICS[cls.name] = cls

    def inputs_from_row(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword arguments for one dataset row (canonical column names, see tempo_eval.io).

        The default takes every column named like an input that has a value; metrics whose
        inputs are named differently from the dataset columns override this.
        """
        return {
            name: row[name]
            for name in self.input_names
            if name in row and not _is_missing(row[name])
        }

    def compute(self, **inputs: Any) -> float:
        return self.measure(**inputs).score

    async def acompute(self, **inputs: Any) -> float:
        return (await self.ameasure(**inputs)).score

    def measure(self, **inputs: Any) -> MetricResult:
        self._check_input_names(inputs)
        return run_sync(self._ameasure(**inputs))

    async def ameasure(self, **inputs: Any) -> MetricResult:
        self._check_input_names(inputs)
        return await self._ameasure(**inputs)

    async def _ameasure(self, **inputs: Any) -> MetricResult:  # pragma: no cover - abstract
        raise NotImplementedError

    def _check_input_names(self, inputs: Mapping[str, Any]) -> None:
        unknown = [key for key in inputs if key not in self.input_names]
        if not unknown:
            return
        key = unknown[0]
        hint = difflib.get_close_matches(key, self.input_names, n=1)
        suggestion = f" Did you mean {hint[0]!r}?" if hint else ""
        raise TypeError(
            f"{type(self).__name__} got an unexpected keyword argument {key!r}.{suggestion} "
            f"Accepted: {', '.join(self.input_names)}."
        )

    def __repr__(self) -> str:
        settings = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({settings})"


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


# ---- small validators shared by the metrics -------------------------------------------------

def require_text(value: Any, name: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise ValueError(f"{name} must not be empty")
    return value


def require_text_list(value: Any, name: str) -> list[str]:
    """A list (or tuple) of strings. Sets are refused: their order is arbitrary."""
    if isinstance(value, (set, frozenset)):
        raise TypeError(f"{name} must be a list, not a set: order matters and sets have none")
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise TypeError(f"{name} must be a list of strings, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise TypeError(f"{name}[{i}] must be a string, got {type(item).__name__}")
    return list(value)


def require_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    return k
