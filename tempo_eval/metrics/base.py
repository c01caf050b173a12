"""What every metric shares: keyword checking, sync/async entry points and the result object.

A metric class gathers settings and implements one coroutine, `_ameasure`; the math lives in small
pure functions beside it. `compute`/`acompute` return the float, `measure`/`ameasure` the full
`MetricResult`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, ClassVar

from tempo_eval.common.run_sync import run_sync
from tempo_eval.common.schema import (  # noqa: F401 - the shared shapes, re-exported where users import them
    MISSING_INPUT,
    NAN,
    OPTIONAL_COLUMNS,
    MetricResult,
    canonical_columns,
    not_measurable,
)
from tempo_eval.common.values import is_na

#: a metric's `input_names` that are canonical dataset columns (the inputs a row can give)
_CANONICAL_INPUTS: dict[tuple[str, ...], tuple[str, ...]] = {}
#: types whose values `is_na` never calls missing
_NEVER_NA = frozenset({str, list})

#: every concrete metric class by its `name`, filled in as the classes are defined
METRICS: dict[str, type[Metric]] = {}


class MissingInput(ValueError):
    """A dataset row has no value in a column the metric needs.

    Raised by `Metric.inputs_from_row`; the runner records the row as NaN with reason code
    "missing_input" and this message as its reason (a row, not the run, is at fault).
    """

    def __init__(self, column: str, message: str) -> None:
        super().__init__(message)
        self.column = column


class Metric:
    """Base class. Subclasses set `name` and `input_names`, and implement `_ameasure`."""

    name: ClassVar[str] = "metric"
    #: keyword arguments accepted by compute/measure; anything else raises TypeError.
    input_names: ClassVar[tuple[str, ...]] = ()
    #: which way is better, declared once here and read by every surface through
    #: `tempo_eval.metrics.catalog.direction`: "higher" (the default), "lower" (a rise is a
    #: regression: future_leak, stale_evidence) or "none" (neither: median_evidence_age, an age)
    direction: ClassVar[str] = "higher"
    #: the bounds of a score (None: unbounded on that side) and its unit (None: a plain score),
    #: read through `tempo_eval.metrics.catalog.scale` (chart axes, range filters)
    score_range: ClassVar[tuple[float | None, float | None]] = (0.0, 1.0)
    unit: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Only a class that names itself is registered: a subclass that inherits a name (a test
        # double, a user's tweak) must not replace the metric the CLI and the runner build by name.
        if cls.direction not in ("higher", "lower", "none"):
            raise TypeError(f"{cls.__name__}.direction must be 'higher', 'lower' or 'none', got {cls.direction!r}")
        if "name" in cls.__dict__ and cls.name != "metric":
            METRICS[cls.name] = cls

    def required_columns(self, columns: Collection[str]) -> list[str]:
        """The dataset columns this metric needs to score the rows of a dataset with `columns`.

        The default: every input named like a canonical dataset column, except query_id, run and
        reference_date (`OPTIONAL_COLUMNS`). A metric none of whose inputs is a dataset column
        (Turn Faithfulness takes `turns`) returns its inputs: no dataset can supply them, and the
        runner refuses it. Metrics whose needs depend on the columns (a mode chosen by them)
        override this. `columns` is every column name of the dataset (rows have the same keys).
        """
        canonical = canonical_columns()
        needed = [n for n in self.input_names if n in canonical and n not in OPTIONAL_COLUMNS]
        return needed or [n for n in self.input_names if n not in canonical]

    def batchable(self, columns: Collection[str]) -> bool:
        """True when the rows of a dataset with these columns are scored a batch at a time (an
        offline metric, cheap per row: `tempo_eval.engine.scoring.measure_batch`); False (the default)
        for per-row scoring with rows in flight concurrently (a judge, a model)."""
        return False

    def inputs_from_row(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword arguments for one dataset row (canonical column names, see tempo_eval.io).

        Only canonical dataset columns are read, so an unmapped source column that happens to
        share an input's name (a column `k`, say) never overrides a setting. Every input named
        like a canonical column that has a value (not None / NaN) is passed. A column of
        `required_columns` without a value (or absent) raises `MissingInput` naming it.
        """
        self._check_row(row, self.required_columns(row.keys()))
        return row_values(row, self._canonical_inputs())

    def row_reader(self, columns: Sequence[str]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
        """`inputs_from_row` for rows whose keys are `columns`, what depends on the columns alone
        (the columns required, the inputs read) worked out once: `measure_batch` reads a batch's
        rows with it (4-5 us a row and metric less, measured). A metric that reads rows its own
        way (overrides `inputs_from_row` below the class that gives `_columns_reader`) gets its
        `inputs_from_row`."""
        mro = type(self).__mro__
        owner = next(c for c in mro if "_columns_reader" in vars(c))
        if any("inputs_from_row" in vars(c) for c in mro[: mro.index(owner)]):
            return self.inputs_from_row
        return self._columns_reader(columns)

    def _columns_reader(self, columns: Sequence[str]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
        """`row_reader` of this class's `inputs_from_row`."""
        required, names, check = self.required_columns(columns), self._canonical_inputs(), self._check_row

        def read(row: Mapping[str, Any]) -> dict[str, Any]:
            check(row, required)
            return row_values(row, names)

        return read

    def _check_row(self, row: Mapping[str, Any], required: Collection[str]) -> None:
        """MissingInput for the first column of `required` without a value in `row`."""
        for column in required:
            if is_na(row.get(column)):
                raise MissingInput(
                    column, f"This row has no {column!r} value, which {self.name} needs."
                )

    def _canonical_inputs(self) -> tuple[str, ...]:
        """The inputs named like a canonical dataset column, in `input_names` order."""
        names = _CANONICAL_INPUTS.get(self.input_names) if type(self.input_names) is tuple else None
        if names is None:
            canonical = canonical_columns()
            names = tuple(n for n in self.input_names if n in canonical)
            if type(self.input_names) is tuple:
                _CANONICAL_INPUTS[self.input_names] = names
        return names

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
        names = self.input_names
        for key in inputs:  # a loop, not a list: this runs for every row and metric
            if key not in names:
                break
        else:
            return
        hint = difflib.get_close_matches(key, self.input_names, n=1)
        suggestion = f" Did you mean {hint[0]!r}?" if hint else ""
        raise TypeError(
            f"{type(self).__name__} got an unexpected keyword argument {key!r}.{suggestion} "
            f"Accepted: {', '.join(self.input_names)}."
        )

    def __repr__(self) -> str:
        settings = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({settings})"


def row_values(row: Mapping[str, Any], names: Collection[str]) -> dict[str, Any]:
    """`{name: row[name]}` for each of `names` the row has a value for (not None / NaN)."""
    # `name in row and not is_na(row[name])`; text and lists (most values) are never NA
    return {
        name: value
        for name in names
        if name in row and (type(value := row[name]) in _NEVER_NA or not is_na(value))
    }


# ---- small validators shared by the metrics -------------------------------------------------
# (`require_text_list`, which the verifiers use too, is in tempo_eval.common.values)

def require_text(value: Any, name: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise ValueError(f"{name} must not be empty")
    return value


def require_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    return k
