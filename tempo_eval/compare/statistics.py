"""Run-vs-run statistics: paired significance tests, Holm correction, win/tie/loss, a report.

    report = compare({"bm25": {"ndcg@10": {"q1": 0.5, ...}}, "dense": {"ndcg@10": {...}}})
    print(report)                   # Markdown table, significant wins marked as superscripts
    report.to_dataframe()           # the same table as numbers
    report.pairs_frame()            # one row per (metric, run pair): p-values, W/T/L
    report.to_latex()

TREC runs and qrels are scored, then compared here, by `tempo_eval.compare.trec_scores` (`compare_trec`).

How the numbers are made (per metric):

- Queries: only queries scored (not NaN) in every run are compared; the others are counted in
  `n_dropped`. Means are over the compared queries, so every run is averaged over the same set.
  `compare_trec` first scores a query a run did not retrieve for as 0 (trec_eval's `-c`; see
  there), so by default only queries without a relevant document are dropped.
- Paired Student's t-test on the per-query differences d = a - b:
  t = mean(d) / (sd(d) / sqrt(n)), two-sided p from Student's t with n - 1 degrees of freedom
  (equals `scipy.stats.ttest_rel`). When every difference is 0 we return p = 1 (scipy: NaN); when
  they are all equal and non-zero, p = 0. Fewer than 2 queries: p is NaN.
- Fisher's randomisation test (paired, sign flipping): under the null hypothesis each d_i is as
  likely to be -d_i, so p = share of sign assignments s with |mean(s * d)| >= |mean(d)|. All 2^n
  assignments are enumerated when 2^n <= n_permutations (exact, equal to
  `scipy.stats.permutation_test(..., permutation_type="samples")`); otherwise n_permutations random
  assignments drawn from a generator seeded with `seed` (the same for every pair), and
  p = (count + 1) / (n_permutations + 1).
- Holm-Bonferroni correction over the run pairs of a metric: with m p-values sorted ascending,
  p_adj(i) = max_{j <= i} min(1, (m - j + 1) p(j)). `correction="none"` keeps the raw p-values.
- Run A significantly beats run B when p_adj <= alpha and mean(A) > mean(B) (< for a
  lower-is-better metric; never for one without a direction, median age); the table marks A's
  score with B's letter, as ranx does.
- Win / tie / loss of A against B: queries where A's score is greater / equal / smaller (smaller /
  equal / greater for a lower-is-better metric: future leak, stale evidence; `direction`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tempo_eval.common.safe_text import md_cell, terminal_safe
from tempo_eval.common.schema import DEFAULT_SIGNIFICANCE_TEST

TESTS = ("fisher", "student")
DEFAULT_TEST = DEFAULT_SIGNIFICANCE_TEST
CORRECTIONS = ("holm", "none")
#: what `compare_trec` does with a judged query that a run has no results for
MISSING_POLICIES = ("zero", "drop")
LABELS = "abcdefghijklmnopqrstuvwxyz"
_SUPERSCRIPT = dict(zip(LABELS, "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ𐞥ʳˢᵗᵘᵛʷˣʸᶻ", strict=True))
_TEST_NAMES = {"fisher": "Fisher's randomisation test", "student": "paired Student's t-test"}
#: relative tolerance under which two values of the test statistic count as equal
_TIE_TOLERANCE = 1e-9
#: most entries (indices, level counts, signs) drawn at once by the resampling loops: the memory
#: bound (about 4 MB), whatever the number of values
BOOTSTRAP_CHUNK_ENTRIES = 1 << 18
#: most sign assignments Fisher's test evaluates (2^27: about a minute on one core)
MAX_PERMUTATIONS = 2**27


# ---- the statistics: pure functions ---------------------------------------------------------

def bootstrap_ci(values: Sequence[float] | np.ndarray, *, confidence: float = 0.95,
                 n_resamples: int = 2000, seed: int = 42) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean.

    Draws `n_resamples` resamples of the values with replacement (generator seeded with `seed`)
    and returns the (1 - confidence) / 2 and (1 + confidence) / 2 quantiles of their means.
    No value -> (NaN, NaN); one value -> (value, value). NaN values must be removed by the caller.

    When the values take few distinct levels (at most n / 20, e.g. per-claim fractions or 0/1
    scores), a resample is drawn as multinomial counts of the levels instead of n indices: the
    same distribution of resampled means at O(levels) instead of O(n) per resample.
    """
    return bootstrap_ci_columns(np.asarray(values, dtype=float).reshape(-1, 1), confidence=confidence,
                                n_resamples=n_resamples, seed=seed)[0]


def bootstrap_ci_columns(matrix: np.ndarray, *, confidence: float = 0.95, n_resamples: int = 2000,
                         seed: int = 42) -> list[tuple[float, float]]:
    """`bootstrap_ci` of every column of `matrix` (rows x columns), exactly: each column gets the
    interval `bootstrap_ci` gives it alone. Columns with many levels share one draw of indices
    (the draw `bootstrap_ci` makes for each of them), so an NDCG@1..k curve costs one draw."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    x = np.asarray(matrix, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-d array (rows x columns), got shape {x.shape}")
    n = x.shape[0]
    if n == 0:
        return [(math.nan, math.nan)] * x.shape[1]
    if np.isnan(x).any():
        raise ValueError("values contain NaN; drop the rows that are not measurable first")
    if n == 1:
        return [(float(v), float(v)) for v in x[0]]
    tail = (1 - confidence) / 2
    shared_index: np.ndarray | None = None
    intervals = []
    for column in x.T:
        levels, counts = np.unique(column, return_counts=True)
        if levels.size * 20 <= n:
            means = _resampled_level_means(levels, counts, n_resamples, seed)
        elif n_resamples * n <= BOOTSTRAP_CHUNK_ENTRIES:
            if shared_index is None:
                shared_index = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
            means = column[shared_index].mean(axis=1)
        else:  # the same draws, in chunks
            means = _resampled_means(column, n_resamples, seed)
        low, high = np.quantile(means, [tail, 1 - tail])
        intervals.append((float(low), float(high)))
    return intervals


def _resampled_level_means(levels: np.ndarray, counts: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Means of resamples of `levels` repeated `counts` times, drawn as multinomial counts of the
    levels, BOOTSTRAP_CHUNK_ENTRIES at a time (the draws of one call for every resample)."""
    n = int(counts.sum())
    rng = np.random.default_rng(seed)
    chunk = max(1, BOOTSTRAP_CHUNK_ENTRIES // levels.size)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        means[start:stop] = rng.multinomial(n, counts / n, size=stop - start) @ levels / n
    return means


def _resampled_means(column: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Means of resamples of `column`, BOOTSTRAP_CHUNK_ENTRIES indices at a time: several
    resamples a chunk, or one in several (the draws of one call for every index)."""
    n = column.size
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    if n <= BOOTSTRAP_CHUNK_ENTRIES:
        chunk = BOOTSTRAP_CHUNK_ENTRIES // n
        for start in range(0, n_resamples, chunk):
            stop = min(start + chunk, n_resamples)
            means[start:stop] = column[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
        return means
    for r in range(n_resamples):
        total = 0.0
        for start in range(0, n, BOOTSTRAP_CHUNK_ENTRIES):
            total += float(column[rng.integers(0, n, size=min(BOOTSTRAP_CHUNK_ENTRIES, n - start))].sum())
        means[r] = total / n
    return means


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the paired Student's t-test (see the module docstring)."""
    d = _differences(a, b)
    n = d.size
    if n < 2:
        return math.nan
    mean = d.mean()
    sd = d.std(ddof=1)
    if sd == 0:
        return 1.0 if mean == 0 else 0.0
    from scipy import stats  # scipy is slow to import; only comparisons need it

    t = mean / (sd / math.sqrt(n))
    return float(2 * stats.t.sf(abs(t), n - 1))


def randomization_test(a: Sequence[float], b: Sequence[float], *, n_permutations: int = 10_000,
                       seed: int = 42) -> float:
    """Two-sided p-value of Fisher's paired randomisation test (see the module docstring)."""
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, int) or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer, got {n_permutations!r}")
    if n_permutations > MAX_PERMUTATIONS:
        raise ValueError(
            f"n_permutations is at most {MAX_PERMUTATIONS:,} (it was {n_permutations:,}): more sign "
            "assignments take hours and do not change a reported p-value"
        )
    d = _differences(a, b)
    n = d.size
    if n == 0:
        return math.nan
    observed = abs(d.sum()) / n
    threshold = observed - _TIE_TOLERANCE * observed
    chunk = max(1, BOOTSTRAP_CHUNK_ENTRIES // n)
    if n < 63 and 2**n <= n_permutations:  # exact: every sign assignment once, in bounded chunks
        count = 0
        for start in range(0, 2**n, chunk):
            codes = np.arange(start, min(start + chunk, 2**n), dtype=np.int64)
            signs = 1 - 2 * ((codes[:, None] >> np.arange(n)) & 1)
            count += int(np.count_nonzero(np.abs(signs @ d) / n >= threshold))
        return float(count / 2**n)
    rng = np.random.default_rng(seed)
    count = 0
    for start in range(0, n_permutations, chunk):
        size = min(chunk, n_permutations - start)
        signs = 1 - 2 * rng.integers(0, 2, size=(size, n), dtype=np.int8).astype(float)
        count += int(np.count_nonzero(np.abs(signs @ d) / n >= threshold))
    return (count + 1) / (n_permutations + 1)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the input order; NaN stays NaN and is not counted."""
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full(p.shape, math.nan)
    valid = np.flatnonzero(~np.isnan(p))
    order = valid[np.argsort(p[valid], kind="stable")]
    adjusted[order] = np.maximum.accumulate(np.minimum(1.0, (valid.size - np.arange(valid.size)) * p[order]))
    return adjusted.tolist()


def _differences(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired scores must be two 1-d sequences of equal length, got {x.shape} and {y.shape}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("paired scores contain NaN; compare only queries measured in both runs")
    return x - y


# ---- the report -----------------------------------------------------------------------------

@dataclass(frozen=True)
class PairComparison:
    """One metric, two runs: means, p-values, and A's wins / ties / losses against B."""

    metric: str
    run_a: str
    run_b: str
    mean_a: float
    mean_b: float
    p_value: float
    p_adjusted: float
    significant: bool
    wins: int
    ties: int
    losses: int
    n_queries: int


@dataclass
class ComparisonReport:
    """The result of `compare`: renders itself as a DataFrame, Markdown, LaTeX or text."""

    runs: list[str]
    metrics: list[str]
    means: dict[str, dict[str, float]]
    n_queries: dict[str, int]
    n_dropped: dict[str, int]
    pairs: list[PairComparison]
    test: str
    correction: str
    alpha: float
    n_permutations: int
    seed: int
    digits: int = 3
    #: per metric, per run: judged queries the run had no results for, scored 0 (`compare_trec`)
    n_filled: dict[str, dict[str, int]] = field(default_factory=dict)
    #: how many judged queries each run had no results for and what was done (`compare_trec`,
    #: `tempo_eval.compare.trec_scores`); "" when not known
    missing_note: str = ""

    def label(self, run: str) -> str:
        """The letter a run is marked with (a, b, c, ... in input order)."""
        return LABELS[self.runs.index(run)]

    def pair(self, metric: str, run_a: str, run_b: str) -> PairComparison:
        """The comparison of two runs on one metric, oriented as asked (A's wins are B's losses)."""
        for p in self.pairs:
            if p.metric == metric and (p.run_a, p.run_b) == (run_a, run_b):
                return p
            if p.metric == metric and (p.run_a, p.run_b) == (run_b, run_a):
                return PairComparison(
                    metric, run_a, run_b, p.mean_b, p.mean_a, p.p_value, p.p_adjusted,
                    p.significant, p.losses, p.ties, p.wins, p.n_queries,
                )
        raise KeyError(f"no comparison of {run_a!r} and {run_b!r} on {metric!r}")

    def beats(self, run: str, metric: str) -> list[str]:
        """Runs that `run` beats significantly on `metric` (p_adj <= alpha and a better mean:
        higher, or lower for a lower-is-better metric; none for a metric without a direction,
        see `direction`)."""
        sign = {"higher": 1.0, "lower": -1.0}.get(direction(metric))
        if sign is None:
            return []
        return [
            other for other in self.runs
            if other != run
            and self.pair(metric, run, other).significant
            and sign * self.means[run][metric] > sign * self.means[other][metric]
        ]

    def best(self, metric: str) -> list[str]:
        """Runs whose rounded mean is the best, highest or lowest (bold in the tables); none for a
        metric without a direction."""
        rounded = {run: round(self.means[run][metric], self.digits) for run in self.runs}
        way = direction(metric)
        if way == "none":
            return []
        top = max(rounded.values()) if way == "higher" else min(rounded.values())
        return [run for run in self.runs if rounded[run] == top]

    # -- renderings ---------------------------------------------------------------------------

    def to_dataframe(self) -> pd.DataFrame:
        """One row per run: label, run, and per metric its mean and the letters of the runs it
        beats significantly (column "<metric> beats")."""
        records = []
        for run in self.runs:
            record: dict[str, Any] = {"label": self.label(run), "run": run}
            for metric in self.metrics:
                record[metric] = self.means[run][metric]
                record[f"{metric} beats"] = "".join(self.label(o) for o in self.beats(run, metric))
            records.append(record)
        return pd.DataFrame(records)

    def pairs_frame(self) -> pd.DataFrame:
        """One row per (metric, run pair) with both means, raw and adjusted p, W/T/L and n."""
        return pd.DataFrame([asdict(p) for p in self.pairs], columns=list(PairComparison.__dataclass_fields__))

    def caption(self, *, screen: bool = False) -> str:
        """The table's caption: for the exported tables (superscript letters, bold best) or, with
        `screen`, for `to_dataframe` shown as is (its "<metric> beats" columns hold the letters)."""
        correction = (
            f", Holm-corrected over {_pairs_text(_count_pairs(len(self.runs)))}"
            if self.correction == "holm" else ", no multiple-comparison correction"
        )
        parts = []
        for m in self.metrics:
            text = f"{m}: {self.n_queries[m]} {'query' if self.n_queries[m] == 1 else 'queries'}"
            if self.n_dropped[m]:
                text += f" ({self.n_dropped[m]} dropped: not scored in every run)"
            filled = sum(self.n_filled.get(m, {}).values())
            if filled and not self.missing_note:
                text += f" ({filled} missing from a run scored 0)"
            parts.append(text)
        queries = "; ".join(parts)
        if self.missing_note:
            queries += ". " + self.missing_note.rstrip(".")
        test = f"{_TEST_NAMES[self.test]}{correction}, p ≤ {self.alpha:g}"
        lower = [m for m in self.metrics if direction(m) == "lower"]
        neither = [m for m in self.metrics if direction(m) == "none"]
        if lower:
            queries += f". Lower is better for {', '.join(lower)}"
        if neither:
            queries += f". {', '.join(neither)}: no better direction, so no winner is marked"
        if screen:
            return (
                f"The “beats” columns list the letters of the runs this run beats significantly ({test}); "
                f"the best mean is in bold. {queries}."
            )
        return f"Superscripts mark runs this run beats significantly ({test}); bold is the best mean. {queries}."

    def to_markdown(self, *, pairs: bool = True) -> str:
        """The table (bold best, superscript letters of significantly beaten runs), the caption and,
        with `pairs`, the pairwise p-values and win / tie / loss counts."""
        header = ["#", "Run", *self.metrics]
        lines = [_md_row(header), _md_row(["---"] * len(header))]
        for run in self.runs:
            scores = self._scores(run, "**{}**", lambda s: "".join(_SUPERSCRIPT[c] for c in s))
            lines.append(_md_row([self.label(run), md_cell(run), *scores]))
        text = "\n".join(lines) + "\n\n" + self.caption() + "\n"
        if pairs:
            header = ["Metric", "A", "B", "Mean A", "Mean B", "p", "p adj.", "W / T / L"]
            rows = [_md_row(header), _md_row(["---"] * len(header))]
            for p in self.pairs:
                rows.append(_md_row([
                    p.metric, md_cell(p.run_a), md_cell(p.run_b), self._format(p.mean_a),
                    self._format(p.mean_b), format_p(p.p_value),
                    format_p(p.p_adjusted) + (" *" if p.significant else ""),
                    f"{p.wins} / {p.ties} / {p.losses}",
                ]))
            text += "\n" + "\n".join(rows) + "\n"
        return text

    def to_latex(self) -> str:
        """A booktabs table (needs \\usepackage{booktabs}): bold best, superscript letters."""
        columns = "cl" + "c" * len(self.metrics)
        lines = ["\\begin{table}[ht]", "\\centering", f"\\caption{{{_latex_escape(self.caption())}}}",
                 f"\\begin{{tabular}}{{{columns}}}", "\\toprule",
                 " & ".join(["\\#", "Run", *(_latex_escape(m) for m in self.metrics)]) + " \\\\", "\\midrule"]
        for run in self.runs:
            scores = self._scores(run, "\\textbf{{{}}}", lambda s: f"$^{{{s}}}$" if s else "")
            lines.append(" & ".join([self.label(run), _latex_escape(run), *scores]) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.to_markdown()

    def _format(self, value: float) -> str:
        return "nan" if math.isnan(value) else f"{value:.{self.digits}f}"

    def _scores(self, run: str, bold: str, mark: Callable[[str], str]) -> list[str]:
        """The run's score cells: each mean formatted, in `bold` (a format) where it is the best,
        then `mark` of the letters of the runs it beats significantly."""
        cells = []
        for metric in self.metrics:
            score = self._format(self.means[run][metric])
            letters = "".join(self.label(o) for o in self.beats(run, metric))
            cells.append((bold.format(score) if run in self.best(metric) else score) + mark(letters))
        return cells


def _count_pairs(n: int) -> int:
    return n * (n - 1) // 2


def _pairs_text(n: int) -> str:
    """"1 pair of runs", "3 pairs of runs"."""
    return f"{n} pair of runs" if n == 1 else f"{n} pairs of runs"


def format_p(p: float, nan: str = "nan") -> str:
    """A p-value for a table: 4 decimals, scientific below 1e-4, `nan` for NaN."""
    if math.isnan(p):
        return nan
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


_LATEX_SPECIAL = {
    "\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#", "_": "\\_",
    "{": "\\{", "}": "\\}", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}",
    "≤": "$\\leq$",
}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in terminal_safe(text))


# ---- entry points ---------------------------------------------------------------------------

def direction(metric: str) -> str:
    """"higher", "lower" (future leak, stale evidence) or "none" (median age): as the metric's
    class declares it (`tempo_eval.metrics.catalog.direction`; "higher" for a retrieval measure)."""
    from tempo_eval.metrics.catalog import direction as declared

    return declared(metric)


def compare(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], *,
            metrics: Sequence[str] | None = None, test: str = "fisher",
            n_permutations: int = 10_000, seed: int = 42, alpha: float = 0.05,
            correction: str = "holm", digits: int = 3) -> ComparisonReport:
    """Compare two or more runs on per-query scores: `per_query[run][metric][query_id] = score`.

    `metrics` defaults to the metrics of the first run; each must be present in every run.
    Runs keep their input order (and letters a, b, c, ...). NaN scores are not measurable and
    drop their query for that metric. See the module docstring for the tests and the correction.
    Raises ValueError for fewer than two or more than 26 runs, a metric missing from a run, a
    metric with no query scored in every run, or an unknown test / correction.
    """
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, got {test!r}")
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha!r}")
    runs = [str(r) for r in per_query]
    if len(runs) < 2:
        raise ValueError(f"compare needs at least two runs, got {len(runs)}")
    if len(runs) > len(LABELS):
        raise ValueError(f"compare labels runs a-z, so at most {len(LABELS)} runs; got {len(runs)}")
    names = list(metrics) if metrics is not None else list(next(iter(per_query.values())))
    if not names:
        raise ValueError("no metric to compare")

    means: dict[str, dict[str, float]] = {run: {} for run in runs}
    n_queries: dict[str, int] = {}
    n_dropped: dict[str, int] = {}
    pairs: list[PairComparison] = []
    for metric in names:
        scores: dict[str, dict[str, float]] = {}
        for run, by_metric in per_query.items():
            if metric not in by_metric:
                raise ValueError(f"run {run!r} has no scores for metric {metric!r}")
            scores[str(run)] = {str(q): float(s) for q, s in by_metric[metric].items()}
        all_queries = set().union(*(s.keys() for s in scores.values()))
        common = sorted(
            q for q in all_queries
            if all(q in s and not math.isnan(s[q]) for s in scores.values())
        )
        if not common:
            raise ValueError(f"no query has a {metric} score in every run; nothing to compare")
        n_queries[metric] = len(common)
        n_dropped[metric] = len(all_queries) - len(common)
        matrix = {run: np.array([scores[run][q] for q in common]) for run in runs}
        for run in runs:
            means[run][metric] = float(matrix[run].mean())

        combos = list(itertools.combinations(runs, 2))
        raw = [
            paired_t_test(matrix[a], matrix[b]) if test == "student"
            else randomization_test(matrix[a], matrix[b], n_permutations=n_permutations, seed=seed)
            for a, b in combos
        ]
        adjusted = holm(raw) if correction == "holm" else raw
        for (a, b), p, p_adj in zip(combos, raw, adjusted, strict=True):
            # a win is a better score: higher, or lower for a lower-is-better metric
            x, y = (matrix[b], matrix[a]) if direction(metric) == "lower" else (matrix[a], matrix[b])
            pairs.append(PairComparison(
                metric=metric, run_a=a, run_b=b, mean_a=means[a][metric], mean_b=means[b][metric],
                p_value=p, p_adjusted=p_adj, significant=bool(p_adj <= alpha),
                wins=int((x > y).sum()), ties=int((x == y).sum()), losses=int((x < y).sum()),
                n_queries=len(common),
            ))
    return ComparisonReport(
        runs=runs, metrics=names, means=means, n_queries=n_queries, n_dropped=n_dropped,
        pairs=pairs, test=test, correction=correction, alpha=alpha,
        n_permutations=n_permutations, seed=seed, digits=digits,
    )


def mean_cis(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], metrics: Sequence[str], *,
             confidence: float = 0.95, seed: int = 42) -> dict[str, dict[str, tuple[float, float]]]:
    """cis[run][metric] = the `bootstrap_ci` of the mean `compare` reports: over the queries
    scored (not NaN) in every run, so each interval is around the mean shown beside it."""
    out: dict[str, dict[str, tuple[float, float]]] = {str(run): {} for run in per_query}
    for metric in metrics:
        scores = {str(run): {str(q): float(v) for q, v in by_metric[metric].items()}
                  for run, by_metric in per_query.items()}
        common = sorted(set.intersection(*(
            {q for q, v in s.items() if not math.isnan(v)} for s in scores.values()
        ))) if scores else []
        for run, values in scores.items():
            column = np.array([values[q] for q in common], dtype=float)
            out[run][metric] = bootstrap_ci(column, confidence=confidence, seed=seed) if len(column) else (math.nan, math.nan)
    return out


def cis_columns(table: pd.DataFrame, cis: dict[str, dict[str, tuple[float, float]]],
                metrics: Sequence[str]) -> pd.DataFrame:
    """The report's table (`ComparisonReport.to_dataframe`) with "<metric> CI low" and
    "<metric> CI high" after each metric's mean."""
    out = table.copy()
    for metric in metrics:
        where = list(out.columns).index(metric) + 1
        low = [cis.get(run, {}).get(metric, (math.nan, math.nan))[0] for run in out["run"]]
        high = [cis.get(run, {}).get(metric, (math.nan, math.nan))[1] for run in out["run"]]
        out.insert(where, f"{metric} CI low", low)
        out.insert(where + 1, f"{metric} CI high", high)
    return out


def parse_trec_metric(name: str) -> int:
    """The cutoff k of a run-file metric name; only "ndcg@k" is supported (case-insensitive)."""
    head, _, cutoff = name.strip().lower().partition("@")
    if head != "ndcg" or not cutoff.isdigit() or int(cutoff) < 1:
        raise ValueError(f"unsupported metric {name!r} for run files; use ndcg@k with a positive k, e.g. ndcg@10")
    return int(cutoff)


#: the words every surface uses for the missing-query policy
MISSING_WORDS = {
    "zero": "scored 0, as trec_eval -c does",
    "drop": "left out of every run's comparison",
}


def missing_summary(missing: Mapping[str, int], *, n_judged: int, everywhere: int, policy: str) -> str:
    """One sentence: how many judged queries each run has no results for, and what was done."""
    counts = ", ".join(f"{run} {count}" for run, count in missing.items())
    text = f"Judged queries without results ({n_judged} judged): {counts}"
    if everywhere:
        text += f"; {everywhere} in no run"
    return f"{text}; {MISSING_WORDS[policy]}."
